//! Writing tapes: [`TapeWriter`] over one of two segment engines
//! (`engine`): the default writer (`files`, whose module docs say how
//! segments are written, rotated, finished and listed) or the journal
//! (`tape/journal`, [`TapeWriterConfig::journal`]).
//!
//! Threads: a `TapeWriter` is used from one thread at a time (its calls
//! take `&mut self`; it may move between threads). To append from several
//! threads at once, give each thread an [`Appender`]
//! ([`TapeWriter::appender`]): each is `Send`, used by one thread at a time,
//! and its appends run at the same time as the other appenders' and the
//! writer's own. Each append is atomic (a reader never sees half of one:
//! the engine runs one append at a time, under a short lock, see `core`),
//! each appender's events keep their order in the file, and the tape is
//! valid as written (counts, time range, index, and the Sorted flag only
//! when the events of the file are in time order). Where the reference
//! profile sorts an LZ4 block by time, the sort is stable: events of equal
//! timestamps keep the order they were appended in, so each appender's
//! events of equal or rising timestamps keep its order. A process killed
//! loses no event whose append returned and was
//! [written](TapeWriter::written_events) (in journal mode: every one).
//!
//! `close` is refused while an appender is open (nothing changes, the
//! appenders go on); a writer dropped while appenders are open keeps the
//! tape open until the last appender is dropped, which then closes it as a
//! dropped writer does. [`TapeWriter::counts`] reads the counts from any
//! thread.

use crate::tape::dir::lock::TapeLock;
use crate::tape::dir::manifest::{Manifest, ManifestSegment, MANIFEST_FILE};
use crate::tape::dir::{segment_series, Layout, SERIES};
use crate::tape::error::TapeError;
use engine::Engine;
use floxlog_core::{Event, Trade};
use shared::Start;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The append calls, the same on a [`TapeWriter`] and an [`Appender`]
/// (each through its `core`, the engine behind its lock).
macro_rules! append_calls {
    () => {
        /// Appends one event.
        ///
        /// Fails, accepting nothing, once an earlier write or fsync failed
        /// (with that error, every time).
        #[inline]
        pub fn append(&mut self, ev: &Event<'_>) -> Result<(), TapeError> {
            self.core.with(|e| e.append(ev))
        }

        /// Appends a frame from its type and payload, byte for byte.
        pub fn append_raw(&mut self, frame_type: u8, payload: &[u8]) -> Result<(), TapeError> {
            self.core.with(|e| e.append_raw(frame_type, payload))
        }

        /// Appends events in order, as [`TapeWriter::append`](crate::tape::TapeWriter::append) one by one would
        /// (the same segments, bytes and errors), faster: where the durability
        /// asks for nothing per event (`None`, `SyncOnClose`), segments are
        /// uncompressed and rotate by size only, runs of events that stay in
        /// one segment go to the encoder together, which seals their frames'
        /// CRCs several at a time (in journal mode the run is also published
        /// with one release store: `journal/batch.rs`). Returns how many were
        /// appended: all, or those before the first failure, which is returned
        /// with the count.
        /// The events of one call go in together: no other appender's
        /// event comes between them.
        pub fn append_batch(&mut self, evs: &[Event<'_>]) -> (usize, Result<(), TapeError>) {
            self.core.with_batch(|e| e.append_batch(evs))
        }

        /// Appends trades in order, as [`TapeWriter::append`](crate::tape::TapeWriter::append) of each would
        /// (the same segments, bytes and errors), through the encoder's trade
        /// batch (fixed-size frames, CRCs eight at a time) where
        /// [`TapeWriter::append_batch`](crate::tape::TapeWriter::append_batch) would batch. Returns how many were
        /// appended, and the first failure.
        pub fn append_trades(&mut self, trades: &[Trade]) -> (usize, Result<(), TapeError>) {
            self.core.with_batch(|e| e.append_trades(trades))
        }

        /// Appends already-encoded 1.0 frames (header and payload, one after
        /// the other, as a NIC or FPGA that encodes frames hands them over)
        /// as they are, after checking each one's size, type, record version,
        /// flags, CRC and record (and what [`TapeWriter::append`](crate::tape::TapeWriter::append) checks of
        /// its event). Returns how many were appended: all, or those before
        /// the first bad or refused frame, whose error gives its byte offset in
        /// `frames` (a data error of the codec's kind for a bad frame). The
        /// tape stays as valid as with [`TapeWriter::append`](crate::tape::TapeWriter::append) (counts, time
        /// range, index, Sorted flag, rotation); in journal mode the bytes are
        /// copied straight into the mapping and the CRC is not computed again.
        pub fn append_frames(&mut self, frames: &[u8]) -> (usize, Result<(), TapeError>) {
            self.core.with_batch(|e| e.append_frames(frames))
        }
    };
}

mod appender;
pub(crate) mod config;
mod core;
mod engine;
mod files;
mod resume;
pub(crate) mod shared;

pub use appender::{Appender, TapeWriterCounts};
mod threads;
pub use config::{now_ns, Clock, Durability, TapeWriterConfig, TapeWriterHealth, TapeWriterStats};
pub(crate) use threads::spawn as spawn_thread;
pub use threads::{CpuSet, CPU_SET_WORDS};

/// Writes a tape directory; see the module docs.
pub struct TapeWriter {
    core: Arc<core::Core>,
}

impl TapeWriter {
    /// Starts a tape in `dir` (created if needed). Refuses a directory that
    /// already holds segments or a manifest, unless `cfg.resume`: the tape
    /// there is then continued (see [`TapeWriterConfig::resume`]). Before
    /// anything is appended, the segments a killed writer left open are
    /// recovered (a backup `<name>.damaged` is kept when bytes are
    /// dropped), `manifest.json` lists every segment, and the new segments
    /// follow the last one (flox layout: created_ns, and so names, after
    /// the largest; spec layout: the next number of each series). A
    /// segment that cannot be recovered is refused with an error naming it
    /// and the offset of the damage; so is a tape of the other layout.
    /// Counts ([`TapeWriter::stats`], [`TapeWriter::written_events`]...)
    /// are of this writer's events only.
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
        let resumed = if cfg.resume {
            resume::resume(dir, cfg.layout)?
        } else {
            None
        };
        let rd = std::fs::read_dir(dir)
            .map_err(|e| TapeError::io(dir, "listing the tape directory", e))?;
        for e in rd.flatten().filter(|_| !cfg.resume) {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == MANIFEST_FILE || segment_series(&name).is_some() {
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
        let mut tape_created = cfg.created_ns.unwrap_or_else(now_ns);
        let mut start = Start {
            closed: Vec::new(),
            numbers: vec![0; series],
            last_created: i64::MIN,
        };
        if let Some(r) = resumed {
            tape_created = r.tape_created.unwrap_or(tape_created);
            if cfg.layout == Layout::Spec {
                start.numbers = r.numbers.to_vec();
            }
            (start.closed, start.last_created) = (r.closed, r.last_created);
        }
        let resumed_segments = !start.closed.is_empty();
        let engine = match cfg.journal {
            true => Engine::Journal(Box::new(crate::tape::journal::Journal::create(
                dir,
                cfg,
                tape_created,
                start,
            )?)),
            false => Engine::Files(Box::new(files::FileWriter::create(
                dir,
                cfg,
                tape_created,
                start,
            ))),
        };
        let syncs = cfg.durability.syncs();
        if cfg.resume && resumed_segments && cfg.write_manifest {
            // The manifest lists the recovered segments from now on.
            let mut m = Manifest::new(cfg.segment.exchange_id, tape_created);
            m.segments = engine.closed_segments();
            m.save(dir, syncs)?;
        }
        let core = core::Core::new(dir.to_path_buf(), engine, lock, syncs);
        Ok(TapeWriter {
            core: Arc::new(core),
        })
    }

    /// The tape directory.
    pub fn dir(&self) -> &Path {
        &self.core.dir
    }

    /// A new appender of this tape, for another thread (see the module
    /// docs). Refused once the tape is closed.
    pub fn appender(&self) -> Result<Appender, TapeError> {
        Appender::new(self.core.clone())
    }

    /// Appenders open now: [`TapeWriter::close`] is refused while any is.
    pub fn appenders(&self) -> usize {
        self.core.appenders()
    }

    /// The writer's counts, readable from any thread while this writer and
    /// its appenders append (it does not hold the tape open).
    pub fn counts(&self) -> TapeWriterCounts {
        TapeWriterCounts::new(self.core.clone())
    }

    /// Counts so far.
    pub fn stats(&self) -> TapeWriterStats {
        self.core.stats()
    }

    /// The writer's health (see [`TapeWriterHealth`]); also through
    /// [`TapeWriterCounts::health`] from another thread.
    pub fn health(&self) -> TapeWriterHealth {
        self.core.health()
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
    ///
    /// It runs under the tape's lock (see the module docs): it must not
    /// call this writer, its appenders or its counts.
    pub fn set_clock(&mut self, clock: Clock) {
        let _ = self.core.with(|e| {
            e.set_clock(clock);
            Ok(())
        });
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
        self.core.progress().0
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
        self.core.progress().1
    }

    /// Segments closed so far (manifest entries).
    pub fn closed_segments(&self) -> Vec<ManifestSegment> {
        self.core.closed_segments()
    }

    /// Paths of the segments open now.
    pub fn open_paths(&self) -> Vec<PathBuf> {
        self.core.open_paths()
    }

    /// Sets the tape's flox-style `metadata.json` (symbol names...): it is
    /// written now, and again each time it is set, crash-atomically (a
    /// temporary file fsynced, renamed over the old one, the directory
    /// fsynced), so a killed writer's names survive and monitors of the
    /// live tape see them. A failure to write it is returned by the next
    /// [`TapeWriter::flush`], [`TapeWriter::sync`] or [`TapeWriter::close`]
    /// (the file is then as it was). Nothing once the tape is closed.
    pub fn set_metadata(&mut self, v: serde_json::Value) {
        self.core.set_metadata(&v);
    }

    append_calls!();

    /// Hands every encoded byte to the OS and waits for it: afterwards
    /// [`TapeWriter::written_events`] counts every event appended, except
    /// LZ4 events staged in an unfinished block (blocks stay as the
    /// policy makes them: a flush does not cut one short). Nothing is
    /// fsynced. Returns the first write error, if any.
    pub fn flush(&mut self) -> Result<(), TapeError> {
        self.core.with(Engine::flush)?;
        self.core.metadata_error()
    }

    /// [`TapeWriter::flush`], then fsyncs every open segment (and, the
    /// first time, its directory entry) and every closed segment that the
    /// policy left unsynced (`None`, `Flush`): afterwards
    /// [`TapeWriter::durable_events`] equals
    /// [`TapeWriter::written_events`]. `manifest.json` is not fsynced
    /// (under `None` and `Flush`; it lists closed segments only, and
    /// `recover` rebuilds it).
    pub fn sync(&mut self) -> Result<(), TapeError> {
        self.core.with(Engine::sync)?;
        self.core.metadata_error()
    }

    /// Closes every open segment, writes the manifest, releases the tape lock and returns the manifest entries.
    /// Returns the first write or fsync error, if any (also one the I/O
    /// thread met earlier). Refused while an appender is open
    /// ([`TapeWriter::appenders`]): nothing changes then, and the tape is
    /// closed by the last appender dropped, as by a dropped writer.
    pub fn close(self) -> Result<Vec<ManifestSegment>, TapeError> {
        self.core.close()
    }

    /// Stops as if the process died now: nothing is finalised (placeholder
    /// headers, no index, no manifest entry). Bytes already handed to the
    /// I/O thread are still written before this returns (a process killed
    /// instead may lose those [not yet written](TapeWriter::written_events));
    /// bytes still in the encoder (a chunk not handed over, an unfinished
    /// LZ4 block) are dropped. For testing recovery.
    /// Open appenders' calls fail afterwards.
    pub fn abandon(self) {
        self.core.abandon();
    }
}

#[cfg(test)]
impl TapeWriter {
    /// `f` on the default engine's internals (panics in journal mode).
    pub(crate) fn files<R>(&mut self, f: impl FnOnce(&mut files::FileWriter) -> R) -> R {
        let r = self.core.with(|e| match e {
            Engine::Files(w) => Ok(f(w)),
            Engine::Journal(_) => Err(TapeError::usage("journal mode")),
        });
        r.expect("the default writer")
    }
}

impl Drop for TapeWriter {
    fn drop(&mut self) {
        // Like BufWriter: close on drop, ignoring errors (call close() to
        // see them); with appenders open, the last of them closes.
        self.core.drop_writer();
    }
}
