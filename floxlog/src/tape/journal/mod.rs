//! Journal mode of the tape writer (`TapeWriterConfig::journal`): each
//! uncompressed segment is a pre-allocated file mapped shared (pages made
//! ready in a bounded window ahead of the appender, see [`window`]),
//! and `append` encodes the frame straight into the mapping (the core
//! encoder, told to leave the `size` field alone) and publishes it by
//! writing that field last, with release ordering (see [`map`]). A reader
//! of the file (another process, through the page cache) that sees a
//! non-zero size sees the frame; past the last published frame the file
//! holds zeros up to its pre-allocated size.
//!
//! No system call or allocation on the append path (the writer's one
//! short lock, `tape/writer/core.rs`, serialises appenders): a background
//! thread ([`background`]) prepares each series' next segment ahead of
//! need and finalises the previous one (index trailer, the zero tail cut
//! off, fsync per the policy, final header, manifest), so a rotation
//! costs the appending thread a queue push and a pointer swap (and a wait
//! only when the thread is behind). After close every segment is byte
//! for byte what the default writer writes for the same events and the
//! same `created_ns` per segment.
//!
//! What an append has done when it returns, by durability:
//! - every policy: the frame is in the page cache, published; it
//!   survives the process being killed (`written_events` counts it);
//! - `None`, `Flush`: nothing more (`Flush` means nothing extra here:
//!   the frame is visible to readers already); `durable_events` grows at
//!   `sync` only;
//! - `SyncEveryN(n)`, `SyncEveryBlock` (every `index_interval` events):
//!   every n-th append asks the background thread for an fsync, run
//!   within about a millisecond; `durable_events` counts what it covered;
//! - `SyncOnClose`: each segment is fsynced when finalised.
//!
//! Segments are stamped (`created_ns`, the flox layout's file name) when
//! prepared: `cfg.created_ns + i` for the `i`-th segment opened, as the
//! default writer does, or the clock's value (`TapeWriter::set_clock`) or
//! the wall clock when the segment [`background::AHEAD`] before it in its
//! series opens (not at the segment's own first event). The first segment
//! (flox layout; the spec layout prepares a series at its first event) is
//! reserved, mapped and its first window pre-faulted by `create` under a hidden name, and
//! the append of its first event only stamps and names it (a rename);
//! every later one is prepared in the background, [`background::AHEAD`]
//! segments ahead of the live one. A crash leaves the live segment
//! unfinished (placeholder header, frames, zeros to the pre-allocated
//! size) and possibly the next, prepared segments with no frame at all:
//! readers take the zeros as the end of the data and `recover` cuts them
//! off.

mod background;
mod batch;
mod map;
mod prepare;
mod space;
mod window;

use super::dir::{series_of, Layout, MIXED, SERIES};
use super::error::TapeError;
use crate::tape::dir::manifest::{sync_dir, Manifest, ManifestSegment};
use crate::tape::writer::config::{
    now_ns, Clock, Durability, TapeWriterConfig, TapeWriterHealth, TapeWriterStats,
};
use crate::tape::writer::shared::{close_files, Start};
use background::{Background, Finishing, Job, Settings};
use floxlog_core::{Compression, Event, FrameHeader, SegmentWriter, WriterConfig};
use prepare::{prepare, reserve_file, MapStorage, Prepared, Reserved, SegShared};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// A segment taking events.
struct Live {
    w: Box<SegmentWriter<MapStorage>>,
    publisher: map::Publisher,
    shared: Arc<SegShared>,
    name: String,
    series: &'static str,
    seq: u64,
    created: i64,
    frames_cap: u64,
    min_ts: i64,
    max_ts: i64,
    events: u64,
    bucket: Option<i64>,
    unsynced: u64,
    /// The append position at which the window of ready pages moves next.
    next_step: u64,
}

/// The journal writer behind a `TapeWriter` in journal mode.
pub(crate) struct Journal {
    cfg: TapeWriterConfig,
    open: Vec<Option<Live>>,
    /// Spec layout: the next file number of each series.
    numbers: Vec<u32>,
    /// Segments opened so far (the next one's `seq`).
    seq: u64,
    last_created: i64,
    /// The created_ns of the last segment asked of the background.
    ahead_created: i64,
    events: u64,
    finished: bool,
    /// Stamps segments instead of `cfg.created_ns` or the wall clock
    /// (in a Mutex only to keep the writer `Sync`).
    clock: Option<Mutex<Clock>>,
    bg: Background,
    /// The first segment file (flox layout), reserved and pre-faulted by
    /// `create` so that the first append only names it (the name waits
    /// for the clock); removed unused on drop.
    ahead: Vec<Option<Reserved>>,
    /// Segments of the tape before this writer (resumed): not counted in
    /// its stats.
    resumed: u64,
    /// Wall-clock ns of the last rotation (health).
    last_rotation: i64,
    /// Wakes sleeping tailers after each publication (None if the page
    /// could not be made: they poll).
    wake: Option<crate::tape::wake::Page>,
}

impl Journal {
    /// Checks the settings, starts the background thread and reserves
    /// each series' first segment file (see `ahead`); new segments follow
    /// `start`'s (whose entries the manifest keeps listing).
    pub(crate) fn create(
        dir: &Path,
        cfg: TapeWriterConfig,
        tape_created: i64,
        start: Start,
    ) -> Result<Journal, TapeError> {
        if cfg.segment.compression != Compression::None {
            return Err(TapeError::usage(
                "journal mode writes uncompressed segments only: LZ4 blocks are compressed when whole, so a block cannot be published frame by frame",
            )
            .with_hint("use compression none with journal mode, or the default writer for LZ4"));
        }
        let slots = match cfg.layout {
            Layout::Flox => 1,
            Layout::Spec => SERIES.len(),
        };
        let settings = Settings {
            dir: dir.to_path_buf(),
            layout: cfg.layout,
            segment: cfg.segment,
            frames_cap: cfg.max_segment_bytes.max(FrameHeader::LEN as u64 + 64),
            syncs: !matches!(cfg.durability, Durability::None | Durability::Flush),
            write_manifest: cfg.write_manifest,
            tape_created: std::sync::atomic::AtomicI64::new(tape_created),
            cpus: cfg.thread_cpus,
        };
        // The slow part of a first segment (reserving and pre-faulting
        // `max_segment_bytes`: tens of ms for 64 MiB) is done here, not in
        // the first append. Fixed hidden names: a killed run's are replaced.
        // Spec layout: a series is prepared when its first event arrives
        // (a tape may never hold some of the four).
        let frames_cap = settings.frames_cap;
        let ahead = match cfg.layout {
            Layout::Flox => vec![Some(reserve_file(
                dir,
                ".journal-first-0.tmp",
                &cfg.segment,
                frames_cap,
            )?)],
            Layout::Spec => (0..slots).map(|_| None).collect(),
        };
        let mut numbers = start.numbers;
        numbers.resize(slots, 0);
        let seq = start.closed.len() as u64;
        let bg = Background::start(settings, slots)?;
        background::lock(&bg.shared).closed = start.closed;
        let j = Journal {
            cfg,
            open: (0..slots).map(|_| None).collect(),
            numbers,
            seq,
            last_created: start.last_created,
            ahead_created: start.last_created,
            events: 0,
            finished: false,
            clock: None,
            bg,
            ahead,
            resumed: seq,
            last_rotation: 0,
            wake: crate::tape::wake::Page::create(dir).ok(),
        };
        Ok(j)
    }

    fn slot(&self, frame_type: u8) -> usize {
        match self.cfg.layout {
            Layout::Flox => 0,
            Layout::Spec => SERIES
                .iter()
                .position(|s| *s == series_of(frame_type))
                .unwrap_or(0),
        }
    }

    /// Stamps segments with `clock()` (see `TapeWriter::set_clock`): it is
    /// called on the appending thread once per segment, when the segment
    /// [`background::AHEAD`] before it in its series opens (the journal
    /// prepares segments ahead), or when the first one of the series opens.
    pub(crate) fn set_clock(&mut self, clock: Clock) {
        self.clock = Some(Mutex::new(clock));
    }

    /// The created_ns the next segment gets (the default writer's rule):
    /// the clock's, `cfg.created_ns + seq` or the wall clock, after the
    /// last one.
    fn created_for(&mut self, seq: u64, after: i64) -> Result<i64, TapeError> {
        let wanted = match (&mut self.clock, self.cfg.created_ns) {
            (Some(c), _) => (c.get_mut().unwrap_or_else(|e| e.into_inner()))(),
            (None, Some(base)) => i64::try_from(seq)
                .ok()
                .and_then(|s| base.checked_add(s))
                .ok_or_else(|| TapeError::usage("segment created_ns would overflow"))?,
            (None, None) => now_ns(),
        };
        if wanted < 0 {
            return Err(TapeError::usage(format!(
                "segment created_ns {wanted} is negative: it names and orders the tape's segments; no segment was opened"
            )));
        }
        Ok(wanted.max(after.saturating_add(1)))
    }

    /// Opens the first segment of slot `si` on this thread (cold: once per
    /// series), big enough for a frame of `frame_len`, and asks for its
    /// successor: names the file `create` reserved, or (a first event
    /// bigger than a segment) prepares one.
    #[cold]
    fn open_first(
        &mut self,
        si: usize,
        series: &'static str,
        frame_len: u64,
    ) -> Result<(), TapeError> {
        let created = self.created_for(self.seq, self.last_created)?;
        let set = self.bg.settings();
        let cap = set.frames_cap.max(64 + frame_len);
        let plan = background::plan(set, series, created, self.numbers[si], cap);
        let p = match self.ahead.get_mut(si).and_then(Option::take) {
            Some(r) if r.frames_cap == cap => r.publish(&plan)?,
            // A first event too big for it: the reserved file is removed.
            _ => prepare(&plan)?,
        };
        self.numbers[si] += 1;
        self.install(si, series, p, created, background::AHEAD)
    }

    /// Makes `p` slot `si`'s live segment and asks for `more` segments
    /// after those asked for already.
    fn install(
        &mut self,
        si: usize,
        series: &'static str,
        mut p: Prepared,
        created: i64,
        more: usize,
    ) -> Result<(), TapeError> {
        if p.created != created {
            // Spec layout with a fixed created_ns: which series opens next
            // was not known when this one was prepared. Same file, header
            // written again by the encoder with the right value.
            let cfg = WriterConfig {
                created_ns: created,
                ..self.cfg.segment
            };
            let path = p.shared.path.clone();
            let mut w = SegmentWriter::new(cfg, p.w.into_storage()).map_err(|e| {
                TapeError::input(Some(&path), format!("cannot start the segment: {e}"))
            })?;
            w.defer_size(true);
            p.w = Box::new(w);
        }
        self.last_created = created;
        if self.seq == 0 && self.clock.is_some() {
            self.bg.set_tape_created(created);
        }
        self.ahead_created = self.ahead_created.max(created);
        self.bg.register_live(p.shared.clone());
        self.open[si] = Some(Live::new(p, series, self.seq, created));
        self.seq += 1;
        for k in 0..more {
            // The segment's place among those to come, for the
            // `cfg.created_ns + seq` rule (exact in the flox layout; the
            // spec layout's rotate corrects it).
            let seq = self.seq + (background::AHEAD - more + k) as u64;
            let created = self.created_for(seq, self.ahead_created)?;
            self.ahead_created = created;
            let number = self.numbers[si];
            self.numbers[si] += 1;
            self.bg.push([Job::Prepare(background::Ask {
                si,
                series,
                created,
                number,
            })]);
        }
        Ok(())
    }

    #[inline]
    fn check_open(&self) -> Result<(), TapeError> {
        if self.finished {
            return Err(TapeError::usage("the tape writer is already closed"));
        }
        if self.bg.shared.has_failed.load(Ordering::Acquire) {
            return Err(self.io_error());
        }
        Ok(())
    }

    #[cold]
    fn io_error(&self) -> TapeError {
        self.bg
            .failed()
            .unwrap_or_else(|| TapeError::input(None, "internal error: no journal error"))
    }

    /// Appends one event (see the module docs).
    #[inline]
    pub(crate) fn append(&mut self, ev: &Event<'_>) -> Result<(), TapeError> {
        self.append_with(ev, |w| w.append(ev))
    }

    /// Appends a frame from its type and payload, byte for byte: `ev` is
    /// the payload decoded.
    pub(crate) fn append_raw(
        &mut self,
        ev: &Event<'_>,
        frame_type: u8,
        payload: &[u8],
    ) -> Result<(), TapeError> {
        self.append_with(ev, |w| w.append_raw(frame_type, payload))
    }

    /// Appends an encoded frame as it is, copied straight into the
    /// mapping: `ev` is `frame` decoded, its CRC checked.
    pub(crate) fn append_frame(&mut self, ev: &Event<'_>, frame: &[u8]) -> Result<(), TapeError> {
        self.append_with(ev, |w| w.append_frame(frame, ev))
    }

    #[inline(always)]
    fn append_with(
        &mut self,
        ev: &Event<'_>,
        put: impl FnOnce(&mut SegmentWriter<MapStorage>) -> floxlog_core::error::Result<()>,
    ) -> Result<(), TapeError> {
        // Refused before anything rotates or opens.
        ev.validate(self.cfg.segment.profile)
            .map_err(|what| TapeError::input(None, what))?;
        self.check_open()?;
        let si = self.slot(ev.frame_type());
        self.before(si, ev)?;
        let Some(live) = self.open[si].as_mut() else {
            return Err(TapeError::input(None, "internal error: no open segment"));
        };
        let at = live.w.segment_bytes();
        put(&mut live.w).map_err(|e| {
            TapeError::input(
                Some(&live.shared.path),
                format!("cannot write the event: {e}"),
            )
            .at(e.offset)
        })?;
        let size = live.w.segment_bytes() - at - FrameHeader::LEN as u64;
        live.publisher.publish(at as usize, size as u32);
        if live.window_step() {
            self.bg.shared.ring();
        }
        self.events += 1;
        let ts = ev.exchange_ts_ns();
        live.events += 1;
        crate::tape::wake::published(&self.wake, live.events == 1);
        live.min_ts = live.min_ts.min(ts);
        live.max_ts = live.max_ts.max(ts);
        if live.bucket.is_none() {
            live.bucket = self.cfg.rotate_every_ns.map(|s| ts.div_euclid(s));
        }
        let every = match self.cfg.durability {
            Durability::SyncEveryN(n) => n.max(1) as u64,
            Durability::SyncEveryBlock => self.cfg.segment.index_interval as u64,
            _ => 0,
        };
        if every > 0 {
            live.unsynced += 1;
            if live.unsynced >= every {
                live.unsynced = 0;
                live.shared.sync_wanted.store(live.events, Ordering::SeqCst);
                self.bg.shared.ring();
            }
        }
        Ok(())
    }

    /// Rotates slot `si` if `ev` does not belong in its live segment, and
    /// opens one if there is none.
    #[inline(always)]
    fn before(&mut self, si: usize, ev: &Event<'_>) -> Result<(), TapeError> {
        let frame_len = (FrameHeader::LEN + ev.payload_len()) as u64;
        match &self.open[si] {
            Some(live) => {
                let by_size = live.w.would_exceed(ev, self.cfg.max_segment_bytes);
                let by_time = match (self.cfg.rotate_every_ns, live.bucket) {
                    (Some(span), Some(b)) => ev.exchange_ts_ns().div_euclid(span) > b,
                    _ => false,
                };
                if by_size || by_time {
                    self.rotate(si)?;
                }
            }
            None => {
                let series = match self.cfg.layout {
                    Layout::Flox => MIXED,
                    Layout::Spec => series_of(ev.frame_type()),
                };
                self.open_first(si, series, frame_len)?;
            }
        }
        let fits = self.open[si]
            .as_ref()
            .is_some_and(|l| l.w.segment_bytes() + frame_len <= l.frames_cap);
        if !fits {
            self.make_room(si, frame_len)?;
        }
        Ok(())
    }

    /// Hands slot `si`'s live segment to the background thread and takes
    /// the prepared one.
    #[cold]
    #[inline(never)]
    fn rotate(&mut self, si: usize) -> Result<(), TapeError> {
        let p = self.bg.take_ready(si)?;
        let created = match self.cfg.layout {
            Layout::Flox => p.created,
            Layout::Spec => match (self.cfg.created_ns, &self.clock) {
                (Some(_), None) => self.created_for(self.seq, self.last_created)?,
                _ => p.created.max(self.last_created.saturating_add(1)),
            },
        };
        let series = self.open[si].as_ref().map_or(MIXED, |l| l.series);
        self.last_rotation = now_ns();
        if let Some(old) = self.open[si].take() {
            self.bg.push_finish(finishing(old));
        }
        self.install(si, series, *p, created, 1)
    }

    /// An event too big for the live segment, which has no event yet
    /// (the first of a segment always goes in, as with the default
    /// writer): the segment is replaced by a big enough one.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, si: usize, frame_len: u64) -> Result<(), TapeError> {
        let Some(live) = self.open[si].take() else {
            return Err(TapeError::input(None, "internal error: no open segment"));
        };
        let path = live.shared.path.clone();
        let shared = live.shared.clone();
        let (series, created, seq) = (live.series, live.created, live.seq);
        lock_live_remove(&self.bg, &shared);
        shared.window.unmapping();
        drop(live);
        std::fs::remove_file(&path)
            .map_err(|e| TapeError::io(&path, "removing a segment too small", e))?;
        let set = self.bg.settings();
        let cap = set.frames_cap.max(64 + frame_len);
        let number = match self.cfg.layout {
            Layout::Flox => 0,
            // The replaced file's number: it was taken from the counter
            // when it was opened, and the successor's after it.
            Layout::Spec => path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.rsplit('-').next())
                .and_then(|n| n.strip_suffix(".bin"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
        };
        let p = prepare(&background::plan(set, series, created, number, cap))?;
        self.bg.register_live(p.shared.clone());
        self.open[si] = Some(Live::new(p, series, seq, created));
        Ok(())
    }

    /// Nothing to hand over: every appended frame is in the page cache.
    /// Returns the first background failure, if any.
    pub(crate) fn flush(&mut self) -> Result<(), TapeError> {
        self.check_open()
    }

    /// Fsyncs every live segment and every closed one the policy left
    /// unsynced, and the directory: afterwards `durable_events` equals
    /// `written_events`.
    pub(crate) fn sync(&mut self) -> Result<(), TapeError> {
        self.check_open()?;
        self.bg.wait_idle()?;
        for live in self.open.iter().flatten() {
            live.shared
                .file
                .sync_data()
                .map_err(|e| TapeError::io(&live.shared.path, "syncing the segment", e))?;
            live.shared.synced.fetch_max(live.events, Ordering::AcqRel);
        }
        let unsynced = std::mem::take(&mut background::lock(&self.bg.shared).closed_unsynced);
        let mut gained = 0;
        for (path, events) in &unsynced {
            std::fs::File::open(path)
                .and_then(|f| f.sync_all())
                .map_err(|e| TapeError::io(path, "syncing the segment", e))?;
            gained += events;
        }
        sync_dir(&self.bg.settings().dir)?;
        background::lock(&self.bg.shared).closed_durable += gained;
        Ok(())
    }

    /// Every event appended (in the page cache once `append` returned).
    pub(crate) fn written_events(&self) -> u64 {
        self.events
    }

    /// Events an fsync covered.
    pub(crate) fn durable_events(&self) -> u64 {
        let closed = {
            let g = background::lock(&self.bg.shared);
            g.closed_durable
                + g.finishing
                    .iter()
                    .map(|(l, events)| l.synced().min(*events))
                    .sum::<u64>()
        };
        closed
            + self
                .open
                .iter()
                .flatten()
                .map(|l| l.shared.synced().min(l.events))
                .sum::<u64>()
    }

    pub(crate) fn stats(&self) -> TapeWriterStats {
        TapeWriterStats {
            events: self.events,
            segments: background::lock(&self.bg.shared).closed.len() as u64 - self.resumed,
        }
    }

    /// The journal's part of the writer's health: reserved and used bytes
    /// of the live and prepared segments, the background thread's queue,
    /// lag, wake-ups and failure, the last rotation.
    pub(crate) fn add_health(&self, h: &mut TapeWriterHealth) {
        let live = self.open.iter().flatten();
        h.bytes_reserved = live.clone().map(|l| l.shared.reserved).sum();
        h.bytes_used += live.map(|l| l.w.segment_bytes()).sum::<u64>();
        h.last_rotation_ns = self.last_rotation;
        let g = background::lock(&self.bg.shared);
        h.bytes_reserved += g
            .ready
            .iter()
            .flatten()
            .map(|p| p.shared.reserved)
            .sum::<u64>();
        h.background_queued = g.jobs.len() as u64;
        h.background_lag_ns = g
            .queued_since
            .map_or(0, |t| t.elapsed().as_nanos().min(u64::MAX as u128) as u64);
        h.last_error = g.failed.as_ref().map(|e| e.to_string());
        h.last_error_ns = g.failed_ns;
        h.low_space = g.space.low();
        h.reservation_failures = g.space.failures;
        h.last_reservation_error = g.space.last_error.as_ref().map(|e| e.to_string());
        h.last_reservation_error_ns = g.space.last_error_ns;
        drop(g);
        h.background_wakeups = self.bg.shared.wakeups.load(Ordering::Relaxed);
    }

    pub(crate) fn closed_segments(&self) -> Vec<ManifestSegment> {
        let mut v = background::lock(&self.bg.shared).closed.clone();
        v.sort_by_key(|(s, _)| *s);
        v.into_iter().map(|(_, m)| m).collect()
    }

    pub(crate) fn open_paths(&self) -> Vec<PathBuf> {
        self.open
            .iter()
            .flatten()
            .filter(|l| l.events > 0)
            .map(|l| l.shared.path.clone())
            .collect()
    }

    /// Finalises every live segment, removes the prepared ones, writes the
    /// manifest.
    pub(crate) fn close_all(&mut self) -> Result<(), TapeError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        if let Some(e) = self.bg.failed() {
            return Err(e);
        }
        let mut order: Vec<(u64, usize)> = self
            .open
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (s.seq, i)))
            .collect();
        order.sort();
        for (_, si) in order {
            let Some(live) = self.open[si].take() else {
                continue;
            };
            if live.events == 0 {
                let shared = live.shared.clone();
                lock_live_remove(&self.bg, &shared);
                self.bg.push_now(Job::Discard(Box::new(Prepared {
                    w: live.w,
                    publisher: live.publisher,
                    shared: live.shared,
                    name: live.name,
                    created: live.created,
                    frames_cap: live.frames_cap,
                })));
            } else {
                self.bg.push_finish(finishing(live));
            }
        }
        self.bg.wait_idle()?;
        self.bg.stop(true);
        if let Some(e) = self.bg.failed() {
            return Err(e);
        }
        let set = self.bg.settings();
        let manifest = set.write_manifest.then(|| {
            let mut m = Manifest::new(set.segment.exchange_id, self.bg.tape_created());
            m.segments = self.closed_segments();
            m
        });
        close_files(&set.dir, manifest, set.syncs)
    }

    /// Stops as if the process died now: nothing is finalised that was not
    /// handed to the background thread already; prepared segments stay.
    pub(crate) fn abandon(&mut self) {
        self.finished = true;
        // Unmapped as the process's death would.
        for s in self.open.iter_mut() {
            if let Some(l) = s.take() {
                l.shared.window.unmapping();
            }
        }
        self.bg.stop(false);
    }
}

impl Live {
    /// After a publication: when the append position passed the window's
    /// next step, asks for pages ready a [`window::WINDOW`] past it and
    /// says to ring the background thread (a plain comparison otherwise).
    /// A run of frames longer than a window faults its far pages itself.
    #[inline(always)]
    fn window_step(&mut self) -> bool {
        let end = self.w.segment_bytes();
        if end < self.next_step {
            return false;
        }
        self.next_step = end + window::STEP;
        self.shared
            .window
            .want
            .store(end + window::WINDOW, Ordering::SeqCst);
        true
    }

    /// A live segment from a prepared one, with no event yet.
    fn new(p: Prepared, series: &'static str, seq: u64, created: i64) -> Live {
        Live {
            w: p.w,
            publisher: p.publisher,
            shared: p.shared,
            name: p.name,
            series,
            seq,
            created,
            frames_cap: p.frames_cap,
            min_ts: i64::MAX,
            max_ts: i64::MIN,
            events: 0,
            bucket: None,
            unsynced: 0,
            next_step: window::STEP,
        }
    }
}

fn finishing(l: Live) -> Finishing {
    Finishing {
        w: l.w,
        shared: l.shared,
        seq: l.seq,
        name: l.name,
        series: l.series,
        min_ts: l.min_ts,
        max_ts: l.max_ts,
        events: l.events,
    }
}

fn lock_live_remove(bg: &Background, shared: &Arc<SegShared>) {
    background::lock(&bg.shared)
        .live
        .retain(|l| !Arc::ptr_eq(l, shared));
}

impl Drop for Journal {
    fn drop(&mut self) {
        let _ = self.close_all();
    }
}

#[cfg(test)]
mod tests;
