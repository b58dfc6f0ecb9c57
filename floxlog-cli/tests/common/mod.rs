//! Helpers shared by the CLI test files (each file is its own crate and
//! uses some of them).
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The conformance corpus: `FLOXLOG_CONFORMANCE_DIR`, or the repository's `conformance/`
/// beside the checkout.
pub fn corpus() -> PathBuf {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance");
    floxlog_testkit::corpus::Corpus::root_from_env(&default)
}

/// The `floxlog` binary under test.
pub fn bin() -> Command {
    Command::cargo_bin("floxlog").unwrap()
}

/// `floxlog encode INPUT -o OUT` with a fixed `created_ns` and `extra`
/// arguments; must succeed.
pub fn encode(input: &Path, out: &Path, extra: &[&str]) {
    bin()
        .arg("encode")
        .arg(input)
        .arg("-o")
        .arg(out)
        .args(["--created-ns", "1700000000000000000"])
        .args(extra)
        .assert()
        .success();
}

/// Path of the `floxlog` binary under test (what adapters run as `$FLOXLOG`).
pub fn bin_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("floxlog")
}

/// floxlog's own conformance adapter `name` (`read.sh`, `write.sh`).
pub fn adapter(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/adapters/floxlog")
        .join(name)
}

/// Writes an executable script (the test's own adapter) at `dir/name`.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}
