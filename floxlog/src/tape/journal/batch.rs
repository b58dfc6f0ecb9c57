//! Batch appends in journal mode: a run of events that stays in one live
//! segment goes to the encoder's batch append (frames written with their
//! `size` left 0, CRCs sealed four at a time), then is published as one:
//! the sizes are stored last frame first, so the run's first size, stored
//! last with release ordering, publishes every frame of it at once (a
//! reader stops at the first zero size and never looks past it). Trades
//! (`append_trades`) go to the encoder's trade batch the same way.

use super::{Journal, Live};
use crate::tape::error::TapeError;
use crate::tape::writer::config::Durability;
use crate::tape::writer::shared::{in_runs, RunResult};
use floxlog_core::{frame_type, Event, FrameHeader, Trade};

/// Encoded length of a trade frame.
const TRADE_FRAME: usize = FrameHeader::LEN + Trade::LEN;

impl Journal {
    /// Appends events in order, as [`Journal::append`] one by one would
    /// (the same segments, bytes and errors). Returns how many were
    /// appended: all, or those before the first failure, returned with it.
    pub(crate) fn append_batch(&mut self, evs: &[Event<'_>]) -> (usize, Result<(), TapeError>) {
        let fast = self.batches();
        in_runs(self, evs, fast, Self::append_run, Self::append)
    }

    /// The leading run of `evs` that stays in one live segment (at least
    /// one event), appended and published; how many went in.
    fn append_run(&mut self, evs: &[Event<'_>]) -> RunResult {
        let Some(first) = evs.first() else {
            return Ok(0);
        };
        self.check_open().map_err(|e| (0, e))?;
        first
            .validate(self.cfg.segment.profile)
            .map_err(|what| (0, TapeError::input(None, what)))?;
        let si = self.slot(first.frame_type());
        self.before(si, first).map_err(|e| (0, e))?;
        let max = self.cfg.max_segment_bytes;
        let Some((mut bytes, cap)) = self.open[si]
            .as_ref()
            .map(|l| (l.w.segment_bytes(), l.frames_cap))
        else {
            return Err((0, TapeError::input(None, "internal error: no open segment")));
        };
        // The events that stay here: `before` made room for the first.
        let mut k = 0;
        for ev in evs {
            let len = (FrameHeader::LEN + ev.payload_len()) as u64;
            let stop = k > 0
                && (self.slot(ev.frame_type()) != si || bytes + len > max || bytes + len > cap);
            if stop {
                break;
            }
            bytes += len;
            k += 1;
        }
        let run = evs.get(..k).unwrap_or(&[]);
        let Some(live) = self.open[si].as_mut() else {
            return Err((0, TapeError::input(None, "internal error: no open segment")));
        };
        let (n, r) = live.w.append_batch(run);
        let done = run.get(..n).unwrap_or(&[]);
        live.publish_back(done.iter().rev().map(Event::payload_len));
        live.note_times(done.iter().map(Event::exchange_ts_ns));
        if live.window_step() {
            self.bg.shared.ring();
        }
        crate::tape::wake::published(&self.wake, n > 0 && live.events == n as u64);
        self.events += n as u64;
        live.outcome(n, r)
    }

    /// Appends trades in order, as [`Journal::append`] of each would (the
    /// same segments, bytes and errors), through the core's trade encoder
    /// where the policy allows batches (as [`Journal::append_batch`]).
    pub(crate) fn append_trades(&mut self, trades: &[Trade]) -> (usize, Result<(), TapeError>) {
        let fast = self.batches();
        in_runs(self, trades, fast, Self::append_trade_run, |j, t| {
            j.append(&Event::Trade(*t))
        })
    }

    /// The leading run of `trades` that stays in one live segment (at
    /// least one trade), encoded and published; how many went in.
    fn append_trade_run(&mut self, trades: &[Trade]) -> RunResult {
        let Some(first) = trades.first() else {
            return Ok(0);
        };
        self.check_open().map_err(|e| (0, e))?;
        let si = self.slot(frame_type::TRADE);
        self.before(si, &Event::Trade(*first)).map_err(|e| (0, e))?;
        let max = self.cfg.max_segment_bytes;
        let Some(live) = self.open[si].as_mut() else {
            return Err((0, TapeError::input(None, "internal error: no open segment")));
        };
        // Every trade frame is as long: as many as fit both bounds (the
        // first always does: `before` made room for it).
        let room = max
            .min(live.frames_cap)
            .saturating_sub(live.w.segment_bytes());
        let fit = usize::try_from(room / TRADE_FRAME as u64).unwrap_or(usize::MAX);
        let run = trades.get(..fit.clamp(1, trades.len())).unwrap_or(&[]);
        let (n, r) = live.w.append_trades(run);
        live.publish_back((0..n).map(|_| Trade::LEN));
        let done = run.get(..n).unwrap_or(&[]);
        live.note_times(done.iter().map(|t| t.exchange_ts_ns));
        if live.window_step() {
            self.bg.shared.ring();
        }
        crate::tape::wake::published(&self.wake, n > 0 && live.events == n as u64);
        self.events += n as u64;
        live.outcome(n, r)
    }

    /// Whether batches may go to the encoder together: policies that act
    /// per event, and rotation by time, go one by one.
    fn batches(&self) -> bool {
        matches!(
            self.cfg.durability,
            Durability::None | Durability::Flush | Durability::SyncOnClose
        ) && self.cfg.rotate_every_ns.is_none()
    }
}

impl Live {
    /// Publishes the frames just appended, given their payload sizes last
    /// frame first: the first frame's size, stored last, publishes the run.
    #[inline(always)]
    fn publish_back(&self, sizes: impl Iterator<Item = usize>) {
        let mut end = self.w.segment_bytes();
        for size in sizes {
            let at = end - (FrameHeader::LEN + size) as u64;
            self.publisher.publish(at as usize, size as u32);
            end = at;
        }
    }

    /// Counts appended events with their timestamps.
    #[inline(always)]
    fn note_times(&mut self, ts: impl Iterator<Item = i64>) {
        for ts in ts {
            self.min_ts = self.min_ts.min(ts);
            self.max_ts = self.max_ts.max(ts);
            self.events += 1;
        }
    }

    /// A batch's result in the journal's terms.
    fn outcome(&self, n: usize, r: floxlog_core::error::Result<()>) -> RunResult {
        match r {
            Ok(()) => Ok(n),
            Err(e) => Err((
                n,
                TapeError::input(
                    Some(&self.shared.path),
                    format!("cannot write the event: {e}"),
                )
                .at(e.offset),
            )),
        }
    }
}
