//! A session's events one at a time ([`Session::cursor`]): the per-event
//! path of `cat` and the C tape reader, with runs of trades read ahead
//! through the core's batch kernel.
//!
//! When the read goes through the kernel (file order, or one segment found
//! in order; a filter that keeps every trade; no Sorted flag to check), a
//! run of one segment's trades is taken at once ([`AHEAD`] at most) and
//! handed out one by one, instead of one engine step per event. Nothing a
//! caller sees changes: the same events in the same order, each with its
//! own position, and the same errors after the same events. Only the
//! engine's list of problems runs ahead (a segment's end is found while its
//! last trades are still held), so [`Events::problems`] shows them as they
//! were when the held trades were read, as a per-event read would.

use super::Session;
use crate::tape::error::TapeError;
use crate::tape::read::merge::{Tail, TapeReader, TradeRun};
use crate::tape::read::outcome::ReadOutcome;
use crate::tape::read::problem::Problem;
use floxlog_core::{Event, Position, Trade, TradeSink};

/// Trades one read-ahead takes at most: enough to make the engine's step
/// rare per event, small enough to stay in the first-level cache.
const AHEAD: usize = 256;

/// An event [`Events::next_event`] hands out, with where it is.
#[derive(Clone, Copy, Debug)]
pub struct EventAt<'e> {
    /// Segment number in the tape.
    pub segment: usize,
    /// Where its frame is in the segment.
    pub position: Position,
    /// The event.
    pub event: Event<'e>,
}

/// A session's events, pulled one at a time or as runs of trades; see the
/// module docs.
pub struct Events<'s> {
    reader: TapeReader<'s>,
    ahead: Ahead,
    /// The reader's current event ended a run of trades without being
    /// handed out: the next [`Events::next_event`] returns it.
    held: bool,
    /// The read ended on an error (returned once): nothing more comes.
    failed: bool,
    strict: bool,
    /// Where the last event handed out is.
    last: Option<(usize, Position)>,
}

/// The held trades and where each came from.
struct Ahead {
    trades: Box<[Trade]>,
    positions: Box<[Position]>,
    /// Held trades: `next..len`.
    next: usize,
    len: usize,
    /// Their segment's number (a run reads one segment).
    segment: usize,
    /// Problems a caller may see: `None` for all of them; while held trades
    /// remain (and until the next read after the last of them), those
    /// recorded before they were read.
    visible: Option<usize>,
    /// The read does not go through the kernel, or the caller asked for
    /// none ([`Events::set_read_ahead`]): every event takes the engine's
    /// step.
    off: bool,
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

impl Session {
    /// The request's events one at a time, in its order, filtered (see
    /// [`Events`]); the read's outcome is then the cursor's
    /// ([`Events::outcome`]).
    pub fn cursor(&mut self) -> Events<'_> {
        let reader = self.opened.reader(&self.request.clone());
        Events {
            reader,
            ahead: Ahead {
                trades: vec![Trade::default(); AHEAD].into_boxed_slice(),
                positions: vec![Position::default(); AHEAD].into_boxed_slice(),
                next: 0,
                len: 0,
                segment: 0,
                visible: None,
                off: false,
            },
            held: false,
            failed: false,
            strict: self.request.strict,
            last: None,
        }
    }
}

impl Events<'_> {
    /// Reads ahead (`on`, the default) or takes the engine's step for
    /// every event: what a caller sees is the same either way.
    pub fn set_read_ahead(&mut self, on: bool) {
        self.ahead.off = !on;
    }

    /// Trades read ahead, not yet handed out.
    pub fn held_trades(&self) -> usize {
        self.ahead.len - self.ahead.next
    }

    /// The next held trade, if any, handed out (no engine step, nothing
    /// that can fail: the per-event fast path).
    #[inline]
    pub fn next_held_trade(&mut self) -> Option<Trade> {
        let a = &mut self.ahead;
        let i = a.next;
        if i >= a.len {
            return None;
        }
        let (t, p) = (*a.trades.get(i)?, *a.positions.get(i)?);
        a.next = i + 1;
        self.last = Some((a.segment, p));
        Some(t)
    }

    /// The next event, or `Ok(None)` at the end. Segments that fail are
    /// recorded in the problems and the others go on; an error of the
    /// merge (its memory bound) is returned once, and the read ends.
    pub fn next_event(&mut self) -> Result<Option<EventAt<'_>>, TapeError> {
        if self.failed {
            return Ok(None);
        }
        if self.held_trades() == 0 {
            self.fill()?;
        }
        if let Some(t) = self.next_held_trade() {
            let (segment, position) = self.last.unwrap_or_default();
            return Ok(Some(EventAt {
                segment,
                position,
                event: Event::Trade(t),
            }));
        }
        let next = if std::mem::take(&mut self.held) {
            self.reader.current()
        } else {
            self.reader.next_item()
        };
        match next {
            Ok(Some(it)) => {
                self.last = Some((it.segment, it.position));
                Ok(Some(EventAt {
                    segment: it.segment,
                    position: it.position,
                    event: it.event,
                }))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    /// Consecutive trades into `out` (held trades first) until it is full,
    /// the events end, or the next event is of another type (then
    /// `declined`: [`Events::next_event`] returns it). An error of the merge
    /// comes with the trades stored before it, and ends the read.
    pub fn next_trades<S: TradeSink + ?Sized>(
        &mut self,
        out: &mut S,
    ) -> (TradeRun, Result<(), TapeError>) {
        let mut run = TradeRun::default();
        while run.count < out.capacity() {
            let Some(t) = self.next_held_trade() else {
                break;
            };
            out.put(run.count, t);
            run.count += 1;
        }
        run.last = self.last.filter(|_| run.count > 0);
        if run.count == out.capacity() && run.count > 0 {
            return (run, Ok(()));
        }
        self.ahead.visible = None;
        if self.held || self.failed {
            run.declined = self.held;
            return (run, Ok(()));
        }
        // Nothing was held (the usual case): the kernel fills `out` itself.
        let (more, done) = if run.count == 0 {
            self.reader.next_trades(out)
        } else {
            let mut rest = Tail {
                out: &mut *out,
                base: run.count,
            };
            self.reader.next_trades(&mut rest)
        };
        if done.is_err() {
            self.failed = true;
        }
        run.count += more.count;
        run.declined = more.declined;
        self.held = more.declined;
        if more.last.is_some() {
            run.last = more.last;
            self.last = more.last;
        }
        (run, done)
    }

    /// Where the last event handed out is (`None` before the first).
    pub fn last(&self) -> Option<(usize, Position)> {
        self.last
    }

    /// The problems found so far, as a per-event read would have found
    /// them by now.
    pub fn problems(&self) -> &[Problem] {
        let all = self.reader.problems();
        let shown = self.ahead.visible.map_or(all.len(), |v| v.min(all.len()));
        &all[..shown]
    }

    /// [`Events::problems`] judged by the request's strictness.
    pub fn outcome(&self) -> ReadOutcome<'_> {
        ReadOutcome::new(self.problems(), self.strict)
    }

    /// With nothing held: reads the next run of one segment's trades
    /// ahead when the read goes through the kernel and the next event is
    /// not already waiting. Afterwards either trades are held, or the next
    /// event (if any) is for the engine's step (`held` set when it is the
    /// one the run stopped before).
    fn fill(&mut self) -> Result<(), TapeError> {
        let a = &mut self.ahead;
        a.visible = None;
        if self.failed || self.held || a.off {
            return Ok(());
        }
        let mut sink = Sink {
            trades: &mut a.trades,
            positions: &mut a.positions,
        };
        let got = match self.reader.segment_trades(&mut sink) {
            Ok(got) => got,
            Err(e) => {
                self.failed = true;
                return Err(e);
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
}
