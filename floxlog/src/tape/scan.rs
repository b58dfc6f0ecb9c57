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
    let mut s = SegmentScan {
        file_size: data.len() as u64,
        raw_header: SegmentHeader::parse_unchecked(data).ok(),
        ..SegmentScan::default()
    };
    let seg = match Segment::parse(data) {
        Ok(seg) => seg,
        Err(e) => {
            s.header_error = Some(e);
            return s;
        }
    };
    let h = *seg.header();
    s.header = Some(h);
    s.unfinished = super::source::header_is_unfinished(&h);
    s.frames_end = seg.frames_end();
    s.index.flagged = h.has(flags::HAS_INDEX);
    // Unproven: the entries are checked against the frames below, each
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
    let compressed = seg.is_compressed();
    // Per LZ4 block: (offset, min ts, max ts).
    let mut blocks: Vec<(u64, i64, i64)> = Vec::new();
    let mut scratch = crate::read::block_scratch(&seg);
    let mut r = seg.reader(opts, &mut scratch);
    let mut symbols: HashSet<u32> = HashSet::new();
    let mut last_sym: Option<u32> = None;
    let mut prev_ts: Option<i64> = None;
    let mut ei = 0usize;
    loop {
        match r.next_item() {
            Ok(Some(it)) => {
                let ts = it.event.exchange_ts_ns();
                let off = it.position.offset;
                s.events += 1;
                if s.events.is_multiple_of(65536) {
                    progress(off);
                }
                let ft = it.frame.header.frame_type as usize;
                if let Some(c) = s.by_type.get_mut(ft) {
                    *c += 1;
                }
                s.frame_bytes += it.frame.len() as u64;
                s.min_ts = Some(s.min_ts.map_or(ts, |m| m.min(ts)));
                s.max_ts = Some(s.max_ts.map_or(ts, |m| m.max(ts)));
                if s.first_nonzero_ts.is_none() && ts != 0 {
                    s.first_nonzero_ts = Some(ts);
                }
                if prev_ts.is_some_and(|p| ts < p) {
                    s.inversions += 1;
                    if s.first_inversion.is_none() {
                        s.first_inversion = Some(off);
                    }
                }
                prev_ts = Some(ts);
                s.last_ts = Some(ts);
                let sym = it.event.symbol_id();
                if last_sym != Some(sym) {
                    symbols.insert(sym);
                    last_sym = Some(sym);
                }
                if compressed {
                    match blocks.last_mut() {
                        Some(b) if b.0 == off => {
                            b.1 = b.1.min(ts);
                            b.2 = b.2.max(ts);
                        }
                        _ => blocks.push((off, ts, ts)),
                    }
                } else {
                    while ei < entries.len() && entries[ei].0 < off {
                        s.index.problems.push((
                            entries[ei].0,
                            format!(
                                "index entry {ei} points at offset {}, which is not a frame header",
                                entries[ei].0
                            ),
                        ));
                        ei += 1;
                    }
                    if ei < entries.len() && entries[ei].0 == off {
                        if entries[ei].1 != ts {
                            s.index.problems.push((
                                off,
                                format!(
                                    "index entry {ei} says timestamp {}, the frame has {ts}",
                                    entries[ei].1
                                ),
                            ));
                        }
                        ei += 1;
                    }
                }
            }
            Ok(None) => break,
            Err(e) => {
                s.stream_error = Some(e);
                break;
            }
        }
    }
    s.stream_end = r.next_offset();
    if s.stream_error.is_none() && !compressed {
        for (i, e) in entries.iter().enumerate().skip(ei) {
            s.index.problems.push((
                e.0,
                format!(
                    "index entry {i} points at offset {}, past the last frame",
                    e.0
                ),
            ));
        }
    }
    if compressed {
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
        // Block headers, for sizes and reserved flags (up to where the read stopped).
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
    if let Some(ix) = &index {
        check_index_header(ix, &mut s);
    }
    let mut v: Vec<u32> = symbols.into_iter().collect();
    v.sort_unstable();
    s.symbols = v.into_iter().collect();
    progress(data.len() as u64);
    s
}

fn check_index_header(ix: &Index<'_>, s: &mut SegmentScan) {
    let h = ix.header();
    let first = ix.get(0).map(|e| e.timestamp_ns);
    let last = ix.get(ix.len().saturating_sub(1)).map(|e| e.timestamp_ns);
    if let (Some(f), Some(l)) = (first, last) {
        if h.first_ts_ns != f || h.last_ts_ns != l {
            s.index.problems.push((
                ix.offset(),
                format!(
                    "index header range [{}, {}] does not match its entries [{f}, {l}]",
                    h.first_ts_ns, h.last_ts_ns
                ),
            ));
        }
    }
}
