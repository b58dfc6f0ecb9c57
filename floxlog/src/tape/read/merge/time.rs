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
use floxlog_core::{Block, FrameHeader, Position, RawFrame};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Events a file-order stream reads ahead from an uncompressed segment
/// (LZ4: one block).
const RUN_CHUNK: usize = 1024;

/// How the merge reads one segment.
#[derive(Default)]
pub(super) enum Stream {
    /// Not opened yet.
    #[default]
    Closed,
    /// In file order (Sorted, or found in order): read ahead by a core
    /// reader, a chunk at a time; errors recorded as found.
    Run {
        ahead: VecDeque<(i64, Position)>,
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
    cache: BlockCache,
    /// Streams read to their end, let go at the next call (the last event
    /// of one is the current one until then).
    retiring: Vec<usize>,
    /// The current event: cursor and position.
    pub(super) out: Option<(usize, Position)>,
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
            c.stream = Stream::Run {
                ahead: VecDeque::new(),
                in_order,
            };
            waiting.push((first, ci));
        }
        waiting.sort_unstable();
        self.merge.waiting = waiting.into();
        Ok(())
    }

    /// Moves to the next event in time order; false at the end.
    pub(super) fn next_time(&mut self) -> Result<bool, TapeError> {
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
        let Some(at) = self.take(ci) else {
            return Ok(false);
        };
        // Loaded last, so that nothing evicts it while it is current.
        if at.in_block.is_some() {
            let c = &self.cursors[ci];
            if let Err(e) = self.merge.cache.get(ci, &c.seg, c.file, at.offset) {
                let e = c.file.shrink_error(Some(&e)).unwrap_or(e);
                return Err(TapeError::data(c.path, e));
            }
        }
        self.merge.out = Some((ci, at));
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
            c.stream = Stream::Run {
                ahead: VecDeque::new(),
                in_order: true,
            };
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
            Stream::Run { ahead, .. } => ahead.front().map(|&(ts, _)| ts),
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

    /// Takes cursor `ci`'s next event and pushes the one after it.
    fn take(&mut self, ci: usize) -> Option<Position> {
        let at = match &mut self.cursors[ci].stream {
            Stream::Run { ahead, .. } => ahead.pop_front().map(|(_, at)| at),
            Stream::Keys { ordering, .. } => {
                let at = ordering.peek().map(|(_, at)| at);
                ordering.advance();
                at
            }
            Stream::Closed | Stream::Done => None,
        };
        self.push_head(ci);
        at
    }

    /// A file-order stream with nothing read ahead reads on: a chunk of an
    /// uncompressed segment, or the events of one LZ4 block (kept in the
    /// block cache, so that they are not decompressed again).
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
        let Stream::Run { ahead, .. } = &mut c.stream else {
            return;
        };
        let compressed = c.seg.is_compressed();
        let mut r = match c.seek_to.take() {
            Some(t) => {
                let mut r = c.seg.reader(c.opts, self.scratch);
                // Segment::index proves every entry is a frame or block
                // boundary; an index that fails the proof is not used.
                let index = c.seg.index().ok().flatten();
                r.seek(index.as_ref(), t);
                r
            }
            None => match c.seg.reader_at(at, c.opts, self.scratch) {
                Ok(r) => r,
                Err(e) => {
                    c.stop(e, &mut self.problems);
                    return;
                }
            },
        };
        let outcome = loop {
            if ahead.len() >= RUN_CHUNK || (compressed && !ahead.is_empty()) {
                match r.end_block() {
                    Ok(true) => break Ok(Some(r.next_offset())),
                    Ok(false) => {}
                    Err(e) => break Err(e),
                }
            }
            let (ev, at) = match r.next_event_at() {
                Ok(Some(found)) => found,
                Ok(None) => break Ok(None),
                Err(e) => break Err(e),
            };
            let ts = ev.exchange_ts_ns();
            if let Some(e) =
                crate::tape::read::merge::unsorted(c.check_sorted, &mut c.last_ts, ts, at)
            {
                break Err(e);
            }
            if c.sorted && self.filter.to.is_some_and(|t| ts >= t) {
                break Ok(None);
            }
            if self.filter.accepts(&ev, ev.frame_type()) {
                ahead.push_back((ts, at));
            }
        };
        c.events_read += r.events_read();
        // The block whose events were kept is still in the scratch.
        if let Some(&(_, Position { offset, .. })) = ahead.back().filter(|_| compressed) {
            let len = Block::at(c.seg.data(), offset).map(|b| b.header.original_size as usize);
            if let Some(frames) = len.ok().and_then(|n| self.scratch.get(..n)) {
                self.merge.cache.put_copy(ci, offset, frames);
            }
        }
        if compressed {
            // Decompressed: the blocks' bytes are not needed again.
            let end = outcome.as_ref().ok().copied().flatten();
            c.file.release_range(at, end.unwrap_or(u64::MAX));
        }
        match outcome {
            Ok(Some(next)) => c.next = Some(next),
            Ok(None) => c.end(None, &mut self.problems),
            Err(e) => c.stop(e, &mut self.problems),
        }
    }

    /// The current event of the merge, decoded again from the mapping or
    /// the block cache. Its frame was checked when it was first read, but
    /// the file can have shrunk since (the map then shows zeros): the CRC
    /// is checked again when checks are on, and a failure is blamed on the
    /// shrinking if the file did shrink.
    pub(super) fn merged_current(&self) -> Result<Option<Item<'_>>, TapeError> {
        let Some((ci, at)) = self.merge.out else {
            return Ok(None);
        };
        let c = &self.cursors[ci];
        let internal = || match c.file.shrink_error(None) {
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
        };
        let area = match at.in_block {
            None => c.seg.data().get(at.offset as usize..),
            Some(ib) => self
                .merge
                .cache
                .peek(ci, at.offset)
                .and_then(|b| b.get(ib as usize..)),
        }
        .ok_or_else(internal)?;
        let header = FrameHeader::parse(area, at.offset).map_err(|_| internal())?;
        let payload = area
            .get(FrameHeader::LEN..FrameHeader::LEN + header.size as usize)
            .ok_or_else(internal)?;
        if c.opts.verify_crc && floxlog_core::crc32::crc32(payload) != header.crc32 {
            return Err(internal());
        }
        let frame = RawFrame { header, payload };
        let event = frame.event(at.offset).map_err(|_| internal())?;
        Ok(Some(Item {
            segment: c.seg_no,
            position: at,
            event,
            frame,
        }))
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
