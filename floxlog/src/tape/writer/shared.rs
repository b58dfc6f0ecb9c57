//! What the default writer and the journal writer (`tape/journal`) do
//! alike: the loop of a batch append, and the files written at close.

use crate::tape::dir::flox_manifest::METADATA_FILE;
use crate::tape::dir::manifest::{sync_dir, write_atomic, Manifest, ManifestSegment};
use crate::tape::dir::{series_of, Layout, SERIES};
use crate::tape::error::TapeError;
use std::fs::File;
use std::path::Path;

/// Where a segment engine starts: after the segments of the tape before
/// it (a resumed tape, recovered already), or at nothing.
#[derive(Default)]
pub(crate) struct Start {
    /// The tape's segments, each with its `seq`, as the manifest lists them.
    pub(crate) closed: Vec<(u64, ManifestSegment)>,
    /// Spec layout: the next file number of each series slot.
    pub(crate) numbers: Vec<u32>,
    /// The largest flox-layout segment name (created_ns), or `i64::MIN`.
    pub(crate) last_created: i64,
}

/// The result of appending a leading run of a batch: how many went in,
/// or how many went in before the error.
pub(crate) type RunResult = Result<usize, (usize, TapeError)>;

/// Appends `items` in order to `w`: leading runs through `run` (at least
/// one item each) when `fast`, else one by one through `one`. Returns how
/// many were appended: all, or those before the first failure, returned
/// with it.
pub(crate) fn in_runs<W, T>(
    w: &mut W,
    items: &[T],
    fast: bool,
    run: impl Fn(&mut W, &[T]) -> RunResult,
    one: impl Fn(&mut W, &T) -> Result<(), TapeError>,
) -> (usize, Result<(), TapeError>) {
    let mut i = 0;
    while let Some(rest) = items.get(i..).filter(|r| !r.is_empty()) {
        let r = if fast {
            run(w, rest)
        } else {
            rest.first()
                .map_or(Ok(0), |t| one(w, t).map(|()| 1))
                .map_err(|e| (0, e))
        };
        match r {
            // A run takes at least one item; 0 would loop for ever.
            Ok(0) => return (i, Err(TapeError::input(None, "internal error: empty run"))),
            Ok(n) => i += n,
            Err((n, e)) => return (i + n, Err(e)),
        }
    }
    (items.len(), Ok(()))
}

/// The slot of a `layout` tape that events of `frame_type` go to: one
/// for the flox layout, one per series for the spec layout.
#[inline]
pub(crate) fn slot_of(layout: Layout, frame_type: u8) -> usize {
    match layout {
        Layout::Flox => 0,
        Layout::Spec => SERIES
            .iter()
            .position(|s| *s == series_of(frame_type))
            .unwrap_or(0),
    }
}

/// The slots of `open` that hold a segment, in the order the segments
/// were opened (`seq`): the order a close finalises them in.
pub(crate) fn by_seq<T>(open: &[Option<T>], seq: impl Fn(&T) -> u64) -> Vec<usize> {
    let mut order: Vec<(u64, usize)> = open
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.as_ref().map(|s| (seq(s), i)))
        .collect();
    order.sort();
    order.into_iter().map(|(_, i)| i).collect()
}

/// The last files of a closing tape in `dir`: `manifest` (when the tape
/// keeps one), then the directory fsynced under the syncing policies.
pub(crate) fn close_files(
    dir: &Path,
    manifest: Option<Manifest>,
    syncs: bool,
) -> Result<(), TapeError> {
    if let Some(m) = manifest {
        m.save(dir, syncs)?;
    }
    if syncs {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Writes the tape's `metadata.json` in `dir` crash-atomically, whatever
/// the durability policy (names are few and rarely set, and must survive
/// a killed writer): temporary file, fsync, rename, directory fsync.
pub(crate) fn write_metadata(dir: &Path, md: &serde_json::Value) -> Result<(), TapeError> {
    let text = serde_json::to_string_pretty(md).unwrap_or_default() + "\n";
    write_atomic(dir, METADATA_FILE, text.as_bytes(), true)
}

/// Writes all of `buf` at `offset` of `file`, not using (nor moving, on
/// unix) the file position.
pub(crate) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let (mut buf, mut offset) = (buf, offset);
        while !buf.is_empty() {
            match file.seek_write(buf, offset) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buf, offset);
        Err(std::io::ErrorKind::Unsupported.into())
    }
}
