//! [`TapeReader::next_trades`]: runs of trades through the core's batch
//! kernel ([`floxlog_core::Reader::next_trades_into`]) when segments are read in place,
//! the per-event [`TapeReader::next_run`] otherwise.

use super::{Filter, TapeReader};
use crate::tape::error::TapeError;
use floxlog_core::{Event, Position, Trade, TradeSink, TradeStop};

/// What one [`TapeReader::next_trades`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TradeRun {
    /// Trades stored, in the sink's slots `0..count`.
    pub count: usize,
    /// The next event is of another type: it is [`TapeReader::current`],
    /// and the next read goes on after it.
    pub declined: bool,
    /// Segment number and position of the last trade stored.
    pub last: Option<(usize, Position)>,
}

/// The caller's sink from slot `base` on.
pub(crate) struct Tail<'o, S: ?Sized> {
    pub(crate) out: &'o mut S,
    pub(crate) base: usize,
}

impl<S: TradeSink + ?Sized> TradeSink for Tail<'_, S> {
    #[inline(always)]
    fn capacity(&self) -> usize {
        self.out.capacity().saturating_sub(self.base)
    }

    #[inline(always)]
    fn put(&mut self, i: usize, t: Trade) {
        self.out.put(self.base + i, t);
    }

    #[inline(always)]
    fn put_at(&mut self, i: usize, t: Trade, at: Position) {
        self.out.put_at(self.base + i, t, at);
    }
}

/// What one [`TapeReader::segment_trades`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SegmentTrades {
    /// The trades stored, as [`TapeReader::next_trades`] says.
    pub run: TradeRun,
    /// How many [`TapeReader::problems`] there were when the first of
    /// them was read: what a per-event read shows while it hands them out
    /// (the problems recorded after them, at their segment's end, come
    /// after the last of them).
    pub problems_before: usize,
}

impl Filter {
    /// Whether every trade passes (other types may not).
    pub fn keeps_every_trade(&self) -> bool {
        self.from.is_none()
            && self.to.is_none()
            && self.symbols.is_none()
            && self
                .types
                .is_none_or(|t| t[floxlog_core::frame_type::TRADE as usize])
    }
}

impl TapeReader<'_> {
    /// Reads consecutive trades into `out` until it is full, the events
    /// end, or the next event is of another type (then declined, as
    /// [`TapeReader::next_run`] with a `take` that declines it). The
    /// events, problems and counts are those of [`TapeReader::next_run`];
    /// an error of the merge comes with the trades stored before it.
    pub fn next_trades<S: TradeSink + ?Sized>(
        &mut self,
        out: &mut S,
    ) -> (TradeRun, Result<(), TapeError>) {
        if let Err(e) = self.plan() {
            return (TradeRun::default(), Err(e));
        }
        // A segment whose Sorted flag the read relies on is checked event by
        // event (the kernel does not look at timestamps).
        let checks = self.cursors.iter().any(|c| c.check_sorted);
        if !(self.direct && self.filter.keeps_every_trade() && !checks) {
            return self.trades_per_event(out);
        }
        self.merge.out = None;
        self.held = false;
        let mut run = TradeRun::default();
        while run.count < out.capacity() && self.current < self.cursors.len() {
            self.live_trades(self.current, out, &mut run);
            if run.declined || run.count == out.capacity() {
                break;
            }
            self.current += 1;
        }
        (run, Ok(()))
    }

    /// [`TapeReader::next_trades`] for a caller that hands the trades out
    /// one by one later (the C per-event reader's look-ahead), with each
    /// trade's position given to the sink's [`TradeSink::put_at`]: the
    /// trades of one segment only, so that they share a segment number and
    /// the problems recorded while they are read are all after them.
    /// `Ok(None)` (and nothing read) unless the read goes through the
    /// core's batch kernel: file order (or one segment found in order), a
    /// filter that keeps every trade, no Sorted flag to check. An error is
    /// the one [`TapeReader::next_item`] would return (before any event).
    pub(crate) fn segment_trades<S: TradeSink + ?Sized>(
        &mut self,
        out: &mut S,
    ) -> Result<Option<SegmentTrades>, TapeError> {
        self.plan()?;
        let checks = self.cursors.iter().any(|c| c.check_sorted);
        if !(self.direct && self.filter.keeps_every_trade() && !checks) {
            return Ok(None);
        }
        self.merge.out = None;
        self.held = false;
        let mut run = TradeRun::default();
        while self.current < self.cursors.len() {
            let problems_before = self.problems.len();
            self.live_trades(self.current, out, &mut run);
            if run.count > 0 || run.declined {
                return Ok(Some(SegmentTrades {
                    run,
                    problems_before,
                }));
            }
            if out.capacity() == 0 {
                break;
            }
            self.current += 1;
        }
        Ok(Some(SegmentTrades {
            run,
            problems_before: self.problems.len(),
        }))
    }

    /// [`TapeReader::next_trades`] through [`TapeReader::next_run`]: time
    /// order merges, filters that may drop trades.
    fn trades_per_event<S: TradeSink + ?Sized>(
        &mut self,
        out: &mut S,
    ) -> (TradeRun, Result<(), TapeError>) {
        if let Err(e) = self.plan() {
            return (TradeRun::default(), Err(e));
        }
        if self.direct {
            return (self.checked_live_trades(out), Ok(()));
        }
        let mut run = TradeRun::default();
        let cap = out.capacity();
        let done = self.next_run(cap, |segment, position, ev| {
            let Event::Trade(t) = ev else {
                run.declined = true;
                return false;
            };
            out.put(run.count, *t);
            run.count += 1;
            run.last = Some((segment, position));
            true
        });
        (run, done.map(drop))
    }

    /// [`TapeReader::next_run`]'s in-place read of the segments, as
    /// `trades_per_event` would take it, with the trade stored in the loop
    /// (a `take` closure there was not inlined: a call and a store of the
    /// position per event, a third of a C time-order read of a Sorted LZ4
    /// segment).
    fn checked_live_trades<S: TradeSink + ?Sized>(&mut self, out: &mut S) -> TradeRun {
        self.merge.out = None;
        self.held = false;
        let mut run = TradeRun::default();
        while run.count < out.capacity() && self.current < self.cursors.len() {
            if self.checked_trades_of(self.current, out, &mut run) || run.count == out.capacity() {
                break;
            }
            self.current += 1;
        }
        if self.current >= self.cursors.len() {
            self.finish();
        }
        run
    }

    /// [`TapeReader::run_live`] for trades: cursor `ci`'s events into `out`
    /// from slot `run.count` on, each checked as `run_live` checks it;
    /// true when an event of another type is declined (it is then the
    /// current one).
    fn checked_trades_of<S: TradeSink + ?Sized>(
        &mut self,
        ci: usize,
        out: &mut S,
        run: &mut TradeRun,
    ) -> bool {
        if !self.open_live(ci) {
            return false;
        }
        let (Some(c), Some((_, r))) = (self.cursors.get_mut(ci), self.live.as_mut()) else {
            return false;
        };
        let cap = out.capacity();
        let (mut n, mut last) = (run.count, None);
        let end = loop {
            if n == cap {
                break None;
            }
            let (ev, position) = match r.next_event_at() {
                Ok(Some(found)) => found,
                Ok(None) => break Some(None),
                Err(e) => break Some(Some(e)),
            };
            c.passed(position.offset);
            let ts = ev.exchange_ts_ns();
            if let Some(e) = c.unsorted(ts, position) {
                break Some(Some(e));
            }
            if c.sorted && self.filter.to.is_some_and(|t| ts >= t) {
                break Some(None);
            }
            if !self.filter.accepts(&ev, ev.frame_type()) {
                continue;
            }
            let Event::Trade(t) = ev else {
                self.held = true;
                run.declined = true;
                break None;
            };
            out.put(n, t);
            n += 1;
            last = Some(position);
        };
        if n > run.count {
            run.count = n;
            run.last = last.map(|p| (c.seg_no, p));
        }
        match end {
            Some(e) => {
                self.close_live(ci, e);
                false
            }
            None => run.declined,
        }
    }

    /// Trades of cursor `ci`, read in place, into `out` from slot
    /// `run.count` on; as [`TapeReader::run_live`] (every trade passes the
    /// filter: see [`Filter::keeps_every_trade`]). When it stores fewer
    /// than fit without declining, the segment is done.
    fn live_trades<S: TradeSink + ?Sized>(&mut self, ci: usize, out: &mut S, run: &mut TradeRun) {
        if !self.open_live(ci) {
            return;
        }
        let (Some(c), Some((_, r))) = (self.cursors.get_mut(ci), self.live.as_mut()) else {
            return;
        };
        let end = loop {
            let mut tail = Tail {
                base: run.count,
                out: &mut *out,
            };
            if tail.capacity() == 0 {
                return;
            }
            let b = r.next_trades_into(&mut tail);
            c.passed(r.position().offset);
            if b.count > 0 {
                run.count += b.count;
                run.last = Some((c.seg_no, r.position()));
            }
            match b.stop {
                TradeStop::Full => return,
                TradeStop::End => break None,
                TradeStop::Error(e) => break Some(e),
                TradeStop::OtherType => {}
            }
            // As run_live does with an event `take` declines.
            let ev = match r.next_event_at() {
                Ok(Some((ev, _))) => ev,
                Ok(None) => break None,
                Err(e) => break Some(e),
            };
            if !self.filter.accepts(&ev, ev.frame_type()) {
                continue;
            }
            self.held = true;
            run.declined = true;
            return;
        };
        self.close_live(ci, end);
    }
}
