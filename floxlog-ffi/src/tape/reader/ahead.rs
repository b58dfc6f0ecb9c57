//! Trades read ahead for the per-event calls: when the engine reads the
//! tape through the core's batch kernel, `floxlog_tape_reader_next` (and
//! `_next_batch`) take a run of one segment's trades at once into the
//! handle and hand them out one by one, instead of one engine step per
//! event.
//!
//! Nothing a caller sees changes: the same events in the same order (every
//! call, `_next_trades` included, takes the held trades first), each with
//! its own position, the same counts, and the same errors after the same
//! events. The only state that runs ahead is the engine's list of
//! problems (a segment's end is found while its last trades are still
//! held), so the stats show the problems as they were when the held trades
//! were read (`visible`), as a per-event read would.

use super::handle::TapeReaderHandle;
use super::options::floxlog_tape_reader;
use super::step::{merge_failure, position_of};
use crate::boundary::check_out;
use crate::codec::event::write_trade;
use crate::codec::types::{floxlog_event, floxlog_trade};
use crate::handle::handle;
use crate::tape::error::TapeFail;
use core::mem::MaybeUninit;
use floxlog_core::{Position, Trade, TradeSink};
use std::panic::AssertUnwindSafe;

/// Trades one fill reads at most: enough to make the engine's step rare
/// per event, small enough to stay in the first-level cache.
const AHEAD: usize = 256;

/// The held trades and where each came from.
pub(crate) struct Ahead {
    trades: Box<[Trade]>,
    positions: Box<[Position]>,
    /// Held trades: `next..len`.
    next: usize,
    len: usize,
    /// Their segment's number (a fill reads one segment).
    segment: usize,
    /// Problems of the engine's read a caller may see: `None` for all of
    /// them; while held trades remain (and until the next read after the
    /// last of them), those recorded before they were read.
    visible: Option<usize>,
    /// The read does not go through the batch kernel (time order merges,
    /// dropping filters, Sorted checks): every event takes the engine's
    /// step. Holds until the next restart.
    off: bool,
    /// Never read ahead: the tests' reference read.
    #[cfg(test)]
    pub(crate) never: bool,
}

/// The held arrays as the kernel fills them, positions included.
struct Sink<'a> {
    trades: &'a mut [Trade],
    positions: &'a mut [Position],
}

impl TradeSink for Sink<'_> {
    #[inline(always)]
    fn capacity(&self) -> usize {
        self.trades.len()
    }

    #[inline(always)]
    fn put(&mut self, i: usize, t: Trade) {
        if let Some(slot) = self.trades.get_mut(i) {
            *slot = t;
        }
    }

    #[inline(always)]
    fn put_at(&mut self, i: usize, t: Trade, at: Position) {
        if let (Some(slot), Some(p)) = (self.trades.get_mut(i), self.positions.get_mut(i)) {
            *slot = t;
            *p = at;
        }
    }
}

impl Ahead {
    pub(crate) fn new() -> Ahead {
        Ahead {
            trades: vec![Trade::default(); AHEAD].into_boxed_slice(),
            positions: vec![Position::default(); AHEAD].into_boxed_slice(),
            next: 0,
            len: 0,
            segment: 0,
            visible: None,
            off: false,
            #[cfg(test)]
            never: false,
        }
    }

    /// Drops the held trades (the read restarts).
    pub(crate) fn reset(&mut self) {
        self.next = 0;
        self.len = 0;
        self.visible = None;
        self.off = false;
    }

    /// Trades held, not yet handed out.
    pub(crate) fn held(&self) -> usize {
        self.len - self.next
    }

    /// How many of `total` problems a caller may see now.
    pub(crate) fn visible(&self, total: usize) -> usize {
        self.visible.map_or(total, |v| v.min(total))
    }

    /// The engine reads on for a caller: from now on its problems show.
    pub(crate) fn reading_on(&mut self) {
        self.visible = None;
    }
}

/// `floxlog_tape_reader_next`'s fast path: a held trade into `*event`,
/// without the error machinery of the general call (nothing here can
/// fail). False, and nothing done, when there is none, or either pointer
/// is unusable: the general call then reads on, or reports it.
///
/// # Safety
/// As `floxlog_tape_reader_next`.
#[inline]
pub(crate) unsafe fn next_held(r: *mut floxlog_tape_reader, event: *mut floxlog_event) -> bool {
    // Nothing below panics; should it, the general call (which catches
    // panics) takes over.
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        if check_out(event, "event").is_err() {
            return false;
        }
        // SAFETY: forwarded caller promise; the pointer is checked.
        let Ok(h) = (unsafe { handle(r) }) else {
            return false;
        };
        let Some(t) = h.pop_ahead() else {
            return false;
        };
        // SAFETY: `event` checked above.
        unsafe { write_trade(&t, event) };
        true
    }))
    .unwrap_or(false)
}

impl TapeReaderHandle {
    /// The next held trade, if any, handed out: counted, its position the
    /// reader's last.
    #[inline]
    pub(crate) fn pop_ahead(&mut self) -> Option<Trade> {
        let a = &mut self.ahead;
        let i = a.next;
        if i >= a.len {
            return None;
        }
        let (t, p) = (*a.trades.get(i)?, *a.positions.get(i)?);
        a.next = i + 1;
        self.events += 1;
        self.last = Some(position_of(a.segment, p));
        Some(t)
    }

    /// With nothing held: reads the next run of one segment's trades ahead
    /// when the read goes through the batch kernel and the next event is
    /// not already waiting. Afterwards either trades are held, or the next
    /// event (if any) is for the engine's step (`held` set when it is the
    /// one the run stopped before). An error of the engine is the step's.
    pub(crate) fn fill_ahead(&mut self) -> Result<(), TapeFail> {
        self.ahead.reading_on();
        if self.failed || self.held || self.ahead.off {
            return Ok(());
        }
        #[cfg(test)]
        if self.ahead.never {
            return Ok(());
        }
        let Some(r) = self.reader.as_mut() else {
            return Ok(());
        };
        let a = &mut self.ahead;
        let mut sink = Sink {
            trades: &mut a.trades,
            positions: &mut a.positions,
        };
        let got = match r.segment_trades(&mut sink) {
            Ok(got) => got,
            Err(e) => {
                self.failed = true;
                return Err(merge_failure(e));
            }
        };
        let Some(got) = got else {
            a.off = true;
            return Ok(());
        };
        a.next = 0;
        a.len = got.run.count;
        if let Some((segment, _)) = got.run.last {
            a.segment = segment;
            a.visible = Some(got.problems_before);
        }
        self.held = got.run.declined;
        Ok(())
    }

    /// Hands held trades out into `out` from its start (the batch call):
    /// how many.
    pub(crate) fn drain_ahead(&mut self, out: &mut [MaybeUninit<floxlog_trade>]) -> usize {
        let mut n = 0;
        for slot in out.iter_mut() {
            let Some(t) = self.pop_ahead() else { break };
            slot.write((&t).into());
            n += 1;
        }
        n
    }
}
