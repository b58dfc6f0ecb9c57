//! Segment files mapped into memory, read-only.
//!
//! # The usual memory-map caveat
//!
//! A map shows the file as it is on disk. If another process truncates the
//! file while it is mapped, touching the vanished pages raises `SIGBUS`
//! (Rust cannot turn that into an error). Writers of this crate and of flox
//! only ever append and rewrite the header in place, which is safe to map;
//! do not truncate or rewrite segments that a reader has open. `cat
//! --follow` re-maps the file as it grows instead of trusting an old map.

use super::error::TapeError;
use floxlog_core::{segment_header::flags, SegmentHeader};
use memmap2::Mmap;
use std::path::{Path, PathBuf};

enum Data {
    Map(Mmap),
    Empty,
}

/// One segment file, mapped.
pub struct SegmentFile {
    /// Its path.
    pub path: PathBuf,
    data: Data,
}

impl SegmentFile {
    /// Opens and maps `path` read-only (an empty file maps to no bytes).
    /// Only a regular file is opened (see [`super::files::open_regular`]);
    /// a symbolic link is followed (the caller named the file).
    pub fn open(path: &Path) -> Result<SegmentFile, TapeError> {
        Self::open_with(path, true)
    }

    /// [`SegmentFile::open`]; `follow`: whether a symbolic link is
    /// followed (not for a file found in a tape directory).
    pub fn open_with(path: &Path, follow: bool) -> Result<SegmentFile, TapeError> {
        let f = super::files::open_regular(path, follow)
            .map_err(|e| TapeError::io(path, "opening the segment", e))?;
        let len = f
            .metadata()
            .map_err(|e| TapeError::io(path, "reading the segment's size", e))?
            .len();
        let data = if len == 0 {
            Data::Empty
        } else {
            // SAFETY: the map is read-only, and the bytes are only ever read
            // through bounds-checked slices. See the module docs for what a
            // concurrent truncation does.
            let m = unsafe { Mmap::map(&f) }
                .map_err(|e| TapeError::io(path, "mapping the segment", e))?;
            // Readers go front to back: a larger kernel read-ahead keeps
            // the disk busy while frames are decoded and blocks
            // decompressed (cold-cache reads). Only a hint: its failure
            // changes nothing else.
            #[cfg(unix)]
            let _ = m.advise(memmap2::Advice::Sequential);
            Data::Map(m)
        };
        Ok(SegmentFile {
            path: path.to_path_buf(),
            data,
        })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Data::Map(m) => m,
            Data::Empty => &[],
        }
    }

    /// Gives the mapped pages back (they are read from the file again if
    /// touched): a segment a reader has finished with stops counting in its
    /// resident memory, so reading a tape costs what it holds, not its size.
    pub fn release(&self) {
        #[cfg(unix)]
        if let Data::Map(m) = &self.data {
            // SAFETY: a read-only shared file mapping: dropped pages read
            // back the same bytes from the file; nothing written is lost.
            // Only a hint: its failure changes nothing.
            let _ = unsafe { m.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }

    /// [`SegmentFile::release`] for the bytes `[start, end)` only (the
    /// compressed blocks a reader has decompressed, say).
    pub fn release_range(&self, start: u64, end: u64) {
        let end = end.min(self.len());
        if start >= end {
            return;
        }
        #[cfg(unix)]
        if let Data::Map(m) = &self.data {
            // SAFETY: as in release; the range lies inside the map.
            let _ = unsafe {
                m.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    start as usize,
                    (end - start) as usize,
                )
            };
        }
    }

    /// File size.
    pub fn len(&self) -> u64 {
        self.bytes().len() as u64
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes().is_empty()
    }
}

/// Whether a header looks like a writer's placeholder (the segment was never
/// closed): no index, not Sorted, and for uncompressed segments zero counts.
/// An LZ4 writer rewrites the counts after every block but sets HasIndex and
/// Sorted only at close, so an open LZ4 segment has flags == Compressed.
pub fn header_is_unfinished(h: &SegmentHeader) -> bool {
    if h.has(flags::HAS_INDEX) || h.has(flags::SORTED) {
        return false;
    }
    if h.has(flags::COMPRESSED) {
        true
    } else {
        h.event_count == 0 && h.first_event_ns == 0 && h.last_event_ns == 0
    }
}

/// Whether a read of a segment (header `h`, bytes `data`) that stopped on
/// `e` after `events_before` events is the torn tail of a writer that is
/// still running or died while appending, rather than damage: the header
/// is a placeholder, the read stopped at data that ends inside a frame or
/// block (or at an index trailer written just before the final header),
/// and the header claims no more events than the complete frames or blocks
/// hold. A finished LZ4 segment without an index looks like a placeholder,
/// but once cut short its header claims events that are gone.
pub fn is_torn_tail(
    h: &SegmentHeader,
    e: &floxlog_core::Error,
    events_before: u64,
    data: &[u8],
) -> bool {
    let at_trailer = usize::try_from(e.offset)
        .ok()
        .and_then(|o| data.get(o..))
        .is_some_and(floxlog_core::index::starts_trailer);
    header_is_unfinished(h)
        && (e.kind == floxlog_core::ErrorKind::Truncated || at_trailer)
        && u64::from(h.event_count) <= events_before
}
