//! Tape events as record batches.
//!
//! The result is exactly what [`floxlog::tape::TapeReader`] (and so
//! `floxlog cat`) returns for the same settings: the same events, in the
//! same order, stopping at the same errors. Two ways get there:
//!
//! - **Direct**: each segment through its own core reader, events pushed
//!   from the zero-copy views into the column builders. File order reads
//!   the segments one after the other. Time order merges them by
//!   (timestamp, segment), keeping each input's next event in a reusable
//!   slot, and keeps taking from one segment while it stays ahead of the
//!   others. This is exact when every segment's (filtered) events already
//!   come in timestamp order: a Sorted segment is streamed by the general
//!   merge too, and an unsorted uncompressed segment is checked first by a
//!   timestamps-only pass (no CRC, a fraction of the decode) and read
//!   directly only when its events never go back in time.
//! - **Merged**: anything else (an unsorted LZ4 segment, events out of
//!   order, LZ4 scratch beyond the reorder budget) goes through the
//!   general reader, whose time order is exact (an ordering of each
//!   unsorted segment; see [`floxlog::tape::merge`]).
//!
//! Time filters seek with a Sorted segment's index, as the general reader
//! does; type filters drop frames before any column sees them.

use crate::columns::{Columns, Limits};
use crate::schema::RecordType;
use crate::symbols::Symbols;
use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use floxlog::owned::OwnedEvent;
use floxlog::tape::merge::{Problem, DEFAULT_REORDER_BYTES, DEFAULT_REORDER_WINDOW};
use floxlog::tape::shortfall::SegmentCheck;
use floxlog::tape::source::{is_torn_tail, SegmentFile};
use floxlog::tape::{Filter, OpenedTape, Order, ReadConfig, TapeError};
use floxlog_core::segment_header::flags;
use floxlog_core::{Event, ReadOptions, Reader, Segment, SegmentHeader};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

/// What to read and how.
#[derive(Clone, Debug)]
pub struct ReadSpec {
    /// Time order (merged, stable) or file order.
    pub order: Order,
    /// Time range, symbols, record types.
    pub filter: Filter,
    /// Batch bounds.
    pub limits: Limits,
    /// Codec options (CRC checks, unknown frame types).
    pub read: ReadOptions,
    /// Accepted and ignored: time order is exact.
    pub reorder_window: usize,
    /// Most bytes the orderings (merged path), or the direct path's LZ4
    /// block buffers, may hold together.
    pub reorder_bytes: usize,
    /// [`read_table`] splits segments into ranges of at least this many
    /// bytes to decode them on several threads.
    pub min_chunk_bytes: u64,
}

impl Default for ReadSpec {
    fn default() -> Self {
        ReadSpec {
            order: Order::Time,
            filter: Filter::default(),
            limits: Limits::default(),
            read: ReadOptions::default(),
            reorder_window: DEFAULT_REORDER_WINDOW,
            reorder_bytes: DEFAULT_REORDER_BYTES,
            min_chunk_bytes: 4 << 20,
        }
    }
}

/// How a read went.
#[derive(Clone, Debug, Default)]
pub struct ReadSummary {
    /// Rows handed to the sink, by [`RecordType`] (index = `rt as usize`).
    pub rows: [u64; 4],
    /// Segments that stopped early (errors and torn tails), as
    /// [`floxlog::tape::TapeReader::problems`] reports them.
    pub problems: Vec<Problem>,
    /// Always 0: time order is exact (kept for the callers that report
    /// it).
    pub late_events: u64,
    /// Whether the direct path read the tape (see the module docs).
    pub direct: bool,
}

impl ReadSummary {
    /// Rows of one type.
    pub fn rows_of(&self, rt: RecordType) -> u64 {
        self.rows[rt as usize]
    }

    /// Rows of every type.
    pub fn total_rows(&self) -> u64 {
        self.rows.iter().sum()
    }

    /// The first problem that is an error: any, when `strict`; otherwise
    /// one that is not the torn tail of an unfinished segment.
    pub fn error(&self, strict: bool) -> Option<TapeError> {
        self.problems
            .iter()
            .find(|p| strict || !p.tolerated)
            .map(Problem::to_error)
    }
}

/// Where batches go. An error from the sink ends the read with it.
pub type Sink<'s> = dyn FnMut(RecordType, RecordBatch) -> Result<(), TapeError> + 's;

fn arrow_error(e: ArrowError) -> TapeError {
    TapeError::input(None, format!("building an Arrow batch: {e}"))
}

/// Column builders and the sink.
struct Emit<'x, 's> {
    cols: Columns,
    symbols: &'x Symbols,
    sink: &'x mut Sink<'s>,
    rows: [u64; 4],
}

impl Emit<'_, '_> {
    #[inline]
    fn push(&mut self, ev: &Event<'_>, path: &Path, offset: u64) -> Result<(), TapeError> {
        match self.cols.push(ev) {
            Ok(None) => Ok(()),
            Ok(Some(rt)) => self.flush(rt),
            Err(msg) => Err(TapeError::input(Some(path), msg).at(offset)),
        }
    }

    fn flush(&mut self, rt: RecordType) -> Result<(), TapeError> {
        if let Some(b) = self.cols.finish(rt, self.symbols).map_err(arrow_error)? {
            self.rows[rt as usize] += b.num_rows() as u64;
            (self.sink)(rt, b)?;
        }
        Ok(())
    }

    fn flush_all(&mut self) -> Result<(), TapeError> {
        RecordType::ALL.iter().try_for_each(|&rt| self.flush(rt))
    }
}

/// Reads the events `spec` selects as batches of at most
/// `spec.limits.rows` rows, each handed to `sink` with its table (one
/// table per [`RecordType`]; set `spec.filter.types` to read fewer).
///
/// Batches of different types are interleaved as they fill; within a type
/// rows keep the read order. Segments that fail are recorded in the
/// summary's `problems` and the others are read on, as with
/// [`floxlog::tape::TapeReader`]; every event before an error has been
/// handed to the sink by the time this returns. `Err` is kept for what
/// ends the whole read: the sink's errors, the merge's memory budget,
/// a pool-state payload too large for an Arrow batch. Files that could not
/// be opened are in `opened.open_errors`.
pub fn read_batches(
    opened: &mut OpenedTape,
    spec: &ReadSpec,
    symbols: &Symbols,
    sink: &mut Sink<'_>,
) -> Result<ReadSummary, TapeError> {
    let mut emit = Emit {
        cols: Columns::new(spec.limits),
        symbols,
        sink,
        rows: [0; 4],
    };
    let mut summary = ReadSummary::default();
    match plan(opened, spec, true) {
        Some(plan) => {
            summary.direct = true;
            summary.problems = plan.problems;
            let inputs = plan.inputs;
            if spec.order == Order::File || inputs.len() <= 1 {
                let mut scratch = vec![0u8; plan.scratch_max];
                for input in &inputs {
                    let mut track = Track::default();
                    read_one(
                        input,
                        spec,
                        &mut scratch,
                        &mut emit,
                        &mut summary.problems,
                        &mut track,
                    )?;
                }
            } else {
                summary.late_events = merge(inputs, spec, &mut emit, &mut summary.problems)?;
            }
        }
        None => {
            let cfg = ReadConfig {
                order: spec.order,
                filter: spec.filter.clone(),
                reorder_window: spec.reorder_window,
                reorder_bytes: spec.reorder_bytes,
                read: spec.read,
            };
            let paths: Vec<_> = opened
                .tape
                .segments
                .iter()
                .map(|s| s.path.clone())
                .collect();
            let mut r = opened.reader(&cfg);
            while let Some(it) = r.next_item()? {
                let path = paths.get(it.segment).map_or(Path::new(""), |p| p.as_path());
                emit.push(&it.event, path, it.position.offset)?;
            }
            summary.problems = r.problems().to_vec();
            summary.late_events = r.late_events();
        }
    }
    emit.flush_all()?;
    summary.rows = emit.rows;
    Ok(summary)
}

/// One segment of the direct path.
struct Input<'a> {
    segment: usize,
    path: &'a Path,
    file: &'a SegmentFile,
    seg: Segment<'a>,
    header: SegmentHeader,
    /// Sorted flag: seek with the index, stop at `to`.
    sorted: bool,
    /// Cut short? A live writer?
    check: SegmentCheck,
}

struct Plan<'a> {
    inputs: Vec<Input<'a>>,
    problems: Vec<Problem>,
    /// The largest LZ4 scratch one segment needs.
    scratch_max: usize,
}

/// The direct path's inputs, or `None` when the tape needs the merged
/// path. `merging`: the inputs will be merged by [`merge`] (time order),
/// so each must be known to be in order and their LZ4 blocks must fit the
/// budget together; otherwise ([`read_table`] checks order after decoding)
/// every segment is an input.
fn plan<'a>(opened: &'a OpenedTape, spec: &ReadSpec, merging: bool) -> Option<Plan<'a>> {
    let mut inputs = Vec::new();
    let mut problems = Vec::new();
    let mut scratch_sum = 0usize;
    let mut scratch_max = 0usize;
    for (i, file) in opened.files.iter().enumerate() {
        let Some(file) = file else { continue };
        let data = file.bytes();
        let seg = match Segment::parse(data) {
            Ok(s) => s,
            Err(e) => {
                // As the general reader records it.
                let c = opened.check(i);
                problems.push(Problem::new(i, &file.path, e, 0, data.is_empty(), c));
                continue;
            }
        };
        let header = *seg.header();
        let sorted = header.has(flags::SORTED);
        if merging
            && spec.order == Order::Time
            && !sorted
            && (seg.is_compressed() || !in_time_order(&seg, spec))
        {
            return None;
        }
        let s = seg.scratch_len();
        scratch_max = scratch_max.max(s);
        scratch_sum = scratch_sum.saturating_add(s);
        inputs.push(Input {
            segment: i,
            path: &file.path,
            file,
            seg,
            header,
            sorted,
            check: opened.check(i),
        });
    }
    // A time-order merge holds one LZ4 block per segment at once.
    if merging && spec.order == Order::Time && inputs.len() > 1 && scratch_sum > spec.reorder_bytes
    {
        return None;
    }
    Some(Plan {
        inputs,
        problems,
        scratch_max,
    })
}

/// Whether the events of an uncompressed segment that pass the filter
/// never go back in time (the timestamps-only pass: no CRC; where the
/// strict read will stop, this pass may read on, which can only make it
/// say no).
fn in_time_order(seg: &Segment<'_>, spec: &ReadSpec) -> bool {
    let opts = ReadOptions {
        verify_crc: false,
        ..spec.read
    };
    let mut r = seg.reader(opts, &mut []);
    let mut last = i64::MIN;
    while let Ok(Some(ev)) = r.next_event() {
        if !spec.filter.accepts(&ev, ev.frame_type()) {
            continue;
        }
        let ts = ev.exchange_ts_ns();
        if ts < last {
            return false;
        }
        last = ts;
    }
    true
}

fn reader_for<'a, 's>(input: &Input<'a>, spec: &ReadSpec, scratch: &'s mut [u8]) -> Reader<'a, 's> {
    let mut r = input.seg.reader(spec.read, scratch);
    if let (true, Some(from)) = (input.sorted, spec.filter.from) {
        // Segment::index proves every entry is a frame or block boundary;
        // an index that fails the proof is not used.
        let index = input.seg.index().ok().flatten();
        r.seek(index.as_ref(), from);
    }
    r
}

/// The problem that ends a segment's read: `e`, or the file's shrinking
/// under the map if it shrank (never a torn tail).
fn problem(input: &Input<'_>, e: floxlog_core::Error, events_before: u64) -> Problem {
    let shrunk = input.file.shrink_error(Some(&e));
    let torn = shrunk.is_none() && is_torn_tail(&input.header, &e, events_before, input.seg.data());
    Problem::new(
        input.segment,
        input.path,
        shrunk.unwrap_or(e),
        events_before,
        torn,
        input.check,
    )
}

/// The timestamps a segment's read emitted: first, last, and whether they
/// never went back.
#[derive(Clone, Copy, Debug)]
struct Track {
    first: Option<i64>,
    last: i64,
    in_order: bool,
}

impl Default for Track {
    fn default() -> Self {
        Track {
            first: None,
            last: i64::MIN,
            in_order: true,
        }
    }
}

impl Track {
    #[inline]
    fn see(&mut self, ts: i64) {
        self.first.get_or_insert(ts);
        self.in_order &= ts >= self.last;
        self.last = ts;
    }
}

/// How a read of a byte range ended.
#[derive(Clone, Copy, Debug, Default)]
enum End {
    /// At the end of the range (or of the segment).
    #[default]
    Done,
    /// At the first event at or past the filter's `to` (Sorted segment).
    Stopped,
    /// On an error, after this many events of the segment.
    Failed(floxlog_core::Error, u64),
}

/// The events of `input` whose frame (or LZ4 block) starts in
/// `[start, end)` into the builders: from the first frame (with the
/// index seek of a Sorted segment) when `start` is `None`; returns how the
/// range ended and the events read in it. Events counted for an error are
/// the segment's own count when the range is the whole segment, else the
/// range's (the caller adds the ranges before it).
fn read_range(
    input: &Input<'_>,
    spec: &ReadSpec,
    scratch: &mut [u8],
    emit: &mut Emit<'_, '_>,
    track: &mut Track,
    start: Option<u64>,
    end: u64,
) -> Result<(End, u64), TapeError> {
    let f = &spec.filter;
    let stop_at = f.to.filter(|_| input.sorted);
    let whole = start.is_none() && end == u64::MAX;
    let mut r = match start {
        None => reader_for(input, spec, scratch),
        Some(at) => match input.seg.reader_at(at, spec.read, scratch) {
            Ok(r) => r,
            Err(e) => return Ok((End::Failed(e, 0), 0)),
        },
    };
    let mut n = 0u64;
    loop {
        match r.next_item() {
            Ok(Some(it)) => {
                if it.position.offset >= end {
                    return Ok((End::Done, n));
                }
                n += 1;
                let ev = it.event;
                let ts = ev.exchange_ts_ns();
                if stop_at.is_some_and(|t| ts >= t) {
                    return Ok((End::Stopped, n));
                }
                if f.accepts(&ev, it.frame.header.frame_type) {
                    track.see(ts);
                    emit.push(&ev, input.path, it.position.offset)?;
                }
            }
            Ok(None) => return Ok((End::Done, n)),
            // Damage where the next range starts is that range's to report.
            Err(e) if e.offset >= end => return Ok((End::Done, n)),
            Err(e) => {
                let before = if whole { r.events_read() } else { n };
                return Ok((End::Failed(e, before), n));
            }
        }
    }
}

/// One whole segment straight into the builders.
fn read_one(
    input: &Input<'_>,
    spec: &ReadSpec,
    scratch: &mut [u8],
    emit: &mut Emit<'_, '_>,
    problems: &mut Vec<Problem>,
    track: &mut Track,
) -> Result<(), TapeError> {
    match read_range(input, spec, scratch, emit, track, None, u64::MAX)? {
        (End::Failed(e, before), _) => problems.push(problem(input, e, before)),
        // A segment cut short is damage even when what is left reads.
        (_, n) => problems.extend(Problem::cut_short(
            input.segment,
            input.path,
            input.check,
            n,
        )),
    }
    Ok(())
}

/// A segment's reader in the time-order merge and its next event.
struct Live<'a, 's> {
    input: Input<'a>,
    reader: Reader<'a, 's>,
    head: OwnedEvent,
    head_ts: i64,
    head_offset: u64,
    last_out: Option<i64>,
    late: u64,
}

impl Live<'_, '_> {
    /// Loads the next event that passes the filter into `head`; `false`
    /// at the end of the segment (or its first error, recorded).
    fn advance(&mut self, spec: &ReadSpec, problems: &mut Vec<Problem>) -> bool {
        let f = &spec.filter;
        let stop_at = f.to.filter(|_| self.input.sorted);
        loop {
            match self.reader.next_item() {
                Ok(Some(it)) => {
                    let ev = it.event;
                    let ts = ev.exchange_ts_ns();
                    if stop_at.is_some_and(|t| ts >= t) {
                        return false;
                    }
                    if f.accepts(&ev, it.frame.header.frame_type) {
                        self.head.assign(&ev);
                        self.head_ts = ts;
                        self.head_offset = it.position.offset;
                        return true;
                    }
                }
                Ok(None) => return false,
                Err(e) => {
                    let n = self.reader.events_read();
                    problems.push(problem(&self.input, e, n));
                    return false;
                }
            }
        }
    }

    fn key(&self, at: usize) -> (i64, usize) {
        (self.head_ts, at)
    }
}

/// The time-order merge of the direct path; returns the late events.
fn merge(
    inputs: Vec<Input<'_>>,
    spec: &ReadSpec,
    emit: &mut Emit<'_, '_>,
    problems: &mut Vec<Problem>,
) -> Result<u64, TapeError> {
    let mut scratches: Vec<Vec<u8>> = inputs
        .iter()
        .map(|i| vec![0u8; i.seg.scratch_len()])
        .collect();
    let mut live: Vec<Live<'_, '_>> = Vec::with_capacity(inputs.len());
    for (input, scratch) in inputs.into_iter().zip(scratches.iter_mut()) {
        let reader = reader_for(&input, spec, scratch);
        live.push(Live {
            input,
            reader,
            head: OwnedEvent::Trade(Default::default()),
            head_ts: 0,
            head_offset: 0,
            last_out: None,
            late: 0,
        });
    }
    // (timestamp, input) of each input's next event, least first; ties go
    // to the earlier segment, as in the general merge.
    let mut heap: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    for (i, l) in live.iter_mut().enumerate() {
        if l.advance(spec, problems) {
            heap.push(Reverse(l.key(i)));
        }
    }
    let mut cur = heap.pop().map(|Reverse((_, i))| i);
    while let Some(i) = cur {
        let l = &mut live[i];
        if l.last_out.is_some_and(|t| l.head_ts < t) {
            l.late += 1;
        } else {
            l.last_out = Some(l.head_ts);
        }
        emit.push(&l.head.as_event(), l.input.path, l.head_offset)?;
        cur = if l.advance(spec, problems) {
            let k = l.key(i);
            match heap.peek() {
                // Still ahead of every other input: no heap work.
                Some(Reverse(top)) if *top < k => {
                    heap.push(Reverse(k));
                    heap.pop().map(|Reverse((_, j))| j)
                }
                _ => Some(i),
            }
        } else {
            heap.pop().map(|Reverse((_, j))| j)
        };
    }
    for l in &live {
        if !problems.iter().any(|p| p.segment == l.input.segment) {
            let n = l.reader.events_read();
            let i = &l.input;
            problems.extend(Problem::cut_short(i.segment, i.path, i.check, n));
        }
    }
    Ok(live.iter().map(|l| l.late).sum())
}

/// A byte range of one input.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    input: usize,
    start: Option<u64>,
    end: u64,
}

/// Splits the inputs into byte ranges at entries of their proven indexes
/// (frame or block boundaries), about four per thread over the tape. A
/// Sorted segment read from a time (its index seek skips what comes
/// before) or one without a proven index is one range.
fn chunks(inputs: &[Input<'_>], spec: &ReadSpec, jobs: usize) -> Vec<Chunk> {
    let total: u64 = inputs.iter().map(|i| i.seg.frames_end()).sum();
    let target = (total / (jobs as u64 * 4).max(1)).max(spec.min_chunk_bytes.max(1));
    let mut out = Vec::new();
    for (k, input) in inputs.iter().enumerate() {
        let mut start = None;
        let splittable = !(input.sorted && spec.filter.from.is_some());
        let index = splittable
            .then(|| input.seg.index().ok().flatten())
            .flatten()
            .filter(|ix| ix.is_proven());
        if let Some(ix) = index {
            let mut last = SegmentHeader::LEN as u64;
            for e in ix.iter() {
                if e.file_offset >= last + target {
                    out.push(Chunk {
                        input: k,
                        start,
                        end: e.file_offset,
                    });
                    start = Some(e.file_offset);
                    last = e.file_offset;
                }
            }
        }
        out.push(Chunk {
            input: k,
            start,
            end: u64::MAX,
        });
    }
    out
}

/// A tape cut into byte ranges that threads decode independently: every
/// segment, and large segments further at entries of their proven index
/// (frame or block boundaries), about four ranges per thread. Reading
/// every range in file order gives what [`read_batches`] gives in file
/// order once [`Split::settle`] has dropped the ranges a sequential read
/// never reaches (those after a range that ended on an error, or at a
/// Sorted segment's `to`).
pub struct Split<'a> {
    inputs: Vec<Input<'a>>,
    problems: Vec<Problem>,
    chunks: Vec<Chunk>,
}

/// How the read of one range of a [`Split`] ended.
#[derive(Clone, Copy, Debug, Default)]
pub struct RangeRead {
    end: End,
    events: u64,
    /// Rows handed to the sink, by [`RecordType`].
    pub rows: [u64; 4],
    track: Track,
}

impl<'a> Split<'a> {
    /// Cuts `opened` for `jobs` threads.
    pub fn new(opened: &'a OpenedTape, spec: &ReadSpec, jobs: usize) -> Split<'a> {
        let plan = plan(opened, spec, false).unwrap_or(Plan {
            inputs: Vec::new(),
            problems: Vec::new(),
            scratch_max: 0,
        });
        let chunks = chunks(&plan.inputs, spec, jobs.max(1));
        Split {
            inputs: plan.inputs,
            problems: plan.problems,
            chunks,
        }
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Whether there are no ranges.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The tape segment (index in `tape.segments`) range `i` is part of.
    pub fn segment(&self, i: usize) -> Option<usize> {
        self.chunks.get(i).map(|c| self.inputs[c.input].segment)
    }

    /// Reads range `i` into batches of its own, handed to `sink`.
    pub fn read(
        &self,
        i: usize,
        spec: &ReadSpec,
        symbols: &Symbols,
        sink: &mut Sink<'_>,
    ) -> Result<RangeRead, TapeError> {
        let c = *self
            .chunks
            .get(i)
            .ok_or_else(|| TapeError::usage(format!("no range {i}")))?;
        let input = &self.inputs[c.input];
        let mut track = Track::default();
        let mut scratch = vec![0u8; input.seg.scratch_len()];
        let mut emit = Emit {
            cols: Columns::new(spec.limits),
            symbols,
            sink,
            rows: [0; 4],
        };
        let (end, events) = read_range(
            input,
            spec,
            &mut scratch,
            &mut emit,
            &mut track,
            c.start,
            c.end,
        )?;
        emit.flush_all()?;
        Ok(RangeRead {
            end,
            events,
            rows: emit.rows,
            track,
        })
    }

    /// Which ranges a sequential read reaches (each segment's ranges up to
    /// the first that ends early), given every range's read in order; and
    /// the problems of the tape as a sequential read reports them (an
    /// error's event count includes the ranges before it).
    pub fn settle(self, reads: &[RangeRead]) -> (Vec<bool>, Vec<Problem>) {
        let mut problems = self.problems;
        let mut kept = Vec::with_capacity(reads.len());
        let mut stopped: Option<usize> = None;
        let mut before = 0u64;
        for (c, r) in self.chunks.iter().zip(reads) {
            if c.start.is_none() {
                stopped = None;
                before = 0;
            }
            if stopped == Some(c.input) {
                kept.push(false);
                continue;
            }
            match r.end {
                End::Done => {}
                End::Stopped => stopped = Some(c.input),
                End::Failed(e, events) => {
                    stopped = Some(c.input);
                    let events = if c.start.is_none() && c.end == u64::MAX {
                        events
                    } else {
                        before + events
                    };
                    problems.push(problem(&self.inputs[c.input], e, events));
                }
            }
            before += r.events;
            kept.push(true);
            // The segment's last range: one cut short is damage even when
            // what is left reads.
            let last = self
                .chunks
                .get(kept.len())
                .is_none_or(|n| n.start.is_none());
            let i = &self.inputs[c.input];
            if last && !problems.iter().any(|p| p.segment == i.segment) {
                problems.extend(Problem::cut_short(i.segment, i.path, i.check, before));
            }
        }
        (kept, problems)
    }
}

/// Runs `work(i)` for every `i < n` on up to `jobs` threads; the results
/// in order. A worker that fails stops the others taking new work; the
/// first error in order is returned (a worker's panic is one too).
pub fn run_parallel<T: Send>(
    n: usize,
    jobs: usize,
    work: &(dyn Fn(usize) -> Result<T, TapeError> + Sync),
) -> Result<Vec<T>, TapeError> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let failed = AtomicBool::new(false);
    let mut out = Vec::with_capacity(n);
    // Every result is kept, so nothing is gained by holding workers back:
    // the window is the whole input.
    let pool = floxlog::par::Pool::new(jobs.clamp(1, n.max(1))).with_window(n);
    pool.run(
        0..n,
        |i| {
            if failed.load(Ordering::Relaxed) {
                // Never delivered: an earlier item's error ends the run.
                return Err(TapeError::input(
                    None,
                    "internal error: a worker thread stopped",
                ));
            }
            let r = work(i);
            if r.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            r
        },
        |r| -> Result<(), TapeError> {
            out.push(r?);
            Ok(())
        },
    )?;
    Ok(out)
}

/// What a range produced for [`read_table`].
struct Piece {
    batches: Vec<(RecordType, RecordBatch)>,
    read: RangeRead,
}

impl Piece {
    fn track(&self) -> Track {
        self.read.track
    }
}

/// Whether the pieces, taken in order of their first timestamp (ties by
/// position in the tape), are exactly the time-order merge: each in order,
/// and each ending at or before the next one starts (at a tie, only before
/// a later piece). Returns that order.
fn concatenable(pieces: &[Piece]) -> Option<Vec<usize>> {
    if pieces.iter().any(|p| !p.track().in_order) {
        return None;
    }
    let mut order: Vec<usize> = (0..pieces.len())
        .filter(|&i| pieces[i].track().first.is_some())
        .collect();
    order.sort_by_key(|&i| (pieces[i].track().first, i));
    for w in order.windows(2) {
        let (a, b) = (&pieces[w[0]], &pieces[w[1]]);
        let next = b.track().first?;
        if a.track().last > next || (a.track().last == next && w[0] > w[1]) {
            return None;
        }
    }
    Some(order)
}

/// Reads everything `spec` selects into memory: the same rows, in the same
/// order per type, as [`read_batches`], for callers that want a whole
/// table (a `pyarrow.Table`, say) rather than a stream. Segments, and
/// ranges of large segments between entries of their proven index, are
/// decoded on up to `jobs` threads (0: one per core). A range after one
/// that ended on an error (or at the `to` of a Sorted segment) is
/// dropped, as a sequential read never gets there. File order
/// concatenates the ranges; time order concatenates them when each is in
/// order and they do not overlap in time (checked on the decoded
/// timestamps, so no pass ahead is needed), and otherwise reads again
/// through [`read_batches`] on one thread. Batches end at range
/// boundaries, so there can be more, smaller ones than [`read_batches`]
/// gives.
pub fn read_table(
    opened: &mut OpenedTape,
    spec: &ReadSpec,
    symbols: &Symbols,
    jobs: usize,
) -> Result<(Vec<(RecordType, RecordBatch)>, ReadSummary), TapeError> {
    let jobs = match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        j => j,
    };
    if jobs > 1 {
        if let Some(done) = read_parallel(Split::new(opened, spec, jobs), spec, symbols, jobs)? {
            return Ok(done);
        }
    }
    let mut out = Vec::new();
    let summary = read_batches(opened, spec, symbols, &mut |rt, b| {
        out.push((rt, b));
        Ok(())
    })?;
    Ok((out, summary))
}

type Table = (Vec<(RecordType, RecordBatch)>, ReadSummary);

/// The parallel part of [`read_table`]; `None` when time order cannot be
/// had by concatenation.
fn read_parallel(
    split: Split<'_>,
    spec: &ReadSpec,
    symbols: &Symbols,
    jobs: usize,
) -> Result<Option<Table>, TapeError> {
    let pieces = run_parallel(split.len(), jobs, &|i| {
        let mut batches = Vec::new();
        let read = split.read(i, spec, symbols, &mut |rt, b| {
            batches.push((rt, b));
            Ok(())
        })?;
        Ok(Piece { batches, read })
    })?;
    let reads: Vec<RangeRead> = pieces.iter().map(|p| p.read).collect();
    let (keep, problems) = split.settle(&reads);
    let mut summary = ReadSummary {
        direct: true,
        problems,
        ..ReadSummary::default()
    };
    let mut kept: Vec<Piece> = pieces
        .into_iter()
        .zip(keep)
        .filter_map(|(p, k)| k.then_some(p))
        .collect();
    for p in &kept {
        for k in 0..4 {
            summary.rows[k] += p.read.rows[k];
        }
    }
    let order = match spec.order {
        Order::File => (0..kept.len()).collect(),
        Order::Time => match concatenable(&kept) {
            Some(o) => o,
            None => return Ok(None),
        },
    };
    let mut out = Vec::new();
    for i in order {
        out.append(&mut kept[i].batches);
    }
    Ok(Some((out, summary)))
}
