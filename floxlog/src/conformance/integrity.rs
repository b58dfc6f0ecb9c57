//! The corpus's own integrity: its version (`VERSION`) and its checksums
//! (`SHA256SUMS`, `sha256sum` format). A corpus file that does not match
//! is the corpus's fault, reported as such before any adapter runs, never
//! blamed on the implementation under test.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The checksum list's file name, at the corpus root.
pub const SUMS: &str = "SHA256SUMS";

/// The corpus version from `root/VERSION` (`MAJOR.MINOR.PATCH`); `None`
/// when the corpus has no such file.
pub fn version(root: &Path) -> Result<Option<String>, String> {
    let p = root.join("VERSION");
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", p.display())),
    };
    let v = text.trim();
    let parts: Vec<&str> = v.split('.').collect();
    let semver = parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !semver {
        return Err(format!(
            "{}: `{}` is not a version MAJOR.MINOR.PATCH",
            p.display(),
            super::process::shown(v)
        ));
    }
    Ok(Some(v.to_string()))
}

/// One line of `SHA256SUMS`: the digest and the path relative to the root.
fn parse_sums(text: &str, sums: &Path) -> Result<Vec<(String, String)>, String> {
    let mut v = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let bad = || format!("{}:{}: not `<sha256>  <path>`", sums.display(), i + 1);
        let (digest, path) = l.split_once(' ').ok_or_else(bad)?;
        // `sha256sum` puts a space (text) or `*` (binary) before the name.
        let path = path.strip_prefix([' ', '*']).unwrap_or(path);
        if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        if path.is_empty() || path.starts_with('/') || path.split('/').any(|c| c == "..") {
            return Err(format!(
                "{}:{}: `{path}` is not a path inside the corpus",
                sums.display(),
                i + 1
            ));
        }
        v.push((digest.to_ascii_lowercase(), path.to_string()));
    }
    Ok(v)
}

/// What checking the corpus found.
#[derive(Debug, Default)]
pub struct Checked {
    /// Files hashed and found as listed.
    pub files: usize,
    /// Whether the corpus has a `SHA256SUMS` at all.
    pub listed: bool,
}

/// Checks every file `SHA256SUMS` lists under one of `dirs` (all of them
/// when `dirs` is `None`). `Err` names the first file that is missing or
/// does not match, as corpus damage.
pub fn verify(root: &Path, dirs: Option<&[PathBuf]>) -> Result<Checked, String> {
    let sums = root.join(SUMS);
    let text = match std::fs::read_to_string(&sums) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Checked::default()),
        Err(e) => return Err(format!("{}: {e}", sums.display())),
    };
    let mut done = Checked {
        files: 0,
        listed: true,
    };
    for (digest, rel) in parse_sums(&text, &sums)? {
        let p = root.join(&rel);
        if dirs.is_some_and(|d| !d.iter().any(|d| p.starts_with(d))) {
            continue;
        }
        let data = std::fs::read(&p).map_err(|e| {
            format!(
                "corpus damaged: {} (listed in {SUMS}) cannot be read: {e}",
                p.display()
            )
        })?;
        let got = hex_digest(&data);
        if got != digest {
            return Err(format!(
                "corpus damaged: {} does not match {SUMS} (sha256 {got}, listed {digest}); \
                 fetch the corpus again: no adapter was run",
                p.display()
            ));
        }
        done.files += 1;
    }
    Ok(done)
}

/// The lowercase hex SHA-256 of `data`, as `sha256sum` prints it.
fn hex_digest(data: &[u8]) -> String {
    use std::fmt::Write;
    Sha256::digest(data)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_or_missing_file_is_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("cases")).unwrap();
        std::fs::write(d.path().join("cases/a"), b"abc").unwrap();
        std::fs::write(
            d.path().join(SUMS),
            format!("{}  cases/a\n", hex_digest(b"abc")),
        )
        .unwrap();
        assert_eq!(verify(d.path(), None).unwrap().files, 1);
        std::fs::write(d.path().join("cases/a"), b"abd").unwrap();
        let e = verify(d.path(), None).unwrap_err();
        assert!(e.contains("cases/a does not match SHA256SUMS"), "{e}");
        // Outside the folders asked about: not read.
        let other = [d.path().join("corrupt")];
        assert_eq!(verify(d.path(), Some(&other)).unwrap().files, 0);
        std::fs::remove_file(d.path().join("cases/a")).unwrap();
        let e = verify(d.path(), None).unwrap_err();
        assert!(e.contains("cannot be read"), "{e}");
        std::fs::write(d.path().join("VERSION"), "1.2\n").unwrap();
        assert!(version(d.path()).is_err());
        std::fs::write(d.path().join("VERSION"), "1.2.3\n").unwrap();
        assert_eq!(version(d.path()).unwrap().as_deref(), Some("1.2.3"));
    }
}
