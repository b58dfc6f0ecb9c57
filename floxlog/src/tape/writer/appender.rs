//! Appenders (one per appending thread) and counts readable from any
//! thread: other handles on a [`TapeWriter`](super::TapeWriter)'s engine.

use super::core::Core;
use super::TapeWriterStats;
use crate::tape::error::TapeError;
use floxlog_core::{Event, Trade};
use std::sync::Arc;

/// Appends to a tape at the same time as its writer's other appenders
/// (see the [module docs](super)): `Send`, used by one thread at a time.
/// The tape stays open while an appender lives; dropping the last one of a
/// dropped writer closes the tape.
pub struct Appender {
    core: Arc<Core>,
}

impl Appender {
    pub(super) fn new(core: Arc<Core>) -> Result<Appender, TapeError> {
        core.add_appender()?;
        Ok(Appender { core })
    }

    append_calls!();
}

impl Drop for Appender {
    fn drop(&mut self) {
        self.core.drop_appender();
    }
}

/// A writer's counts, read from any thread (they wait at most for one
/// append in progress). It does not hold the tape open: after the close,
/// the counts as of the close.
#[derive(Clone)]
pub struct TapeWriterCounts {
    core: Arc<Core>,
}

impl TapeWriterCounts {
    pub(super) fn new(core: Arc<Core>) -> TapeWriterCounts {
        TapeWriterCounts { core }
    }

    /// [`TapeWriter::written_events`](super::TapeWriter::written_events)
    /// and [`TapeWriter::durable_events`](super::TapeWriter::durable_events)
    /// as one consistent pair (durable never above written).
    pub fn health(&self) -> super::TapeWriterHealth {
        self.core.health()
    }

    /// [`TapeWriter::written_events`](super::TapeWriter::written_events)
    /// and [`TapeWriter::durable_events`](super::TapeWriter::durable_events)
    /// as one consistent pair (durable never above written).
    pub fn progress(&self) -> (u64, u64) {
        self.core.progress()
    }

    /// [`TapeWriter::stats`](super::TapeWriter::stats).
    pub fn stats(&self) -> TapeWriterStats {
        self.core.stats()
    }
}
