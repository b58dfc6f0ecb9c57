//! Reading the events of a tape: every segment through its own cursor, in
//! file order or in exact time order.
//!
//! File order reads each segment in place with a core reader, one after
//! the other, holding nothing. Time order is exact (stable: ties by
//! segment order, then file position), never windowed, and holds an
//! ordering rather than events ([`order`]): a segment without the Sorted
//! flag is walked once by the ordering pass, which keeps a (timestamp,
//! place) key, 16 bytes, per event and sorts them; its events are then
//! decoded in that order straight from the mapping, or for LZ4 through a
//! small cache of decompressed blocks ([`blocks`]). A segment the pass
//! finds already in order, or one with the Sorted flag, is read as in file
//! order, holding no keys: read ahead a chunk (LZ4: a block) at a time
//! and handed out from the frames it checked ([`time::Stream`]).
//!
//! Segments are merged only where their time ranges overlap ([`time`]): a
//! segment is opened (its ordering pass run) only when the merge reaches
//! its earliest event, and let go once read, so segments that follow one
//! another (a little jitter across a boundary included) are read one after
//! the other, and memory is bounded by the keys of the segments open at one
//! time, one chunk or decompressed block per open in-order stream, and the
//! block cache, never by the tape. The keys of those segments
//! together are bounded by `reorder_bytes` (default 256 MiB): a tape that
//! needs more fails clearly, naming the option, rather than growing.
//!
//! Damage: the events before it (in file order: what a file-order read
//! returns) are put in exact time order; the error is recorded in
//! [`TapeReader::problems`] with its file and offset, as in file order.
//!
//! Time-range filters use the index: in a Sorted segment the reader seeks
//! with the index (once proven: every entry a frame or block boundary) to
//! `from`, and stops at the first event at or past `to`. Header time bounds
//! are never used to skip a segment, and in a segment without the Sorted
//! flag the index cannot bound where events are, so the reader scans and
//! filters.

use crate::tape::dir::discover::Tape;
use crate::tape::error::TapeError;
use crate::tape::read::session::Request;
use crate::tape::read::shortfall::{check, SegmentCheck};
use crate::tape::read::source::{is_torn_tail, SegmentFile, Want};
use floxlog_core::segment_header::flags;
use floxlog_core::{Event, Position, RawFrame, ReadOptions, Reader, Segment, SegmentHeader};
use std::path::{Path, PathBuf};

mod blocks;
mod filter;
mod order;
mod scan;
mod time;
mod trades;
use crate::tape::read::problem::Problem;
pub use filter::Filter;
pub(crate) use trades::Tail;
pub use trades::TradeRun;

/// In which order events come out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Merged by exchange timestamp across segments (exact and stable).
    #[default]
    Time,
    /// Segment by segment, each in file order.
    File,
}

/// Default bound on the bytes time order holds for orderings (256 MiB).
pub const DEFAULT_REORDER_BYTES: usize = 256 << 20;

/// The error a segment flagged Sorted gives when its timestamps go back
/// at `at` (checked only when the read relies on the flag: `check`);
/// `last` is the last timestamp seen.
pub(crate) fn unsorted(
    check: bool,
    last: &mut i64,
    ts: i64,
    at: Position,
) -> Option<floxlog_core::Error> {
    if !check {
        return None;
    }
    if ts < *last {
        let mut e = floxlog_core::Error::new(
            floxlog_core::ErrorKind::MalformedRecord,
            at.offset,
            crate::tape::error::UNSORTED,
        );
        e.in_block = at.in_block;
        return Some(e);
    }
    *last = ts;
    None
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

struct Cursor<'a> {
    seg_no: usize,
    path: &'a Path,
    file: &'a SegmentFile,
    seg: Segment<'a>,
    header: SegmentHeader,
    opts: ReadOptions,
    /// Where to read on in file order; `None` once the segment is done.
    next: Option<u64>,
    /// The index seek to start with (first read only).
    seek_to: Option<i64>,
    events_read: u64,
    sorted: bool,
    /// The read trusts the Sorted flag (time order, or a time filter: the
    /// index seek and the stop at `to`), so it checks it: the last
    /// timestamp seen, and a step back is an error, never a wrong answer.
    check_sorted: bool,
    last_ts: i64,
    /// Time order: how the merge reads it ([`time::Stream`]).
    stream: time::Stream,
    /// LZ4: the scratch its largest block needs (0 uncompressed).
    scratch_len: usize,
    /// Whether it is cut short, and whether a writer is live.
    check: SegmentCheck,
    /// Mapped pages before it are given back ([`Cursor::passed`]).
    released: u64,
}

impl Cursor<'_> {
    /// See [`unsorted`].
    fn unsorted(&mut self, ts: i64, at: Position) -> Option<floxlog_core::Error> {
        unsorted(self.check_sorted, &mut self.last_ts, ts, at)
    }

    /// Records the error that ends this segment's read.
    fn stop(&mut self, e: floxlog_core::Error, problems: &mut Vec<Problem>) {
        self.end(Some(e), problems);
    }

    /// Ends this segment's read at `at`, where the file was found cut under
    /// a copy of its frames: a shrinking, whatever the copy shows there.
    fn shrank(&mut self, at: u64, problems: &mut Vec<Problem>) {
        self.next = None;
        let e = floxlog_core::Error::new(
            floxlog_core::ErrorKind::Truncated,
            at,
            crate::tape::error::SHRANK,
        );
        let (n, events) = (self.seg_no, self.events_read);
        problems.push(Problem::new(n, self.path, e, events, false, self.check));
    }

    /// Ends this segment's read, on error `e` or at its end; a file that
    /// shrank under the map is that error instead, never a torn tail.
    fn end(&mut self, e: Option<floxlog_core::Error>, problems: &mut Vec<Problem>) {
        self.next = None;
        let (e, tolerated) = match self.file.shrink_error(e.as_ref()) {
            Some(s) => (s, false),
            None => {
                let Some(e) = e else { return };
                let data = self.seg.data();
                (e, is_torn_tail(&self.header, &e, self.events_read, data))
            }
        };
        problems.push(Problem::new(
            self.seg_no,
            self.path,
            e,
            self.events_read,
            tolerated,
            self.check,
        ));
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
    /// Per segment (as `files`): cut short? a live writer?
    pub checks: Vec<SegmentCheck>,
    /// The LZ4 block scratch every cursor of a reader shares.
    scratch: Vec<u8>,
}

impl OpenedTape {
    /// Maps every segment of `tape`.
    pub fn open(tape: Tape) -> OpenedTape {
        OpenedTape::open_wanting(tape, Want::Whole)
    }

    /// [`OpenedTape::open`]; segment objects on object storage fetched as
    /// `want` says.
    pub fn open_wanting(tape: Tape, want: Want) -> OpenedTape {
        let mut files = Vec::new();
        let mut open_errors = Vec::new();
        let mut checks = Vec::new();
        // One lock probe per directory.
        let mut live = std::collections::HashMap::new();
        for s in &tape.segments {
            let dir = match s.dir.and_then(|d| tape.dirs.get(d)) {
                Some(d) => d.path.clone(),
                None => s.path.parent().map(Path::to_path_buf).unwrap_or_default(),
            };
            let dir = if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir
            };
            let writer_live = *live
                .entry(dir)
                .or_insert_with_key(|d| crate::tape::dir::lock::writer_is_live(d));
            match s.open_wanting(want) {
                Ok(f) => {
                    checks.push(check(s.listed.as_ref(), f.bytes(), writer_live));
                    // The header's page, mapped with its large folio (up to
                    // 2 MiB): on a tape of many segments, more than a read.
                    f.release();
                    files.push(Some(f));
                }
                Err(e) => {
                    open_errors.push(e);
                    files.push(None);
                    checks.push(SegmentCheck::default());
                }
            }
        }
        OpenedTape {
            tape,
            files,
            open_errors,
            checks,
            scratch: Vec::new(),
        }
    }

    /// The check of segment `i` (no claim for an unknown one).
    pub fn check(&self, i: usize) -> SegmentCheck {
        self.checks.get(i).copied().unwrap_or_default()
    }

    /// Total bytes of the mapped segment files.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().flatten().map(SegmentFile::len).sum()
    }

    /// A reader over the events.
    pub fn reader(&mut self, cfg: &Request) -> TapeReader<'_> {
        let mut problems = Vec::new();
        let mut cursors = Vec::new();
        let mut scratch_len = 0;
        for (i, file) in self.files.iter().enumerate() {
            let Some(file) = file else { continue };
            let path: &Path = &file.path;
            let data = file.bytes();
            let parsed = Segment::parse(data);
            let seg = match parsed {
                Ok(s) => s,
                Err(e) => {
                    file.release(); // what the parse mapped (see `open`)
                    let shrunk = file.shrink_error(Some(&e));
                    let c = self.check(i);
                    let torn = shrunk.is_none() && data.is_empty();
                    problems.push(Problem::new(i, path, shrunk.unwrap_or(e), 0, torn, c));
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
            let seg_scratch = seg.scratch_len();
            // What the parse and the walk over the block headers mapped
            // (see `open`): fault-around maps whole runs of pages, so a
            // walk that touches one header a block would otherwise leave
            // every segment of the tape resident before the first event.
            file.release();
            scratch_len = scratch_len.max(seg_scratch);
            cursors.push(Cursor {
                seg_no: i,
                path,
                file,
                seg,
                header: h,
                opts: cfg.read,
                next: Some(SegmentHeader::LEN as u64),
                seek_to: cfg.filter.from.filter(|_| sorted),
                events_read: 0,
                sorted,
                check_sorted: sorted
                    && (cfg.order == Order::Time
                        || cfg.filter.from.is_some()
                        || cfg.filter.to.is_some()),
                last_ts: i64::MIN,
                stream: time::Stream::default(),
                scratch_len: seg_scratch,
                check: self.check(i),
                released: 0,
            });
        }
        self.scratch.clear();
        self.scratch.resize(scratch_len, 0);
        let direct = cfg.order == Order::File || matches!(&cursors[..], [c] if c.sorted);
        let shorts = cursors.iter().enumerate();
        let shorts = shorts.filter(|(_, c)| c.check.short.is_some());
        let shorts = shorts.map(|(ci, _)| ci).collect();
        TapeReader {
            shorts,
            direct,
            live: None,
            held: false,
            cursors,
            current: 0,
            problems,
            filter: cfg.filter.clone(),
            scratch: &mut self.scratch,
            merge: time::Merge::new(cfg.order == Order::Time && !direct, cfg.reorder_bytes),
        }
    }
}
/// Cursor over the events of a tape; see the module docs.
pub struct TapeReader<'a> {
    /// File order, or time order over one segment in order: segments are
    /// read in place, one after the other, by `live`, with nothing held
    /// (see [`TapeReader::run_live`]).
    direct: bool,
    /// The cursor being read in place, and its core reader (over the
    /// mapping, and for LZ4 the shared scratch, lent to it meanwhile).
    live: Option<(usize, Reader<'a, 'a>)>,
    /// The live reader's last event is the current one.
    held: bool,
    cursors: Vec<Cursor<'a>>,
    current: usize,
    problems: Vec<Problem>,
    filter: Filter,
    scratch: &'a mut [u8],
    /// Time order (unless direct): the merge of the segments' orderings.
    merge: time::Merge,
    /// Cursors of segments cut short whose problem is still to be
    /// recorded at the end (if their read finds none).
    shorts: Vec<usize>,
}

impl<'a> TapeReader<'a> {
    /// Segments that stopped early so far (errors and torn tails).
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// At the end of the read: a segment cut short whose read found no
    /// error is damage all the same (its missing events are gone).
    fn finish(&mut self) {
        for ci in std::mem::take(&mut self.shorts) {
            let Some(c) = self.cursors.get(ci) else {
                continue;
            };
            if !self.problems.iter().any(|p| p.segment == c.seg_no) {
                let p = Problem::cut_short(c.seg_no, c.path, c.check, c.events_read);
                self.problems.extend(p);
            }
        }
    }

    /// The next event, or `Ok(None)` at the end. Segments that fail are
    /// recorded in [`TapeReader::problems`] and the others go on.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, TapeError> {
        self.plan()?;
        self.held = false;
        self.merge.out = None;
        if self.direct {
            while self.current < self.cursors.len() {
                // Declined, the event stays the current one.
                let (_, found) = self.run_live(self.current, 1, |_, _, _| false);
                if found {
                    return self.current();
                }
                self.current += 1;
            }
            self.finish();
            return Ok(None);
        }
        if !self.next_time()? {
            self.finish();
            return Ok(None);
        }
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
        self.merged_current()
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
        self.plan()?;
        if self.direct {
            self.merge.out = None;
            self.held = false;
            while n < max && self.current < self.cursors.len() {
                let (k, declined) = self.run_live(self.current, max - n, &mut take);
                n += k;
                if declined || n == max {
                    break;
                }
                self.current += 1;
            }
            if self.current >= self.cursors.len() {
                self.finish();
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
    /// the filter as [`Cursor::fill`] does, An event `take` declines
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
            c.passed(position.offset);
            let ts = ev.exchange_ts_ns();
            if let Some(e) = c.unsorted(ts, position) {
                break Some(e);
            }
            if c.sorted && self.filter.to.is_some_and(|t| ts >= t) {
                break None;
            }
            if !self.filter.accepts(&ev, ev.frame_type()) {
                continue;
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
    /// the problems), giving the scratch and the mapped pages back.
    fn close_live(&mut self, ci: usize, end: Option<floxlog_core::Error>) {
        let Some(c) = self.cursors.get_mut(ci) else {
            return;
        };
        c.file.release();
        if let Some((_, r)) = self.live.take() {
            c.events_read += r.events_read();
            let scratch = r.into_scratch();
            if !scratch.is_empty() {
                self.scratch = scratch;
            }
        }
        c.end(end, &mut self.problems);
    }
}
