//! Writing tapes: the core segment writer over files, with rotation by size
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
//! each) wait to be written, the encoder waits (back-pressure).
//! Whatever crosses the thread, the order of effects on disk is the
//! synchronous writer's: the placeholder header is written (by the calling
//! thread) before the rename that publishes a segment; a segment's final
//! header, and its fsync, are done before `manifest.json` lists it (closing
//! a segment waits for the I/O thread). Under the syncing policies a
//! closing segment's frames and trailer are fsynced before its final
//! header is written (then fsynced too), so that not even a power loss
//! leaves a final header whose index is not on disk. The first I/O error of the thread
//! is kept: the next `append`, `flush`, `sync` or `close` returns it, and
//! the writer refuses further appends; the thread writes nothing after it.
//!
//! `manifest.json` (spec schema) is rewritten atomically after every closed
//! segment, listing the closed segments; a segment still open is not listed
//! yet (readers find it anyway).

use super::dir::{series_of, Layout, MIXED, SERIES};
use super::error::TapeError;
use super::hint::{Hint, Remedy};
use super::lock::TapeLock;
use super::manifest::{sync_dir, write_atomic, Manifest, ManifestSegment, MANIFEST_FILE};
use floxlog_core::{Compression, Event, FrameHeader, WriterConfig, DEFAULT_MAX_SEGMENT_BYTES};
use io_thread::{take_pending, Exchange, Header, IoThread, SegIo, SwapStorage, SwapWriter, CHUNK};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

#[path = "io_thread.rs"]
mod io_thread;

/// When written bytes leave the process and when they are fsynced.
///
/// | policy | handed over for `write(2)` | `fsync` (`sync_data`) |
/// |---|---|---|
/// | `None` | to the I/O thread in 1 MiB chunks, at rotation and close | never |
/// | `Flush` | written by `append` itself, before it returns, for every event (LZ4: every block) | never |
/// | `SyncEveryBlock` | to the I/O thread after every LZ4 block (uncompressed: every `index_interval` events) | queued after the write, and at close |
/// | `SyncEveryN(n)` | to the I/O thread every `n` events | queued after the write, and at close |
/// | `SyncOnClose` (default) | to the I/O thread in 1 MiB chunks | when a segment is closed (file, then manifest and directory) |
///
/// LZ4 events staged in an unfinished block are in memory only, whatever
/// the policy: they reach the file when their block does.
///
/// Bytes and fsyncs handed to the I/O thread are carried out in order, in
/// the background: `append` does not wait for them (unless three chunks
/// are already waiting). An fsync requested while the previous one still
/// waits is merged into it (one fsync then covers both). Closing a segment
/// (rotation, [`TapeWriter::close`]) waits for everything handed over.
/// [`TapeWriter::flush`] and [`TapeWriter::sync`] hand over and wait on
/// demand, under any policy.
///
/// [`TapeWriter::written_events`] and [`TapeWriter::durable_events`] say how
/// many events have been delivered so far: `write(2)` of their bytes
/// returned (they survive the process being killed) and their fsync
/// returned (they survive a power loss too). Under the syncing policies a
/// new segment's directory entry is fsynced too, once, with the segment's
/// first fsync.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// Never fsync; write in large chunks, in the background.
    None,
    /// Write every event (LZ4: every block) before `append` returns
    /// (visible to readers, e.g. `cat --follow`); never fsync.
    Flush,
    /// Write and fsync after every block, in the background.
    SyncEveryBlock,
    /// Write and fsync every n events, in the background.
    SyncEveryN(u32),
    /// Write in chunks in the background, fsync each segment when it is
    /// closed.
    #[default]
    SyncOnClose,
}

impl std::str::FromStr for Durability {
    type Err = String;

    /// `none`, `flush`, `block`, `close`, `every:N` (N > 0).
    fn from_str(s: &str) -> Result<Durability, String> {
        match s {
            "none" => Ok(Durability::None),
            "flush" => Ok(Durability::Flush),
            "block" => Ok(Durability::SyncEveryBlock),
            "close" => Ok(Durability::SyncOnClose),
            _ => s
                .strip_prefix("every:")
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&n| n > 0)
                .map(Durability::SyncEveryN)
                .ok_or_else(|| {
                    format!("`{s}` is not a durability policy (none, flush, block, every:N, close)")
                }),
        }
    }
}

impl Durability {
    fn syncs(self) -> bool {
        !matches!(self, Durability::None | Durability::Flush)
    }
}

/// Settings of a [`TapeWriter`].
#[derive(Clone, Copy, Debug)]
pub struct TapeWriterConfig {
    /// File layout.
    pub layout: Layout,
    /// Segment settings (compression, index, exchange, profile); its
    /// `created_ns` is ignored (see `created_ns` below).
    pub segment: WriterConfig,
    /// Rotate before a segment would grow past this (uncompressed: before
    /// the frame that would cross it, as the reference does; LZ4: after the
    /// block that crosses it, as the newest reference does).
    pub max_segment_bytes: u64,
    /// Also rotate when an event's timestamp enters a new span of this many
    /// nanoseconds (aligned to the epoch: 3_600e9 gives hourly segments).
    pub rotate_every_ns: Option<i64>,
    /// Durability policy.
    pub durability: Durability,
    /// Fixed `created_ns` for segment `i` = this + i (deterministic output);
    /// `None` stamps the wall clock. [`TapeWriter::set_clock`] overrides
    /// both.
    pub created_ns: Option<i64>,
    /// Write `manifest.json`.
    pub write_manifest: bool,
    /// Journal mode (uncompressed only): segments are pre-allocated files
    /// mapped shared, and `append` publishes each frame in the mapping with
    /// no system call; see the `journal` module docs (in
    /// `tape/journal/mod.rs`) for what an append has done under each
    /// durability. The segments are byte for byte the default writer's
    /// once closed.
    pub journal: bool,
}

impl Default for TapeWriterConfig {
    fn default() -> Self {
        TapeWriterConfig {
            layout: Layout::Flox,
            segment: WriterConfig::default(),
            max_segment_bytes: DEFAULT_MAX_SEGMENT_BYTES,
            rotate_every_ns: None,
            durability: Durability::default(),
            created_ns: None,
            write_manifest: true,
            journal: false,
        }
    }
}

/// A source of `created_ns` for new segments.
pub type Clock = Box<dyn FnMut() -> i64 + Send>;

struct OpenSeg {
    /// The file (at its published path) and its written / synced counts,
    /// shared with the I/O thread.
    io: Arc<SegIo>,
    /// Where the encoder's output buffer is swapped for an empty one.
    xchg: Arc<Exchange>,
    name: String,
    series: &'static str,
    w: SwapWriter,
    seq: u64,
    min_ts: i64,
    max_ts: i64,
    events: u64,
    bucket: Option<i64>,
    unsynced: u64,
    /// Events whose bytes were handed over (to the I/O thread or written).
    handed: u64,
    /// `io.written` as of the writer's last call (see [`TapeWriter::harvest`]).
    written: u64,
    /// `io.synced` as of the writer's last call.
    synced: u64,
}

/// Counts of what a writer wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TapeWriterStats {
    /// Events accepted.
    pub events: u64,
    /// Segments closed.
    pub segments: u64,
}

/// Writes a tape directory; see the module docs.
pub struct TapeWriter {
    dir: PathBuf,
    cfg: TapeWriterConfig,
    open: Vec<Option<OpenSeg>>,
    numbers: Vec<u32>,
    closed: Vec<(u64, ManifestSegment)>,
    seq: u64,
    last_created: i64,
    tape_created: i64,
    metadata: Option<serde_json::Value>,
    finished: bool,
    stats: TapeWriterStats,
    /// Events of closed segments handed to the OS.
    closed_written: u64,
    /// Events of closed segments fsynced.
    closed_durable: u64,
    /// Closed segments not fsynced (policies `None` and `Flush`) and
    /// their events not yet durable, for [`TapeWriter::sync`].
    closed_unsynced: Vec<(PathBuf, u64)>,
    /// Stamps new segments' created_ns (in a Mutex only to keep the writer
    /// `Sync`; only ever reached through `&mut self`).
    clock: Option<Mutex<Clock>>,
    /// The first I/O error of a write done by the calling thread
    /// (`Durability::Flush`); the I/O thread keeps its own.
    failed: Option<TapeError>,
    /// The background writer (not under `Durability::Flush`); joined on
    /// drop, before the lock is released.
    io: Option<IoThread>,
    /// Journal mode: every call goes there (dropped before the lock).
    journal: Option<Box<super::journal::Journal>>,
    /// The tape lock, held while the writer lives.
    _lock: TapeLock,
}

/// Wall clock in nanoseconds since the epoch.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos().min(i64::MAX as u128) as i64)
        .unwrap_or(0)
}

impl TapeWriter {
    /// Starts a tape in `dir` (created if needed). Refuses a directory that
    /// already holds segments or a manifest.
    pub fn create(dir: &Path, cfg: TapeWriterConfig) -> Result<TapeWriter, TapeError> {
        cfg.segment
            .check()
            .map_err(|e| TapeError::usage(e.what.to_string()))?;
        if cfg.rotate_every_ns.is_some_and(|s| s <= 0) {
            return Err(TapeError::usage("rotation time span must be positive"));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| TapeError::io(dir, "creating the tape directory", e))?;
        // Held until the writer is closed or dropped (or its process dies):
        // recover, reindex and a second writer refuse meanwhile.
        let lock = TapeLock::acquire(dir, "writing")?;
        let rd = std::fs::read_dir(dir)
            .map_err(|e| TapeError::io(dir, "listing the tape directory", e))?;
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == MANIFEST_FILE || super::dir::segment_series(&name).is_some() {
                return Err(
                    TapeError::input(Some(dir), format!("already holds a tape ({name})"))
                        .with_hint("write to a new or empty directory"),
                );
            }
        }
        let series = match cfg.layout {
            Layout::Flox => 1,
            Layout::Spec => SERIES.len(),
        };
        let tape_created = cfg.created_ns.unwrap_or_else(now_ns);
        let journal = match cfg.journal {
            true => Some(Box::new(super::journal::Journal::create(
                dir,
                cfg,
                tape_created,
            )?)),
            false => None,
        };
        Ok(TapeWriter {
            dir: dir.to_path_buf(),
            cfg,
            open: (0..series).map(|_| None).collect(),
            numbers: vec![0; series],
            closed: Vec::new(),
            seq: 0,
            last_created: i64::MIN,
            tape_created,
            metadata: None,
            finished: false,
            stats: TapeWriterStats::default(),
            closed_written: 0,
            closed_durable: 0,
            closed_unsynced: Vec::new(),
            clock: None,
            failed: None,
            io: None,
            journal,
            _lock: lock,
        })
    }

    /// The tape directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Counts so far.
    pub fn stats(&self) -> TapeWriterStats {
        if let Some(j) = &self.journal {
            return j.stats();
        }
        self.stats
    }

    /// Stamps each new segment's created_ns with `clock()` instead of the
    /// wall clock or `cfg.created_ns`: called exactly once per segment
    /// opened (when its first event arrives), never otherwise.
    ///
    /// It is called on the caller's thread, from inside `append` (or
    /// `append_raw`), never by the I/O thread. A segment that fails to
    /// open (say the directory is not writable) has still used its call;
    /// the next attempt calls again. As with the other sources, a value not
    /// after the previous segment's is raised to the previous + 1 (flox
    /// segment names must increase), and a flox-layout name that is taken
    /// is skipped by adding 1.
    ///
    /// The clock is not called for the tape's own `created_ns` (in
    /// `manifest.json`): with a clock set before the tape's first segment
    /// is opened, it is that segment's created_ns, known from that open
    /// on; otherwise, and for a tape with no segment, it stays what
    /// [`TapeWriter::create`] chose (`cfg.created_ns` or the wall clock).
    ///
    /// In journal mode, which prepares segments ahead, the clock is called
    /// (still once per segment, on the caller's thread, inside `append`)
    /// when the previous segment of the series opens.
    pub fn set_clock(&mut self, clock: Clock) {
        if let Some(j) = &mut self.journal {
            return j.set_clock(clock);
        }
        self.clock = Some(Mutex::new(clock));
    }

    /// Events whose bytes have been handed to the OS (`write(2)` returned,
    /// on the I/O thread or, under [`Durability::Flush`], in `append`):
    /// they survive the process being killed, though not a power loss
    /// unless also [durable](TapeWriter::durable_events).
    ///
    /// With [`Layout::Flox`] these are the first `written_events()` events
    /// appended; with [`Layout::Spec`] the sum over the series, each a
    /// prefix of the events of its series. Events staged in memory (an
    /// unfinished LZ4 block, a chunk not yet handed over) or handed to the
    /// I/O thread and not yet written are not counted.
    ///
    /// The I/O thread's progress is read at the writer's own calls
    /// (`append`, `flush`, `sync`, a segment's close), so that this and
    /// [`TapeWriter::durable_events`] agree with each other between two
    /// calls (durable never above written); [`TapeWriter::flush`] brings
    /// it up to every event handed over.
    pub fn written_events(&self) -> u64 {
        if let Some(j) = &self.journal {
            return j.written_events();
        }
        self.closed_written + self.open.iter().flatten().map(|s| s.written).sum::<u64>()
    }

    /// Events the writer has fsynced, with the directory entries of their
    /// segments: they survive a crash of the machine. Counted like
    /// [`TapeWriter::written_events`] (a prefix of the append order with
    /// [`Layout::Flox`]; read at the writer's own calls).
    ///
    /// It grows as the fsyncs of the [`Durability`] policy return (every n
    /// events or block, in the background), at segment close for every
    /// policy but `None` and `Flush`, and at [`TapeWriter::sync`] (under
    /// `None` and `Flush` it stays 0 unless `sync` is called).
    pub fn durable_events(&self) -> u64 {
        if let Some(j) = &self.journal {
            return j.durable_events();
        }
        self.closed_durable + self.open.iter().flatten().map(|s| s.synced).sum::<u64>()
    }

    /// Segments closed so far (manifest entries).
    pub fn closed_segments(&self) -> Vec<ManifestSegment> {
        if let Some(j) = &self.journal {
            return j.closed_segments();
        }
        let mut v = self.closed.clone();
        v.sort_by_key(|(s, _)| *s);
        v.into_iter().map(|(_, m)| m).collect()
    }

    /// Paths of the segments open now.
    pub fn open_paths(&self) -> Vec<PathBuf> {
        if let Some(j) = &self.journal {
            return j.open_paths();
        }
        self.open
            .iter()
            .flatten()
            .map(|s| s.io.path.clone())
            .collect()
    }

    /// flox-style `metadata.json` to write at close.
    pub fn set_metadata(&mut self, v: serde_json::Value) {
        if let Some(j) = &mut self.journal {
            return j.set_metadata(v);
        }
        self.metadata = Some(v);
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

    /// Appends one event.
    ///
    /// Fails, accepting nothing, once an earlier write or fsync failed
    /// (with that error, every time).
    pub fn append(&mut self, ev: &Event<'_>) -> Result<(), TapeError> {
        if let Some(j) = &mut self.journal {
            return j.append(ev);
        }
        self.check_event(ev)?;
        let si = self.slot(ev.frame_type());
        self.before(si, ev)?;
        let Some(seg) = self.open[si].as_mut() else {
            return Err(TapeError::input(None, "internal error: no open segment"));
        };
        let emitted = seg.w.stats().events_emitted;
        seg.w.append(ev).map_err(|e| {
            TapeError::input(Some(&seg.io.path), format!("cannot write the event: {e}"))
                .at(e.offset)
        })?;
        self.after(si, ev.exchange_ts_ns(), emitted)
    }

    /// Appends events in order, as [`TapeWriter::append`] one by one would
    /// (the same segments, bytes and errors), faster: where the durability
    /// asks for nothing per event (`None`, `SyncOnClose`), segments are
    /// uncompressed and rotate by size only, runs of events that stay in
    /// one segment go to the encoder together, which seals their frames'
    /// CRCs several at a time. Returns how many were appended: all, or
    /// those before the first failure, which is returned with the count.
    pub fn append_batch(&mut self, evs: &[Event<'_>]) -> (usize, Result<(), TapeError>) {
        if let Some(j) = &mut self.journal {
            for (i, ev) in evs.iter().enumerate() {
                if let Err(e) = j.append(ev) {
                    return (i, Err(e));
                }
            }
            return (evs.len(), Ok(()));
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

    /// Appends a frame from its type and payload, byte for byte.
    pub fn append_raw(&mut self, frame_type: u8, payload: &[u8]) -> Result<(), TapeError> {
        if let Some(j) = &mut self.journal {
            return j.append_raw(frame_type, payload);
        }
        let ev = Event::decode(frame_type, payload, 0).map_err(|e| {
            TapeError::input(
                None,
                format!("frame of type {frame_type} does not decode: {}", e.what),
            )
        })?;
        self.check_event(&ev)?;
        let si = self.slot(frame_type);
        self.before(si, &ev)?;
        let Some(seg) = self.open[si].as_mut() else {
            return Err(TapeError::input(None, "internal error: no open segment"));
        };
        let emitted = seg.w.stats().events_emitted;
        seg.w.append_raw(frame_type, payload).map_err(|e| {
            TapeError::input(Some(&seg.io.path), format!("cannot write the frame: {e}"))
                .at(e.offset)
        })?;
        self.after(si, ev.exchange_ts_ns(), emitted)
    }

    /// Hands every encoded byte to the OS and waits for it: afterwards
    /// [`TapeWriter::written_events`] counts every event appended, except
    /// LZ4 events staged in an unfinished block (blocks stay as the
    /// policy makes them: a flush does not cut one short). Nothing is
    /// fsynced. Returns the first write error, if any.
    pub fn flush(&mut self) -> Result<(), TapeError> {
        if let Some(j) = &mut self.journal {
            return j.flush();
        }
        self.check_open()?;
        for si in 0..self.open.len() {
            self.hand_over(si, None)?;
        }
        self.wait_io()?;
        self.harvest();
        Ok(())
    }

    /// [`TapeWriter::flush`], then fsyncs every open segment (and, the
    /// first time, its directory entry) and every closed segment that the
    /// policy left unsynced (`None`, `Flush`): afterwards
    /// [`TapeWriter::durable_events`] equals
    /// [`TapeWriter::written_events`]. `manifest.json` is not fsynced
    /// (under `None` and `Flush`; it lists closed segments only, and
    /// `recover` rebuilds it).
    pub fn sync(&mut self) -> Result<(), TapeError> {
        if let Some(j) = &mut self.journal {
            return j.sync();
        }
        self.check_open()?;
        for si in 0..self.open.len() {
            self.hand_over(si, None)?;
            self.sync_seg(si, false, true)?;
        }
        self.wait_io()?;
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
            seg.synced = seg.io.synced.load(Ordering::Acquire);
            seg.written = seg.io.written.load(Ordering::Acquire);
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

    // Out of line: it builds a segment writer (16 KiB with its symbol
    // table) on its stack, which would cost every append a stack probe.
    #[cold]
    #[inline(never)]
    fn open_segment(&mut self, si: usize, frame_type: u8) -> Result<(), TapeError> {
        let series: &'static str = match self.cfg.layout {
            Layout::Flox => MIXED,
            Layout::Spec => series_of(frame_type),
        };
        let clocked = self.clock.is_some();
        // What set the value, for the hint: the clock hook or the fixed
        // created_ns (the wall clock is never negative nor i64::MAX).
        let source = if clocked {
            Hint::new("{} gave it", &[Remedy::SegmentClock])
        } else {
            Hint::new("{}", &[Remedy::SmallerCreatedNs])
        };
        let exhausted = || created_ns_exhausted(source.clone());
        let after_last = self.last_created.checked_add(1).ok_or_else(exhausted)?;
        let wanted = match (&mut self.clock, self.cfg.created_ns) {
            (Some(clock), _) => (clock.get_mut().unwrap_or_else(|e| e.into_inner()))(),
            (None, Some(base)) => i64::try_from(self.seq)
                .ok()
                .and_then(|seq| base.checked_add(seq))
                .ok_or_else(exhausted)?,
            (None, None) => now_ns(),
        };
        if wanted < 0 {
            return Err(TapeError::usage(format!(
                "segment created_ns {wanted} is negative: it names and orders the tape's segments, so it must be 0 or more; no segment was opened"
            ))
            .with_hint(if clocked {
                source
            } else {
                Hint::from("the fixed created_ns must be 0 or more")
            }));
        }
        let mut created = wanted.max(after_last);
        // The placeholder header is written under a hidden temporary name
        // and the file renamed into place, so that no segment file is ever
        // seen without its header (a recorder killed in between leaves only
        // the temporary, which no reader lists). The name is checked first:
        // the rename would replace a file of another writer.
        let path = loop {
            let name = match self.cfg.layout {
                Layout::Flox => format!("{created}.floxlog"),
                Layout::Spec => format!("{series}-{:06}.bin", self.numbers[si]),
            };
            let path = self.dir.join(&name);
            if created == i64::MAX {
                return Err(exhausted());
            }
            match std::fs::symlink_metadata(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break path,
                Ok(_) if self.cfg.layout == Layout::Flox => {
                    created = created.checked_add(1).ok_or_else(exhausted)?
                }
                Ok(_) => {
                    return Err(TapeError::io(
                        &path,
                        "creating the segment",
                        std::io::ErrorKind::AlreadyExists.into(),
                    ))
                }
                Err(e) => return Err(TapeError::io(&path, "creating the segment", e)),
            }
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if self.io.is_none() && self.cfg.durability != Durability::Flush {
            self.io = Some(IoThread::start(&self.dir)?);
        }
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| TapeError::io(&tmp, "creating the segment", e))?;
        self.last_created = created;
        self.numbers[si] += 1;
        let (store, xchg) = SwapStorage::new();
        let mut w = SwapWriter::new(
            WriterConfig {
                created_ns: created,
                ..self.cfg.segment
            },
            store,
        )
        .map_err(|e| TapeError::input(Some(&path), format!("cannot start the segment: {e}")))?;
        // The placeholder header goes out at once, as the reference does,
        // written here (the I/O thread only gets published segments).
        let published = io_thread::write_all_at(&file, w.pending(), 0)
            .map_err(|e| TapeError::io(&tmp, "writing the segment", e))
            .and_then(|()| {
                std::fs::rename(&tmp, &path)
                    .map_err(|e| TapeError::io(&path, "moving the new segment into place", e))
            });
        if let Err(e) = published {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        let n = w.pending().len();
        w.consume(n);
        if clocked && self.seq == 0 {
            self.tape_created = created;
        }
        self.open[si] = Some(OpenSeg {
            io: Arc::new(SegIo::new(file, path)),
            xchg,
            name,
            series,
            w,
            seq: self.seq,
            min_ts: i64::MAX,
            max_ts: i64::MIN,
            events: 0,
            bucket: None,
            unsynced: 0,
            handed: 0,
            written: 0,
            synced: 0,
        });
        self.seq += 1;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn close_segment(&mut self, si: usize) -> Result<(), TapeError> {
        let Some(seg) = self.open[si].as_mut() else {
            return Ok(());
        };
        let header = seg.w.finish().map_err(|e| {
            TapeError::input(
                Some(&seg.io.path),
                format!("cannot finish the segment: {e}"),
            )
            .at(e.offset)
        })?;
        let syncs = self.cfg.durability.syncs();
        // Trailer, final header, fsync: in that order, then wait for them
        // (the manifest must not list a segment before its bytes are out).
        // Under the syncing policies the frames and trailer are fsynced
        // before the final header is written (and fsynced in turn), so that
        // no crash, even of the machine, leaves a final header whose index
        // is not on disk.
        if syncs {
            self.hand_over(si, None)?;
            self.sync_seg(si, false, false)?;
        }
        self.hand_over(si, Some(header))?;
        if syncs {
            self.sync_seg(si, true, false)?;
        }
        let waited = self.wait_io();
        let Some(seg) = self.open[si].take() else {
            return Ok(());
        };
        waited?;
        let size = seg.w.pending_offset();
        self.closed_written += seg.events;
        let empty = seg.events == 0;
        self.closed.push((
            seg.seq,
            ManifestSegment {
                name: seg.name.clone(),
                kind: seg.series.to_string(),
                size_bytes: size,
                first_event_ns: if empty { 0 } else { seg.min_ts },
                last_event_ns: if empty { 0 } else { seg.max_ts },
                event_count: seg.events,
            },
        ));
        self.stats.segments += 1;
        // Under None and Flush, what an earlier sync() made durable; the
        // rest waits for the next sync().
        let durable = if syncs {
            seg.events
        } else {
            seg.io.synced.load(Ordering::Acquire).min(seg.events)
        };
        if durable < seg.events {
            self.closed_unsynced
                .push((seg.io.path.clone(), seg.events - durable));
        }
        // With a manifest, saving it fsyncs the directory.
        if syncs && !seg.io.dir_synced.load(Ordering::Acquire) && !self.cfg.write_manifest {
            sync_dir(&self.dir)?;
        }
        self.save_manifest()?;
        self.closed_durable += durable;
        Ok(())
    }

    fn save_manifest(&self) -> Result<(), TapeError> {
        if !self.cfg.write_manifest {
            return Ok(());
        }
        let mut m = Manifest::new(self.cfg.segment.exchange_id, self.tape_created);
        m.segments = self.closed_segments();
        m.save(&self.dir, self.cfg.durability.syncs())
    }

    /// Closes every open segment, writes the manifest (and metadata.json if
    /// set), and returns the manifest entries. Returns the first write or
    /// fsync error, if any (also one the I/O thread met earlier).
    pub fn close(mut self) -> Result<Vec<ManifestSegment>, TapeError> {
        self.close_all()?;
        Ok(self.closed_segments())
    }

    fn close_all(&mut self) -> Result<(), TapeError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        if let Some(j) = &mut self.journal {
            return j.close_all();
        }
        self.check_io()?;
        let mut order: Vec<(u64, usize)> = self
            .open
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (s.seq, i)))
            .collect();
        order.sort();
        for (_, si) in order {
            self.close_segment(si)?;
        }
        self.save_manifest()?;
        if let Some(md) = &self.metadata {
            let text = serde_json::to_string_pretty(md).unwrap_or_default() + "\n";
            write_atomic(
                &self.dir,
                super::flox_manifest::METADATA_FILE,
                text.as_bytes(),
                self.cfg.durability.syncs(),
            )?;
        }
        if self.cfg.durability.syncs() {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }

    /// Stops as if the process died now: nothing is finalised (placeholder
    /// headers, no index, no manifest entry). Bytes already handed to the
    /// I/O thread are still written before this returns (a process killed
    /// instead may lose those [not yet written](TapeWriter::written_events));
    /// bytes still in the encoder (a chunk not handed over, an unfinished
    /// LZ4 block) are dropped. For testing recovery.
    pub fn abandon(mut self) {
        self.finished = true;
        if let Some(j) = &mut self.journal {
            j.abandon();
        }
    }
}

impl Drop for TapeWriter {
    fn drop(&mut self) {
        // Like BufWriter: close on drop, ignoring errors; call close() to see them.
        let _ = self.close_all();
        // Then the I/O thread is joined (a field dropped before the lock).
    }
}

/// See [`TapeWriter::hand_over`].
fn hand_over(
    io: Option<&IoThread>,
    seg: &mut OpenSeg,
    last: Option<[u8; 64]>,
) -> Result<(), TapeError> {
    let n = seg.w.pending().len();
    if n == 0 && last.is_none() {
        return Ok(());
    }
    let events = seg.w.stats().events_emitted as u64;
    let header = match last {
        Some(bytes) => Some(Header { bytes, last: true }),
        None if seg.w.config().compression == Compression::Lz4
            && events > 0
            && !seg.w.is_finished() =>
        {
            Some(Header {
                bytes: seg.w.current_header().to_bytes(),
                last: false,
            })
        }
        None => None,
    };
    let at = seg.w.pending_offset();
    match io {
        None => {
            seg.io.write(at, seg.w.pending(), header.as_ref(), events)?;
            seg.w.consume(n);
        }
        Some(io) if n == 0 => io.push_write(&seg.io, at, Vec::new(), 0, header, events),
        Some(io) => {
            if io.append_to_queued(&seg.io, at, seg.w.pending(), header, events) {
                seg.w.consume(n);
            } else {
                let fresh = io.take_buffer()?;
                let (buf, len) = take_pending(&mut seg.w, &seg.xchg, fresh).ok_or_else(|| {
                    TapeError::input(
                        Some(&seg.io.path),
                        "internal error: the encoder's buffer could not be handed over",
                    )
                })?;
                io.push_write(&seg.io, at, buf, len, header, events);
            }
        }
    }
    seg.handed = events;
    Ok(())
}

/// created_ns reached i64::MAX: the segment would leave no strictly larger
/// name (or created_ns) for the next one, so it is not opened. Nothing
/// else changes: the writer's closed segments stay valid and a later
/// append tries again (with a new value from the clock, if it has one).
#[cold]
fn created_ns_exhausted(source: Hint) -> TapeError {
    TapeError::usage(
        "segment created_ns would reach i64::MAX: no later segment name is left; no segment was opened",
    )
    .with_hint(source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::TapeErrorKind;
    use floxlog_core::Trade;

    fn trade(i: u64) -> Event<'static> {
        Event::Trade(Trade {
            exchange_ts_ns: 1_000_000 + i as i64,
            price_raw: 100 + (i % 7) as i64,
            qty_raw: 3,
            trade_id: i,
            symbol_id: (i % 3) as u32,
            ..Default::default()
        })
    }

    fn cfg(dur: Durability, lz4: bool) -> TapeWriterConfig {
        TapeWriterConfig {
            segment: WriterConfig {
                compression: if lz4 {
                    Compression::Lz4
                } else {
                    Compression::None
                },
                index_interval: 32,
                ..WriterConfig::default()
            },
            durability: dur,
            created_ns: Some(1),
            ..TapeWriterConfig::default()
        }
    }

    /// A write that fails (on the I/O thread, or in `append` under Flush)
    /// is returned, with the segment's path and what was being done, by
    /// the next append, and by every call after it; nothing is written
    /// after it and the segment is never finalised.
    #[test]
    fn the_first_io_error_is_returned_and_appends_refused() {
        let t = tempfile::tempdir().unwrap();
        for (i, dur) in [
            Durability::None,
            Durability::Flush,
            Durability::SyncEveryN(10),
            Durability::SyncOnClose,
        ]
        .into_iter()
        .enumerate()
        {
            for lz4 in [false, true] {
                let dir = t.path().join(format!("{i}-{lz4}"));
                let mut w = TapeWriter::create(&dir, cfg(dur, lz4)).unwrap();
                w.append(&trade(0)).unwrap();
                let path = w.open_paths()[0].clone();
                let len = std::fs::metadata(&path).unwrap().len();
                // From now on every write of the segment fails (EBADF).
                let ro = std::fs::File::open(&path).unwrap();
                w.open[0].as_mut().unwrap().io = Arc::new(SegIo::new(ro, path.clone()));
                let mut n = 1;
                let e = loop {
                    assert!(n < 1_000_000, "{dur:?}: no error after {n} events");
                    match w.append(&trade(n)) {
                        Ok(()) => n += 1,
                        Err(e) => break e,
                    }
                };
                let ctx = format!("{dur:?} lz4 {lz4}: {e}");
                // The event of an append whose own write failed (Flush) is
                // in the encoder, never written; later appends take nothing.
                let accepted = w.stats().events;
                assert!(accepted == n || accepted == n + 1, "{ctx}");
                assert!(matches!(e.kind, TapeErrorKind::Io(_)), "{ctx}");
                assert_eq!(e.path.as_deref(), Some(path.as_path()), "{ctx}");
                assert!(e.message.starts_with("writing the segment"), "{ctx}");
                assert!(w.written_events() <= 1, "{ctx}");
                for again in [w.append(&trade(n)), w.flush(), w.sync()] {
                    assert_eq!(again.unwrap_err().message, e.message, "{ctx}");
                }
                assert_eq!(
                    w.stats().events,
                    accepted,
                    "{ctx}: refused appends took nothing"
                );
                assert_eq!(w.close().unwrap_err().message, e.message, "{ctx}");
                assert_eq!(std::fs::metadata(&path).unwrap().len(), len, "{ctx}");
                assert!(!dir.join(MANIFEST_FILE).exists(), "{ctx}");
            }
        }
    }

    #[test]
    fn the_writer_can_move_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<TapeWriter>();
    }

    /// The chunked policies hand over whole buffers and get them back:
    /// however much is written, the pool creates at most MAX_IN_FLIGHT.
    #[test]
    fn buffers_are_recycled() {
        let t = tempfile::tempdir().unwrap();
        for lz4 in [false, true] {
            let dir = t.path().join(format!("{lz4}"));
            let mut w = TapeWriter::create(&dir, cfg(Durability::None, lz4)).unwrap();
            let mut n = 0;
            while w.open[0]
                .as_ref()
                .is_none_or(|s| s.w.pending_offset() < 24 * CHUNK as u64)
            {
                w.append(&trade(n)).unwrap();
                n += 1;
            }
            let created = w.io.as_ref().unwrap().buffers_created();
            assert!(
                (1..=io_thread::MAX_IN_FLIGHT).contains(&created),
                "lz4 {lz4}: {created} buffers"
            );
            w.close().unwrap();
        }
    }

    /// Every file of `dir`, by name, with its bytes.
    fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| {
                let name = e.file_name().into_string().unwrap();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    }

    /// Trades with a book delta and a pool state now and then: in the spec
    /// layout these go to other series' segments, so runs end there.
    fn mixed(n: u64, payload: &[u8]) -> Vec<Event<'_>> {
        use floxlog_core::{Book, BookKind, Levels, PoolState};
        let mut v = Vec::new();
        for i in 0..n {
            v.push(trade(i));
            if i % 97 == 5 {
                v.push(Event::Book(Book {
                    exchange_ts_ns: 1_000_000 + i as i64,
                    recv_ts_ns: 0,
                    seq: i as i64,
                    symbol_id: 1,
                    kind: BookKind::Delta,
                    header_type: 1,
                    instrument: 0,
                    exchange_id: 0,
                    bids: Levels::Wire(&[]),
                    asks: Levels::Wire(&[]),
                }));
            }
            if i % 131 == 7 {
                v.push(Event::PoolState(PoolState {
                    exchange_ts_ns: 1_000_000 + i as i64,
                    recv_ts_ns: 0,
                    symbol_id: 2,
                    sub_type: 1,
                    venue: 0,
                    exchange_id: 0,
                    payload: &payload[..(i % 23) as usize],
                }));
            }
        }
        v
    }

    /// `append_batch` writes the tape `append` one by one writes: the same
    /// files byte for byte, across rotations, layouts and durabilities
    /// (the fast path and the fallback), in batches of any size.
    #[test]
    fn batches_write_the_tape_single_appends_write() {
        let payload = [9u8; 32];
        let evs = mixed(3000, &payload);
        for layout in [Layout::Flox, Layout::Spec] {
            for (dur, lz4) in [
                (Durability::None, false),
                (Durability::SyncOnClose, false),
                (Durability::Flush, false),
                (Durability::None, true),
            ] {
                let c = TapeWriterConfig {
                    layout,
                    max_segment_bytes: 16_000,
                    ..cfg(dur, lz4)
                };
                let one = tempfile::tempdir().unwrap();
                let mut w = TapeWriter::create(one.path(), c).unwrap();
                for e in &evs {
                    w.append(e).unwrap();
                }
                w.close().unwrap();
                let want = files(one.path());
                assert!(want.len() > 4, "rotated: {}", want.len());
                for batch in [1, 4, 7, 1000, evs.len()] {
                    let many = tempfile::tempdir().unwrap();
                    let mut w = TapeWriter::create(many.path(), c).unwrap();
                    for part in evs.chunks(batch) {
                        let (n, r) = w.append_batch(part);
                        r.unwrap();
                        assert_eq!(n, part.len());
                    }
                    assert_eq!(w.stats().events, evs.len() as u64);
                    w.close().unwrap();
                    let got = files(many.path());
                    let names =
                        |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
                    assert_eq!(
                        names(&got),
                        names(&want),
                        "{layout:?} {dur:?} lz4 {lz4} batch {batch}"
                    );
                    assert!(
                        got == want,
                        "{layout:?} {dur:?} lz4 {lz4} batch {batch}: bytes differ"
                    );
                }
            }
        }
    }
}
