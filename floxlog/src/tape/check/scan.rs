//! One full pass over a segment: every frame checked, everything a summary
//! or an integrity check needs collected on the way (counts per type, time
//! range, ordering, symbols, LZ4 blocks, index entries against the frames).

use floxlog_core::segment_header::flags;
use floxlog_core::{Error, Index, ReadOptions, Segment, SegmentHeader};
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};

/// The index trailer as found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IndexScan {
    /// The header flags an index.
    pub flagged: bool,
    /// Where the trailer is.
    pub offset: u64,
    /// Entries.
    pub entries: u64,
    /// The writer's interval.
    pub interval: u16,
    /// Why the index is unusable.
    #[serde(skip)]
    pub error: Option<Error>,
    /// Entries that disagree with the frames: (offset of the entry's target,
    /// what is wrong).
    pub problems: Vec<(u64, String)>,
}

/// What one pass over a segment found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SegmentScan {
    /// File size.
    pub file_size: u64,
    /// The header as decoded (even if invalid).
    #[serde(skip)]
    pub raw_header: Option<SegmentHeader>,
    /// The header, if valid.
    #[serde(skip)]
    pub header: Option<SegmentHeader>,
    /// Why the header is invalid.
    #[serde(skip)]
    pub header_error: Option<Error>,
    /// The header is a writer's placeholder (never closed).
    pub unfinished: bool,
    /// Events read.
    pub events: u64,
    /// Events per frame type (index 1..=5).
    pub by_type: [u64; 6],
    /// Earliest timestamp.
    pub min_ts: Option<i64>,
    /// Latest timestamp.
    pub max_ts: Option<i64>,
    /// First non-zero timestamp in file order (the reference's first_event_ns).
    pub first_nonzero_ts: Option<i64>,
    /// Timestamp of the last event in file order.
    pub last_ts: Option<i64>,
    /// Times a timestamp is lower than the one before it.
    pub inversions: u64,
    /// Frame (or block) offset of the first such event.
    pub first_inversion: Option<u64>,
    /// Distinct symbols.
    pub symbols: BTreeSet<u32>,
    /// Frame bytes (headers + payloads).
    pub frame_bytes: u64,
    /// LZ4 blocks read.
    pub blocks: u64,
    /// Sum of their original sizes.
    pub block_original: u64,
    /// Sum of their compressed sizes (with the 16-byte block headers).
    pub block_compressed: u64,
    /// Offset of the first block whose reserved flags are not zero.
    pub block_flags_nonzero: Option<u64>,
    /// The error that stopped the read.
    #[serde(skip)]
    pub stream_error: Option<Error>,
    /// Where the read stopped (end of frames, or where the damage starts).
    pub stream_end: u64,
    /// End of the frame area (the index offset, or the file size).
    pub frames_end: u64,
    /// The index.
    pub index: IndexScan,
    /// Bytes after the index trailer.
    pub trailing_bytes: u64,
}

impl SegmentScan {
    /// Events of the LZ4 block compression ratio (original / stored), if compressed.
    pub fn compression_ratio(&self) -> Option<f64> {
        (self.block_compressed > 0)
            .then(|| self.block_original as f64 / self.block_compressed as f64)
    }

    /// Whether the header flags Sorted.
    pub fn sorted_flag(&self) -> bool {
        self.header.is_some_and(|h| h.has(flags::SORTED))
    }
}

/// Reads the whole segment with every check; `progress` gets the byte
/// offset reached now and then.
pub fn scan_segment(data: &[u8], opts: ReadOptions, progress: &mut dyn FnMut(u64)) -> SegmentScan {
    let scanner = Scanner::new(data, opts);
    let part = scanner.scan_range(SegmentHeader::LEN as u64, u64::MAX, progress);
    let s = scanner.finish(vec![part]);
    progress(data.len() as u64);
    s
}

/// What one byte range of a segment's frames held ([`Scanner::scan_range`]);
/// [`Scanner::finish`] folds the ranges into the [`SegmentScan`] one pass
/// over the whole segment gives.
#[derive(Clone, Debug, Default)]
pub struct RangeScan {
    events: u64,
    by_type: [u64; 6],
    frame_bytes: u64,
    min_ts: Option<i64>,
    max_ts: Option<i64>,
    first_nonzero_ts: Option<i64>,
    /// First and last event: (offset, timestamp).
    first: Option<(u64, i64)>,
    last: Option<(u64, i64)>,
    inversions: u64,
    first_inversion: Option<u64>,
    symbols: HashSet<u32>,
    /// Per LZ4 block: (offset, min ts, max ts).
    blocks: Vec<(u64, i64, i64)>,
    /// Index entries at a frame read here: (entry number, the frame's ts).
    matched: Vec<(usize, i64)>,
    /// The error that ended the read (the segment's read ends here).
    error: Option<Error>,
    /// Where the read stopped.
    end: u64,
}

impl RangeScan {
    /// Events read in the range.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Where the read stopped (offset in the segment).
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Whether the range ended on an error (ranges after it are not read
    /// by a pass over the whole segment).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }
}

/// A segment prepared for scanning, whole or in ranges on several threads:
/// the header and the index checked, the frames not yet read.
pub struct Scanner<'a> {
    opts: ReadOptions,
    seg: Option<Segment<'a>>,
    index: Option<Index<'a>>,
    /// Index entries (offset, timestamp) sorted by offset.
    entries: Vec<(u64, i64)>,
    s: SegmentScan,
}

impl<'a> Scanner<'a> {
    /// Parses the header and the index trailer of `data`.
    pub fn new(data: &'a [u8], opts: ReadOptions) -> Scanner<'a> {
        let mut s = SegmentScan {
            file_size: data.len() as u64,
            raw_header: SegmentHeader::parse_unchecked(data).ok(),
            ..SegmentScan::default()
        };
        let mut sc = Scanner {
            opts,
            seg: None,
            index: None,
            entries: Vec::new(),
            s: SegmentScan::default(),
        };
        let seg = match Segment::parse(data) {
            Ok(seg) => seg,
            Err(e) => {
                s.header_error = Some(e);
                sc.s = s;
                return sc;
            }
        };
        let h = *seg.header();
        s.header = Some(h);
        s.unfinished = crate::tape::read::source::header_is_unfinished(&h);
        s.frames_end = seg.frames_end();
        s.index.flagged = h.has(flags::HAS_INDEX);
        // Unproven: the entries are checked against the frames, each
        // problem reported on its own.
        let index = match seg.index_unproven() {
            Ok(ix) => ix,
            Err(e) => {
                s.index.error = Some(e);
                None
            }
        };
        if let Some(ix) = &index {
            s.index.offset = ix.offset();
            s.index.entries = ix.len() as u64;
            s.index.interval = ix.header().interval;
            let end = ix.offset() + 32 + 16 * ix.len() as u64;
            s.trailing_bytes = (data.len() as u64).saturating_sub(end);
        }
        // Index entries sorted by offset, checked as the frames go by.
        let mut entries: Vec<(u64, i64)> = index
            .as_ref()
            .map(|ix| ix.iter().map(|e| (e.file_offset, e.timestamp_ns)).collect())
            .unwrap_or_default();
        let entries_in_order = entries.windows(2).all(|w| w[0].0 < w[1].0);
        if !entries_in_order {
            s.index
                .problems
                .push((s.index.offset, "index entries are not in file order".into()));
            entries.sort();
        }
        sc.seg = Some(seg);
        sc.index = index;
        sc.entries = entries;
        sc.s = s;
        sc
    }

    /// The segment, when its header is valid.
    pub fn segment(&self) -> Option<&Segment<'a>> {
        self.seg.as_ref()
    }

    /// Reads the frames (or LZ4 blocks) that start in `[start, end)`;
    /// `start` is a boundary from the engine's splitter
    /// (the session's pieces), or the first frame.
    /// `progress` gets the offset reached now and then.
    pub fn scan_range(&self, start: u64, end: u64, progress: &mut dyn FnMut(u64)) -> RangeScan {
        let mut p = RangeScan {
            end: start,
            ..RangeScan::default()
        };
        let Some(seg) = &self.seg else {
            return p;
        };
        let compressed = seg.is_compressed();
        let entries = &self.entries;
        let mut scratch = crate::read::block_scratch(seg);
        let mut r = match seg.reader_at(start, self.opts, &mut scratch) {
            Ok(r) => r,
            Err(e) => {
                p.error = Some(e);
                return p;
            }
        };
        let mut symbols: HashSet<u32> = HashSet::new();
        let mut last_sym: Option<u32> = None;
        let mut ei = entries.partition_point(|e| e.0 < start);
        loop {
            match r.next_item() {
                // The next range's first event.
                Ok(Some(it)) if it.position.offset >= end => break,
                Ok(Some(it)) => {
                    let ts = it.event.exchange_ts_ns();
                    let off = it.position.offset;
                    p.events += 1;
                    if p.events.is_multiple_of(65536) {
                        progress(off);
                    }
                    let ft = it.frame.header.frame_type as usize;
                    if let Some(c) = p.by_type.get_mut(ft) {
                        *c += 1;
                    }
                    p.frame_bytes += it.frame.len() as u64;
                    p.min_ts = Some(p.min_ts.map_or(ts, |m| m.min(ts)));
                    p.max_ts = Some(p.max_ts.map_or(ts, |m| m.max(ts)));
                    if p.first_nonzero_ts.is_none() && ts != 0 {
                        p.first_nonzero_ts = Some(ts);
                    }
                    if p.last.is_some_and(|(_, prev)| ts < prev) {
                        p.inversions += 1;
                        if p.first_inversion.is_none() {
                            p.first_inversion = Some(off);
                        }
                    }
                    p.first.get_or_insert((off, ts));
                    p.last = Some((off, ts));
                    let sym = it.event.symbol_id();
                    if last_sym != Some(sym) {
                        symbols.insert(sym);
                        last_sym = Some(sym);
                    }
                    if compressed {
                        match p.blocks.last_mut() {
                            Some(b) if b.0 == off => {
                                b.1 = b.1.min(ts);
                                b.2 = b.2.max(ts);
                            }
                            _ => p.blocks.push((off, ts, ts)),
                        }
                    } else {
                        // An entry is at a frame when the frames meet it;
                        // the rest are judged once every range is in.
                        while ei < entries.len() && entries[ei].0 < off {
                            ei += 1;
                        }
                        if ei < entries.len() && entries[ei].0 == off {
                            p.matched.push((ei, ts));
                            ei += 1;
                        }
                    }
                }
                Ok(None) => break,
                // Damage where the next range starts is that range's to report.
                Err(e) if e.offset >= end => break,
                Err(e) => {
                    p.error = Some(e);
                    break;
                }
            }
            // Leave a block once read, so that a range ending at the next
            // block does not decompress it (this checks the block's
            // event_count, as the next read would).
            if compressed {
                if let Err(e) = r.end_block() {
                    p.error = Some(e);
                    break;
                }
            }
            if r.next_offset() >= end {
                break;
            }
        }
        p.end = r.next_offset();
        p.symbols = symbols;
        p
    }

    /// Folds the ranges (in file order) into the segment's scan: those up
    /// to the first that ended on an error, as one pass would read them.
    pub fn finish(&self, parts: impl IntoIterator<Item = RangeScan>) -> SegmentScan {
        let mut s = self.s.clone();
        let Some(seg) = &self.seg else {
            return s;
        };
        let compressed = seg.is_compressed();
        let mut symbols: HashSet<u32> = HashSet::new();
        let mut blocks: Vec<(u64, i64, i64)> = Vec::new();
        let mut at_frame: Vec<Option<i64>> = vec![None; self.entries.len()];
        let mut last: Option<(u64, i64)> = None;
        for p in parts {
            s.events += p.events;
            for (a, b) in s.by_type.iter_mut().zip(p.by_type) {
                *a += b;
            }
            s.frame_bytes += p.frame_bytes;
            s.min_ts = opt_min(s.min_ts, p.min_ts);
            s.max_ts = match (s.max_ts, p.max_ts) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            s.first_nonzero_ts = s.first_nonzero_ts.or(p.first_nonzero_ts);
            if let (Some((_, prev)), Some((off, ts))) = (last, p.first) {
                if ts < prev {
                    s.inversions += 1;
                    s.first_inversion.get_or_insert(off);
                }
            }
            s.inversions += p.inversions;
            s.first_inversion = s.first_inversion.or(p.first_inversion);
            last = p.last.or(last);
            symbols.extend(p.symbols);
            blocks.extend(p.blocks);
            for (i, ts) in p.matched {
                at_frame[i] = Some(ts);
            }
            s.stream_end = p.end;
            if p.error.is_some() {
                s.stream_error = p.error;
                break;
            }
        }
        s.last_ts = last.map(|(_, ts)| ts);
        if compressed {
            check_block_entries(&self.entries, &blocks, &mut s);
            count_blocks(seg, &mut s);
        } else {
            check_frame_entries(&self.entries, &at_frame, last.map(|(off, _)| off), &mut s);
        }
        let mut v: Vec<u32> = symbols.into_iter().collect();
        v.sort_unstable();
        s.symbols = v.into_iter().collect();
        s
    }
}

/// The index entries of an uncompressed segment against the frames
/// (`at_frame`: the timestamp of the frame each entry points at, if one
/// does; `last_off`: the offset of the last frame read).
fn check_frame_entries(
    entries: &[(u64, i64)],
    at_frame: &[Option<i64>],
    last_off: Option<u64>,
    s: &mut SegmentScan,
) {
    // Entry order, as one pass reports them: an entry not at a
    // frame is found out by the first frame past it.
    for (i, (e, frame_ts)) in entries.iter().zip(at_frame).enumerate() {
        match frame_ts {
            Some(ts) if e.1 != *ts => s.index.problems.push((
                e.0,
                format!("index entry {i} says timestamp {}, the frame has {ts}", e.1),
            )),
            Some(_) => {}
            None if last_off.is_some_and(|l| e.0 < l) => s.index.problems.push((
                e.0,
                format!(
                    "index entry {i} points at offset {}, which is not a frame header",
                    e.0
                ),
            )),
            None if s.stream_error.is_none() => s.index.problems.push((
                e.0,
                format!(
                    "index entry {i} points at offset {}, past the last frame",
                    e.0
                ),
            )),
            None => {}
        }
    }
}

/// The index entries of an LZ4 segment against its blocks (offset, lowest
/// and highest timestamp).
fn check_block_entries(entries: &[(u64, i64)], blocks: &[(u64, i64, i64)], s: &mut SegmentScan) {
    for (i, e) in entries.iter().enumerate() {
        match blocks.binary_search_by_key(&e.0, |b| b.0) {
            Ok(bi) => {
                let (_, lo, hi) = blocks[bi];
                if e.1 < lo || e.1 > hi {
                    s.index.problems.push((
                        e.0,
                        format!("index entry {i} says timestamp {}, outside its block's range [{lo}, {hi}]", e.1),
                    ));
                }
            }
            Err(_) if s.stream_error.is_none() => s.index.problems.push((
                e.0,
                format!(
                    "index entry {i} points at offset {}, which is not a block header",
                    e.0
                ),
            )),
            Err(_) => {}
        }
    }
}

/// Block headers, for sizes and reserved flags (up to where the read
/// stopped).
fn count_blocks(seg: &Segment<'_>, s: &mut SegmentScan) {
    let read = seg.blocks().map_while(|b| b.ok());
    for b in read.take_while(|b| b.offset < s.stream_end) {
        s.blocks += 1;
        s.block_original += b.header.original_size as u64;
        s.block_compressed += b.header.block_len();
        if b.header.flags != 0 && s.block_flags_nonzero.is_none() {
            s.block_flags_nonzero = Some(b.offset);
        }
    }
}

fn opt_min(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
