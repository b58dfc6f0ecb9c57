//! A segment object on object storage, fetched into memory: whole, or
//! (a dataset's fragments) only the bytes a read needs.
//!
//! The object's bytes sit at their own offsets in an anonymous map as long
//! as the object, so the codec reads them as it reads a mapped file; the
//! kernel gives pages only to the bytes written, so what is held is what
//! was fetched. A segment read by range fetches its header, its index
//! trailer and the frames of that range, and is cut only where its index
//! points ([`SegmentFile::fetched_frames`] tells the splitter so): cut
//! points that the bytes fetched decide, the same when a dataset lists its
//! fragments (header and trailer only) and when a fragment is read. A
//! segment without a usable index trailer is fetched whole.

use super::SegmentFile;
use crate::tape::error::TapeError;
use crate::tape::remote;
use floxlog_core::{segment_header::flags, Segment, SegmentHeader};
use memmap2::{Mmap, MmapMut, MmapOptions};
use std::path::Path;

/// What a read needs of a segment object. A local file is mapped whole,
/// whatever is wanted (the kernel reads only the pages touched).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Want {
    /// Every byte.
    #[default]
    Whole,
    /// The header and the index trailer: what cutting the segment into a
    /// dataset's fragments reads.
    Cuts,
    /// The header, the index trailer and the frames (or LZ4 blocks) of
    /// `[start, end)`: one fragment's read (`None`: from the first frame,
    /// to the end of the frame area).
    Range(Option<u64>, Option<u64>),
}

/// The bytes of a segment object held in memory.
pub(super) struct Fetched {
    pub map: Mmap,
    /// The frame bytes `[start, end)` fetched, when not all were: the
    /// header and index trailer are, and nothing else.
    pub frames: Option<(u64, u64)>,
}

/// Fetches what `want` needs of object `path`; `None` for an empty one.
pub(super) fn fetch(path: &Path, want: Want) -> Result<Option<Fetched>, TapeError> {
    let size = remote::object_size(path)?;
    if size == 0 {
        return Ok(None);
    }
    let too_big = || {
        TapeError::input(
            Some(path),
            format!("the object has {size} bytes, more than this process can address"),
        )
    };
    let len = usize::try_from(size).map_err(|_| too_big())?;
    // Reserves address space only: pages are given as the fetch writes
    // them (no swap is reserved for a multi-gigabyte object read by range).
    let mut m = MmapOptions::new()
        .len(len)
        .no_reserve_swap()
        .map_anon()
        .map_err(|_| too_big())?;
    let frames = match want {
        Want::Whole => None,
        Want::Cuts | Want::Range(..) => by_range(path, &mut m, want)?,
    };
    if frames.is_none() {
        remote::fetch_range(path, 0..size, &mut m)?;
    }
    let map = m
        .make_read_only()
        .map_err(|e| TapeError::io(path, "protecting the fetched object", e))?;
    Ok(Some(Fetched { map, frames }))
}

/// Fetches the header, then the index trailer, then the frames `want`
/// reads: the frame range fetched, or `None` when the segment cannot be
/// read by range (a header that fails, no index, an index that does not
/// parse: the caller fetches it whole, and it is cut as a file is).
fn by_range(path: &Path, m: &mut MmapMut, want: Want) -> Result<Option<(u64, u64)>, TapeError> {
    let size = m.len() as u64;
    let head = SegmentHeader::LEN as u64;
    if size < head {
        return Ok(None);
    }
    remote::fetch_range(path, 0..head, m)?;
    let Ok(h) = SegmentHeader::parse(&m[..]) else {
        return Ok(None);
    };
    let off = h.index_offset;
    if !h.has(flags::HAS_INDEX) || off < head || off >= size {
        return Ok(None);
    }
    remote::fetch_range(path, off..size, m)?;
    let frames_end = match Segment::parse(&m[..]) {
        Ok(s) if !s.index_lost() && matches!(s.index_unproven(), Ok(Some(_))) => s.frames_end(),
        _ => return Ok(None),
    };
    let (start, end) = match want {
        Want::Range(s, e) => (s.unwrap_or(head), e.unwrap_or(frames_end)),
        Want::Cuts | Want::Whole => (head, head),
    };
    // A range outside the frame area (a fragment of another version of
    // the object) fetches nothing; its read then finds no such range.
    let end = end.min(frames_end);
    let start = start.clamp(head, end);
    if start < end {
        remote::fetch_range(path, start..end, m)?;
    }
    Ok(Some((start, end)))
}

impl SegmentFile {
    /// For a segment object fetched by range: the frame bytes `[start,
    /// end)` it holds (besides the header and index trailer); `None` when
    /// every byte is there. Such a segment is cut only at its index
    /// entries, and only the ranges inside these bytes are read.
    pub fn fetched_frames(&self) -> Option<(u64, u64)> {
        match &self.data {
            super::Data::Remote(f) => f.frames,
            _ => None,
        }
    }
}
