//! Appending runs of events through the encoder's batch append.

use super::io_thread::CHUNK;
use super::{Durability, TapeWriter};
use crate::tape::error::TapeError;
use floxlog_core::{Compression, Event, FrameHeader};

impl TapeWriter {
    /// Appends events in order, as [`TapeWriter::append`] one by one would
    /// (the same segments, bytes and errors), faster: where the durability
    /// asks for nothing per event (`None`, `SyncOnClose`), segments are
    /// uncompressed and rotate by size only, runs of events that stay in
    /// one segment go to the encoder together, which seals their frames'
    /// CRCs several at a time (in journal mode the run is also published
    /// with one release store: `journal/batch.rs`). Returns how many were
    /// appended: all, or those before the first failure, which is returned
    /// with the count.
    pub fn append_batch(&mut self, evs: &[Event<'_>]) -> (usize, Result<(), TapeError>) {
        if let Some(j) = &mut self.journal {
            return j.append_batch(evs);
        }
        let fast = matches!(
            self.cfg.durability,
            Durability::None | Durability::SyncOnClose
        ) && self.cfg.segment.compression == Compression::None
            && self.cfg.rotate_every_ns.is_none();
        let mut i = 0;
        while i < evs.len() {
            let r = if fast {
                self.append_run(&evs[i..])
            } else {
                self.append(&evs[i]).map(|()| 1).map_err(|e| (0, e))
            };
            match r {
                Ok(n) => i += n,
                Err((n, e)) => return (i + n, Err(e)),
            }
        }
        (evs.len(), Ok(()))
    }

    /// The leading run of `evs` that shares a segment and fits it (at least
    /// one event) through the encoder's batch append; how many went in.
    fn append_run(&mut self, evs: &[Event<'_>]) -> Result<usize, (usize, TapeError)> {
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
        if n > 0 {
            self.stats.events += n as u64;
            seg.events += n as u64;
            for ev in &evs[..n] {
                let ts = ev.exchange_ts_ns();
                seg.min_ts = seg.min_ts.min(ts);
                seg.max_ts = seg.max_ts.max(ts);
            }
        }
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
