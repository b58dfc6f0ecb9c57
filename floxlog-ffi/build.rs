//! Gives the shared library a versioned soname on ELF targets, so programs
//! linked against it record `libfloxlog.so.0.2` rather than a build path.
//! Before 1.0 a minor version may break the ABI (0.2.0 did, see
//! CHANGELOG.md), so the soname carries major.minor: a program linked
//! against 0.1 is never loaded with 0.2.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd"
    ) {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
        let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
        let so = if major == "0" {
            format!("0.{minor}")
        } else {
            major
        };
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libfloxlog.so.{so}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
