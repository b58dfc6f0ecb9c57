//! Gives the shared library a versioned soname on ELF targets, so programs
//! linked against it record `libfloxlog.so.0` rather than a build path.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd"
    ) {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libfloxlog.so.0");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
