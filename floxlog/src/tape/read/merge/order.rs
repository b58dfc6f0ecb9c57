//! The ordering pass: a segment's events put in exact time order by
//! sorting (timestamp, place) keys, 16 bytes an event, instead of holding
//! the events themselves. A place is where the frame is: its offset
//! (uncompressed) or its block's number and its offset in the block (LZ4),
//! so places grow in file order and sorting by (timestamp, place) is stable.
//!
//! The pass reads with the caller's codec options (CRCs checked), so the
//! keys are those of the events a file-order read returns, up to the same
//! error: what comes before the damage, in file order, is ordered exactly;
//! the error is reported after those events.
//!
//! The range pass is a cheaper walk (no CRC) that finds a segment's
//! earliest timestamp, so that a merge opens a segment only when its first
//! event comes due, and whether its events already come in order.

use crate::tape::read::merge::Filter;
use crate::tape::read::source::SegmentFile;
use floxlog_core::segment_header::flags;
use floxlog_core::{Position, ReadOptions, Segment};

/// A walk gives the mapped pages it has gone past back this often.
const RELEASE_STEP: u64 = 8 << 20;

/// Gives back the mapped pages a walk has gone past (see
/// [`SegmentFile::release_range`]), so that walking a segment costs a few
/// MiB of resident memory, not its size.
pub(super) struct Behind<'f> {
    file: &'f SegmentFile,
    from: u64,
}

impl<'f> Behind<'f> {
    pub fn new(file: &'f SegmentFile) -> Self {
        Self::starting_at(file, 0)
    }

    /// A walk from `from` (pages before it are not its own).
    pub fn starting_at(file: &'f SegmentFile, from: u64) -> Self {
        Behind { file, from }
    }

    /// The walk has reached `offset` (a frame or block it is reading);
    /// true when it gave pages back (every few MiB).
    #[inline]
    pub fn at(&mut self, offset: u64) -> bool {
        if offset >= self.from + RELEASE_STEP {
            self.file.release_range(self.from, offset);
            self.from = offset;
            return true;
        }
        false
    }
}

impl crate::tape::read::merge::Cursor<'_> {
    /// The read has gone on to `offset` (a frame or block it is reading,
    /// in file order): as [`Behind::at`], so that reading a long segment
    /// in place costs a few MiB of resident memory, not its size.
    #[inline]
    pub(super) fn passed(&mut self, offset: u64) {
        if offset >= self.released + RELEASE_STEP {
            self.file.release_range(self.released, offset);
            self.released = offset;
        }
    }
}

/// Bytes of one key: what the bound on ordering memory counts.
pub(super) const KEY_BYTES: usize = std::mem::size_of::<(i64, u64)>();

/// A segment's accepted events in time order.
#[derive(Debug, Default)]
pub(super) struct Ordering {
    /// (exchange_ts_ns, place), sorted.
    keys: Vec<(i64, u64)>,
    next: usize,
    /// LZ4: block offsets by block number.
    blocks: Vec<u64>,
}

impl Ordering {
    /// The next event's timestamp and position.
    pub fn peek(&self) -> Option<(i64, Position)> {
        let &(ts, place) = self.keys.get(self.next)?;
        Some((ts, self.position(place)?))
    }

    pub fn advance(&mut self) {
        self.next += 1;
    }

    /// Bytes held, for the bound on ordering memory.
    pub fn held(&self) -> usize {
        self.keys.capacity() * KEY_BYTES + self.blocks.capacity() * 8
    }

    fn position(&self, place: u64) -> Option<Position> {
        if self.blocks.is_empty() {
            return Some(Position {
                offset: place,
                in_block: None,
            });
        }
        Some(Position {
            offset: *self.blocks.get((place >> 32) as usize)?,
            in_block: Some(place as u32),
        })
    }
}

/// What the ordering pass found.
pub(super) struct Pass {
    /// The keys, or `None` when the events already come in time order (the
    /// segment is then read as in file order).
    pub ordering: Option<Ordering>,
    /// Events the core reader returned (filtered or not).
    pub events_read: u64,
    /// The error that ended the pass.
    pub end: Option<floxlog_core::Error>,
}

/// What a pass over one segment walks: the segment, its file (whose pages
/// behind the pass are released), the read options and the filter.
#[derive(Clone, Copy)]
pub(super) struct Walk<'w> {
    pub seg: &'w Segment<'w>,
    pub file: &'w SegmentFile,
    pub opts: ReadOptions,
    pub filter: &'w Filter,
}

/// The keys of a segment that is not in order need more than `room` bytes.
#[derive(Debug)]
pub(super) struct Overflow;

/// Walks `seg` with `opts` (a Sorted segment from its index seek to
/// `filter.from`, and to `filter.to`), keeping the keys of the events
/// `filter` accepts in at most `room` bytes. Keys of a segment found in
/// order are dropped, so such a segment never overflows.
pub(super) fn order_pass(w: Walk<'_>, scratch: &mut [u8], room: usize) -> Result<Pass, Overflow> {
    let (seg, file, opts, filter) = (w.seg, w.file, w.opts, w.filter);
    let sorted = seg.header().has(flags::SORTED);
    let mut r = seg.reader(opts, scratch);
    if let (true, Some(t)) = (sorted, filter.from) {
        // Segment::index proves every entry is a frame or block boundary.
        let index = seg.index().ok().flatten();
        r.seek(index.as_ref(), t);
    }
    let mut keys: Option<Vec<(i64, u64)>> = Some(Vec::new());
    let mut blocks: Vec<u64> = Vec::new();
    let mut last = i64::MIN;
    let mut in_order = true;
    let mut behind = Behind::new(file);
    let end = loop {
        let (ev, at) = match r.next_event_at() {
            Ok(Some(found)) => found,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        behind.at(at.offset);
        let ts = ev.exchange_ts_ns();
        if sorted && filter.to.is_some_and(|t| ts >= t) {
            break None;
        }
        if !filter.accepts(&ev, ev.frame_type()) {
            continue;
        }
        if ts < last {
            in_order = false;
        } else {
            last = ts;
        }
        let place = match at.in_block {
            None => at.offset,
            Some(in_block) => {
                if blocks.last() != Some(&at.offset) {
                    blocks.push(at.offset);
                }
                ((blocks.len() as u64 - 1) << 32) | u64::from(in_block)
            }
        };
        let Some(k) = keys.as_mut() else {
            if !in_order {
                return Err(Overflow);
            }
            continue;
        };
        if k.len() == k.capacity() {
            // Grow within the room only: past it, a segment still in order
            // goes on without keys; one out of order cannot be ordered.
            let fits = room.saturating_sub(blocks.capacity() * 8) / KEY_BYTES;
            let want = (k.capacity() * 2).max(1024).min(fits);
            if want <= k.len() {
                if !in_order {
                    return Err(Overflow);
                }
                keys = None;
                continue;
            }
            k.reserve_exact(want - k.len());
        }
        k.push((ts, place));
    };
    let events_read = r.events_read();
    let ordering = match keys {
        Some(mut keys) if !in_order => {
            // Places are unique, so an unstable sort is stable here.
            keys.sort_unstable();
            Some(Ordering {
                keys,
                next: 0,
                blocks,
            })
        }
        _ => None,
    };
    Ok(Pass {
        ordering,
        events_read,
        end,
    })
}

/// What the range pass found: the earliest accepted timestamp (`None`
/// without accepted events) and whether accepted events never go back.
pub(super) struct Range {
    pub first: Option<i64>,
    pub in_order: bool,
}

/// The range pass (no CRC: frame lengths do not depend on it, so it sees
/// the frames the checked read sees, up to that read's first error, and
/// perhaps more; its earliest timestamp is never later than the checked
/// read's). With `sorted` (the segment is flagged Sorted, so its events
/// never go back) it stops at the first accepted event.
pub(super) fn range_pass(w: Walk<'_>, scratch: &mut [u8], sorted: bool) -> Range {
    let (seg, file, filter) = (w.seg, w.file, w.filter);
    let opts = ReadOptions {
        verify_crc: false,
        ..w.opts
    };
    let mut r = seg.reader(opts, scratch);
    let mut first: Option<i64> = None;
    let mut last = i64::MIN;
    let mut in_order = true;
    let mut behind = Behind::new(file);
    while let Ok(Some((ev, at))) = r.next_event_at() {
        behind.at(at.offset);
        if !filter.accepts(&ev, ev.frame_type()) {
            continue;
        }
        let ts = ev.exchange_ts_ns();
        first = Some(first.map_or(ts, |f| f.min(ts)));
        if sorted {
            break;
        }
        if ts < last {
            in_order = false;
        } else {
            last = ts;
        }
    }
    file.release();
    Range { first, in_order }
}
