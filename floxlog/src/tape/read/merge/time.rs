//! Exact time order: the segments' ordered streams merged by a heap keyed
//! by (timestamp, segment), each segment opened only when the merge reaches
//! its earliest event and let go once read (see the parent module docs).
//!
//! A segment's earliest event comes from its header when it is Sorted
//! (its first event), otherwise from the range pass; with one segment there
//! is nothing to merge and no range pass. Opening a segment earlier than
//! needed only costs memory; never later, which is what makes the merge
//! exact: before an event at (t, s) is handed out, every segment whose
//! earliest event is at or before (t, s) is open.

use super::{Cursor, Item, TapeReader};
use crate::tape::error::TapeError;
use crate::tape::read::merge::blocks::BlockCache;
use crate::tape::read::merge::order::{
    order_pass, range_pass, Ordering, Overflow, Walk, KEY_BYTES,
};
use crate::tape::read::merge::scan::{scan_in_order, Scan};
use crate::tape::read::merge::Filter;
use floxlog_core::{FrameHeader, Position, RawFrame};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Events a file-order stream reads ahead from an uncompressed segment
/// (LZ4: one block).
const RUN_CHUNK: usize = 1024;

/// Payload bytes past which an uncompressed chunk stops (after at least
/// one frame), so that a chunk of large frames stays small.
const RUN_BYTES: usize = 256 << 10;

/// An event a file-order stream has read ahead, its frame checked.
#[derive(Clone, Copy)]
pub(super) struct Ahead {
    ts: i64,
    at: Position,
    header: FrameHeader,
    /// Where its payload is in the stream's `frames`.
    start: u32,
    /// Events the chunk's reader had returned with this one (the count of
    /// a chunk cut short by a shrinking).
    nth: u32,
}

/// How the merge reads one segment.
#[derive(Default)]
pub(super) enum Stream {
    /// Not opened yet.
    #[default]
    Closed,
    /// In file order (Sorted, or found in order): read ahead by a core
    /// reader, a chunk at a time; errors recorded as found. Each event is
    /// decoded for the caller from `frames`, where it was checked: no
    /// second look-up, header parse or CRC.
    Run {
        ahead: VecDeque<Ahead>,
        /// The checked frames `ahead` points into. LZ4: the one block
        /// decompressed, the stream's own scratch (as large as the
        /// segment's largest block); so each open LZ4 stream holds one
        /// decompressed block. Uncompressed: the payloads of the chunk,
        /// copied from the map (at most [`RUN_CHUNK`] frames, and at most
        /// one frame's payload past [`RUN_BYTES`] bytes).
        frames: Vec<u8>,
        /// The range pass saw it in order (no ordering pass needed).
        in_order: bool,
    },
    /// Out of order: the keys of the ordering pass, and how the pass ended
    /// (recorded once the keys run out, after the events before it).
    Keys {
        ordering: Ordering,
        events_read: u64,
        end: Option<floxlog_core::Error>,
    },
    /// Read to its end.
    Done,
}

impl Stream {
    /// A file-order stream, nothing read yet.
    fn run(in_order: bool) -> Stream {
        Stream::Run {
            ahead: VecDeque::new(),
            frames: Vec::new(),
            in_order,
        }
    }
}

/// The time-order state of a [`TapeReader`].
pub(super) struct Merge {
    /// Whether the merge still has to be planned.
    unplanned: bool,
    /// Segments not opened yet, by (earliest timestamp, cursor).
    waiting: VecDeque<(i64, usize)>,
    /// Each open stream's next event: (timestamp, cursor).
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    /// Bytes of keys held by the open streams.
    held: usize,
    budget: usize,
    /// Blocks of out-of-order LZ4 streams (their events come from any
    /// block, in time order).
    cache: BlockCache,
    /// Streams read to their end, let go at the next call (the last event
    /// of one is the current one until then).
    retiring: Vec<usize>,
    /// The current event.
    pub(super) out: Option<Out>,
    /// The current event's payload when it comes from an out-of-order
    /// stream (copied and checked when taken).
    frame: Vec<u8>,
    /// The stream the current event came from: its next event is pushed
    /// (and its read-ahead refilled) at the next call, so that its
    /// `frames` still hold the current event until then.
    pending: Option<usize>,
}

/// The current event of the merge: its cursor, position and frame header,
/// and where its checked payload is: at `start` in its stream's `frames`,
/// or (`None`) in the merge's `frame`.
#[derive(Clone, Copy)]
pub(super) struct Out {
    ci: usize,
    at: Position,
    header: FrameHeader,
    start: Option<u32>,
}

impl Merge {
    pub fn new(time_order: bool, budget: usize) -> Merge {
        Merge {
            unplanned: time_order,
            waiting: VecDeque::new(),
            heap: BinaryHeap::new(),
            held: 0,
            budget,
            cache: BlockCache::default(),
            retiring: Vec::new(),
            out: None,
            frame: Vec::new(),
            pending: None,
        }
    }
}

impl TapeReader<'_> {
    /// Time order, first call: finds when each segment must be opened. One
    /// segment not flagged Sorted is ordered now, and read in place (as in
    /// file order) if the pass finds it in order.
    pub(super) fn plan(&mut self) -> Result<(), TapeError> {
        if !std::mem::take(&mut self.merge.unplanned) {
            return Ok(());
        }
        if let [c] = &self.cursors[..] {
            // A segment in order (a recorder's usual tape, never flagged
            // Sorted) is found so by a cheap walk before its file-order
            // read, not by the ordering pass and its keys: the in-order
            // scan, or for LZ4 the range pass (no CRCs, nothing kept; it
            // sees at least the frames the checked read sees).
            let in_order = match scan_in_order(&c.seg, c.file) {
                Scan::InOrder => true,
                Scan::OutOfOrder => false,
                Scan::Unknown => {
                    let f = &self.filter;
                    range_pass(walk(c, f), self.scratch, false).in_order
                }
            };
            if !in_order && self.order(0)? {
                self.merge.waiting.push_back((i64::MIN, 0));
            } else {
                self.direct = true;
            }
            return Ok(());
        }
        let mut waiting = Vec::with_capacity(self.cursors.len());
        for (ci, c) in self.cursors.iter_mut().enumerate() {
            // Not the header's first_event_ns: the reference takes it from
            // the first event handed to the writer, and a block's events
            // are sorted before they are written (format notes), so it can
            // be later than the earliest. A Sorted segment's walk stops at
            // its first accepted event.
            let r = range_pass(walk(c, &self.filter), self.scratch, c.sorted);
            // Without events that pass, it is opened first: its errors are
            // found by then.
            let (first, in_order) = (r.first.unwrap_or(i64::MIN), r.in_order);
            c.stream = Stream::run(in_order);
            waiting.push((first, ci));
        }
        waiting.sort_unstable();
        self.merge.waiting = waiting.into();
        Ok(())
    }

    /// Moves to the next event in time order; false at the end.
    pub(super) fn next_time(&mut self) -> Result<bool, TapeError> {
        if let Some(ci) = self.merge.pending.take() {
            self.push_head(ci);
        }
        for ci in std::mem::take(&mut self.merge.retiring) {
            self.merge.cache.forget(ci);
            if let Some(c) = self.cursors.get(ci) {
                c.file.release();
            }
        }
        // Open every segment whose earliest event may come before the head.
        while let Some(&(first, ci)) = self.merge.waiting.front() {
            let due = match self.merge.heap.peek() {
                None => true,
                Some(Reverse(head)) => (first, ci) <= *head,
            };
            if !due {
                break;
            }
            self.merge.waiting.pop_front();
            self.open(ci)?;
        }
        let Some(Reverse((_, ci))) = self.merge.heap.pop() else {
            return Ok(false);
        };
        let Some(out) = self.take(ci)? else {
            return Ok(false);
        };
        self.merge.out = Some(out);
        Ok(true)
    }

    /// Opens cursor `ci`'s stream: in file order if it is (Sorted, or seen
    /// in order by the range pass), else through the ordering pass; pushes
    /// its first event.
    fn open(&mut self, ci: usize) -> Result<(), TapeError> {
        if let Stream::Closed
        | Stream::Run {
            in_order: false, ..
        } = self.cursors[ci].stream
        {
            self.order(ci)?;
        }
        self.push_head(ci);
        Ok(())
    }

    /// Runs the ordering pass of cursor `ci`: its stream becomes the keys
    /// (true), or, found in order, a file-order read from the start, which
    /// finds the same error (if any) at the same place.
    fn order(&mut self, ci: usize) -> Result<bool, TapeError> {
        let c = &mut self.cursors[ci];
        let room = self.merge.budget.saturating_sub(self.merge.held);
        let pass = order_pass(walk(c, &self.filter), self.scratch, room)
            .map_err(|Overflow| overflow(c, self.merge.budget))?;
        let Some(ordering) = pass.ordering else {
            c.stream = Stream::run(true);
            return Ok(false);
        };
        self.merge.held += ordering.held();
        c.stream = Stream::Keys {
            ordering,
            events_read: pass.events_read,
            end: pass.end,
        };
        Ok(true)
    }

    /// Pushes cursor `ci`'s next event on the heap, or ends its stream
    /// (recording the ordering pass's error after its events).
    fn push_head(&mut self, ci: usize) {
        self.refill(ci);
        let c = &mut self.cursors[ci];
        let head = match &mut c.stream {
            Stream::Run { ahead, .. } => ahead.front().map(|a| a.ts),
            Stream::Keys {
                ordering,
                events_read,
                end,
            } => match ordering.peek() {
                Some((ts, _)) => Some(ts),
                None => {
                    self.merge.held -= ordering.held();
                    c.events_read = *events_read;
                    let end = end.take();
                    c.end(end, &mut self.problems);
                    None
                }
            },
            Stream::Closed | Stream::Done => None,
        };
        match head {
            Some(ts) => self.merge.heap.push(Reverse((ts, ci))),
            None => {
                c.stream = Stream::Done;
                self.merge.retiring.push(ci);
            }
        }
    }

    /// Takes cursor `ci`'s next event; the one after it is pushed at the
    /// next call (`pending`).
    fn take(&mut self, ci: usize) -> Result<Option<Out>, TapeError> {
        let (taken, keyed) = match &mut self.cursors[ci].stream {
            Stream::Run { ahead, .. } => {
                let out = ahead.pop_front().map(|a| Out {
                    ci,
                    at: a.at,
                    header: a.header,
                    start: Some(a.start),
                });
                (out, None)
            }
            Stream::Keys { ordering, .. } => {
                let at = ordering.peek().map(|(_, at)| at);
                ordering.advance();
                (None, at)
            }
            Stream::Closed | Stream::Done => (None, None),
        };
        self.merge.pending = Some(ci);
        match keyed {
            Some(at) => self.copy_keyed(ci, at).map(Some),
            None => Ok(taken),
        }
    }

    /// The frame at `at` of out-of-order cursor `ci` (ordered by keys, so
    /// no checked chunk to take it from), copied into the merge's `frame`
    /// and checked there: the ordering pass checked it, but the file can
    /// have shrunk since (the map then shows zeros), so the copy handed out
    /// is checked again (the CRC when checks are on), and a failure is
    /// blamed on the shrinking if the file did shrink.
    fn copy_keyed(&mut self, ci: usize, at: Position) -> Result<Out, TapeError> {
        let c = &self.cursors[ci];
        let area = match at.in_block {
            None => c.seg.data().get(at.offset as usize..),
            Some(ib) => match self.merge.cache.get(ci, &c.seg, c.file, at.offset) {
                Ok(block) => block.get(ib as usize..),
                Err(e) => {
                    let e = c.file.shrink_error(Some(&e)).unwrap_or(e);
                    return Err(TapeError::data(c.path, e));
                }
            },
        };
        let area = area.ok_or_else(|| not_again(c, at))?;
        let header = FrameHeader::parse(area, at.offset).map_err(|_| not_again(c, at))?;
        let payload = area
            .get(FrameHeader::LEN..FrameHeader::LEN + header.size as usize)
            .ok_or_else(|| not_again(c, at))?;
        // Copied first: what is handed out is what was checked.
        let frame = &mut self.merge.frame;
        frame.clear();
        frame.extend_from_slice(payload);
        if c.opts.verify_crc && floxlog_core::crc32::crc32(frame) != header.crc32 {
            return Err(not_again(c, at));
        }
        Ok(Out {
            ci,
            at,
            header,
            start: None,
        })
    }

    /// A file-order stream with nothing read ahead reads on: a chunk of an
    /// uncompressed segment, its payloads copied as their frames pass their
    /// checks, or the events of one LZ4 block, decompressed into the
    /// stream's own buffer and kept there.
    fn refill(&mut self, ci: usize) {
        let c = &mut self.cursors[ci];
        match &c.stream {
            Stream::Run { ahead, .. } if ahead.is_empty() => {}
            _ => return,
        }
        let Some(at) = c.next.take() else {
            return;
        };
        // What came before this chunk has been handed out.
        c.passed(at);
        let compressed = c.seg.is_compressed();
        let Stream::Run { ahead, frames, .. } = &mut c.stream else {
            return;
        };
        // LZ4: the reader decompresses into `frames`; else the payloads are
        // copied there (`copy`) from the map.
        let (scratch, mut copy): (&mut [u8], _) = if compressed {
            if frames.len() < c.scratch_len {
                frames.resize(c.scratch_len, 0);
            }
            (&mut frames[..], None)
        } else {
            frames.clear();
            (&mut [], Some(frames))
        };
        let mut r = match c.seek_to.take() {
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
                    return;
                }
            },
        };
        let outcome = loop {
            let full = copy.as_ref().is_some_and(|f| f.len() >= RUN_BYTES);
            if full || ahead.len() >= RUN_CHUNK || (compressed && !ahead.is_empty()) {
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
            let (ev, at) = (it.event, it.position);
            let ts = ev.exchange_ts_ns();
            if let Some(e) =
                crate::tape::read::merge::unsorted(c.check_sorted, &mut c.last_ts, ts, at)
            {
                break Err(e);
            }
            if c.sorted && self.filter.to.is_some_and(|t| ts >= t) {
                break Ok(None);
            }
            if !self.filter.accepts(&ev, ev.frame_type()) {
                continue;
            }
            let start = match (&mut copy, at.in_block) {
                (Some(f), _) => {
                    f.extend_from_slice(it.frame.payload);
                    f.len() - it.frame.payload.len()
                }
                (None, in_block) => in_block.unwrap_or(0) as usize + FrameHeader::LEN,
            };
            let header = it.frame.header;
            ahead.push_back(Ahead {
                ts,
                at,
                header,
                // Below RUN_BYTES, or in a block (under MAX_SCRATCH).
                start: start as u32,
                nth: r.events_read() as u32,
            });
        };
        let events = r.events_read();
        if copy.is_some() {
            // The payloads were copied after their checks: a file cut in
            // between left zeros in the copy. One `stat` a chunk tells
            // (the frames below the cut are still the bytes checked).
            let end =
                |a: &Ahead| a.at.offset + (FrameHeader::LEN as u64) + u64::from(a.header.size);
            let last = ahead.back().map_or(0, end);
            if let Some(cut) = c.file.shrunk().filter(|&n| n < last) {
                let keep = ahead.iter().take_while(|a| end(a) <= cut).count();
                c.events_read += keep.checked_sub(1).map_or(0, |k| u64::from(ahead[k].nth));
                let at = ahead[keep].at.offset;
                ahead.truncate(keep);
                c.shrank(at, &mut self.problems);
                return;
            }
        }
        // The blocks decompressed here are given back with the rest of
        // what the stream has passed (`Cursor::passed`, every few MiB): a
        // `madvise` per block costs the other threads of the process a TLB
        // shoot-down each.
        c.events_read += events;
        match outcome {
            Ok(Some(next)) => c.next = Some(next),
            Ok(None) => c.end(None, &mut self.problems),
            Err(e) => c.stop(e, &mut self.problems),
        }
    }

    /// The current event of the merge, decoded from the frame that was
    /// checked when it was read ahead (or taken).
    pub(super) fn merged_current(&self) -> Result<Option<Item<'_>>, TapeError> {
        let Some(Out {
            ci,
            at,
            header,
            start,
        }) = self.merge.out
        else {
            return Ok(None);
        };
        let c = &self.cursors[ci];
        let payload = match (start, &c.stream) {
            (None, _) => Some(&self.merge.frame[..]),
            (Some(start), Stream::Run { frames, .. }) => frames
                .get(start as usize..)
                .and_then(|f| f.get(..header.size as usize)),
            (Some(_), _) => None,
        };
        let payload = payload.ok_or_else(|| not_again(c, at))?;
        let frame = RawFrame { header, payload };
        let event = frame.event(at.offset).map_err(|_| not_again(c, at))?;
        Ok(Some(Item {
            segment: c.seg_no,
            position: at,
            event,
            frame,
        }))
    }
}

/// A frame of `c` at `at` that was checked once did not decode again: the
/// file shrank under the map (which then shows zeros), or a bug.
fn not_again(c: &Cursor<'_>, at: Position) -> TapeError {
    match c.file.shrink_error(None) {
        Some(e) => TapeError::data(
            c.path,
            floxlog_core::Error {
                offset: at.offset,
                ..e
            },
        ),
        None => TapeError::input(
            Some(c.path),
            "internal error: a checked frame did not decode again",
        )
        .at(at.offset),
    }
}

/// The ordering of `c` does not fit beside those already held.
fn overflow(c: &Cursor<'_>, budget: usize) -> TapeError {
    TapeError::usage(format!(
        "ordering {} in time order needs more than the reorder bound of {} ({KEY_BYTES} bytes an event, counting the segments whose time ranges overlap it)",
        c.path.display(),
        if budget.is_multiple_of(1 << 20) {
            format!("{} MiB", budget >> 20)
        } else {
            format!("{budget} bytes")
        },
    ))
    .with_hint(crate::tape::hint::Hint::new(
        "{}, or {}",
        &[
            crate::tape::hint::Remedy::RaiseReorderBytes,
            crate::tape::hint::Remedy::FileOrder,
        ],
    ))
}

/// What the passes over cursor `c`'s segment walk, with `filter`.
fn walk<'w>(c: &'w Cursor<'_>, filter: &'w Filter) -> Walk<'w> {
    Walk {
        seg: &c.seg,
        file: c.file,
        opts: c.opts,
        filter,
    }
}
