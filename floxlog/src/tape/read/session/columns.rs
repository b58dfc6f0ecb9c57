//! A session's events into a [`ColumnSink`] in one pass on the calling
//! thread ([`Session::columns`]): the merge's per-event runs for every
//! type, and runs of trades through the core's batch kernel straight into
//! the sink's trade columns. What Arrow's `read_batches` reads through,
//! and `read_table` when pieces cannot give the request's order.

use super::Session;
use crate::tape::error::TapeError;
use crate::tape::read::merge::TapeReader;
use crate::tape::read::ranges::{ColumnSink, MAX_ROOM, MIN_ROOM};
use floxlog_core::{frame_type, Event, TradeSink};

impl Session {
    /// Every event of the request, in its order, filtered, into `sink`
    /// with its frame's (or block's) offset, the sink told each segment
    /// before its events ([`ColumnSink::segment`]). Segments that fail are
    /// recorded in the problems and the others are read on; the problems
    /// found are then in [`Session::problems`]. `Err` ends the whole read:
    /// the sink's errors, the merge's memory bound.
    pub fn columns<K: ColumnSink + ?Sized>(&mut self, sink: &mut K) -> Result<(), TapeError> {
        self.problems.clear();
        let cfg = self.request.clone();
        let trades = cfg
            .filter
            .types
            .is_none_or(|t| t[frame_type::TRADE as usize]);
        let mut r = self.opened.reader(&cfg);
        let res = pump(&mut r, sink, trades);
        self.problems = r.problems().to_vec();
        res
    }
}

/// Every event of `r` into `sink`: runs of trades by the batch kernel
/// (when `trades`: the filter keeps trades, and the sink has room for
/// them), everything else event by event.
fn pump<K: ColumnSink + ?Sized>(
    r: &mut TapeReader<'_>,
    sink: &mut K,
    mut trades: bool,
) -> Result<(), TapeError> {
    let mut seg = None;
    loop {
        // Events up to the next trade in a tight loop; the one declined
        // is then the reader's current event.
        let mut failed = None;
        let mut declined = false;
        r.next_run(usize::MAX, |s, at, ev| {
            if failed.is_some() || (trades && matches!(ev, Event::Trade(_))) {
                declined = true;
                return false;
            }
            if seg != Some(s) {
                seg = Some(s);
                sink.segment(s);
            }
            if let Err(e) = sink.event(ev, at.offset) {
                failed = Some(e);
            }
            true
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        if !declined {
            return Ok(());
        }
        if !push_current(r, sink, &mut seg)? || !trades {
            continue;
        }
        // A run of trades (after the one just pushed) by the kernel.
        let mut room = MIN_ROOM;
        loop {
            let Some(mut cols) = sink.trade_room(room) else {
                // No columns: trades come event by event.
                trades = false;
                break;
            };
            let cap = TradeSink::capacity(&cols);
            let (run, res) = r.next_trades(&mut cols);
            sink.trades_stored(run.count)?;
            res?;
            if run.declined {
                push_current(r, sink, &mut seg)?;
                break;
            }
            if run.count < cap {
                // Neither full nor declined: the events ended.
                return Ok(());
            }
            room = (room * 2).min(MAX_ROOM);
        }
    }
}

/// Pushes the reader's current event (the one a run declined); whether
/// it was a trade.
fn push_current<K: ColumnSink + ?Sized>(
    r: &TapeReader<'_>,
    sink: &mut K,
    seg: &mut Option<usize>,
) -> Result<bool, TapeError> {
    let it = r.current()?.ok_or_else(|| {
        TapeError::input(None, "internal error: the declined event is not current")
    })?;
    if *seg != Some(it.segment) {
        *seg = Some(it.segment);
        sink.segment(it.segment);
    }
    sink.event(&it.event, it.position.offset)?;
    Ok(matches!(it.event, Event::Trade(_)))
}
