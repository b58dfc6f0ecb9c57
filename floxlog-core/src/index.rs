//! The sparse index trailer: a 32-byte header and 16-byte entries, each the
//! timestamp and file offset of a frame header (or, in compressed segments,
//! a block header).

use crate::consts::{INDEX_VERSION, MAGIC_INDEX};
use crate::crc32::crc32;
use crate::error::{Error, ErrorKind, Result};
use crate::le::{i64_at, put_u32, u64_at};
use crate::record::define_head;
use crate::segment_header::{flags, SegmentHeader};

/// The index header's field list, in record order (as
/// [`crate::trade_fields`]); the magic is not a field (a constant).
#[macro_export]
macro_rules! index_header_fields {
    ($m:ident $(, $arg:tt)*) => {
        $m! {
            $($arg)*
            /// Index version (1).
            version VERSION: u16 @ 4, Plain;
            /// The writer's index interval (the spec calls it a hint).
            interval INTERVAL: u16 @ 6, Plain;
            /// Entries that follow.
            entry_count ENTRY_COUNT: u32 @ 8, Plain;
            /// CRC32 of the entries section.
            crc32 CRC32: u32 @ 12, Plain;
            /// Timestamp of the first entry.
            first_ts_ns FIRST_TS_NS: i64 @ 16, Timestamp;
            /// Timestamp of the last entry.
            last_ts_ns LAST_TS_NS: i64 @ 24, Timestamp;
        }
    };
}

/// The index entry's field list (16 bytes).
#[macro_export]
macro_rules! index_entry_fields {
    ($m:ident $(, $arg:tt)*) => {
        $m! {
            $($arg)*
            /// Timestamp of the indexed frame (or of the first event handed
            /// to the writer for the indexed block).
            timestamp_ns TIMESTAMP_NS: i64 @ 0, Timestamp;
            /// Offset of a frame header or block header from the segment
            /// start.
            file_offset FILE_OFFSET: u64 @ 8, Plain;
        }
    };
}

index_header_fields!(define_head, {
    /// A decoded index header.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
    struct IndexHeader;
    header 32;
    /// `u32` magic, `INDX`.
    pad MAGIC @ 0;
    /// Entry: `i64` timestamp.
    pad ENTRY_TIMESTAMP @ 0;
    /// Entry: `u64` offset of a frame or block header.
    pad ENTRY_FILE_OFFSET @ 8;
    lead {}
    tail {}
});

/// The index entry record (its own `field` and `desc` modules).
pub mod entry {
    use crate::record::define_head;

    index_entry_fields!(define_head, {
        /// One index entry. `#[repr(C)]`: the C writer's index storage is
        /// the caller's array of an identical struct.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        #[repr(C)]
        struct IndexEntry;
        header 16;
        lead {}
        tail {}
    });

    const _: () = {
        assert!(core::mem::offset_of!(IndexEntry, timestamp_ns) == field::TIMESTAMP_NS);
        assert!(core::mem::offset_of!(IndexEntry, file_offset) == field::FILE_OFFSET);
    };

    impl IndexEntry {
        /// The entry of `b`.
        pub(crate) fn of(b: &[u8; 16]) -> IndexEntry {
            IndexEntry::from_header(b)
        }

        /// Encodes into `out[..16]`.
        pub fn emit(&self, out: &mut [u8; 16]) {
            self.emit_header(out);
        }
    }
}
pub use entry::IndexEntry;

impl IndexHeader {
    /// Encoded length.
    pub const LEN: usize = 32;

    /// Decodes the first 32 bytes of `b`, which starts at byte `at` of the
    /// segment (what errors report): `BadIndex` if shorter or if the magic
    /// is not `INDX`. The version and entries are checked by
    /// [`Index::parse`].
    pub fn parse(b: &[u8], at: u64) -> Result<IndexHeader> {
        let Some(h) = b.first_chunk::<32>() else {
            return Err(
                Error::new(ErrorKind::BadIndex, at, "index header truncated")
                    .needing(Self::LEN as u64),
            );
        };
        if !starts_trailer(b) {
            return Err(Error::new(
                ErrorKind::BadIndex,
                at,
                "index magic is not INDX",
            ));
        }
        Ok(IndexHeader::from_header(h))
    }

    /// Encodes into `out[..32]` with the `INDX` magic.
    pub fn emit(&self, out: &mut [u8; 32]) {
        self.emit_header(out);
        put_u32(out, field::MAGIC, MAGIC_INDEX);
    }
}

impl IndexEntry {
    /// Encoded length.
    pub const LEN: usize = 16;

    /// Decodes the first 16 bytes of `b`, which starts at byte `at` of the
    /// segment: `BadIndex` if shorter.
    pub fn parse(b: &[u8], at: u64) -> Result<IndexEntry> {
        match b.first_chunk::<16>() {
            Some(e) => Ok(IndexEntry::of(e)),
            None => Err(Error::new(ErrorKind::BadIndex, at, "index entry truncated")
                .needing(Self::LEN as u64)),
        }
    }
}

/// The offset of the frame (or block) header after the one at `pos`, if
/// the header at `pos` is whole.
pub(crate) fn next_header(frames: &[u8], pos: u64, compressed: bool) -> Option<u64> {
    let rest = frames.get(usize::try_from(pos).ok()?..)?;
    let len = if compressed {
        crate::BlockHeader::parse(rest, pos).ok()?.block_len()
    } else {
        crate::FrameHeader::LEN as u64 + crate::FrameHeader::parse(rest, pos).ok()?.size as u64
    };
    Some(pos + len)
}

/// The exchange timestamp of the frame at `pos` (every record starts with
/// it), if its first 8 payload bytes are there.
fn frame_ts(frames: &[u8], pos: u64) -> Option<i64> {
    let at = usize::try_from(pos).ok()? + crate::FrameHeader::LEN;
    Some(i64_at(frames.get(at..at + 8)?, 0))
}

/// Trailer bytes for `entries` index entries.
pub const fn trailer_len(entries: usize) -> usize {
    IndexHeader::LEN + entries * IndexEntry::LEN
}

/// Whether `b` starts with the `INDX` magic: where a writer that died while
/// closing a segment left its trailer, or where the frames end.
pub fn starts_trailer(b: &[u8]) -> bool {
    b.get(..4) == Some(&MAGIC_INDEX.to_le_bytes()[..])
}

/// Whether `b` is exactly one index trailer whose entries match its CRC
/// (nothing before or after it).
pub fn is_trailer(b: &[u8]) -> bool {
    let Ok(h) = IndexHeader::parse(b, 0) else {
        return false;
    };
    let n = h.entry_count as u64 * IndexEntry::LEN as u64;
    n == (b.len() - IndexHeader::LEN) as u64 && crc32(&b[IndexHeader::LEN..]) == h.crc32
}

/// Writes the index trailer for `entries` (header with CRC, then the
/// entries) into the start of `out`, which must hold
/// [`trailer_len`]`(entries.len())` bytes; returns that length. The one
/// place trailers are assembled.
pub fn emit_trailer(entries: &[IndexEntry], interval: u16, out: &mut [u8]) -> usize {
    let need = trailer_len(entries.len());
    let (head, body) = out[..need].split_at_mut(IndexHeader::LEN);
    for (e, o) in entries.iter().zip(body.chunks_exact_mut(IndexEntry::LEN)) {
        let mut eb = [0u8; IndexEntry::LEN];
        e.emit(&mut eb);
        o.copy_from_slice(&eb);
    }
    let h = IndexHeader {
        version: INDEX_VERSION,
        interval,
        entry_count: entries.len() as u32,
        crc32: crc32(body),
        first_ts_ns: entries.first().map_or(0, |e| e.timestamp_ns),
        last_ts_ns: entries.last().map_or(0, |e| e.timestamp_ns),
    };
    let mut hb = [0u8; IndexHeader::LEN];
    h.emit(&mut hb);
    head.copy_from_slice(&hb);
    need
}

/// A validated index trailer over the segment bytes (zero-copy).
#[derive(Clone, Copy, Debug)]
pub struct Index<'a> {
    header: IndexHeader,
    offset: u64,
    entries: &'a [u8],
    monotonic: bool,
    proven: bool,
}

impl<'a> Index<'a> {
    /// Finds and validates the index of a segment. `Ok(None)` if the header
    /// has no HasIndex flag. Errors (`BadIndex`, `IndexCrcMismatch`) report
    /// the index offset; they never affect sequential reading.
    ///
    /// Checks: offset inside the file and past the segment header, magic,
    /// version, entries inside the file, CRC, `first_ts_ns`/`last_ts_ns`
    /// equal to the first/last entry's timestamp, and every entry's offset
    /// inside the frame area `[64, index_offset)`.
    pub fn parse(data: &'a [u8], seg: &SegmentHeader) -> Result<Option<Index<'a>>> {
        if !seg.has(flags::HAS_INDEX) {
            return Ok(None);
        }
        let off = seg.index_offset;
        let bad = |what| Error::new(ErrorKind::BadIndex, off, what);
        if off < SegmentHeader::LEN as u64 {
            return Err(bad("index_offset points inside the segment header"));
        }
        if off > data.len() as u64 || data.len() as u64 - off < IndexHeader::LEN as u64 {
            return Err(bad("index_offset points past the end of the data"));
        }
        let tail = &data[off as usize..];
        let h = IndexHeader::parse(tail, off)?;
        if h.version != INDEX_VERSION {
            return Err(bad("index version is not 1"));
        }
        let need = h.entry_count as u64 * IndexEntry::LEN as u64;
        if need > (tail.len() - IndexHeader::LEN) as u64 {
            return Err(bad("index entries run past the end of the data"));
        }
        let entries = &tail[IndexHeader::LEN..IndexHeader::LEN + need as usize];
        if crc32(entries) != h.crc32 {
            return Err(Error::new(
                ErrorKind::IndexCrcMismatch,
                off,
                "index entries do not match the index CRC32",
            ));
        }
        // The header's range names the first and last entries.
        let ts_at = |i: usize| i64_at(&entries[i * IndexEntry::LEN..], field::ENTRY_TIMESTAMP);
        let n = h.entry_count as usize;
        if n > 0 && (h.first_ts_ns != ts_at(0) || h.last_ts_ns != ts_at(n - 1)) {
            return Err(bad(
                "index header range does not match its first and last entries",
            ));
        }
        let mut monotonic = true;
        let mut prev = i64::MIN;
        for e in entries.chunks_exact(IndexEntry::LEN) {
            let ts = i64_at(e, field::ENTRY_TIMESTAMP);
            let fo = u64_at(e, field::ENTRY_FILE_OFFSET);
            if fo < SegmentHeader::LEN as u64 || fo >= off {
                return Err(bad("index entry offset outside the frame area"));
            }
            monotonic &= ts >= prev;
            prev = ts;
        }
        Ok(Some(Index {
            header: h,
            offset: off,
            entries,
            monotonic,
            proven: false,
        }))
    }

    /// Whether every entry is known to point at a frame (or block) header:
    /// [`Index::prove`] succeeded, or the caller chose to [`Index::trust`]
    /// it. Only then does [`crate::Reader::seek`] start at an entry.
    pub fn is_proven(&self) -> bool {
        self.proven
    }

    /// Marks the index as proven without checking it, for tapes the caller
    /// trusts (their own, just written): seeks then skip the proof's pass
    /// over the frame headers. A forged entry can then make a seek start
    /// inside another frame's payload.
    pub fn trust(&mut self) {
        self.proven = true;
    }

    /// Proves that every entry points at a frame header (uncompressed) or a
    /// block header (LZ4) of `frames` (the segment's bytes up to the end of
    /// its frame area), by hopping from header to header from the first
    /// frame, reading only the headers (12 bytes a frame, 16 a block).
    /// An uncompressed entry's timestamp must also be its frame's. A CRC-valid
    /// frame hidden inside another frame's payload is never on that chain,
    /// so it cannot be made a seek target.
    ///
    /// `BadIndex` at the index offset when an entry is out of file order, is
    /// not on the chain, or lies beyond a header the chain cannot hop
    /// (damage); the index is then left unproven.
    pub fn prove(&mut self, frames: &[u8], compressed: bool) -> Result<()> {
        let bad = |what| Error::new(ErrorKind::BadIndex, self.offset, what);
        let mut pos = crate::SegmentHeader::LEN as u64;
        let mut prev: Option<u64> = None;
        for e in self.iter() {
            let target = e.file_offset;
            if prev.is_some_and(|p| target <= p) {
                return Err(bad("index entries are not in file order"));
            }
            prev = Some(target);
            while pos < target {
                pos = next_header(frames, pos, compressed).ok_or(bad(
                    "index entry lies beyond damage the frame chain cannot cross",
                ))?;
            }
            if pos != target {
                return Err(bad(if compressed {
                    "index entry does not point at a block header"
                } else {
                    "index entry does not point at a frame header"
                }));
            }
            if !compressed && frame_ts(frames, pos) != Some(e.timestamp_ns) {
                return Err(bad("index entry timestamp is not its frame's"));
            }
        }
        self.proven = true;
        Ok(())
    }

    /// The index header.
    pub fn header(&self) -> &IndexHeader {
        &self.header
    }

    /// Offset of the trailer in the segment.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len() / IndexEntry::LEN
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entry `i`.
    pub fn get(&self, i: usize) -> Option<IndexEntry> {
        let at = i.checked_mul(IndexEntry::LEN)?;
        IndexEntry::parse(self.entries.get(at..)?, 0).ok()
    }

    /// Entries in file order.
    pub fn iter(&self) -> impl Iterator<Item = IndexEntry> + 'a {
        self.entries
            .chunks_exact(IndexEntry::LEN)
            .filter_map(|e| IndexEntry::parse(e, 0).ok())
    }

    /// Whether entry timestamps never decrease (true for any sorted segment).
    pub fn is_monotonic(&self) -> bool {
        self.monotonic
    }

    /// Where to start scanning for the first event with timestamp `>= t`:
    /// the last entry whose timestamp is strictly below `t`, or `None` to
    /// start at the first frame.
    ///
    /// Strictly below, not the spec's "largest entry <= T": with repeated
    /// timestamps, events stamped `t` can come before an entry stamped `t`,
    /// and starting at that entry would skip them. On a sorted segment the
    /// scan from here finds exactly the first event `>= t`. On an unsorted
    /// one this is a hint (the entry with the largest timestamp below `t`,
    /// the first such in file order): earlier events may still follow it.
    pub fn seek(&self, t: i64) -> Option<IndexEntry> {
        if self.monotonic {
            // Partition point: the first entry at or after t.
            let (mut lo, mut hi) = (0usize, self.len());
            while lo < hi {
                let mid = (lo + hi) / 2;
                if self.get(mid)?.timestamp_ns < t {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo.checked_sub(1).and_then(|i| self.get(i));
        }
        let mut best: Option<IndexEntry> = None;
        for e in self.iter() {
            if e.timestamp_ns < t && best.is_none_or(|b| e.timestamp_ns > b.timestamp_ns) {
                best = Some(e);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One entry (ts 1000 at offset 64) behind an interval-1000 header.
    #[test]
    fn trailer_golden_bytes() {
        let e = [IndexEntry {
            timestamp_ns: 1000,
            file_offset: 64,
        }];
        let mut out = [0u8; 48];
        assert_eq!(emit_trailer(&e, 1000, &mut out), 48);
        let entry = [0xe8, 0x03, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0];
        let crc = crc32(&entry).to_le_bytes();
        let mut want = [0u8; 48];
        want[..4].copy_from_slice(b"INDX");
        want[4] = 1; // version
        want[6..8].copy_from_slice(&1000u16.to_le_bytes());
        want[8] = 1; // entry_count
        want[12..16].copy_from_slice(&crc);
        want[16..24].copy_from_slice(&1000i64.to_le_bytes());
        want[24..32].copy_from_slice(&1000i64.to_le_bytes());
        want[32..].copy_from_slice(&entry);
        assert_eq!(out, want);
        assert!(is_trailer(&out) && starts_trailer(&out));
        assert!(!is_trailer(&out[..47]));
        let h = IndexHeader::parse(&out, 500).unwrap();
        assert_eq!((h.entry_count, h.interval, h.first_ts_ns), (1, 1000, 1000));
        assert_eq!(IndexEntry::parse(&out[32..], 532), Ok(e[0]));
        let bad = IndexHeader::parse(&out[1..], 501).unwrap_err();
        assert_eq!((bad.kind, bad.offset), (ErrorKind::BadIndex, 501));
    }
}
