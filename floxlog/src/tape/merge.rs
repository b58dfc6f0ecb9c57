//! Reading the events of a tape: every segment through its own cursor, in
//! file order or merged in timestamp order by a k-way merge.
//!
//! Memory stays bounded: each cursor owns its LZ4 block scratch (one block
//! decoded at a time) and holds its next event as a copy of the frame bytes
//! (the core reader's events borrow its scratch, so a cursor cannot keep
//! them). A segment whose header carries the Sorted flag is streamed
//! directly; any other segment goes through a reorder buffer of
//! `reorder_window` events, so timestamps that go backwards by less than the
//! window come out sorted. An event further out of place than the window is
//! still output (never dropped), counted in [`TapeReader::late_events`].
//! Ties are broken by segment order, then by position in the segment, so
//! the merge is stable.
//!
//! Time-range filters use the index: in a Sorted segment the cursor seeks
//! with the index to `from` and stops at the first event at or past `to`,
//! and a segment that ends before `from` is not read at all. In a segment
//! without the Sorted flag the index cannot bound where events are, so the
//! cursor scans and filters.

use super::dir::{Tape, SERIES};
use super::error::TapeError;
use super::source::{header_is_unfinished, index_trailer_at, SegmentFile};
use floxlog_core::segment_header::flags;
use floxlog_core::{
    decode_frame, ErrorKind, Event, FrameHeader, FrameOptions, Position, RawFrame, ReadOptions,
    Reader, Segment, UnknownTypes,
};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::path::{Path, PathBuf};

/// In which order events come out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Merged by exchange timestamp across segments (stable).
    #[default]
    Time,
    /// Segment by segment, each in file order.
    File,
}

/// Which events to keep.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Keep `exchange_ts_ns >= from`.
    pub from: Option<i64>,
    /// Keep `exchange_ts_ns < to`.
    pub to: Option<i64>,
    /// Keep these symbol ids only (sorted).
    pub symbols: Option<Vec<u32>>,
    /// Keep these frame types only (index = frame type).
    pub types: Option<[bool; 6]>,
}

impl Filter {
    /// Whether an event passes.
    #[inline]
    pub fn accepts(&self, ev: &Event<'_>, frame_type: u8) -> bool {
        let ts = ev.exchange_ts_ns();
        if self.from.is_some_and(|f| ts < f) || self.to.is_some_and(|t| ts >= t) {
            return false;
        }
        if let Some(t) = &self.types {
            if !t.get(frame_type as usize).copied().unwrap_or(false) {
                return false;
            }
        }
        if let Some(s) = &self.symbols {
            if s.binary_search(&ev.symbol_id()).is_err() {
                return false;
            }
        }
        true
    }

    fn wants_series(&self, series: &str) -> bool {
        let Some(t) = &self.types else { return true };
        match series {
            "trades" => t[1],
            "book" => t[2] || t[3],
            "options" => t[4],
            "pools" => t[5],
            _ => true,
        }
    }
}

/// Reading settings.
#[derive(Clone, Debug)]
pub struct ReadConfig {
    /// Output order.
    pub order: Order,
    /// Filter.
    pub filter: Filter,
    /// Reorder buffer per unsorted segment, in events (time order only).
    pub reorder_window: usize,
    /// Codec options (CRC checks, unknown types).
    pub read: ReadOptions,
}

impl Default for ReadConfig {
    fn default() -> Self {
        ReadConfig {
            order: Order::Time,
            filter: Filter::default(),
            reorder_window: DEFAULT_REORDER_WINDOW,
            read: ReadOptions::default(),
        }
    }
}

/// Default reorder buffer: events per unsorted segment.
pub const DEFAULT_REORDER_WINDOW: usize = 1 << 16;

/// A segment that could not be read to its end.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Segment number in the tape.
    pub segment: usize,
    /// Its path.
    pub path: PathBuf,
    /// The error that stopped it.
    pub error: floxlog_core::Error,
    /// Events read from it before the error.
    pub events_before: u64,
    /// Whether this is the torn tail of a segment whose header is still a
    /// writer's placeholder (a live or crashed writer): a truncated last
    /// frame or block, or the index trailer of a writer that died closing
    /// the segment before writing the final header. Expected, not damage.
    pub tolerated: bool,
}

impl Problem {
    /// As a [`TapeError`].
    pub fn to_error(&self) -> TapeError {
        TapeError::data(&self.path, self.error)
    }
}

/// One event handed out by [`TapeReader::next_item`].
#[derive(Clone, Copy, Debug)]
pub struct Item<'x> {
    /// Segment number in the tape.
    pub segment: usize,
    /// Where the frame is in its segment.
    pub position: Position,
    /// The event.
    pub event: Event<'x>,
    /// The frame, byte for byte.
    pub frame: RawFrame<'x>,
}

#[derive(Debug)]
struct Pending {
    ts: i64,
    seq: u64,
    position: Position,
    bytes: Vec<u8>,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.ts, self.seq) == (o.ts, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.ts, self.seq).cmp(&(o.ts, o.seq))
    }
}

struct Cursor<'a> {
    seg: usize,
    path: &'a Path,
    data: &'a [u8],
    reader: Option<Reader<'a, 'a>>,
    window: usize,
    sorted: bool,
    unfinished: bool,
    /// Reorder buffer, sorted by (ts, seq): in-order events append at the
    /// back in O(1), late ones are inserted at their place.
    buf: VecDeque<Pending>,
    free: Vec<Vec<u8>>,
    seq: u64,
    last_out: Option<i64>,
    late: u64,
}

impl Cursor<'_> {
    fn fill(&mut self, f: &Filter, problems: &mut Vec<Problem>) {
        while self.buf.len() <= self.window {
            let Some(r) = self.reader.as_mut() else {
                return;
            };
            match r.next_item() {
                Ok(Some(it)) => {
                    let ts = it.event.exchange_ts_ns();
                    if self.sorted && f.to.is_some_and(|t| ts >= t) {
                        self.reader = None;
                        return;
                    }
                    if !f.accepts(&it.event, it.frame.header.frame_type) {
                        continue;
                    }
                    let mut b = self.free.pop().unwrap_or_default();
                    b.clear();
                    let mut hb = [0u8; FrameHeader::LEN];
                    it.frame.header.emit(&mut hb);
                    b.extend_from_slice(&hb);
                    b.extend_from_slice(it.frame.payload);
                    let position = it.position;
                    let p = Pending {
                        ts,
                        seq: self.seq,
                        position,
                        bytes: b,
                    };
                    match self.buf.back() {
                        Some(last) if *last > p => {
                            let at = self.buf.partition_point(|q| *q <= p);
                            self.buf.insert(at, p);
                        }
                        _ => self.buf.push_back(p),
                    }
                    self.seq += 1;
                }
                Ok(None) => self.reader = None,
                Err(e) => {
                    let events_before = r.events_read();
                    problems.push(Problem {
                        segment: self.seg,
                        path: self.path.to_path_buf(),
                        error: e,
                        events_before,
                        tolerated: self.unfinished
                            && (e.kind == ErrorKind::Truncated
                                || index_trailer_at(self.data, e.offset)),
                    });
                    self.reader = None;
                }
            }
        }
    }

    fn head(&self) -> Option<(i64, u64)> {
        self.buf.front().map(|p| (p.ts, p.seq))
    }
}

/// The per-segment state a [`TapeReader`] borrows: the mapped files and
/// their LZ4 scratch buffers.
pub struct OpenedTape {
    /// The tape listing.
    pub tape: Tape,
    /// The mapped files (`None` where opening failed; see `open_errors`).
    pub files: Vec<Option<SegmentFile>>,
    /// Files that could not be opened.
    pub open_errors: Vec<TapeError>,
    scratch: Vec<Vec<u8>>,
}

impl OpenedTape {
    /// Maps every segment of `tape`.
    pub fn open(tape: Tape) -> OpenedTape {
        let mut files = Vec::new();
        let mut open_errors = Vec::new();
        for s in &tape.segments {
            match SegmentFile::open(&s.path) {
                Ok(f) => files.push(Some(f)),
                Err(e) => {
                    open_errors.push(e);
                    files.push(None);
                }
            }
        }
        let n = files.len();
        OpenedTape {
            tape,
            files,
            open_errors,
            scratch: vec![Vec::new(); n],
        }
    }

    /// Total bytes of the mapped segment files.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().flatten().map(SegmentFile::len).sum()
    }

    /// A reader over the events.
    pub fn reader(&mut self, cfg: &ReadConfig) -> TapeReader<'_> {
        let mut problems = Vec::new();
        let mut cursors = Vec::new();
        let segs = &self.tape.segments;
        for (i, (file, scratch)) in self.files.iter().zip(self.scratch.iter_mut()).enumerate() {
            let Some(file) = file else { continue };
            let path: &Path = &file.path;
            let data = file.bytes();
            let seg = match Segment::parse(data) {
                Ok(s) => s,
                Err(e) => {
                    problems.push(Problem {
                        segment: i,
                        path: path.to_path_buf(),
                        error: e,
                        events_before: 0,
                        tolerated: data.is_empty(),
                    });
                    continue;
                }
            };
            let h = *seg.header();
            let sorted = h.has(flags::SORTED);
            let mut skip = !cfg.filter.wants_series(&segs[i].series)
                && SERIES.contains(&segs[i].series.as_str());
            if sorted && h.event_count > 0 {
                if let Some(from) = cfg.filter.from {
                    skip |= h.last_event_ns < from;
                }
            }
            let reader = if skip {
                None
            } else {
                *scratch = crate::read::block_scratch(&seg);
                let mut r = seg.reader(cfg.read, scratch.as_mut_slice());
                if sorted {
                    if let Some(from) = cfg.filter.from {
                        // Index::seek picks the last entry <= t, which can
                        // pass over earlier events equal to t; seeking to
                        // t - 1 starts at an entry strictly before t.
                        let index = seg.index().ok().flatten();
                        r.seek(index.as_ref(), from.saturating_sub(1));
                    }
                }
                Some(r)
            };
            cursors.push(Cursor {
                seg: i,
                path,
                data,
                reader,
                window: if cfg.order == Order::Time && !sorted {
                    cfg.reorder_window
                } else {
                    0
                },
                sorted,
                unfinished: header_is_unfinished(&h),
                buf: VecDeque::new(),
                free: Vec::new(),
                seq: 0,
                last_out: None,
                late: 0,
            });
        }
        let mut tr = TapeReader {
            cursors,
            order: cfg.order,
            heap: BinaryHeap::new(),
            current: 0,
            out: None,
            problems,
            filter: cfg.filter.clone(),
            started: false,
        };
        if tr.order == Order::File {
            tr.started = true;
        }
        tr
    }
}

/// Cursor over the events of a tape; see the module docs.
pub struct TapeReader<'a> {
    cursors: Vec<Cursor<'a>>,
    order: Order,
    heap: BinaryHeap<Reverse<(i64, usize, u64)>>,
    current: usize,
    out: Option<(usize, Pending)>,
    problems: Vec<Problem>,
    filter: Filter,
    started: bool,
}

impl<'a> TapeReader<'a> {
    /// Segments that stopped early so far (errors and torn tails).
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The first problem that is not a tolerated torn tail.
    pub fn first_error(&self) -> Option<&Problem> {
        self.problems.iter().find(|p| !p.tolerated)
    }

    /// Events output further out of timestamp order than the reorder
    /// window could fix (time order only).
    pub fn late_events(&self) -> u64 {
        self.cursors.iter().map(|c| c.late).sum()
    }

    fn recycle(&mut self) {
        if let Some((ci, p)) = self.out.take() {
            if let Some(c) = self.cursors.get_mut(ci) {
                c.free.push(p.bytes);
            }
        }
    }

    /// The next event, or `Ok(None)` at the end. Segments that fail are
    /// recorded in [`TapeReader::problems`] and the others go on.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, TapeError> {
        self.recycle();
        let picked = match self.order {
            Order::File => self.next_file(),
            Order::Time => self.next_time(),
        };
        let Some((ci, p)) = picked else {
            return Ok(None);
        };
        self.out = Some((ci, p));
        let Some((ci, p)) = self.out.as_ref() else {
            return Ok(None);
        };
        let c = &self.cursors[*ci];
        let opts = FrameOptions {
            verify_crc: false,
            unknown_types: UnknownTypes::Skip,
        };
        let internal = || {
            TapeError::input(
                Some(c.path),
                "internal error: a checked frame did not decode again",
            )
            .at(p.position.offset)
        };
        let (ev, _) = decode_frame(&p.bytes, opts).map_err(|_| internal())?;
        let event = ev.ok_or_else(internal)?;
        let header = FrameHeader::parse(&p.bytes).ok_or_else(internal)?;
        Ok(Some(Item {
            segment: c.seg,
            position: p.position,
            event,
            frame: RawFrame {
                header,
                payload: &p.bytes[FrameHeader::LEN..],
            },
        }))
    }

    fn next_file(&mut self) -> Option<(usize, Pending)> {
        while self.current < self.cursors.len() {
            let ci = self.current;
            let c = &mut self.cursors[ci];
            c.fill(&self.filter, &mut self.problems);
            if let Some(p) = c.buf.pop_front() {
                return Some((ci, p));
            }
            self.current += 1;
        }
        None
    }

    fn next_time(&mut self) -> Option<(usize, Pending)> {
        if !self.started {
            self.started = true;
            for (ci, c) in self.cursors.iter_mut().enumerate() {
                c.fill(&self.filter, &mut self.problems);
                if let Some((ts, seq)) = c.head() {
                    self.heap.push(Reverse((ts, ci, seq)));
                }
            }
        }
        let Reverse((_, ci, _)) = self.heap.pop()?;
        let c = &mut self.cursors[ci];
        let p = c.buf.pop_front()?;
        if c.last_out.is_some_and(|l| p.ts < l) {
            c.late += 1;
        } else {
            c.last_out = Some(p.ts);
        }
        c.fill(&self.filter, &mut self.problems);
        if let Some((ts, seq)) = c.head() {
            self.heap.push(Reverse((ts, ci, seq)));
        }
        Some((ci, p))
    }
}
