//! Batch appends in journal mode: a run of events that stays in one live
//! segment goes to the encoder's batch append (frames written with their
//! `size` left 0, CRCs sealed four at a time), then is published as one:
//! the sizes are stored last frame first, so the run's first size, stored
//! last with release ordering, publishes every frame of it at once (a
//! reader stops at the first zero size and never looks past it).

use super::Journal;
use crate::tape::error::TapeError;
use crate::tape::writer::Durability;
use floxlog_core::{Event, FrameHeader};

impl Journal {
    /// Appends events in order, as [`Journal::append`] one by one would
    /// (the same segments, bytes and errors). Returns how many were
    /// appended: all, or those before the first failure, returned with it.
    pub(crate) fn append_batch(&mut self, evs: &[Event<'_>]) -> (usize, Result<(), TapeError>) {
        // Policies that act per event, and rotation by time, go one by one.
        let fast = matches!(
            self.cfg.durability,
            Durability::None | Durability::Flush | Durability::SyncOnClose
        ) && self.cfg.rotate_every_ns.is_none();
        let mut i = 0;
        while let Some(rest) = evs.get(i..).filter(|r| !r.is_empty()) {
            let r = if fast {
                self.append_run(rest)
            } else {
                rest.first()
                    .map_or(Ok(0), |ev| self.append(ev).map(|()| 1))
                    .map_err(|e| (0, e))
            };
            match r {
                Ok(n) => i += n,
                Err((n, e)) => return (i + n, Err(e)),
            }
        }
        (evs.len(), Ok(()))
    }

    /// The leading run of `evs` that stays in one live segment (at least
    /// one event), appended and published; how many went in.
    fn append_run(&mut self, evs: &[Event<'_>]) -> Result<usize, (usize, TapeError)> {
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
        // Publish what went in (whole frames, even before an error), the
        // first frame's size last.
        let mut end = live.w.segment_bytes();
        for ev in run.get(..n).unwrap_or(&[]).iter().rev() {
            let size = ev.payload_len();
            let at = end - (FrameHeader::LEN + size) as u64;
            live.publisher.publish(at as usize, size as u32);
            end = at;
        }
        for ev in run.get(..n).unwrap_or(&[]) {
            let ts = ev.exchange_ts_ns();
            live.min_ts = live.min_ts.min(ts);
            live.max_ts = live.max_ts.max(ts);
        }
        live.events += n as u64;
        self.events += n as u64;
        match r {
            Ok(()) => Ok(n),
            Err(e) => Err((
                n,
                TapeError::input(
                    Some(&live.shared.path),
                    format!("cannot write the event: {e}"),
                )
                .at(e.offset),
            )),
        }
    }
}
