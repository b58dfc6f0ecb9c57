//! Reading the events of a tape: every segment through its own cursor, in
//! file order or merged in timestamp order by a k-way merge.
//!
//! Memory stays bounded by what must be held. A cursor is a segment and the
//! offset to read on from; each refill makes a core reader there (over one
//! LZ4 block scratch that every cursor shares: the largest block of the
//! tape, not one per segment), reads to a block boundary, copies the frames
//! it keeps into the cursor's buffer and drops the reader. A segment whose
//! header carries the Sorted flag is streamed; any other segment goes
//! through a reorder buffer of `reorder_window` events, so timestamps that
//! go backwards by less than the window come out sorted. An event further
//! out of place than the window is still output (never dropped), counted in
//! [`TapeReader::late_events`]. The buffered frame bytes of all cursors are
//! bounded by `reorder_bytes` (default 256 MiB): a tape that needs more
//! fails clearly, naming the options, rather than growing without bound.
//! Ties are broken by segment order, then by position in the segment, so
//! the merge is stable.
//!
//! Time-range filters use the index: in a Sorted segment the cursor seeks
//! with the index (once proven: every entry a frame or block boundary) to
//! `from`, and stops at the first event at or past `to`. Header time bounds
//! are never used to skip a segment, and in a segment without the Sorted
//! flag the index cannot bound where events are, so the cursor scans and
//! filters.

use super::dir::Tape;
use super::error::TapeError;
use super::source::{is_torn_tail, SegmentFile};
use floxlog_core::segment_header::flags;
use floxlog_core::{
    Event, FrameHeader, Position, RawFrame, ReadOptions, Reader, Segment, SegmentHeader,
};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::path::{Path, PathBuf};

mod trades;
pub use trades::TradeRun;

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
    /// Parses record type names into the [`Filter::types`] mask (index =
    /// frame type): `trade`, `book_snapshot`, `book_delta`, `book` (both
    /// book types), `option_quote`, `pool_state`, and the short forms
    /// `trades`, `snapshot`, `delta`, `option`, `options`, `pool`, `pools`
    /// (case-insensitive; surrounding blanks ignored). No names means no
    /// filter (`None`); an unknown name is a usage error.
    pub fn types_from_names<S: AsRef<str>>(names: &[S]) -> Result<Option<[bool; 6]>, TapeError> {
        if names.is_empty() {
            return Ok(None);
        }
        let mut m = [false; 6];
        for n in names {
            let n = n.as_ref().trim().to_ascii_lowercase();
            let idx: &[usize] = match n.as_str() {
                "trade" | "trades" => &[1],
                "book_snapshot" | "snapshot" => &[2],
                "book_delta" | "delta" => &[3],
                "book" => &[2, 3],
                "option_quote" | "option" | "options" => &[4],
                "pool_state" | "pool" | "pools" => &[5],
                _ => {
                    return Err(TapeError::usage(format!(
                        "unknown --type `{n}` (trade, book_snapshot, book_delta, book, option_quote, pool_state)"
                    )))
                }
            };
            for &i in idx {
                m[i] = true;
            }
        }
        Ok(Some(m))
    }

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
    /// Most frame bytes all reorder buffers may hold together.
    pub reorder_bytes: usize,
    /// Codec options (CRC checks, unknown types).
    pub read: ReadOptions,
}

impl Default for ReadConfig {
    fn default() -> Self {
        ReadConfig {
            order: Order::Time,
            filter: Filter::default(),
            reorder_window: DEFAULT_REORDER_WINDOW,
            reorder_bytes: DEFAULT_REORDER_BYTES,
            read: ReadOptions::default(),
        }
    }
}

/// Default reorder buffer: events per unsorted segment.
pub const DEFAULT_REORDER_WINDOW: usize = 1 << 16;

/// Default bound on the frame bytes the reorder buffers hold (256 MiB).
pub const DEFAULT_REORDER_BYTES: usize = 256 << 20;

/// Reusable frame buffers a cursor keeps (larger ones are freed).
const FREE_BUFFERS: usize = 256;
const FREE_BUFFER_BYTES: usize = 64 << 10;

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
    bytes: FrameBytes,
}

/// Where a buffered event's frame is.
#[derive(Debug)]
enum FrameBytes {
    /// In the segment's mapping (uncompressed): start and length. Nothing
    /// is copied; the frame is decoded again from the mapping.
    Mapped(usize, usize),
    /// Copied out of an LZ4 block: the block scratch is reused.
    Owned(Vec<u8>),
}

impl FrameBytes {
    /// What holding it costs, for the merge's memory bound.
    fn held(&self) -> usize {
        match self {
            FrameBytes::Mapped(..) => std::mem::size_of::<Pending>(),
            FrameBytes::Owned(b) => b.capacity(),
        }
    }
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
    seg_no: usize,
    path: &'a Path,
    seg: Segment<'a>,
    header: SegmentHeader,
    opts: ReadOptions,
    /// Where to read on; `None` once the segment is done.
    next: Option<u64>,
    /// The index seek to start with (first refill only).
    seek_to: Option<i64>,
    events_read: u64,
    window: usize,
    sorted: bool,
    /// Time order: the buffer is kept sorted. File order: never reordered.
    by_time: bool,
    /// Reorder buffer, sorted by (ts, seq) in time order: in-order events
    /// append at the back in O(1), late ones are inserted at their place.
    buf: VecDeque<Pending>,
    free: Vec<Vec<u8>>,
    seq: u64,
    last_out: Option<i64>,
    late: u64,
}

/// What the cursors share while refilling.
struct Shared<'r> {
    scratch: &'r mut [u8],
    filter: &'r Filter,
    problems: &'r mut Vec<Problem>,
    /// Frame bytes held by every cursor's buffer.
    buffered: &'r mut usize,
    budget: usize,
}

impl Cursor<'_> {
    /// Refills the buffer to its window (and a block boundary), reading
    /// with a core reader made at `next` over the shared scratch.
    fn fill(&mut self, sh: &mut Shared<'_>) -> Result<(), TapeError> {
        if self.buf.len() > self.window {
            return Ok(());
        }
        let Some(at) = self.next.take() else {
            return Ok(());
        };
        let mut r = match self.seek_to.take() {
            Some(t) => {
                let mut r = self.seg.reader(self.opts, sh.scratch);
                // Segment::index proves every entry is a frame or block
                // boundary; an index that fails the proof is not used.
                let index = self.seg.index().ok().flatten();
                r.seek(index.as_ref(), t);
                r
            }
            None => match self.seg.reader_at(at, self.opts, sh.scratch) {
                Ok(r) => r,
                Err(e) => {
                    self.stop(e, sh.problems);
                    return Ok(());
                }
            },
        };
        let before = r.events_read();
        let outcome = loop {
            if self.buf.len() > self.window {
                match r.end_block() {
                    Ok(true) => break Ok(Some(r.next_offset())),
                    Ok(false) => {}
                    Err(e) => break Err(e),
                }
            }
            let it = match r.next_item() {
                Ok(Some(it)) => it,
                Ok(None) => break Ok(None),
                Err(e) => break Err(e),
            };
            let ts = it.event.exchange_ts_ns();
            if self.sorted && sh.filter.to.is_some_and(|t| ts >= t) {
                break Ok(None);
            }
            if !sh.filter.accepts(&it.event, it.frame.header.frame_type) {
                continue;
            }
            let b = if it.position.in_block.is_none() {
                FrameBytes::Mapped(it.position.offset as usize, it.frame.len())
            } else {
                let mut b = self.free.pop().unwrap_or_default();
                b.clear();
                let mut hb = [0u8; FrameHeader::LEN];
                it.frame.header.emit(&mut hb);
                b.extend_from_slice(&hb);
                b.extend_from_slice(it.frame.payload);
                FrameBytes::Owned(b)
            };
            *sh.buffered += b.held();
            let p = Pending {
                ts,
                seq: self.seq,
                position: it.position,
                bytes: b,
            };
            match self.buf.back() {
                Some(last) if self.by_time && *last > p => {
                    let at = self.buf.partition_point(|q| *q <= p);
                    self.buf.insert(at, p);
                }
                _ => self.buf.push_back(p),
            }
            self.seq += 1;
            // Time order holds every cursor's window (or at least its next
            // event) at once: all of it counts. File order holds one
            // cursor's current block at a time, at most what the scratch
            // holds anyway.
            if self.by_time && *sh.buffered > sh.budget {
                return Err(TapeError::usage(format!(
                    "merging in time order needs more than {} MiB of buffered events (at {}: each segment's next events, up to --reorder-window per unsorted segment)",
                    sh.budget >> 20,
                    self.path.display(),
                ))
                .with_hint("raise --reorder-bytes, lower --reorder-window, or read with --file-order"));
            }
        };
        self.events_read += r.events_read() - before;
        match outcome {
            Ok(next) => self.next = next,
            Err(e) => self.stop(e, sh.problems),
        }
        Ok(())
    }

    /// Time order: an event at `ts` goes out; counts it late if it is
    /// earlier than the latest before it.
    #[inline(always)]
    fn count_late(&mut self, ts: i64) {
        if self.last_out.is_some_and(|l| ts < l) {
            self.late += 1;
        } else {
            self.last_out = Some(ts);
        }
    }

    /// Records the error that ends this segment's read.
    fn stop(&mut self, e: floxlog_core::Error, problems: &mut Vec<Problem>) {
        let data = self.seg.data();
        problems.push(Problem {
            segment: self.seg_no,
            path: self.path.to_path_buf(),
            error: e,
            events_before: self.events_read,
            tolerated: is_torn_tail(&self.header, &e, self.events_read, data),
        });
        self.next = None;
    }

    /// Takes the next buffered event, giving its bytes back to the budget.
    fn pop(&mut self, buffered: &mut usize) -> Option<Pending> {
        let p = self.buf.pop_front()?;
        *buffered -= p.bytes.held();
        Some(p)
    }

    /// Keeps a frame buffer for reuse (a bounded number of small ones).
    fn recycle(&mut self, b: FrameBytes) {
        let FrameBytes::Owned(b) = b else {
            return;
        };
        if self.free.len() < FREE_BUFFERS && b.capacity() <= FREE_BUFFER_BYTES {
            self.free.push(b);
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
    /// The LZ4 block scratch every cursor of a reader shares.
    scratch: Vec<u8>,
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
        OpenedTape {
            tape,
            files,
            open_errors,
            scratch: Vec::new(),
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
        let mut scratch_len = 0;
        for (i, file) in self.files.iter().enumerate() {
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
            // Neither the header's time bounds nor the file's series label
            // decides what a segment holds: the reference profile's
            // last_event_ns is the last event handed in, not the latest,
            // and a `book-000000.bin` may hold trades. The filter looks at
            // every event; the proven index only says where to start.
            let h = *seg.header();
            let sorted = h.has(flags::SORTED);
            scratch_len = scratch_len.max(seg.scratch_len());
            cursors.push(Cursor {
                seg_no: i,
                path,
                seg,
                header: h,
                opts: cfg.read,
                next: Some(SegmentHeader::LEN as u64),
                seek_to: cfg.filter.from.filter(|_| sorted),
                events_read: 0,
                window: if cfg.order == Order::Time && !sorted {
                    cfg.reorder_window
                } else {
                    0
                },
                sorted,
                by_time: cfg.order == Order::Time,
                buf: VecDeque::new(),
                free: Vec::new(),
                seq: 0,
                last_out: None,
                late: 0,
            });
        }
        self.scratch.clear();
        self.scratch.resize(scratch_len, 0);
        let direct = cfg.order == Order::File || matches!(&cursors[..], [c] if c.sorted);
        TapeReader {
            direct,
            live: None,
            held: false,
            cursors,
            order: cfg.order,
            heap: BinaryHeap::new(),
            current: 0,
            out: None,
            problems,
            filter: cfg.filter.clone(),
            started: cfg.order == Order::File,
            scratch: &mut self.scratch,
            buffered: 0,
            budget: cfg.reorder_bytes,
        }
    }
}

/// The merge: each cursor's next (timestamp, cursor, sequence), least first.
type Heap = BinaryHeap<Reverse<(i64, usize, u64)>>;

/// Cursor over the events of a tape; see the module docs.
pub struct TapeReader<'a> {
    /// File order, or time order over one sorted segment: segments are
    /// read in place, one after the other, by `live`, with nothing buffered
    /// or copied (see [`TapeReader::run_live`]).
    direct: bool,
    /// The cursor being read in place, and its core reader (over the
    /// mapping, and for LZ4 the shared scratch, lent to it meanwhile).
    live: Option<(usize, Reader<'a, 'a>)>,
    /// The live reader's last event is the current one.
    held: bool,
    cursors: Vec<Cursor<'a>>,
    order: Order,
    heap: Heap,
    current: usize,
    out: Option<(usize, Pending)>,
    problems: Vec<Problem>,
    filter: Filter,
    started: bool,
    scratch: &'a mut [u8],
    buffered: usize,
    budget: usize,
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
                c.recycle(p.bytes);
            }
        }
    }

    /// The next event, or `Ok(None)` at the end. Segments that fail are
    /// recorded in [`TapeReader::problems`] and the others go on.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, TapeError> {
        self.recycle();
        self.held = false;
        if self.direct {
            while self.current < self.cursors.len() {
                // Declined, the event stays the current one.
                let (_, found) = self.run_live(self.current, 1, |_, _, _| false);
                if found {
                    return self.current();
                }
                self.current += 1;
            }
            return Ok(None);
        }
        let picked = match self.order {
            Order::File => self.next_file()?,
            Order::Time => self.next_time()?,
        };
        let Some((ci, p)) = picked else {
            return Ok(None);
        };
        self.out = Some((ci, p));
        self.current()
    }

    /// The event [`TapeReader::next_item`] returned last, again (`None`
    /// before the first and after the end): for a caller that stopped
    /// before handing it out.
    pub fn current(&self) -> Result<Option<Item<'_>>, TapeError> {
        if self.held {
            let Some((ci, r)) = self.live.as_ref() else {
                return Ok(None);
            };
            let c = &self.cursors[*ci];
            let it = r.last_item().ok_or_else(|| {
                TapeError::input(
                    Some(c.path),
                    "internal error: a checked frame did not decode again",
                )
                .at(r.position().offset)
            })?;
            return Ok(Some(Item {
                segment: c.seg_no,
                position: it.position,
                event: it.event,
                frame: it.frame,
            }));
        }
        let Some((ci, p)) = self.out.as_ref() else {
            return Ok(None);
        };
        let c = &self.cursors[*ci];
        let internal = || {
            TapeError::input(
                Some(c.path),
                "internal error: a checked frame did not decode again",
            )
            .at(p.position.offset)
        };
        let bytes = match &p.bytes {
            FrameBytes::Mapped(at, len) => c.seg.data().get(*at..at + len),
            FrameBytes::Owned(b) => Some(&b[..]),
        }
        .ok_or_else(internal)?;
        let frame = RawFrame {
            header: FrameHeader::parse(bytes, p.position.offset).map_err(|_| internal())?,
            payload: bytes.get(FrameHeader::LEN..).ok_or_else(internal)?,
        };
        let event = frame.event(p.position.offset).map_err(|_| internal())?;
        Ok(Some(Item {
            segment: c.seg_no,
            position: p.position,
            event,
            frame,
        }))
    }

    /// The cursors, the merge heap and what the cursors share, borrowed
    /// apart.
    fn split(&mut self) -> (&mut [Cursor<'a>], &mut Heap, Shared<'_>) {
        let sh = Shared {
            scratch: self.scratch,
            filter: &self.filter,
            problems: &mut self.problems,
            buffered: &mut self.buffered,
            budget: self.budget,
        };
        (&mut self.cursors, &mut self.heap, sh)
    }

    fn next_file(&mut self) -> Result<Option<(usize, Pending)>, TapeError> {
        while self.current < self.cursors.len() {
            let ci = self.current;
            let (cursors, _, mut sh) = self.split();
            let c = &mut cursors[ci];
            c.fill(&mut sh)?;
            if let Some(p) = c.pop(sh.buffered) {
                return Ok(Some((ci, p)));
            }
            self.current += 1;
        }
        Ok(None)
    }

    /// Hands the next events to `take` (with their segment number and
    /// position), at most `max`, until it declines
    /// one (which is then [`TapeReader::current`]; the next call goes on
    /// after it, so a caller that wants it fetches it there) or the events
    /// end; returns how many it took.
    /// The events and errors are those [`TapeReader::next_item`] gives, in
    /// the same order; segments read in place are handed out in a tight
    /// loop, without returning each event.
    pub fn next_run<F>(&mut self, max: usize, mut take: F) -> Result<usize, TapeError>
    where
        F: FnMut(usize, Position, &Event<'_>) -> bool,
    {
        let mut n = 0;
        if self.direct {
            self.recycle();
            self.held = false;
            while n < max && self.current < self.cursors.len() {
                let (k, declined) = self.run_live(self.current, max - n, &mut take);
                n += k;
                if declined || n == max {
                    break;
                }
                self.current += 1;
            }
            return Ok(n);
        }
        while n < max {
            match self.next_item()? {
                Some(it) => {
                    if !take(it.segment, it.position, &it.event) {
                        break;
                    }
                    n += 1;
                }
                None => break,
            }
        }
        Ok(n)
    }

    /// Hands up to `max` events of cursor `ci` to `take`, read in place: a
    /// core reader over the mapping (an LZ4 segment's blocks decoded into
    /// the shared scratch, lent to it), made where the cursor would start
    /// (its index seek or offset) and kept until the segment ends. Applies
    /// the filter as [`Cursor::fill`] does, and in time order counts late
    /// events as [`TapeReader::next_time`] does. An event `take` declines
    /// stays the current one ([`TapeReader::current`]). Returns how many
    /// were taken and whether one was declined; when it returns fewer than
    /// `max` without declining, the segment is done (its error, if any, in
    /// the problems) and its reader dropped.
    fn run_live<F>(&mut self, ci: usize, max: usize, mut take: F) -> (usize, bool)
    where
        F: FnMut(usize, Position, &Event<'_>) -> bool,
    {
        if !self.open_live(ci) {
            return (0, false);
        }
        let (Some(c), Some((_, r))) = (self.cursors.get_mut(ci), self.live.as_mut()) else {
            return (0, false);
        };
        let mut n = 0;
        let end = loop {
            if n == max {
                return (n, false);
            }
            // Not next_item: moving the bigger item out of the result costs
            // more than decoding it.
            let (ev, position) = match r.next_event_at() {
                Ok(Some(found)) => found,
                Ok(None) => break None,
                Err(e) => break Some(e),
            };
            let ts = ev.exchange_ts_ns();
            if c.sorted && self.filter.to.is_some_and(|t| ts >= t) {
                break None;
            }
            if !self.filter.accepts(&ev, ev.frame_type()) {
                continue;
            }
            if c.by_time {
                c.count_late(ts);
            }
            if !take(c.seg_no, position, &ev) {
                self.held = true;
                return (n, true);
            }
            n += 1;
        };
        self.close_live(ci, end);
        (n, false)
    }

    /// Makes the core reader of cursor `ci` the live one, unless it already
    /// is: over the mapping (an LZ4 segment's blocks decoded into the shared
    /// scratch, lent to it), where the cursor would start (its index seek
    /// or offset). False when the segment has nothing more to read (or
    /// cannot start: its problem is recorded).
    fn open_live(&mut self, ci: usize) -> bool {
        if self.live.is_some() {
            return true;
        }
        let Some(c) = self.cursors.get_mut(ci) else {
            return false;
        };
        let Some(at) = c.next.take() else {
            return false;
        };
        let scratch = if c.seg.is_compressed() {
            std::mem::take(&mut self.scratch)
        } else {
            &mut []
        };
        let r = match c.seek_to.take() {
            Some(t) => {
                let mut r = c.seg.reader(c.opts, scratch);
                // Segment::index proves every entry is a frame or block
                // boundary; an index that fails the proof is not used.
                let index = c.seg.index().ok().flatten();
                r.seek(index.as_ref(), t);
                r
            }
            None => match c.seg.reader_at(at, c.opts, scratch) {
                Ok(r) => r,
                Err(e) => {
                    c.stop(e, &mut self.problems);
                    return false;
                }
            },
        };
        self.live = Some((ci, r));
        true
    }

    /// Ends the live read of cursor `ci` on `end` (the error, if any, into
    /// the problems), giving the scratch back.
    fn close_live(&mut self, ci: usize, end: Option<floxlog_core::Error>) {
        let Some(c) = self.cursors.get_mut(ci) else {
            return;
        };
        if let Some((_, r)) = self.live.take() {
            c.events_read += r.events_read();
            let scratch = r.into_scratch();
            if !scratch.is_empty() {
                self.scratch = scratch;
            }
        }
        match end {
            Some(e) => c.stop(e, &mut self.problems),
            None => c.next = None,
        }
    }

    fn next_time(&mut self) -> Result<Option<(usize, Pending)>, TapeError> {
        let started = std::mem::replace(&mut self.started, true);
        let (cursors, heap, mut sh) = self.split();
        if !started {
            for (ci, c) in cursors.iter_mut().enumerate() {
                c.fill(&mut sh)?;
                if let Some((ts, seq)) = c.head() {
                    heap.push(Reverse((ts, ci, seq)));
                }
            }
        }
        let Some(Reverse((_, ci, _))) = heap.pop() else {
            return Ok(None);
        };
        let c = &mut cursors[ci];
        let Some(p) = c.pop(sh.buffered) else {
            return Ok(None);
        };
        c.count_late(p.ts);
        c.fill(&mut sh)?;
        if let Some((ts, seq)) = c.head() {
            heap.push(Reverse((ts, ci, seq)));
        }
        Ok(Some((ci, p)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_from_names_builds_the_mask() {
        assert_eq!(Filter::types_from_names::<&str>(&[]).unwrap(), None);
        assert_eq!(
            Filter::types_from_names(&[" Trade", "book"]).unwrap(),
            Some([false, true, true, true, false, false])
        );
        assert_eq!(
            Filter::types_from_names(&["options".to_string(), "POOL_STATE".to_string()]).unwrap(),
            Some([false, false, false, false, true, true])
        );
        let e = Filter::types_from_names(&["quote"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message.starts_with("unknown --type `quote`"), "{e}");
    }
}
