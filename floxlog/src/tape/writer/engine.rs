//! The segment engine behind a [`TapeWriter`](super::TapeWriter): the
//! default writer (`files`: encoded in memory, written by an I/O thread)
//! or the journal (`tape/journal`: frames encoded straight into a shared
//! mapping). One match per call here, so the writer, its appenders and the
//! C ABI are each written once over both.

use super::config::{Clock, TapeWriterHealth, TapeWriterStats};
use super::files::FileWriter;
use crate::tape::dir::manifest::ManifestSegment;
use crate::tape::error::{TapeError, TapeErrorKind};
use crate::tape::journal::Journal;
use floxlog_core::{decode_frame, Event, FrameOptions, Trade};
use std::path::PathBuf;

/// One of the two segment engines.
pub(crate) enum Engine {
    Files(Box<FileWriter>),
    Journal(Box<Journal>),
}

/// `$body` with `$e` bound to the engine, whichever it is.
macro_rules! each {
    ($engine:expr, $e:ident => $body:expr) => {
        match $engine {
            Engine::Files($e) => $body,
            Engine::Journal($e) => $body,
        }
    };
}

impl Engine {
    #[inline]
    pub(crate) fn append(&mut self, ev: &Event<'_>) -> Result<(), TapeError> {
        each!(self, e => e.append(ev))
    }

    pub(crate) fn append_raw(&mut self, frame_type: u8, payload: &[u8]) -> Result<(), TapeError> {
        let ev = Event::decode(frame_type, payload, 0).map_err(|e| {
            TapeError::input(
                None,
                format!("frame of type {frame_type} does not decode: {}", e.what),
            )
        })?;
        each!(self, e => e.append_raw(&ev, frame_type, payload))
    }

    pub(crate) fn append_batch(&mut self, evs: &[Event<'_>]) -> (usize, Result<(), TapeError>) {
        each!(self, e => e.append_batch(evs))
    }

    pub(crate) fn append_trades(&mut self, trades: &[Trade]) -> (usize, Result<(), TapeError>) {
        each!(self, e => e.append_trades(trades))
    }

    /// Appends the encoded frames of `frames` in order, each checked first
    /// (size, type, version, flags, CRC, record); how many were appended:
    /// all, or those before the first bad or refused one, whose error
    /// gives its offset in `frames`.
    pub(crate) fn append_frames(&mut self, frames: &[u8]) -> (usize, Result<(), TapeError>) {
        let (mut at, mut n) = (0usize, 0usize);
        while let Some(rest) = frames.get(at..).filter(|r| !r.is_empty()) {
            let (ev, len) = match decode_frame(rest, FrameOptions::default()) {
                Ok((Some(ev), len)) => (ev, len),
                // Unknown types are rejected by the default options.
                Ok((None, _)) => return (n, Err(bad_frame(at, n, "a frame of an unknown type"))),
                Err(e) => return (n, Err(frame_error(e, at, n))),
            };
            let frame = rest.get(..len).unwrap_or_default();
            if let Err(e) = each!(self, w => w.append_frame(&ev, frame)) {
                let message = format!("frame {n} at byte {at} of the frames: {}", e.message);
                return (n, Err(TapeError { message, ..e }));
            }
            at += len;
            n += 1;
        }
        (n, Ok(()))
    }

    pub(crate) fn flush(&mut self) -> Result<(), TapeError> {
        each!(self, e => e.flush())
    }

    pub(crate) fn sync(&mut self) -> Result<(), TapeError> {
        each!(self, e => e.sync())
    }

    pub(crate) fn stats(&self) -> TapeWriterStats {
        each!(self, e => e.stats())
    }

    /// The counts both engines keep, then the journal's own.
    pub(crate) fn health(&self) -> TapeWriterHealth {
        let stats = self.stats();
        let durable = self.durable_events();
        let mut h = TapeWriterHealth {
            appended: stats.events,
            written: self.written_events().max(durable),
            durable,
            segments_closed: stats.segments,
            segments_open: self.open_paths().len() as u64,
            bytes_used: self.closed_segments().iter().map(|s| s.size_bytes).sum(),
            ..TapeWriterHealth::default()
        };
        if let Engine::Journal(j) = self {
            j.add_health(&mut h);
        }
        h
    }

    pub(crate) fn written_events(&self) -> u64 {
        each!(self, e => e.written_events())
    }

    pub(crate) fn durable_events(&self) -> u64 {
        each!(self, e => e.durable_events())
    }

    pub(crate) fn closed_segments(&self) -> Vec<ManifestSegment> {
        each!(self, e => e.closed_segments())
    }

    pub(crate) fn open_paths(&self) -> Vec<PathBuf> {
        each!(self, e => e.open_paths())
    }

    pub(crate) fn set_clock(&mut self, clock: Clock) {
        each!(self, e => e.set_clock(clock))
    }

    pub(crate) fn close_all(&mut self) -> Result<(), TapeError> {
        each!(self, e => e.close_all())
    }

    pub(crate) fn abandon(&mut self) {
        each!(self, e => e.abandon())
    }
}

/// A frame the codec refused, at byte `at` of the caller's frames.
fn frame_error(e: floxlog_core::Error, at: usize, n: usize) -> TapeError {
    TapeError {
        kind: TapeErrorKind::Data(e.kind),
        path: None,
        offset: Some(at as u64 + e.offset),
        message: format!(
            "frame {n} at byte {at} of the frames: {}: {}",
            e.kind, e.what
        ),
        hint: None,
    }
}

fn bad_frame(at: usize, n: usize, what: &str) -> TapeError {
    TapeError::input(
        None,
        format!("frame {n} at byte {at} of the frames: {what}"),
    )
    .at(at as u64)
}
