//! A tape cut into byte ranges that threads read independently.
//!
//! Every segment is one range, and a large one is cut further where
//! [`crate::tape::read::split::range_starts`] proves a frame (or LZ4 block)
//! boundary, about four ranges per thread. A Sorted segment read from a
//! time is one range (its index seek skips what comes before). Reading
//! every range in tape order gives what a [`crate::tape::TapeReader`] in
//! file order gives once [`Split::settle`] has dropped the ranges a
//! sequential read never reaches (those after a range that ended on an
//! error, or at a Sorted segment's `to`), with the same problems: the same
//! errors, offsets and event counts.

mod settle;
mod stream;

#[cfg(test)]
pub use stream::{TEST_LARGEST_PART, TEST_PARTS, TEST_STREAM_BYTES};

pub use settle::Settle;

use crate::tape::error::TapeError;
use crate::tape::read::merge::{unsorted, OpenedTape, Order};
use crate::tape::read::problem::Problem;
use crate::tape::read::shortfall::SegmentCheck;
use crate::tape::read::source::SegmentFile;
use crate::tape::read::track::Track;
use crate::tape::read::Request;
use floxlog_core::segment_header::flags;
use floxlog_core::{
    Event, Position, ReadOptions, Reader, Segment, SegmentHeader, TradeColumns, TradeStop,
};
use std::path::Path;

/// Where the events of a range go: events one by one, and runs of trades
/// into per-field columns (the engine's one batch loop).
pub trait ColumnSink {
    /// An event that passes the filter, with its frame's (or, LZ4, its
    /// block's) offset.
    fn event(&mut self, ev: &Event<'_>, at: u64) -> Result<(), TapeError>;

    /// Room for up to `want` trades as per-field column slices, filled by
    /// the core's batch trade kernel; `None` (the default): trades come
    /// through [`ColumnSink::event`].
    fn trade_room(&mut self, want: usize) -> Option<TradeColumns<'_>> {
        let _ = want;
        None
    }

    /// The kernel stored `n` trades at the start of the room last given.
    fn trades_stored(&mut self, n: usize) -> Result<(), TapeError> {
        let _ = n;
        Ok(())
    }

    /// The events that follow are of segment `segment` (index in the
    /// tape), until told another: for the sink's own errors.
    fn segment(&mut self, segment: usize) {
        let _ = segment;
    }
}

impl<F: FnMut(&Event<'_>, u64) -> Result<(), TapeError>> ColumnSink for F {
    fn event(&mut self, ev: &Event<'_>, at: u64) -> Result<(), TapeError> {
        self(ev, at)
    }
}

/// Trades asked of the kernel at first, after an event of another type:
/// trades interleaved with other types take small runs; long runs double
/// it up to [`MAX_ROOM`].
pub(crate) const MIN_ROOM: usize = 64;
pub(crate) const MAX_ROOM: usize = 1 << 16;

/// One segment of a [`Split`].
struct Input<'a> {
    segment: usize,
    path: &'a Path,
    file: &'a SegmentFile,
    seg: Segment<'a>,
    header: SegmentHeader,
    /// Sorted flag: seek with the index, stop at `to`.
    sorted: bool,
    /// The read relies on the Sorted flag, so checks it (as the
    /// sequential reader does: time order, or a time filter).
    check_sorted: bool,
    /// Cut short? A live writer?
    check: SegmentCheck,
}

/// A byte range of one input: frames (or LZ4 blocks) starting in
/// `[start, end)`; `start` `None`: from the first frame, with the index
/// seek of a Sorted segment.
#[derive(Clone, Copy, Debug)]
struct Range {
    input: usize,
    start: Option<u64>,
    end: u64,
    /// `end` is an index entry taken on trust ([`Split::on_trust`]).
    on_trust: bool,
}

/// How the read of a range ended.
#[derive(Clone, Copy, Debug, Default)]
pub enum RangeEnd {
    /// At the end of the range (or of the segment).
    #[default]
    Done,
    /// At the first event at or past the filter's `to` (Sorted segment).
    Stopped,
    /// On an error, after this many events of the segment (whole-segment
    /// range) or of the range.
    Failed(floxlog_core::Error, u64),
}

/// How the read of one range of a [`Split`] went.
#[derive(Clone, Copy, Debug, Default)]
pub struct RangeRead {
    /// How it ended.
    pub end: RangeEnd,
    /// Events read (decoded) in it, filtered or not.
    pub events: u64,
    /// Timestamps of the events handed to the sink.
    pub track: Track,
    /// Where the read stopped: the next frame (or block) offset.
    reached: u64,
    /// When the read relies on the Sorted flag: the first event's
    /// timestamp and position, and the last event's timestamp (every
    /// event, filtered or not), to check the flag across ranges.
    raw_first: Option<(i64, Position)>,
    raw_last: i64,
}

/// A tape cut into ranges; see the module docs.
pub struct Split<'a> {
    inputs: Vec<Input<'a>>,
    problems: Vec<Problem>,
    ranges: Vec<Range>,
    cfg: Request,
    /// One scratch size for the tape, as the sequential reader shares
    /// one: whether a damaged block is `BufferTooSmall` depends on it.
    scratch_len: usize,
    /// Ranges of segment objects that hold none of their frames are read
    /// by fetching them ([`stream`]); a split of one fetched part does not.
    fetching: bool,
}

impl<'a> Split<'a> {
    /// Cuts `opened` for `jobs` threads (0: one per core) into ranges of
    /// at least `min_range_bytes`, to be read with `cfg` (its order only
    /// decides whether the Sorted flag is checked; the ranges are read in
    /// file order).
    pub fn new(
        opened: &'a OpenedTape,
        cfg: &Request,
        jobs: usize,
        min_range_bytes: u64,
    ) -> Split<'a> {
        let jobs = crate::par::threads(jobs);
        let target = per_thread(jobs, min_range_bytes);
        Split::build(mapped(opened), cfg, Proof::Threads(jobs), &target)
    }

    /// [`Split::new`], but an uncompressed segment's index entries are
    /// cut at unproven: the read of the range before a cut proves it by
    /// ending exactly there, which [`Split::settle`] checks (and gives
    /// `None` when one does not: the ranges are then no sequential read).
    /// Saves the proof's pass over every frame header before the reads.
    pub fn on_trust(
        opened: &'a OpenedTape,
        cfg: &Request,
        jobs: usize,
        min_range_bytes: u64,
    ) -> Split<'a> {
        let target = per_thread(jobs, min_range_bytes);
        Split::build(mapped(opened), cfg, Proof::ByReads, &target)
    }

    /// Cuts the segment files `files` ((index in the tape, file), in tape
    /// order) as [`Split::new`] does, to be read with `read`, unfiltered,
    /// in file order; for a pass over every frame of each file (`verify`,
    /// reading ranges at [`Split::bounds`]) no segment is taken as cut
    /// short.
    pub fn of_files(
        files: impl IntoIterator<Item = (usize, &'a SegmentFile)>,
        read: ReadOptions,
        jobs: usize,
        min_range_bytes: u64,
    ) -> Split<'a> {
        let cfg = Request {
            order: Order::File,
            read,
            ..Request::default()
        };
        let files = files
            .into_iter()
            .map(|(i, f)| (i, f, SegmentCheck::default()));
        let jobs = crate::par::threads(jobs);
        let target = per_thread(jobs, min_range_bytes);
        Split::build(files, &cfg, Proof::Threads(jobs), &target)
    }

    /// Cuts `opened` into ranges of about `range_bytes` (whatever the
    /// tape's size: for a pool that holds a bounded window of them).
    pub fn with_range_bytes(opened: &'a OpenedTape, cfg: &Request, range_bytes: u64) -> Split<'a> {
        Split::build(mapped(opened), cfg, Proof::Threads(1), &|_| {
            range_bytes.max(1)
        })
    }

    /// Cuts `files` ((index in the tape, file, its check), in tape order)
    /// at about `target(total frame bytes)` bytes, cut points proven as
    /// `proof` says.
    fn build(
        files: impl IntoIterator<Item = (usize, &'a SegmentFile, SegmentCheck)>,
        cfg: &Request,
        proof: Proof,
        target: &dyn Fn(u64) -> u64,
    ) -> Split<'a> {
        let mut inputs = Vec::new();
        let mut problems = Vec::new();
        let mut scratch_len = 0;
        let f = &cfg.filter;
        for (i, file, check) in files {
            let data = file.bytes();
            let seg = match Segment::parse(data) {
                Ok(s) => s,
                Err(e) => {
                    // As the sequential reader records it.
                    let shrunk = file.shrink_error(Some(&e));
                    let torn = shrunk.is_none() && data.is_empty();
                    let e = shrunk.unwrap_or(e);
                    problems.push(Problem::new(i, &file.path, e, 0, torn, check));
                    continue;
                }
            };
            let header = *seg.header();
            let sorted = header.has(flags::SORTED);
            scratch_len = scratch_len.max(match file.fetched_frames() {
                // Only these blocks are there to walk (and to read).
                Some((start, end)) => seg.frames_until(end).scratch_len_from(start),
                None => seg.scratch_len(),
            });
            // The pages the walk over the block headers mapped (see
            // `merge::OpenedTape::reader`).
            file.release();
            inputs.push(Input {
                segment: i,
                path: &file.path,
                file,
                seg,
                header,
                sorted,
                check_sorted: sorted
                    && (cfg.order == Order::Time || f.from.is_some() || f.to.is_some()),
                check,
            });
        }
        let target = target(inputs.iter().map(|i| i.seg.frames_end()).sum());
        let mut ranges = Vec::new();
        for (k, input) in inputs.iter().enumerate() {
            use crate::tape::read::split::{candidates, range_starts_on, PARALLEL_PROOF_BYTES};
            let (starts, on_trust) = match proof {
                _ if input.sorted && f.from.is_some() => (Vec::new(), false),
                _ if input.file.fetched_frames().is_some() => (
                    crate::tape::read::split::index_cuts(&input.seg, target),
                    true,
                ),
                Proof::ByReads => {
                    let c = candidates(&input.seg, cfg.read, target);
                    (c.starts, c.on_trust)
                }
                Proof::Threads(jobs) => {
                    let big = input.seg.frames_end() >= PARALLEL_PROOF_BYTES;
                    let jobs = if big { jobs } else { 1 };
                    (range_starts_on(&input.seg, cfg.read, target, jobs), false)
                }
            };
            let begins = std::iter::once(None).chain(starts.iter().map(|&s| Some(s)));
            let ends = starts.iter().copied().chain(std::iter::once(u64::MAX));
            ranges.extend(begins.zip(ends).map(|(start, end)| Range {
                input: k,
                start,
                end,
                on_trust: on_trust && end != u64::MAX,
            }));
        }
        Split {
            inputs,
            problems,
            ranges,
            cfg: cfg.clone(),
            scratch_len,
            fetching: true,
        }
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// The tape segment (index in `tape.segments`) range `i` is part of.
    pub fn segment(&self, i: usize) -> Option<usize> {
        self.ranges.get(i).map(|c| self.inputs[c.input].segment)
    }

    /// The byte range `[start, end)` of range `i` in its segment: the
    /// frames (or LZ4 blocks) that start in it are the range's (the first
    /// range of a segment starts at its first frame, the last ends at
    /// `u64::MAX`: wherever the frame area ends). A Sorted segment read
    /// from a time starts at its index seek instead, which this does not
    /// say.
    pub fn bounds(&self, i: usize) -> Option<(u64, u64)> {
        let first = SegmentHeader::LEN as u64;
        self.ranges
            .get(i)
            .map(|c| (c.start.unwrap_or(first), c.end))
    }

    /// The path of the segment range `i` is part of.
    pub fn path(&self, i: usize) -> Option<&'a Path> {
        self.ranges.get(i).map(|c| self.inputs[c.input].path)
    }

    /// Range `i`'s bytes: where its first frame (or block) starts (`None`:
    /// the segment's first frame, or a Sorted segment's index seek) and
    /// where the next range starts (`u64::MAX`: the end of the frame area).
    /// A caller that hands ranges to other processes names them by these,
    /// and finds them again in a split of the same segment made with the
    /// same settings (the cut points depend on nothing else).
    pub fn cut(&self, i: usize) -> Option<(Option<u64>, u64)> {
        self.ranges.get(i).map(|c| (c.start, c.end))
    }

    /// The header of the segment range `i` is part of.
    pub fn header(&self, i: usize) -> Option<&SegmentHeader> {
        self.ranges.get(i).map(|c| &self.inputs[c.input].header)
    }

    /// Whether the read of range `i` checks its segment's Sorted flag, so
    /// that [`Split::settle_next`] judges it against the ranges before it.
    pub fn checks_sorted(&self, i: usize) -> bool {
        self.ranges
            .get(i)
            .is_some_and(|c| self.inputs[c.input].check_sorted)
    }

    /// Reads range `i`, handing every event that passes the filter to
    /// `sink` with its frame's (or block's) offset; runs of trades go
    /// through the core's batch trade kernel into the sink's trade columns
    /// when it offers them ([`ColumnSink::trade_room`]) and every trade
    /// passes the filter. An error of the sink ends the read with it.
    pub fn read<K: ColumnSink + ?Sized>(
        &self,
        i: usize,
        sink: &mut K,
    ) -> Result<RangeRead, TapeError> {
        let c = *self
            .ranges
            .get(i)
            .ok_or_else(|| TapeError::usage(format!("no range {i}")))?;
        if self.fetches(&c) {
            return self.read_fetching(c, sink);
        }
        let input = &self.inputs[c.input];
        let mut scratch = self.scratch_for(input);
        let f = &self.cfg.filter;
        let stop_at = f.to.filter(|_| input.sorted);
        let whole = c.start.is_none() && c.end == u64::MAX;
        let mut out = RangeRead {
            raw_last: i64::MIN,
            ..RangeRead::default()
        };
        let mut r = match self.reader(c, &mut scratch) {
            Ok(r) => r,
            Err(e) => {
                out.end = RangeEnd::Failed(e, 0);
                return Ok(out);
            }
        };
        // The kernel does not look at timestamps, so not where the Sorted
        // flag is checked; it takes a run of trades after the first one
        // read event by event.
        let kernel = f.keeps_every_trade() && !input.check_sorted;
        let mut trades = false;
        let mut room = MIN_ROOM;
        let mut last = i64::MIN;
        loop {
            if kernel && trades {
                if let Some(mut cols) = sink.trade_room(room) {
                    let b = r.next_trade_columns(&mut cols);
                    for &ts in cols.exchange_ts_ns.iter().take(b.count) {
                        out.track.see(ts);
                    }
                    out.events += b.count as u64;
                    sink.trades_stored(b.count)?;
                    match b.stop {
                        // No room at all: the next trade event by event.
                        TradeStop::Full if b.count == 0 => trades = false,
                        TradeStop::Full => {
                            room = (room * 2).min(MAX_ROOM);
                            continue;
                        }
                        TradeStop::End => break,
                        TradeStop::Error(e) => {
                            let before = if whole { r.events_read() } else { out.events };
                            out.end = RangeEnd::Failed(e, before);
                            break;
                        }
                        TradeStop::OtherType => {
                            trades = false;
                            room = MIN_ROOM;
                        }
                    }
                }
            }
            let (ev, at) = match r.next_event_at() {
                Ok(Some(found)) => found,
                Ok(None) => break,
                Err(e) => {
                    let before = if whole { r.events_read() } else { out.events };
                    out.end = RangeEnd::Failed(e, before);
                    break;
                }
            };
            out.events += 1;
            let ts = ev.exchange_ts_ns();
            if input.check_sorted {
                out.raw_first.get_or_insert((ts, at));
                out.raw_last = ts;
                if let Some(e) = unsorted(true, &mut last, ts, at) {
                    let before = if whole { r.events_read() } else { out.events };
                    out.end = RangeEnd::Failed(e, before);
                    break;
                }
            }
            if stop_at.is_some_and(|t| ts >= t) {
                out.end = RangeEnd::Stopped;
                break;
            }
            if f.accepts(&ev, ev.frame_type()) {
                trades = matches!(ev, Event::Trade(_));
                out.track.see(ts);
                sink.event(&ev, at.offset)?;
            }
        }
        out.reached = r.next_offset();
        Ok(out)
    }

    /// A core reader for range `c`: from its start (or the index seek of
    /// a Sorted segment), ending at its end.
    fn reader<'s>(
        &self,
        c: Range,
        scratch: &'s mut [u8],
    ) -> Result<Reader<'a, 's>, floxlog_core::Error> {
        let input = &self.inputs[c.input];
        let opts = self.cfg.read;
        let mut seg = input.seg;
        if let Some((have_start, have_end)) = input.file.fetched_frames() {
            let first = SegmentHeader::LEN as u64;
            let (start, end) = (c.start.unwrap_or(first), c.end.min(seg.frames_end()));
            if start < have_start || end > have_end {
                return Err(floxlog_core::Error::new(
                    floxlog_core::ErrorKind::InvalidInput,
                    start,
                    "range not fetched from the object",
                ));
            }
            // The codec sees no byte past the bytes fetched: a block that
            // runs over a cut taken on trust ends the read as data cut
            // short (see `Split::unproven`), never on bytes not fetched.
            if have_end < seg.frames_end() {
                seg = seg.frames_until(end);
            }
        }
        let mut r = match c.start {
            None => {
                let mut r = seg.reader(opts, scratch);
                if let (true, Some(from)) = (input.sorted, self.cfg.filter.from) {
                    // Segment::index proves every entry is a frame or block
                    // boundary; an index that fails the proof is not used.
                    let index = input.seg.index().ok().flatten();
                    r.seek(index.as_ref(), from);
                }
                r
            }
            Some(at) => seg.reader_at(at, opts, scratch)?,
        };
        // A cut point is a proven boundary: no frame crosses it, and damage
        // from there on is the next range's to report.
        r.limit(c.end);
        Ok(r)
    }

    /// Scratch for a reader of `input`: room for its largest LZ4 block, none
    /// for an uncompressed segment.
    fn scratch_for(&self, input: &Input<'_>) -> Vec<u8> {
        vec![
            0u8;
            if input.seg.is_compressed() {
                self.scratch_len
            } else {
                0
            }
        ]
    }

    /// Reads range `i` frame by frame, unfiltered (for copying a tape:
    /// the split's filter is not applied), handing each frame's type and
    /// payload to `frame`.
    pub fn read_frames(&self, i: usize, frame: &mut dyn FnMut(u8, &[u8])) -> RangeRead {
        let mut out = RangeRead {
            raw_last: i64::MIN,
            ..RangeRead::default()
        };
        let Some(&c) = self.ranges.get(i) else {
            return out;
        };
        let input = &self.inputs[c.input];
        let mut scratch = self.scratch_for(input);
        let whole = c.start.is_none() && c.end == u64::MAX;
        let mut r = match self.reader(c, &mut scratch) {
            Ok(r) => r,
            Err(e) => {
                out.end = RangeEnd::Failed(e, 0);
                return out;
            }
        };
        loop {
            match r.next_item() {
                Ok(Some(it)) => {
                    out.events += 1;
                    frame(it.frame.header.frame_type, it.frame.payload);
                }
                Ok(None) => break,
                Err(e) => {
                    let before = if whole { r.events_read() } else { out.events };
                    out.end = RangeEnd::Failed(e, before);
                    break;
                }
            }
        }
        out.reached = r.next_offset();
        out
    }

    /// The problems of segments whose header failed.
    pub fn header_problems(&self) -> &[Problem] {
        &self.problems
    }
}

/// The mapped segments of `opened`: (index in the tape, file, its check),
/// in tape order.
fn mapped(opened: &OpenedTape) -> impl Iterator<Item = (usize, &SegmentFile, SegmentCheck)> {
    let files = opened.files.iter().enumerate();
    files.filter_map(|(i, f)| f.as_ref().map(|f| (i, f, opened.check(i))))
}

/// The range size for `jobs` threads (0: one per core): about four ranges
/// a thread over the tape's `total` frame bytes, at least
/// `min_range_bytes`.
fn per_thread(jobs: usize, min_range_bytes: u64) -> impl Fn(u64) -> u64 {
    let jobs = crate::par::threads(jobs) as u64;
    move |total| (total / (jobs * 4).max(1)).max(min_range_bytes.max(1))
}

/// How a [`Split`]'s index-entry cuts are proven.
#[derive(Clone, Copy)]
enum Proof {
    /// Before the reads, on up to this many threads.
    Threads(usize),
    /// By the reads ([`Split::on_trust`]).
    ByReads,
}
