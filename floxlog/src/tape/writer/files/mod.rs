//! The default segment engine (`TapeWriterConfig::journal` off): segments
//! written through files, with rotation by size
//! (and optionally by event time), an explicit durability policy, and the
//! header and index finalised on close.
//!
//! A segment file is created on its first event with the writer's 64-byte
//! placeholder header (written under a hidden temporary name, then renamed
//! into place, so that no segment file exists without a header), frames
//! are appended, and on close the index trailer is appended and the final
//! header written over offset 0, as the flox reference does. LZ4 segments
//! also get their header rewritten after each write of whole blocks, so a
//! reader of a live or crashed segment sees the counts of what is on disk.
//! A writer killed between appending the trailer and writing the final
//! header leaves the trailer behind a placeholder header; readers take it
//! as a crashed writer's torn tail and `recover` drops it.
//!
//! Except under [`Durability::Flush`] (whose appends write their own bytes
//! before returning), writing overlaps encoding: the encoded bytes are
//! handed to a background I/O thread (one per writer, started
//! with the first segment, joined when the writer is closed, dropped or
//! abandoned), which writes them in the order they were handed over, with
//! positional writes at the offsets the encoder reported (the header
//! rewrites at offset 0 are just more writes in that order), and runs the
//! policy's fsyncs. The encoder's output buffer is handed over whole and
//! an empty one taken from a small pool in its place, so nothing is copied
//! and, once warm, nothing allocated; when three buffers (about a MiB
//! each) wait to be written, the encoder waits (back-pressure). Full LZ4
//! blocks are compressed on a third thread (`compress`).
//! Rotation does not wait for the disk either. Closing a segment costs
//! the appending thread the encoder's trailer and a hand-over: its last
//! bytes go to the I/O thread like any others, then the segment goes to a
//! second background thread, the finisher (`finish`), which (under the
//! syncing policies) fsyncs frames and trailer, writes the final header and
//! fsyncs again, so that not even a power loss leaves a final header whose
//! index is not on disk, and then lists the segment in `manifest.json`.
//! The next segment's file is created ahead by the I/O thread (a hidden
//! spare, see `io_thread`): at rotation the appending thread only names
//! it; its placeholder header is written before any frame, and it is
//! renamed into place (published) only once every segment closed before it
//! is finished, so no segment file is ever seen without a header and a
//! kill leaves at most the last segment of each series unfinished. Until
//! then its events are not counted [written](FileWriter::written_events).
//! The first segment (and one opened while no spare is ready) is created
//! and published by the appending thread itself, as is every segment under
//! [`Durability::Flush`] (which has no background thread).
//!
//! The first I/O error of either thread is kept: the next `append`,
//! `flush`, `sync` or `close` returns it, and the writer refuses further
//! appends; nothing is written after it.
//!
//! `manifest.json` (spec schema) lists the closed segments. The finisher
//! rewrites it atomically (temporary file, fsync under the syncing
//! policies, rename, directory fsync) after the segments it finished: those
//! closed while a rewrite runs are listed together by the next one, so at
//! most one rewrite is pending, whatever the rate of rotation, and the
//! appending thread never waits for one. A segment still open is not
//! listed yet (readers find it anyway). `close` writes it a last time.

use super::config::{now_ns, Clock, Durability, TapeWriterConfig, TapeWriterStats};
use super::shared::{by_seq, close_files, in_runs, slot_of, RunResult, Start};
use crate::tape::dir::manifest::{sync_dir, Manifest, ManifestSegment};
use crate::tape::dir::{Layout, SERIES};
use crate::tape::error::TapeError;
use floxlog_core::{Compression, Event};
use io_thread::{IoThread, CHUNK};
use segment::{hand_over, ClosingSeg, OpenSeg};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use swap::SwapWriter;

mod batch;
mod compress;
pub(super) mod finish;
pub(crate) mod io_thread;
mod segment;
mod swap;

/// The default segment engine of a tape writer; see the module docs.
pub(crate) struct FileWriter {
    dir: PathBuf,
    cfg: TapeWriterConfig,
    open: Vec<Option<OpenSeg>>,
    numbers: Vec<u32>,
    closed: Vec<(u64, ManifestSegment)>,
    seq: u64,
    last_created: i64,
    tape_created: i64,
    finished: bool,
    stats: TapeWriterStats,
    /// Events of closed segments handed to the OS.
    closed_written: u64,
    /// Events of closed segments fsynced.
    closed_durable: u64,
    /// Closed segments not fsynced (policies `None` and `Flush`) and
    /// their events not yet durable, for [`FileWriter::sync`].
    closed_unsynced: Vec<(PathBuf, u64)>,
    /// Closed segments the finisher has not finished.
    closing: Vec<ClosingSeg>,
    /// Stamps new segments' created_ns (in a Mutex only to keep the writer
    /// `Sync`; only ever reached through `&mut self`).
    clock: Option<Mutex<Clock>>,
    /// The first I/O error of a write done by the calling thread
    /// (`Durability::Flush`); the I/O thread keeps its own.
    failed: Option<TapeError>,
    /// The background writer (not under `Durability::Flush`); joined on
    /// drop, before the lock is released.
    io: Option<IoThread>,
    /// Compresses LZ4 blocks (not under `Durability::Flush`).
    lz4: Option<compress::Compressor>,
}

impl FileWriter {
    /// The default writer of a tape in `dir` (checked, locked and, when
    /// resumed, recovered by [`super::TapeWriter::create`]): new segments
    /// follow `start`'s.
    pub(super) fn create(
        dir: &Path,
        cfg: TapeWriterConfig,
        tape_created: i64,
        start: Start,
    ) -> FileWriter {
        let series = match cfg.layout {
            Layout::Flox => 1,
            Layout::Spec => SERIES.len(),
        };
        let mut numbers = start.numbers;
        numbers.resize(series, 0);
        FileWriter {
            dir: dir.to_path_buf(),
            cfg,
            seq: start.closed.len() as u64,
            open: (0..series).map(|_| None).collect(),
            numbers,
            closed: start.closed,
            last_created: start.last_created,
            tape_created,
            finished: false,
            stats: TapeWriterStats::default(),
            closed_written: 0,
            closed_durable: 0,
            closed_unsynced: Vec::new(),
            closing: Vec::new(),
            clock: None,
            failed: None,
            io: None,
            lz4: None,
        }
    }

    /// See [`TapeWriter::stats`](super::TapeWriter::stats).
    pub fn stats(&self) -> TapeWriterStats {
        self.stats
    }

    /// See [`TapeWriter::set_clock`](super::TapeWriter::set_clock).
    pub fn set_clock(&mut self, clock: Clock) {
        self.clock = Some(Mutex::new(clock));
    }

    /// See [`TapeWriter::written_events`](super::TapeWriter::written_events).
    pub fn written_events(&self) -> u64 {
        let closing = self.closing.iter().map(|s| s.written).sum::<u64>();
        self.closed_written + closing + self.open.iter().flatten().map(|s| s.written).sum::<u64>()
    }

    /// See [`TapeWriter::durable_events`](super::TapeWriter::durable_events).
    pub fn durable_events(&self) -> u64 {
        let closing = self.closing.iter().map(|s| s.synced).sum::<u64>();
        self.closed_durable + closing + self.open.iter().flatten().map(|s| s.synced).sum::<u64>()
    }

    /// See [`TapeWriter::closed_segments`](super::TapeWriter::closed_segments).
    pub fn closed_segments(&self) -> Vec<ManifestSegment> {
        let mut v = self.closed.clone();
        v.sort_by_key(|(s, _)| *s);
        v.into_iter().map(|(_, m)| m).collect()
    }

    /// See [`TapeWriter::open_paths`](super::TapeWriter::open_paths).
    pub fn open_paths(&self) -> Vec<PathBuf> {
        self.open
            .iter()
            .flatten()
            .map(|s| s.io.path.clone())
            .collect()
    }

    fn slot(&self, frame_type: u8) -> usize {
        slot_of(self.cfg.layout, frame_type)
    }

    /// See [`TapeWriter::append`](super::TapeWriter::append).
    pub fn append(&mut self, ev: &Event<'_>) -> Result<(), TapeError> {
        self.append_with(ev, |w| w.append(ev))
    }

    /// See [`TapeWriter::append_raw`](super::TapeWriter::append_raw):
    /// `ev` is the payload decoded.
    pub(crate) fn append_raw(
        &mut self,
        ev: &Event<'_>,
        frame_type: u8,
        payload: &[u8],
    ) -> Result<(), TapeError> {
        self.append_with(ev, |w| w.append_raw(frame_type, payload))
    }

    /// Appends an encoded frame as it is (see [`super::TapeWriter::append_frames`]):
    /// `ev` is `frame` decoded, its CRC checked.
    pub(crate) fn append_frame(&mut self, ev: &Event<'_>, frame: &[u8]) -> Result<(), TapeError> {
        self.append_with(ev, |w| w.append_frame(frame, ev))
    }

    /// Appends `ev` through `put` (the encoder call that writes it), after
    /// the checks and rotation every append makes.
    #[inline(always)]
    fn append_with(
        &mut self,
        ev: &Event<'_>,
        put: impl FnOnce(&mut SwapWriter) -> floxlog_core::error::Result<()>,
    ) -> Result<(), TapeError> {
        self.check_event(ev)?;
        let si = self.slot(ev.frame_type());
        self.before(si, ev)?;
        let Some(seg) = self.open[si].as_mut() else {
            return Err(TapeError::input(None, "internal error: no open segment"));
        };
        let emitted = seg.w.stats().events_emitted;
        put(&mut seg.w).map_err(|e| {
            TapeError::input(Some(&seg.io.path), format!("cannot write the event: {e}"))
                .at(e.offset)
        })?;
        self.after(si, ev.exchange_ts_ns(), emitted)
    }

    /// See [`TapeWriter::flush`](super::TapeWriter::flush).
    pub fn flush(&mut self) -> Result<(), TapeError> {
        self.check_open()?;
        for si in 0..self.open.len() {
            self.lz4_drain(si)?;
            self.hand_over(si, None)?;
        }
        self.wait_io()?;
        self.harvest();
        Ok(())
    }

    /// See [`TapeWriter::sync`](super::TapeWriter::sync).
    pub fn sync(&mut self) -> Result<(), TapeError> {
        self.check_open()?;
        for si in 0..self.open.len() {
            self.lz4_drain(si)?;
            self.hand_over(si, None)?;
            self.sync_seg(si, false, true)?;
        }
        self.wait_io()?;
        // A segment renamed into place after its fsync ran has its
        // directory entry synced here.
        let unsynced_entry = |s: &OpenSeg| !s.io.dir_synced.load(Ordering::Acquire);
        if self.open.iter().flatten().any(unsynced_entry) {
            sync_dir(&self.dir)?;
            for s in self.open.iter().flatten() {
                s.io.dir_synced.store(true, Ordering::Release);
            }
        }
        // Segments closed before are finished now: their counts move.
        self.harvest();
        if !self.closed_unsynced.is_empty() {
            // Closed segments are counted durable once their directory
            // entries are synced too.
            for (path, _) in &self.closed_unsynced {
                std::fs::File::open(path)
                    .and_then(|f| f.sync_all())
                    .map_err(|e| TapeError::io(path, "syncing the segment", e))?;
            }
            sync_dir(&self.dir)?;
            for (_, events) in std::mem::take(&mut self.closed_unsynced) {
                self.closed_durable += events;
            }
        }
        self.harvest();
        Ok(())
    }

    #[inline]
    fn check_open(&self) -> Result<(), TapeError> {
        if self.finished {
            return Err(TapeError::usage("the tape writer is already closed"));
        }
        self.check_io()
    }

    /// The first I/O error, if any: from the I/O thread or from a write
    /// done by this thread.
    #[inline]
    fn check_io(&self) -> Result<(), TapeError> {
        let failed = self.failed.is_some() || self.io.as_ref().is_some_and(IoThread::has_failed);
        if failed {
            return Err(self.io_error());
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn io_error(&self) -> TapeError {
        self.failed
            .clone()
            .or_else(|| self.io.as_ref().and_then(IoThread::failed))
            .unwrap_or_else(|| TapeError::input(Some(&self.dir), "internal error: no I/O error"))
    }

    /// Waits until the I/O thread has run everything handed to it.
    fn wait_io(&self) -> Result<(), TapeError> {
        match &self.io {
            Some(io) => io.wait_idle(),
            None => self.check_io(),
        }
    }

    /// Takes the I/O thread's progress into the counts the getters report.
    /// `synced` is read before `written`, and the thread publishes a
    /// segment's fsync after its writes, so durable never passes written.
    fn harvest(&mut self) {
        for seg in self.open.iter_mut().flatten() {
            (seg.written, seg.synced) = segment::progress(&seg.io);
        }
        if !self.closing.is_empty() {
            self.harvest_closing();
        }
    }

    /// Refuses an event the encoder would refuse, before anything rotates
    /// or opens: an input error (no file, no offset), and no segment left
    /// holding only its header.
    fn check_event(&self, ev: &Event<'_>) -> Result<(), TapeError> {
        ev.validate(self.cfg.segment.profile)
            .map_err(|what| TapeError::input(None, what))
    }

    fn before(&mut self, si: usize, ev: &Event<'_>) -> Result<(), TapeError> {
        self.check_open()?;
        if let Some(seg) = &self.open[si] {
            let by_size = seg.w.would_exceed(ev, self.cfg.max_segment_bytes);
            let by_time = match (self.cfg.rotate_every_ns, seg.bucket) {
                (Some(span), Some(b)) => ev.exchange_ts_ns().div_euclid(span) > b,
                _ => false,
            };
            if by_size || by_time {
                self.close_segment(si)?;
            }
        }
        if self.open[si].is_none() {
            self.open_segment(si, ev.frame_type())?;
        }
        Ok(())
    }

    fn after(&mut self, si: usize, ts: i64, emitted_before: u32) -> Result<(), TapeError> {
        let cfg = self.cfg;
        self.stats.events += 1;
        if self.lz4.is_some() {
            self.lz4_pump(si)?;
        }
        let Some(seg) = self.open[si].as_mut() else {
            return Ok(());
        };
        seg.events += 1;
        seg.min_ts = seg.min_ts.min(ts);
        seg.max_ts = seg.max_ts.max(ts);
        if seg.bucket.is_none() {
            seg.bucket = cfg.rotate_every_ns.map(|s| ts.div_euclid(s));
        }
        let lz4 = cfg.segment.compression == Compression::Lz4;
        // An LZ4 block was just emitted (the `%` below only where needed).
        let lz4_block = lz4 && seg.w.stats().events_emitted != emitted_before;
        match cfg.durability {
            Durability::None | Durability::SyncOnClose => {
                if seg.w.pending().len() >= CHUNK {
                    self.hand_over(si, None)?;
                }
            }
            Durability::Flush => self.hand_over(si, None)?,
            Durability::SyncEveryBlock => {
                let block_done = if lz4 {
                    lz4_block
                } else {
                    seg.events % cfg.segment.index_interval as u64 == 0
                };
                if block_done {
                    self.hand_over(si, None)?;
                    self.sync_seg(si, false, true)?;
                }
            }
            Durability::SyncEveryN(n) => {
                seg.unsynced += 1;
                if seg.unsynced >= n.max(1) as u64 {
                    seg.unsynced = 0;
                    self.hand_over(si, None)?;
                    self.sync_seg(si, false, true)?;
                }
            }
        }
        let rotate = lz4_block
            && self.open[si]
                .as_ref()
                .is_some_and(|s| s.w.segment_bytes() >= cfg.max_segment_bytes);
        if rotate {
            self.close_segment(si)?;
        }
        self.harvest();
        Ok(())
    }

    /// Hands segment `si`'s pending bytes over: to the I/O thread, or
    /// written at once under `Flush`. For LZ4, the header is then rewritten
    /// with the counts of the blocks now in the file (the reference's
    /// updateSegmentHeader); `last` is a closed segment's final header,
    /// written after its last bytes. Any failure here is an I/O failure:
    /// the writer refuses further appends.
    fn hand_over(&mut self, si: usize, last: Option<[u8; 64]>) -> Result<(), TapeError> {
        let Some(seg) = self.open[si].as_mut() else {
            return Ok(());
        };
        let r = hand_over(self.io.as_ref(), seg, last);
        if let Err(e) = &r {
            self.failed.get_or_insert_with(|| e.clone());
        }
        r
    }

    /// Requests an fsync of segment `si` covering everything handed over
    /// (`all`: `sync_all`; `dir`: and its directory entry the first time):
    /// queued, or done at once under `Flush`.
    fn sync_seg(&mut self, si: usize, all: bool, dir: bool) -> Result<(), TapeError> {
        let Some(seg) = self.open[si].as_mut() else {
            return Ok(());
        };
        let r = match &self.io {
            Some(io) => {
                io.push_sync(&seg.io, all, dir, seg.handed);
                Ok(())
            }
            None => seg
                .io
                .sync(dir.then_some(self.dir.as_path()), all, seg.handed),
        };
        if let Err(e) = &r {
            self.failed.get_or_insert_with(|| e.clone());
        }
        r
    }

    fn save_manifest(&self) -> Result<(), TapeError> {
        if !self.cfg.write_manifest {
            return Ok(());
        }
        let mut m = Manifest::new(self.cfg.segment.exchange_id, self.tape_created);
        m.segments = self.closed_segments();
        m.save(&self.dir, self.cfg.durability.syncs())
    }

    /// Closes every open segment, writes the manifest. Returns the first write or fsync error, if any (also one the
    /// I/O thread met earlier).
    pub(crate) fn close_all(&mut self) -> Result<(), TapeError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        self.check_io()?;
        for si in by_seq(&self.open, |s| s.seq) {
            self.close_segment(si)?;
        }
        // Every segment finished (the finisher wrote the manifest of all
        // but an empty tape; it is written once more here, the same bytes,
        // with the tape's last word on `created_ns`).
        self.wait_io()?;
        self.harvest();
        if let Some(io) = &self.io {
            io.discard_spare();
        }
        self.save_manifest()?;
        let syncs = self.cfg.durability.syncs();
        close_files(&self.dir, None, syncs)
    }

    /// See [`TapeWriter::abandon`](super::TapeWriter::abandon).
    pub(crate) fn abandon(&mut self) {
        self.finished = true;
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        // Like BufWriter: close on drop, ignoring errors; call close() to see them.
        let _ = self.close_all();
        // Then the I/O thread is joined (a field dropped before the lock).
    }
}

#[cfg(test)]
mod tests;
