//! Recording through a full disk: a segment the background thread cannot
//! prepare ahead (its reservation failed: the disk is full, say) is not a
//! failure of the writer. The request is kept, with those queued after it
//! (in order: segment names must stay increasing), and retried with
//! back-off while the appender goes on into the segments already
//! reserved; the writer's health reports the state (`low_space`) before
//! it bites. Only an append with nowhere to go (its live segment full and
//! no segment prepared) fails: it asks for one more attempt at once, and
//! fails with the reservation's error if that fails too; nothing
//! acknowledged is lost, and appends go on once space is found. A
//! manifest that cannot be rewritten at a rotation is counted here too,
//! not a failure: it is written again at the next rotation and at close.

use crate::tape::error::TapeError;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The first wait before a failed reservation is tried again; it doubles
/// after each failure, up to [`BACKOFF_MAX`].
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// A segment to prepare: the next of series slot `si`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ask {
    pub(super) si: usize,
    pub(super) series: &'static str,
    pub(super) created: i64,
    pub(super) number: u32,
}

/// Requests whose segment could not be prepared, and what the health
/// reports of them.
#[derive(Default)]
pub(super) struct Space {
    /// Waiting for a retry, oldest first.
    pub(super) deferred: VecDeque<Ask>,
    retry_at: Option<Instant>,
    backoff: Duration,
    /// An appender with nowhere to go asked for an attempt now.
    pub(super) retry_now: bool,
    /// Attempts at deferred requests so far (an appender waits for one).
    pub(super) attempts: u64,
    /// Reservations that failed (health).
    pub(super) failures: u64,
    pub(super) last_error: Option<TapeError>,
    /// Wall-clock ns of `last_error`.
    pub(super) last_error_ns: i64,
}

impl Space {
    /// True while a segment ahead is missing for want of a reservation.
    pub(super) fn low(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Whether slot `si`'s next segment is among the missing ones.
    pub(super) fn holds(&self, si: usize) -> bool {
        self.deferred.iter().any(|a| a.si == si)
    }

    /// Whether a retry is due at `now`.
    pub(super) fn due(&self, now: Instant) -> bool {
        self.low() && (self.retry_now || self.retry_at.is_some_and(|t| t <= now))
    }

    /// How long the background thread may sleep before the next retry.
    pub(super) fn sleep_for(&self, now: Instant, max: Duration) -> Duration {
        match self.retry_at {
            Some(t) if self.low() => t.saturating_duration_since(now).min(max),
            _ => max,
        }
    }

    /// The next request to try again (its turn taken: `retry_now` served).
    pub(super) fn take(&mut self) -> Option<Ask> {
        self.retry_now = false;
        self.deferred.pop_front()
    }

    /// `ask` failed with `e`: kept first, tried again after the back-off.
    pub(super) fn failed(&mut self, ask: Ask, e: TapeError) {
        self.deferred.push_front(ask);
        self.attempts += 1;
        self.failures += 1;
        self.last_error = Some(e);
        self.last_error_ns = crate::tape::writer::now_ns();
        self.backoff = (self.backoff * 2).clamp(BACKOFF_MIN, BACKOFF_MAX);
        self.retry_at = Some(Instant::now() + self.backoff);
    }

    /// A write that needed space and failed but loses nothing (the
    /// manifest's rewrite at a rotation): counted and kept for the health.
    pub(super) fn note(&mut self, e: TapeError) {
        self.failures += 1;
        self.last_error = Some(e);
        self.last_error_ns = crate::tape::writer::now_ns();
    }

    /// A request succeeded: the next deferred one (if any) at once.
    pub(super) fn succeeded(&mut self) {
        self.attempts += 1;
        self.backoff = Duration::ZERO;
        self.retry_at = self.low().then(Instant::now);
    }

    /// The error of an append with nowhere to go.
    pub(super) fn no_room(&self) -> TapeError {
        let e = self.last_error.clone().unwrap_or_else(|| {
            TapeError::input(None, "internal error: no reservation error recorded")
        });
        TapeError {
            message: format!(
                "no room for the next segment, so the event was not appended (every event acknowledged before it is in the tape; appends go on once a segment can be reserved): {}",
                e.message
            ),
            hint: Some(
                "free space on the tape's file system (or move finished segments away): the writer retries by itself".into(),
            ),
            ..e
        }
    }
}
