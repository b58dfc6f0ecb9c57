//! What a [`TapeWriter`](super::TapeWriter), its appenders and its counts
//! share: the segment engine behind a short lock, the tape lock, and who
//! still holds the tape open.
//!
//! Why one lock around each append rather than a lock-free reservation:
//! readers and `recover` stop at the first unpublished frame, so a frame
//! must never be published after a later one; appenders that reserved
//! space and copied at the same time would each have to wait for the
//! ones before them anyway (and a killed appender would leave a hole no
//! reader could skip without guessing). The lock makes every append,
//! rotation included, one step in one order: frames are published in the
//! order their appends took the lock, each appender's in its own order,
//! and the engine's counts, index, time range and Sorted flag are of the
//! file as written. Uncontended it is one atomic exchange each way.

use super::config::{TapeWriterHealth, TapeWriterStats};
use super::engine::Engine;
use crate::tape::dir::lock::TapeLock;
use crate::tape::dir::manifest::ManifestSegment;
use crate::tape::error::TapeError;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

pub(crate) struct Core {
    inner: Mutex<Inner>,
    pub(super) dir: PathBuf,
}

struct Inner {
    /// `None` once closed or abandoned. Dropped (closing it) before the
    /// tape lock.
    engine: Option<Engine>,
    /// Held while the engine is open.
    lock: Option<TapeLock>,
    /// Appenders alive.
    appenders: usize,
    /// The writer itself was dropped: the last appender closes the tape.
    writer_gone: bool,
    /// The policy fsyncs at close: everything is durable after it.
    syncs: bool,
    /// Counts as of close, reported once the engine is gone.
    last: Last,
    /// A failure to write metadata.json, for the next flush, sync or close.
    metadata_error: Option<TapeError>,
}

#[derive(Default)]
struct Last {
    stats: TapeWriterStats,
    written: u64,
    durable: u64,
    closed: Vec<ManifestSegment>,
}

impl Core {
    pub(super) fn new(dir: PathBuf, engine: Engine, lock: TapeLock, syncs: bool) -> Core {
        Core {
            inner: Mutex::new(Inner {
                engine: Some(engine),
                lock: Some(lock),
                appenders: 0,
                writer_gone: false,
                syncs,
                last: Last::default(),
                metadata_error: None,
            }),
            dir,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `f` on the open engine, under the lock.
    #[inline]
    pub(super) fn with<R>(
        &self,
        f: impl FnOnce(&mut Engine) -> Result<R, TapeError>,
    ) -> Result<R, TapeError> {
        match self.lock().engine.as_mut() {
            Some(e) => f(e),
            None => Err(closed()),
        }
    }

    /// A batch call on the open engine: how many went in, and the error.
    #[inline]
    pub(super) fn with_batch(
        &self,
        f: impl FnOnce(&mut Engine) -> (usize, Result<(), TapeError>),
    ) -> (usize, Result<(), TapeError>) {
        match self.lock().engine.as_mut() {
            Some(e) => f(e),
            None => (0, Err(closed())),
        }
    }

    /// `f` on the engine, or `done` on the counts at close.
    fn read<R>(&self, f: impl FnOnce(&Engine) -> R, done: impl FnOnce(&Last) -> R) -> R {
        let g = self.lock();
        match g.engine.as_ref() {
            Some(e) => f(e),
            None => done(&g.last),
        }
    }

    pub(super) fn stats(&self) -> TapeWriterStats {
        self.read(Engine::stats, |l| l.stats)
    }

    pub(super) fn health(&self) -> TapeWriterHealth {
        self.read(Engine::health, |l| TapeWriterHealth {
            appended: l.stats.events,
            written: l.written,
            durable: l.durable,
            segments_closed: l.stats.segments,
            bytes_used: l.closed.iter().map(|s| s.size_bytes).sum(),
            ..TapeWriterHealth::default()
        })
    }

    /// Written and durable events, one consistent pair (durable first:
    /// both only grow, and durable never passes written).
    pub(super) fn progress(&self) -> (u64, u64) {
        self.read(
            |e| {
                let d = e.durable_events();
                (e.written_events().max(d), d)
            },
            |l| (l.written, l.durable),
        )
    }

    pub(super) fn closed_segments(&self) -> Vec<ManifestSegment> {
        self.read(Engine::closed_segments, |l| l.closed.clone())
    }

    pub(super) fn open_paths(&self) -> Vec<PathBuf> {
        self.read(Engine::open_paths, |_| Vec::new())
    }

    /// Counts one more appender; refused once the tape is closed.
    pub(super) fn add_appender(&self) -> Result<(), TapeError> {
        let mut g = self.lock();
        if g.engine.is_none() {
            return Err(closed());
        }
        g.appenders += 1;
        Ok(())
    }

    pub(super) fn appenders(&self) -> usize {
        self.lock().appenders
    }

    /// An appender is gone: the last one closes a tape whose writer was
    /// dropped, errors ignored (as a dropped writer's).
    pub(super) fn drop_appender(&self) {
        let mut g = self.lock();
        g.appenders = g.appenders.saturating_sub(1);
        if g.appenders == 0 && g.writer_gone {
            let _ = g.close();
        }
    }

    /// The writer is gone: the tape is closed now, or by the last
    /// appender.
    pub(super) fn drop_writer(&self) {
        let mut g = self.lock();
        g.writer_gone = true;
        if g.appenders == 0 {
            let _ = g.close();
        }
    }

    /// Writes metadata.json now (see `TapeWriter::set_metadata`), not
    /// under the lock (appends go on meanwhile); a failure is kept for
    /// [`Core::metadata_error`].
    pub(super) fn set_metadata(&self, v: &serde_json::Value) {
        if self.lock().engine.is_none() {
            return;
        }
        if let Err(e) = super::shared::write_metadata(&self.dir, v) {
            self.lock().metadata_error.get_or_insert(e);
        }
    }

    /// The failure to write metadata.json since the last call, if any.
    pub(super) fn metadata_error(&self) -> Result<(), TapeError> {
        self.lock().metadata_error.take().map_or(Ok(()), Err)
    }

    /// Closes the tape unless appenders are open (then nothing changes).
    pub(super) fn close(&self) -> Result<Vec<ManifestSegment>, TapeError> {
        let mut g = self.lock();
        if g.appenders > 0 {
            return Err(appenders_open(g.appenders));
        }
        g.close()?;
        Ok(g.last.closed.clone())
    }

    /// Stops as if the process died (see `TapeWriter::abandon`); open
    /// appenders' calls fail from now on.
    pub(super) fn abandon(&self) {
        let mut g = self.lock();
        if let Some(mut e) = g.engine.take() {
            e.abandon();
            g.last = Last {
                stats: e.stats(),
                written: e.written_events(),
                durable: e.durable_events(),
                closed: e.closed_segments(),
            };
            // Background threads joined before the lock is released.
            drop(e);
        }
        g.lock = None;
    }
}

impl Inner {
    /// Closes the engine (a second call does nothing), keeping its counts,
    /// and releases the tape lock. On error the tape is as a killed writer
    /// leaves it, and the counts are those before the close.
    fn close(&mut self) -> Result<(), TapeError> {
        let Some(mut e) = self.engine.take() else {
            return Ok(());
        };
        let (written, durable) = (e.written_events(), e.durable_events());
        let r = e.close_all();
        let stats = e.stats();
        self.last = Last {
            stats,
            // Closing writes what was staged: everything appended is
            // written, and durable unless the policy never fsyncs.
            written: if r.is_ok() { stats.events } else { written },
            durable: if r.is_ok() && self.syncs {
                stats.events
            } else {
                durable
            },
            closed: e.closed_segments(),
        };
        drop(e);
        self.lock = None;
        r.and_then(|()| self.metadata_error.take().map_or(Ok(()), Err))
    }
}

fn closed() -> TapeError {
    TapeError::usage("the tape writer is already closed")
}

/// `close` refused: the tape stays open, the appenders go on.
pub(crate) fn appenders_open(n: usize) -> TapeError {
    TapeError::usage(format!(
        "{n} appender(s) of this tape writer are open: the tape was not closed"
    ))
    .with_hint("drop (free) every appender first, then close the writer")
}
