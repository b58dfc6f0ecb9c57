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

/// `s3://bucket/key`: the bucket and the key without leading or trailing
/// `/` (empty for the bucket's root).
#[cfg_attr(not(feature = "object-store"), allow(dead_code))]
pub fn split(url: &Path) -> Result<(&str, &str), TapeError> {
    let bad = |why: &str| {
        TapeError::usage(format!("{}: {why}", url.display()))
            .with_hint("object URLs look like s3://bucket/prefix/ or s3://bucket/key")
    };
    let s = url.to_str().ok_or_else(|| bad("not valid UTF-8"))?;
    let (scheme, rest) = s.split_once("://").ok_or_else(|| bad("not a URL"))?;
    if !scheme.eq_ignore_ascii_case("s3") {
        return Err(bad(&format!(
            "`{scheme}://` is not supported (only s3:// and S3-compatible stores)"
        )));
    }
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(bad("no bucket"));
    }
    Ok((bucket, key.trim_matches('/')))
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
        assert_eq!(split(Path::new("s3://b/p/q/")).unwrap(), ("b", "p/q"));
        assert_eq!(split(Path::new("s3://b")).unwrap(), ("b", ""));
        let e = split(Path::new("gs://b/k")).unwrap_err().to_string();
        assert!(e.contains("gs://b/k") && e.contains("not supported"), "{e}");
        assert!(split(Path::new("s3:///k")).is_err());
    }
}
