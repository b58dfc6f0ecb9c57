//! Writing tapes: the core segment writer over files, with rotation by size
//! (and optionally by event time), an explicit durability policy, and the
//! header and index finalised on close.
//!
//! A segment file is created on its first event with the writer's 64-byte
//! placeholder header (written under a hidden temporary name, then renamed
//! into place, so that no segment file exists without a header), frames
//! are appended, and on close the index trailer is appended and the final
//! header written over offset 0 (seek + write), as the flox reference
//! does. LZ4 segments also get their header rewritten after each write of
//! whole blocks, so a reader of a live or crashed segment sees the counts
//! of what is on disk. A writer killed between appending the trailer and
//! writing the final header leaves the trailer behind a placeholder header;
//! readers take it as a crashed writer's torn tail and `recover` drops it.
//!
//! `manifest.json` (spec schema) is rewritten atomically after every closed
//! segment, listing the closed segments; a segment still open is not listed
//! yet (readers find it anyway).

use super::dir::{series_of, Layout, MIXED, SERIES};
use super::error::TapeError;
use super::lock::TapeLock;
use super::manifest::{sync_dir, write_atomic, Manifest, ManifestSegment, MANIFEST_FILE};
use crate::segment::{vec_writer, VecWriter};
use floxlog_core::{Compression, Event, WriterConfig, DEFAULT_MAX_SEGMENT_BYTES};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// When written bytes leave the process and when they are fsynced.
///
/// | policy | `write(2)` | `fsync` (`sync_data`) |
/// |---|---|---|
/// | `None` | in 1 MiB chunks, at rotation and close | never |
/// | `Flush` | after every event (LZ4: every block) | never |
/// | `SyncEveryBlock` | after every LZ4 block (uncompressed: every `index_interval` events) | same, and at close |
/// | `SyncEveryN(n)` | every `n` events | same, and at close |
/// | `SyncOnClose` (default) | in 1 MiB chunks | when a segment is closed (file, then manifest and directory) |
///
/// LZ4 events staged in an unfinished block are in memory only, whatever
/// the policy: they reach the file when their block does.
///
/// [`TapeWriter::written_events`] and [`TapeWriter::durable_events`] say how
/// many events the policy has delivered so far: handed to the OS (they
/// survive the process being killed) and fsynced (they survive a power
/// loss too). Under the syncing policies a new segment's directory entry is
/// fsynced too, once, with the segment's first fsync.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// Never fsync; write in large chunks.
    None,
    /// Write every event at once (visible to readers, e.g. `cat --follow`);
    /// never fsync.
    Flush,
    /// Write and fsync after every block.
    SyncEveryBlock,
    /// Write and fsync every n events.
    SyncEveryN(u32),
    /// Write in chunks, fsync each segment when it is closed.
    #[default]
    SyncOnClose,
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
    /// `None` stamps the wall clock.
    pub created_ns: Option<i64>,
    /// Write `manifest.json`.
    pub write_manifest: bool,
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
        }
    }
}

const CHUNK: usize = 1 << 20;

struct OpenSeg {
    file: File,
    path: PathBuf,
    name: String,
    series: &'static str,
    w: VecWriter,
    seq: u64,
    min_ts: i64,
    max_ts: i64,
    events: u64,
    bucket: Option<i64>,
    unsynced: u64,
    /// Events of this segment whose bytes were handed to the OS.
    written: u64,
    /// Events of this segment fsynced (with the directory entry).
    synced: u64,
    /// The directory entry of this segment has been fsynced.
    dir_synced: bool,
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
            _lock: lock,
        })
    }

    /// The tape directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Counts so far.
    pub fn stats(&self) -> TapeWriterStats {
        self.stats
    }

    /// Events whose bytes have been handed to the OS (`write(2)` returned):
    /// they survive the process being killed, though not a power loss
    /// unless also [durable](TapeWriter::durable_events).
    ///
    /// With [`Layout::Flox`] these are the first `written_events()` events
    /// appended; with [`Layout::Spec`] the sum over the series, each a
    /// prefix of the events of its series. Events staged in memory (an
    /// unfinished LZ4 block, a chunk not yet written) are not counted.
    pub fn written_events(&self) -> u64 {
        self.closed_written + self.open.iter().flatten().map(|s| s.written).sum::<u64>()
    }

    /// Events the writer has fsynced, with the directory entries of their
    /// segments: they survive a crash of the machine. Counted like
    /// [`TapeWriter::written_events`] (a prefix of the append order with
    /// [`Layout::Flox`]).
    ///
    /// It grows at the fsyncs of the [`Durability`] policy: every n events
    /// or block, and at segment close for every policy but `None` and
    /// `Flush` (under which it stays 0).
    pub fn durable_events(&self) -> u64 {
        self.closed_durable + self.open.iter().flatten().map(|s| s.synced).sum::<u64>()
    }

    /// Segments closed so far (manifest entries).
    pub fn closed_segments(&self) -> Vec<ManifestSegment> {
        let mut v = self.closed.clone();
        v.sort_by_key(|(s, _)| *s);
        v.into_iter().map(|(_, m)| m).collect()
    }

    /// Paths of the segments open now.
    pub fn open_paths(&self) -> Vec<PathBuf> {
        self.open.iter().flatten().map(|s| s.path.clone()).collect()
    }

    /// flox-style `metadata.json` to write at close.
    pub fn set_metadata(&mut self, v: serde_json::Value) {
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
    pub fn append(&mut self, ev: &Event<'_>) -> Result<(), TapeError> {
        let si = self.slot(ev.frame_type());
        self.before(si, ev)?;
        let Some(seg) = self.open[si].as_mut() else {
            return Err(TapeError::input(None, "internal error: no open segment"));
        };
        let emitted = seg.w.stats().events_emitted;
        seg.w.append(ev).map_err(|e| {
            TapeError::input(Some(&seg.path), format!("cannot write the event: {e}")).at(e.offset)
        })?;
        self.after(si, ev.exchange_ts_ns(), emitted)
    }

    /// Appends a frame from its type and payload, byte for byte.
    pub fn append_raw(&mut self, frame_type: u8, payload: &[u8]) -> Result<(), TapeError> {
        let ev = Event::decode(frame_type, payload, 0).map_err(|e| {
            TapeError::input(
                None,
                format!("frame of type {frame_type} does not decode: {}", e.what),
            )
        })?;
        let si = self.slot(frame_type);
        self.before(si, &ev)?;
        let Some(seg) = self.open[si].as_mut() else {
            return Err(TapeError::input(None, "internal error: no open segment"));
        };
        let emitted = seg.w.stats().events_emitted;
        seg.w.append_raw(frame_type, payload).map_err(|e| {
            TapeError::input(Some(&seg.path), format!("cannot write the frame: {e}")).at(e.offset)
        })?;
        self.after(si, ev.exchange_ts_ns(), emitted)
    }

    fn before(&mut self, si: usize, ev: &Event<'_>) -> Result<(), TapeError> {
        if self.finished {
            return Err(TapeError::usage("the tape writer is already closed"));
        }
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
        let block_done = if lz4 {
            seg.w.stats().events_emitted != emitted_before
        } else {
            seg.events % cfg.segment.index_interval as u64 == 0
        };
        match cfg.durability {
            Durability::None | Durability::SyncOnClose => {
                if seg.w.pending().len() >= CHUNK {
                    drain(seg)?;
                }
            }
            Durability::Flush => drain(seg)?,
            Durability::SyncEveryBlock => {
                if block_done {
                    drain(seg)?;
                    sync(&self.dir, seg)?;
                }
            }
            Durability::SyncEveryN(n) => {
                seg.unsynced += 1;
                if seg.unsynced >= n.max(1) as u64 {
                    drain(seg)?;
                    sync(&self.dir, seg)?;
                    seg.unsynced = 0;
                }
            }
        }
        if lz4 && block_done && seg.w.segment_bytes() >= cfg.max_segment_bytes {
            self.close_segment(si)?;
        }
        Ok(())
    }

    fn open_segment(&mut self, si: usize, frame_type: u8) -> Result<(), TapeError> {
        let series: &'static str = match self.cfg.layout {
            Layout::Flox => MIXED,
            Layout::Spec => series_of(frame_type),
        };
        // created_ns names flox-layout segments and orders them: strictly
        // increasing across the tape's segments, never saturating (a name
        // that cannot change would make the collision loop below spin).
        let exhausted = || {
            TapeError::usage(
                "created_ns would pass i64::MAX: no later segment name is left (use a smaller --created-ns)",
            )
        };
        let after_last = self.last_created.checked_add(1).ok_or_else(exhausted)?;
        let wanted = match self.cfg.created_ns {
            Some(base) => i64::try_from(self.seq)
                .ok()
                .and_then(|seq| base.checked_add(seq))
                .ok_or_else(exhausted)?,
            None => now_ns(),
        };
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
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| TapeError::io(&tmp, "creating the segment", e))?;
        self.last_created = created;
        self.numbers[si] += 1;
        let w = vec_writer(WriterConfig {
            created_ns: created,
            ..self.cfg.segment
        })
        .map_err(|e| TapeError::input(Some(&path), format!("cannot start the segment: {e}")))?;
        let mut seg = OpenSeg {
            file,
            path: tmp,
            name,
            series,
            w,
            seq: self.seq,
            min_ts: i64::MAX,
            max_ts: i64::MIN,
            events: 0,
            bucket: None,
            unsynced: 0,
            written: 0,
            synced: 0,
            dir_synced: false,
        };
        self.seq += 1;
        // The placeholder header goes out at once, as the reference does.
        let published = drain(&mut seg).and_then(|()| {
            std::fs::rename(&seg.path, &path)
                .map_err(|e| TapeError::io(&path, "moving the new segment into place", e))
        });
        if let Err(e) = published {
            let _ = std::fs::remove_file(&seg.path);
            return Err(e);
        }
        seg.path = path;
        self.open[si] = Some(seg);
        Ok(())
    }

    fn close_segment(&mut self, si: usize) -> Result<(), TapeError> {
        let Some(mut seg) = self.open[si].take() else {
            return Ok(());
        };
        let header = seg.w.finish().map_err(|e| {
            TapeError::input(Some(&seg.path), format!("cannot finish the segment: {e}"))
                .at(e.offset)
        })?;
        drain(&mut seg)?;
        let size = seg.w.pending_offset();
        let io = |e| TapeError::io(&seg.path, "writing the final header", e);
        seg.file.seek(SeekFrom::Start(0)).map_err(io)?;
        seg.file.write_all(&header).map_err(io)?;
        self.closed_written += seg.events;
        let syncs = self.cfg.durability.syncs();
        if syncs {
            seg.file
                .sync_all()
                .map_err(|e| TapeError::io(&seg.path, "syncing the segment", e))?;
        }
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
        // With a manifest, saving it fsyncs the directory.
        if syncs && !seg.dir_synced && !self.cfg.write_manifest {
            sync_dir(&self.dir)?;
        }
        self.save_manifest()?;
        if syncs {
            self.closed_durable += seg.events;
        }
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
    /// set), and returns the manifest entries.
    pub fn close(mut self) -> Result<Vec<ManifestSegment>, TapeError> {
        self.close_all()?;
        Ok(self.closed_segments())
    }

    fn close_all(&mut self) -> Result<(), TapeError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
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

    /// Stops as if the process died now: bytes already handed to the OS stay,
    /// nothing is finalised (placeholder headers, no index, no manifest
    /// entry). For testing recovery.
    pub fn abandon(mut self) {
        self.finished = true;
    }
}

impl Drop for TapeWriter {
    fn drop(&mut self) {
        // Like BufWriter: close on drop, ignoring errors; call close() to see them.
        let _ = self.close_all();
    }
}

/// Writes the pending bytes; for LZ4, then rewrites the header with the
/// counts of the blocks now in the file (the reference's updateSegmentHeader).
fn drain(seg: &mut OpenSeg) -> Result<(), TapeError> {
    let n = seg.w.pending().len();
    if n == 0 {
        return Ok(());
    }
    seg.file
        .write_all(seg.w.pending())
        .map_err(|e| TapeError::io(&seg.path, "writing the segment", e))?;
    seg.w.consume(n);
    // Everything emitted so far was pending, so it is in the file now.
    seg.written = seg.w.stats().events_emitted as u64;
    if seg.w.config().compression == Compression::Lz4
        && seg.w.stats().events_emitted > 0
        && !seg.w.is_finished()
    {
        let h = seg.w.current_header().to_bytes();
        let io = |e| TapeError::io(&seg.path, "updating the segment header", e);
        seg.file.seek(SeekFrom::Start(0)).map_err(io)?;
        seg.file.write_all(&h).map_err(io)?;
        seg.file.seek(SeekFrom::End(0)).map_err(io)?;
    }
    Ok(())
}

/// fsyncs the segment's data and, the first time, the directory entry that
/// names it (without which a fsynced new file can vanish in a crash).
fn sync(dir: &Path, seg: &mut OpenSeg) -> Result<(), TapeError> {
    seg.file
        .sync_data()
        .map_err(|e| TapeError::io(&seg.path, "syncing the segment", e))?;
    if !seg.dir_synced {
        sync_dir(dir)?;
        seg.dir_synced = true;
    }
    seg.synced = seg.written;
    Ok(())
}
