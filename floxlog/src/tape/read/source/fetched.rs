//! A segment object on object storage, fetched into memory: whole, or
//! (a dataset's fragments) only the bytes a read needs.
//!
//! The object's bytes sit at their own offsets in an anonymous map as long
//! as the object, so the codec reads them as it reads a mapped file; the
//! kernel gives pages only to the bytes written, so what is held is what
//! was fetched. A segment read by range ([`Want::Cuts`]) fetches its header
//! and its index trailer, and is cut only where its index points
//! ([`SegmentFile::fetched_frames`] tells the splitter so): cut points that
//! those bytes decide, the same when a dataset lists its fragments and when
//! a fragment is read; reading a range then fetches its frames part by part
//! ([`SegmentFile::with_frames`]). A segment without a usable index trailer
//! is fetched whole.

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
    /// dataset's fragments reads. Reading a range then fetches its frames
    /// part by part (`SegmentFile::with_frames`), holding one part.
    Cuts,
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
        Want::Cuts => by_range(path, &mut m)?,
    };
    if frames.is_none() {
        remote::fetch_range(path, 0..size, &mut m)?;
    }
    let map = m
        .make_read_only()
        .map_err(|e| TapeError::io(path, "protecting the fetched object", e))?;
    Ok(Some(Fetched { map, frames }))
}

/// Fetches the header, then the index trailer: the (empty) frame range
/// fetched, or `None` when the segment cannot be read by range (a header
/// that fails, no index, an index that does not parse: the caller fetches
/// it whole, and it is cut as a file is).
fn by_range(path: &Path, m: &mut MmapMut) -> Result<Option<(u64, u64)>, TapeError> {
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
    match Segment::parse(&m[..]) {
        Ok(s) if !s.index_lost() && matches!(s.index_unproven(), Ok(Some(_))) => {
            Ok(Some((head, head)))
        }
        _ => Ok(None),
    }
}

impl SegmentFile {
    /// For a segment object fetched by range: a copy that also holds the
    /// frames `[start, end)` (fetched now; the header and index trailer
    /// copied, not fetched again), for reading them and dropping them: a
    /// read streams a range part by part this way, holding one part.
    pub fn with_frames(&self, start: u64, end: u64) -> Result<SegmentFile, TapeError> {
        let super::Data::Remote(f) = &self.data else {
            return Err(TapeError::usage(
                "only an object read by range fetches frames",
            ));
        };
        let head = SegmentHeader::LEN as u64;
        let frames_end = Segment::parse(&f.map[..]).map_or(head, |s| s.frames_end());
        let (end, len) = (end.min(frames_end), f.map.len());
        let start = start.clamp(head, end);
        let mut m = MmapOptions::new()
            .len(len)
            .no_reserve_swap()
            .map_anon()
            .map_err(|e| TapeError::io(&self.path, "reserving memory for the object", e))?;
        // The header and the trailer (from the end of the frame area).
        for r in [0..SegmentHeader::LEN, frames_end as usize..len] {
            if let (Some(d), Some(s)) = (m.get_mut(r.clone()), f.map.get(r)) {
                d.copy_from_slice(s);
            }
        }
        if start < end {
            remote::fetch_range(&self.path, start..end, &mut m)?;
        }
        let map = m
            .make_read_only()
            .map_err(|e| TapeError::io(&self.path, "protecting the fetched object", e))?;
        Ok(SegmentFile {
            path: self.path.clone(),
            data: super::Data::Remote(Fetched {
                map,
                frames: Some((start, end)),
            }),
            id: self.id,
        })
    }

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
