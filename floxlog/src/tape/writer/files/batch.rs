//! Appending runs of events through the encoder's batch append.

use super::io_thread::CHUNK;
use super::{in_runs, Durability, FileWriter, RunResult};
use crate::tape::error::TapeError;
use floxlog_core::{frame_type, Compression, Event, FrameHeader, Trade};

/// Encoded length of a trade frame.
const TRADE_FRAME: usize = FrameHeader::LEN + Trade::LEN;

impl FileWriter {
    /// See [`TapeWriter::append_batch`](super::TapeWriter::append_batch).
    pub fn append_batch(&mut self, evs: &[Event<'_>]) -> (usize, Result<(), TapeError>) {
        let fast = self.batches();
        in_runs(self, evs, fast, Self::append_run, Self::append)
    }

    /// The leading run of `evs` that shares a segment and fits it (at least
    /// one event) through the encoder's batch append; how many went in.
    fn append_run(&mut self, evs: &[Event<'_>]) -> RunResult {
        let first = &evs[0];
        self.check_event(first).map_err(|e| (0, e))?;
        let si = self.slot(first.frame_type());
        self.before(si, first).map_err(|e| (0, e))?;
        let max = self.cfg.max_segment_bytes;
        let Some((mut bytes, pending)) = self.open[si]
            .as_ref()
            .map(|s| (s.w.segment_bytes(), s.w.pending().len()))
        else {
            return Err((0, TapeError::input(None, "internal error: no open segment")));
        };
        // The events that stay in this segment (the first always does:
        // `before` rotated if it had to), up to what one hand-over takes.
        let room = CHUNK.saturating_sub(pending);
        let mut run_bytes = 0usize;
        let mut k = 0;
        for ev in evs {
            let len = FrameHeader::LEN + ev.payload_len();
            let stop = k > 0
                && (self.slot(ev.frame_type()) != si
                    || bytes + len as u64 > max
                    || run_bytes + len > room);
            if stop {
                break;
            }
            bytes += len as u64;
            run_bytes += len;
            k += 1;
        }
        let Some(seg) = self.open[si].as_mut() else {
            return Err((0, TapeError::input(None, "internal error: no open segment")));
        };
        let (n, r) = seg.w.append_batch(&evs[..k]);
        let done = evs.get(..n).unwrap_or(&[]);
        self.after_run(si, done.iter().map(Event::exchange_ts_ns), r)
    }

    /// See [`TapeWriter::append_trades`](super::TapeWriter::append_trades).
    pub fn append_trades(&mut self, trades: &[Trade]) -> (usize, Result<(), TapeError>) {
        let fast = self.batches();
        in_runs(self, trades, fast, Self::append_trade_run, |w, t| {
            w.append(&Event::Trade(*t))
        })
    }

    /// The leading run of `trades` that fits the segment and one hand-over
    /// (at least one trade) through the trade encoder; how many went in.
    fn append_trade_run(&mut self, trades: &[Trade]) -> RunResult {
        let Some(first) = trades.first() else {
            return Ok(0);
        };
        let ev = Event::Trade(*first);
        self.check_event(&ev).map_err(|e| (0, e))?;
        let si = self.slot(frame_type::TRADE);
        self.before(si, &ev).map_err(|e| (0, e))?;
        let max = self.cfg.max_segment_bytes;
        let Some(seg) = self.open[si].as_mut() else {
            return Err((0, TapeError::input(None, "internal error: no open segment")));
        };
        let room = max.saturating_sub(seg.w.segment_bytes());
        let chunk = CHUNK.saturating_sub(seg.w.pending().len()) as u64;
        let fit = usize::try_from(room.min(chunk) / TRADE_FRAME as u64).unwrap_or(usize::MAX);
        let run = trades.get(..fit.clamp(1, trades.len())).unwrap_or(&[]);
        let (n, r) = seg.w.append_trades(run);
        let done = run.get(..n).unwrap_or(&[]);
        self.after_run(si, done.iter().map(|t| t.exchange_ts_ns), r)
    }

    /// Whether batches may go to the encoder together: the durability asks
    /// for nothing per event, segments are uncompressed and rotate by size
    /// only.
    fn batches(&self) -> bool {
        matches!(
            self.cfg.durability,
            Durability::None | Durability::SyncOnClose
        ) && self.cfg.segment.compression == Compression::None
            && self.cfg.rotate_every_ns.is_none()
    }

    /// Counts a run the encoder took (its events' timestamps), maps its
    /// error, and hands a full chunk to the I/O thread.
    fn after_run(
        &mut self,
        si: usize,
        ts: impl Iterator<Item = i64>,
        r: floxlog_core::error::Result<()>,
    ) -> RunResult {
        let Some(seg) = self.open[si].as_mut() else {
            return Err((0, TapeError::input(None, "internal error: no open segment")));
        };
        let mut n = 0;
        for ts in ts {
            seg.min_ts = seg.min_ts.min(ts);
            seg.max_ts = seg.max_ts.max(ts);
            n += 1;
        }
        self.stats.events += n as u64;
        seg.events += n as u64;
        if let Err(e) = r {
            return Err((
                n,
                TapeError::input(Some(&seg.io.path), format!("cannot write the event: {e}"))
                    .at(e.offset),
            ));
        }
        if seg.w.pending().len() >= CHUNK {
            self.hand_over(si, None).map_err(|e| (n, e))?;
        }
        self.harvest();
        Ok(n)
    }
}
