//! Telling a URL from a path, and splitting `s3://bucket/key`.

use crate::tape::error::TapeError;
use std::path::Path;

/// Whether `p` is a URL (`scheme://...`) rather than a local path: a
/// scheme of letters, digits, `+`, `-`, `.` (starting with a letter), then
/// `://`. Any scheme counts, so that `gs://...` is refused by name rather
/// than looked for on disk.
pub fn is_url(p: &Path) -> bool {
    let Some(s) = p.to_str() else {
        return false;
    };
    let Some((scheme, _)) = s.split_once("://") else {
        return false;
    };
    let mut b = scheme.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic())
        && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
}

/// `s3://bucket/key` (or `gs://bucket/key`, `az://container/key`): the
/// store's name and the key without leading or trailing `/` (empty for the
/// bucket's root). The store's name is the bucket for `s3://` and
/// `scheme://bucket` for the others (see `super::store::build`).
#[cfg_attr(not(feature = "object-store"), allow(dead_code))]
pub fn split(url: &Path) -> Result<(String, &str), TapeError> {
    let bad = |why: &str| {
        TapeError::usage(format!("{}: {why}", url.display()))
            .with_hint("object URLs look like s3://bucket/prefix/ or s3://bucket/key")
    };
    let s = url.to_str().ok_or_else(|| bad("not valid UTF-8"))?;
    let (scheme, rest) = s.split_once("://").ok_or_else(|| bad("not a URL"))?;
    let scheme = scheme.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "s3" | "gs" | "az") {
        return Err(bad(&format!(
            "`{scheme}://` is not supported (s3:// and S3-compatible stores; gs:// and az:// untested)"
        )));
    }
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(bad("no bucket"));
    }
    let name = match scheme.as_str() {
        "s3" => bucket.to_string(),
        _ => format!("{scheme}://{bucket}"),
    };
    Ok((name, key.trim_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths() {
        for u in ["s3://b/k", "gs://b", "s3a://b/", "x+y.z-1://q"] {
            assert!(is_url(Path::new(u)), "{u}");
        }
        for p in ["tape", "/tmp/s3:/x", "./s3://x", "1s://x", "://x", "c:\\x"] {
            assert!(!is_url(Path::new(p)), "{p}");
        }
        assert_eq!(
            split(Path::new("s3://b/p/q/")).unwrap(),
            ("b".into(), "p/q")
        );
        assert_eq!(split(Path::new("s3://b")).unwrap(), ("b".into(), ""));
        assert_eq!(
            split(Path::new("GS://b/k")).unwrap(),
            ("gs://b".into(), "k")
        );
        assert_eq!(
            split(Path::new("az://c/p/")).unwrap(),
            ("az://c".into(), "p")
        );
        let e = split(Path::new("hdfs://b/k")).unwrap_err().to_string();
        assert!(
            e.contains("hdfs://b/k") && e.contains("not supported"),
            "{e}"
        );
        assert!(split(Path::new("s3:///k")).is_err());
    }
}
