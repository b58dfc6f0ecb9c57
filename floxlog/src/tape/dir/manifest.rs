//! `manifest.json`, the spec 1.0 tape manifest: schema and format versions,
//! and one entry per segment (name, type, size, time range, event count).
//!
//! Reading rejects an unknown `schema_version` and fails loudly on a
//! `format_version` other than 1, as the spec asks. Unknown extra fields are
//! ignored. Writing goes through a temporary file and a rename, so a reader
//! never sees half a manifest.

use crate::tape::error::TapeError;
use crate::tape::hint::{Hint, Remedy};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// File name of the manifest inside a tape directory.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The manifest schema this crate reads and writes.
pub const SCHEMA_VERSION: u64 = 1;

/// One segment entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestSegment {
    /// File name relative to the tape directory.
    pub name: String,
    /// Series: `trades`, `book`, `options`, `pools` (spec layout) or `mixed`
    /// (every record type interleaved, the flox layout).
    #[serde(rename = "type")]
    pub kind: String,
    /// File size in bytes.
    pub size_bytes: u64,
    /// Earliest event timestamp (0 for an empty segment).
    pub first_event_ns: i64,
    /// Latest event timestamp (0 for an empty segment).
    pub last_event_ns: i64,
    /// Events in the segment.
    pub event_count: u64,
}

/// The whole manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Version of this JSON schema (1).
    pub schema_version: u64,
    /// Version of the segment binary format (1).
    pub format_version: u64,
    /// Exchange tag of the tape.
    pub exchange_id: u64,
    /// Wall clock when the tape was created, ns.
    pub created_ns: i64,
    /// Segments in write order.
    pub segments: Vec<ManifestSegment>,
}

impl Manifest {
    /// An empty manifest for a new tape.
    pub fn new(exchange_id: u8, created_ns: i64) -> Manifest {
        Manifest {
            schema_version: SCHEMA_VERSION,
            format_version: floxlog_core::FORMAT_VERSION as u64,
            exchange_id: exchange_id as u64,
            created_ns,
            segments: Vec::new(),
        }
    }

    /// Parses and checks the versions. Deserialises straight into the typed
    /// manifest (never a `serde_json::Value` tree, which costs several
    /// times the text), after a first pass that reads only the versions.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, TapeError> {
        /// Just the versions; every other field is skipped unread.
        #[derive(Deserialize)]
        struct Versions {
            schema_version: Option<serde_json::Value>,
            format_version: Option<serde_json::Value>,
        }
        let v: Versions = serde_json::from_str(text).map_err(|e| {
            TapeError::manifest(
                path,
                format!("not valid JSON: {e}"),
                Hint::new(
                    "{} replaces it, or {}",
                    &[Remedy::RebuildManifest, Remedy::IgnoreManifest],
                ),
            )
        })?;
        let shown = |x: &Option<serde_json::Value>| {
            x.as_ref()
                .map_or("(missing)".to_string(), |s| s.to_string())
        };
        // Versions first, so that a newer manifest is refused for the right
        // reason even if its other fields changed shape.
        if v.schema_version
            .as_ref()
            .and_then(serde_json::Value::as_u64)
            != Some(SCHEMA_VERSION)
        {
            return Err(TapeError::manifest(
                path,
                format!(
                    "unknown manifest schema_version {} (this tool reads {SCHEMA_VERSION})",
                    shown(&v.schema_version)
                ),
                Hint::new(
                    "read the tape with a newer floxlog, or {}",
                    &[Remedy::IgnoreManifest],
                ),
            ));
        }
        let format = v
            .format_version
            .as_ref()
            .and_then(serde_json::Value::as_u64);
        if format != Some(floxlog_core::FORMAT_VERSION as u64) {
            return Err(TapeError::manifest(
                path,
                format!(
                    "manifest format_version {} does not match the segment format this tool reads (1)",
                    shown(&v.format_version)
                ),
                "this tape was written for another major version of .floxlog; use a matching reader",
            ));
        }
        serde_json::from_str(text).map_err(|e| {
            TapeError::manifest(
                path,
                format!("does not follow the manifest schema: {e}"),
                Hint::new(
                    "{} replaces it, or {}",
                    &[Remedy::RebuildManifest, Remedy::IgnoreManifest],
                ),
            )
        })
    }

    /// Reads `dir/manifest.json`; `Ok(None)` if there is none.
    pub fn load(dir: &Path) -> Result<Option<Manifest>, TapeError> {
        let path = dir.join(MANIFEST_FILE);
        // A FIFO or a link out of the directory is never opened.
        let bytes = match crate::tape::dir::files::read_side_file(&path) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(None),
            Err(e) => return Err(TapeError::io(&path, "reading the manifest", e)),
        };
        match String::from_utf8(bytes) {
            Ok(text) => Manifest::parse(&text, &path).map(Some),
            Err(_) => Err(TapeError::manifest(
                &path,
                "not UTF-8 text, so not JSON",
                Hint::new(
                    "{} replaces it, or {}",
                    &[Remedy::RebuildManifest, Remedy::IgnoreManifest],
                ),
            )),
        }
    }

    /// Pretty JSON text (two-space indent, trailing newline).
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Writes `dir/manifest.json` atomically (temporary file, rename); with
    /// `sync`, the file and the directory are fsynced.
    pub fn save(&self, dir: &Path, sync: bool) -> Result<(), TapeError> {
        write_atomic(dir, MANIFEST_FILE, self.to_text().as_bytes(), sync)
    }
}

/// Writes `dir/name` crash-atomically: through `dir/.name.tmp` (removed
/// again if anything fails, say a full disk), fsync when `sync`, a rename
/// over `dir/name`, then fsync of the directory. At every instant `name`
/// holds the old bytes or the new ones.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8], sync: bool) -> Result<(), TapeError> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let dst = dir.join(name);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp).map_err(|e| TapeError::io(&tmp, "creating", e))?;
        f.write_all(bytes)
            .map_err(|e| TapeError::io(&tmp, "writing", e))?;
        if sync {
            f.sync_all()
                .map_err(|e| TapeError::io(&tmp, "syncing", e))?;
        }
        drop(f);
        std::fs::rename(&tmp, &dst)
            .map_err(|e| TapeError::io(&dst, "renaming the new file into place", e))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    if sync {
        sync_dir(dir)?;
    }
    Ok(())
}

/// The directory holding `path` (`.` for a bare name) and its file name;
/// a usage error if `path` names no file (`/`, `..`).
pub fn dir_and_name(path: &Path) -> Result<(&Path, String), TapeError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            TapeError::usage(format!(
                "{} is not a file or directory name",
                path.display()
            ))
        })?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((dir, name))
}

/// [`write_atomic`] to the file at `path`.
pub fn write_file_atomic(path: &Path, bytes: &[u8], sync: bool) -> Result<(), TapeError> {
    let (dir, name) = dir_and_name(path)?;
    write_atomic(dir, &name, bytes, sync)
}

/// fsyncs a directory (its entries), where the platform allows it.
pub fn sync_dir(dir: &Path) -> Result<(), TapeError> {
    #[cfg(unix)]
    {
        let d =
            std::fs::File::open(dir).map_err(|e| TapeError::io(dir, "opening the directory", e))?;
        d.sync_all()
            .map_err(|e| TapeError::io(dir, "syncing the directory", e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_version_checks() {
        let mut m = Manifest::new(7, 1_714_123_456_000_000_000);
        m.segments.push(ManifestSegment {
            name: "trades-000000.bin".into(),
            kind: "trades".into(),
            size_bytes: 1048576,
            first_event_ns: 1,
            last_event_ns: 2,
            event_count: 50000,
        });
        let p = Path::new("manifest.json");
        assert_eq!(Manifest::parse(&m.to_text(), p).unwrap(), m);
        let bad_format = m
            .to_text()
            .replace("\"format_version\": 1", "\"format_version\": 2");
        let e = Manifest::parse(&bad_format, p).unwrap_err();
        assert!(e.message.contains("format_version 2"), "{e}");
        let bad_schema = m
            .to_text()
            .replace("\"schema_version\": 1", "\"schema_version\": 9");
        let e = Manifest::parse(&bad_schema, p).unwrap_err();
        assert!(e.message.contains("schema_version 9"), "{e}");
        assert!(Manifest::parse("{", p).is_err());
    }
}
