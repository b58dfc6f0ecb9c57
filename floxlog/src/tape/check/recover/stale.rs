//! The hidden temporary files a writer killed mid-way leaves in a tape
//! directory, which `recover` removes once it holds the tape lock (so
//! never a live writer's). Readers never list them (hidden, not named
//! like segments) and a new writer replaces or ignores them; left alone
//! they only hold disk space: a journal's reserved first segment or a
//! default writer's spare is as big as a segment.
//!
//! Only the exact names the writers use are removed, never another
//! hidden file (flox's `.manifest` stays):
//! - `.journal-first-N.tmp`: a journal's first segment of series slot N,
//!   reserved by `create` and named by the first append;
//! - `.next-segment-N.tmp`: the default writer's spare segment file;
//! - `.<segment name>.tmp`: a segment being made (its header is written
//!   before the rename), or one `recover` was rewriting;
//! - `.manifest.json.tmp`, `.metadata.json.tmp`: crash-atomic rewrites;
//! - `.floxlog.wake`: a journal writer's wake page (removed at close; with
//!   the lock held no writer wakes through it).

use crate::tape::dir::discover::segment_series;
use crate::tape::dir::flox_manifest::METADATA_FILE;
use crate::tape::dir::manifest::MANIFEST_FILE;
use crate::tape::error::TapeError;
use std::path::{Path, PathBuf};

/// Whether `name` is one of the temporary files a floxlog writer (or
/// `recover`) makes in a tape directory (see the module docs).
pub fn is_writer_temp(name: &str) -> bool {
    if name == crate::tape::wake::WAKE_FILE {
        return true;
    }
    let Some(mid) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    let numbered = |prefix: &str| {
        mid.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    numbered("journal-first-")
        || numbered("next-segment-")
        || segment_series(mid).is_some()
        || mid == MANIFEST_FILE
        || mid == METADATA_FILE
}

/// Removes the writer temporaries in `dir` (regular files only: a link or
/// directory so named is left alone) and returns their paths. The caller
/// holds the tape lock of `dir`.
pub fn remove_writer_temps(dir: &Path) -> Result<Vec<PathBuf>, TapeError> {
    let rd = std::fs::read_dir(dir).map_err(|e| TapeError::io(dir, "listing the directory", e))?;
    let mut removed = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| TapeError::io(dir, "listing the directory", e))?;
        let name = entry.file_name();
        if !is_writer_temp(&name.to_string_lossy()) {
            continue;
        }
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(path),
            // Gone meanwhile: nothing left to remove.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(TapeError::io(
                    &path,
                    "removing a temporary file a killed writer left",
                    e,
                ))
            }
        }
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use crate::tape::check::recover::stale::is_writer_temp;

    #[test]
    fn only_the_writers_own_temporary_names() {
        for yes in [
            ".journal-first-0.tmp",
            ".journal-first-12.tmp",
            ".next-segment-3.tmp",
            ".1700000000000000000.floxlog.tmp",
            ".trades-000004.bin.tmp",
            ".manifest.json.tmp",
            ".metadata.json.tmp",
            ".floxlog.wake",
        ] {
            assert!(is_writer_temp(yes), "{yes}");
        }
        for no in [
            ".manifest",
            ".journal-first-.tmp",
            ".journal-first-x.tmp",
            ".next-segment-1.tmp.bak",
            "journal-first-0.tmp",
            ".notes.tmp",
            ".trades-4.bin.tmp",
            "1700.floxlog",
            ".1700.floxlog",
            ".tmp",
        ] {
            assert!(!is_writer_temp(no), "{no}");
        }
    }
}
