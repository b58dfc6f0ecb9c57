//! The sparse index trailer: a 32-byte header and 16-byte entries, each the
//! timestamp and file offset of a frame header (or, in compressed segments,
//! a block header).

use crate::consts::{INDEX_VERSION, MAGIC_INDEX};
use crate::crc32::crc32;
use crate::error::{Error, ErrorKind, Result};
use crate::le::{i64_at, put_i64, put_u16, put_u32, put_u64, u16_at, u32_at, u64_at};
use crate::segment_header::{flags, SegmentHeader};

/// Byte offsets of the index header fields.
pub mod field {
    /// `u32` magic, `INDX`.
    pub const MAGIC: usize = 0;
    /// `u16` index version (1).
    pub const VERSION: usize = 4;
    /// `u16` writer's interval (a hint).
    pub const INTERVAL: usize = 6;
    /// `u32` entries that follow.
    pub const ENTRY_COUNT: usize = 8;
    /// `u32` CRC32 of the entries section.
    pub const CRC32: usize = 12;
    /// `i64` timestamp of the first entry.
    pub const FIRST_TS_NS: usize = 16;
    /// `i64` timestamp of the last entry.
    pub const LAST_TS_NS: usize = 24;
    /// Entry: `i64` timestamp.
    pub const ENTRY_TIMESTAMP: usize = 0;
    /// Entry: `u64` offset of a frame or block header.
    pub const ENTRY_FILE_OFFSET: usize = 8;
}

/// A decoded index header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct IndexHeader {
    /// Index version (1).
    pub version: u16,
    /// The writer's index interval (the spec calls it a hint).
    pub interval: u16,
    /// Entries that follow.
    pub entry_count: u32,
    /// CRC32 of the entries section.
    pub crc32: u32,
    /// Timestamp of the first entry.
    pub first_ts_ns: i64,
    /// Timestamp of the last entry.
    pub last_ts_ns: i64,
}

impl IndexHeader {
    /// Encoded length.
    pub const LEN: usize = 32;

    /// Decodes the first 32 bytes of `b` (magic not checked); `None` if shorter.
    pub fn parse(b: &[u8]) -> Option<IndexHeader> {
        if b.len() < Self::LEN {
            return None;
        }
        Some(IndexHeader {
            version: u16_at(b, field::VERSION),
            interval: u16_at(b, field::INTERVAL),
            entry_count: u32_at(b, field::ENTRY_COUNT),
            crc32: u32_at(b, field::CRC32),
            first_ts_ns: i64_at(b, field::FIRST_TS_NS),
            last_ts_ns: i64_at(b, field::LAST_TS_NS),
        })
    }

    /// Encodes into `out[..32]` with the `INDX` magic.
    pub fn emit(&self, out: &mut [u8; 32]) {
        put_u32(out, field::MAGIC, MAGIC_INDEX);
        put_u16(out, field::VERSION, self.version);
        put_u16(out, field::INTERVAL, self.interval);
        put_u32(out, field::ENTRY_COUNT, self.entry_count);
        put_u32(out, field::CRC32, self.crc32);
        put_i64(out, field::FIRST_TS_NS, self.first_ts_ns);
        put_i64(out, field::LAST_TS_NS, self.last_ts_ns);
    }
}

/// One index entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C)]
pub struct IndexEntry {
    /// Timestamp of the indexed frame (or of the first event handed to the
    /// writer for the indexed block).
    pub timestamp_ns: i64,
    /// Offset of a frame header or block header from the segment start.
    pub file_offset: u64,
}

impl IndexEntry {
    /// Encoded length.
    pub const LEN: usize = 16;

    /// Decodes the first 16 bytes of `b`; `None` if shorter.
    pub fn parse(b: &[u8]) -> Option<IndexEntry> {
        if b.len() < Self::LEN {
            return None;
        }
        Some(IndexEntry {
            timestamp_ns: i64_at(b, field::ENTRY_TIMESTAMP),
            file_offset: u64_at(b, field::ENTRY_FILE_OFFSET),
        })
    }

    /// Encodes into `out[..16]`.
    pub fn emit(&self, out: &mut [u8; 16]) {
        put_i64(out, field::ENTRY_TIMESTAMP, self.timestamp_ns);
        put_u64(out, field::ENTRY_FILE_OFFSET, self.file_offset);
    }
}

/// Trailer bytes for `entries` index entries.
pub const fn trailer_len(entries: usize) -> usize {
    IndexHeader::LEN + entries * IndexEntry::LEN
}

/// A validated index trailer over the segment bytes (zero-copy).
#[derive(Clone, Copy, Debug)]
pub struct Index<'a> {
    header: IndexHeader,
    offset: u64,
    entries: &'a [u8],
    monotonic: bool,
}

impl<'a> Index<'a> {
    /// Finds and validates the index of a segment. `Ok(None)` if the header
    /// has no HasIndex flag. Errors (`BadIndex`, `IndexCrcMismatch`) report
    /// the index offset; they never affect sequential reading.
    ///
    /// Checks: offset inside the file and past the segment header, magic,
    /// version, entries inside the file, CRC, and every entry's offset
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
        let at = off as usize;
        let tail = &data[at..];
        if u32_at(tail, field::MAGIC) != MAGIC_INDEX {
            return Err(bad("index magic is not INDX"));
        }
        let Some(h) = IndexHeader::parse(tail) else {
            return Err(bad("index header truncated"));
        };
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
        }))
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
        IndexEntry::parse(self.entries.get(at..)?)
    }

    /// Entries in file order.
    pub fn iter(&self) -> impl Iterator<Item = IndexEntry> + 'a {
        self.entries
            .chunks_exact(IndexEntry::LEN)
            .filter_map(IndexEntry::parse)
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
