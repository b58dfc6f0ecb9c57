//! Live tailing: the events of a tape as its writer appends them, across
//! rotations and writer restarts, in file order.
//!
//! A [`Tail`] follows each series of a tape (the flox layout has one; the
//! spec layout one per record type) segment by segment in file order. It
//! reads through the read engine's sources (`crate::tape::read::source`, the
//! core reader in tail mode), so CRCs are checked (unless turned off), a
//! half-written frame or a journal segment's zero tail is "nothing yet",
//! and a segment trimmed under it by `recover` is mapped again rather than
//! raising `SIGBUS`.
//!
//! A segment is left for the next one of its series when its header is
//! final and every event was read, or, if it was never finished (a writer
//! killed, then restarted), once a later segment holds an event: the
//! writer appends to a later segment only after its last append to the
//! earlier one, so the earlier one is read again first and nothing is
//! missed.
//!
//! When nothing new arrives, an idle poll is one load per series: the
//! next frame's size word (see `cursor`). The directory and the tape lock
//! (`crate::tape::dir::lock::writer_is_live`) are looked at when a segment
//! finished, when the tape's wake page says the writer started a segment
//! or closed, or every [`LOOK_EVERY`] (kept across calls). With no writer
//! holding the lock, [`Tail::next`] returns [`TailNext::End`] if every
//! segment is finished and read and the lock was let go (the writer
//! closed the tape); else, once no writer has come for
//! [`TailOptions::writer_wait`], [`TailNext::WriterGone`] (a writer killed
//! between two segments leaves only finished ones, but its pid in the
//! lock file). Neither is final: a later call carries on if a writer has
//! since appended.
//!
//! A blocking tailer on a journal tape sleeps on the tape's wake page
//! (`crate::tape::wake`) until the writer publishes.

mod cursor;
mod lanes;
mod position;
mod wait;

use super::error::TapeError;
use crate::tape::dir::lock::{holder_died, writer_is_live};
use crate::tape::dir::TapeSegment;
use crate::tape::wake::{Page, Woke};
use cursor::{has_events, Cursor};
use floxlog_core::{Event, ReadOptions, TradeSink, UnknownTypes};
use lanes::{list, series_groups, Lane};
use position::{find_created, Spot};
pub use position::{SeriesPosition, TailPosition};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
pub use wait::WaitStrategy;

/// Where a tailer starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TailStart {
    /// The first event of the tape.
    #[default]
    Beginning,
    /// After the events the tape holds at open: new events only.
    End,
    /// A position a tailer reported ([`Tail::position`]), for a tailer
    /// that restarts where another stopped: each series resumes after the
    /// last event handed out from it; a series the position does not
    /// name starts at its first event.
    At(TailPosition),
}

/// Settings of a [`Tail`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TailOptions {
    /// Where to start.
    pub start: TailStart,
    /// Do not check frame CRCs (they are checked by default).
    pub skip_crc: bool,
    /// Skip frames of record types 1.0 does not define instead of
    /// stopping at them.
    pub skip_unknown: bool,
    /// How to wait for the writer.
    pub wait: WaitStrategy,
    /// How long to wait for a writer to start, or to come back, when none
    /// holds the tape and it was not closed ([`TailNext::WriterGone`]
    /// comes after this long without one); `None`: for ever. Default
    /// [`WRITER_WAIT`].
    pub writer_wait: Option<Duration>,
}

/// [`TailOptions::writer_wait`]'s default: a tailer started a moment
/// before its writer, or following a writer that restarts, goes on.
pub const WRITER_WAIT: Duration = Duration::from_secs(2);

impl Default for TailOptions {
    fn default() -> TailOptions {
        TailOptions {
            start: TailStart::default(),
            skip_crc: false,
            skip_unknown: false,
            wait: WaitStrategy::default(),
            writer_wait: Some(WRITER_WAIT),
        }
    }
}

/// What [`Tail::next`] returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TailNext<'a> {
    /// The next event (borrowing the tailer until the next call).
    Event(Event<'a>),
    /// Nothing arrived within the timeout; a writer holds the tape.
    Timeout,
    /// The writer closed the tape (no writer holds its lock, and every
    /// segment is finished and was read).
    End,
    /// No writer holds the tape's lock, and its last segment was never
    /// finished or the lock still names its holder: the writer died (or
    /// was killed) while writing. Every
    /// event it published was returned. `floxlog recover` finishes the
    /// segment; a restarted writer's events are returned by later calls.
    WriterGone,
}

/// What [`Tail::next_trades`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TailTrades {
    /// This many trades were appended (at least one).
    Trades(usize),
    /// The next event is not a trade: take it with [`Tail::next`].
    NotTrade,
    /// As [`TailNext::Timeout`].
    Timeout,
    /// As [`TailNext::End`].
    End,
    /// As [`TailNext::WriterGone`].
    WriterGone,
}

/// No event waits: why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quiet {
    Timeout,
    End,
    WriterGone,
}

/// Idle rounds of a spinning wait (or idle `timeout 0` calls) between two
/// reads of the clock.
const CLOCK_EVERY: u32 = 64;

/// Looks at the directory and the lock at most this often while nothing
/// says the tape changed (kept across calls: an idle poll between two
/// looks is one load per series).
const LOOK_EVERY: Duration = Duration::from_millis(2);

/// A live tailer; see the module docs.
pub struct Tail {
    /// The tape directory (for a single segment file: None).
    dir: Option<PathBuf>,
    /// Where the tape lock is.
    lock_dir: PathBuf,
    lanes: Vec<Lane>,
    read: ReadOptions,
    wait: WaitStrategy,
    writer_wait: Option<Duration>,
    /// The lane whose run is being handed out: one lane at a time has
    /// one (a lane is polled only when no run is left).
    current: usize,
    next_lane: usize,
    /// The last look at the directory and the lock.
    looked: Option<Instant>,
    /// Idle rounds so far (see [`CLOCK_EVERY`]).
    idle_rounds: u32,
    /// A lane found its segment finished since the last look.
    finish_seen: bool,
    /// Since when no writer holds the tape (it was not closed).
    gone_since: Option<Instant>,
    /// What the last look concluded, if the wait was over (End or
    /// WriterGone): said again until the next look, which may find more.
    verdict: Option<Quiet>,
    /// The tape's wake page, once a journal writer made one, and the
    /// page's `gen` at the last look.
    wake: Option<(Page, u32)>,
    /// Looks at the directory and wake-ups, for tests.
    counts: TailCounts,
}

/// What a tailer did, for tests and benchmarks: its waits are otherwise
/// invisible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TailCounts {
    /// Directory listings (each look lists the tape once or twice).
    pub listings: u64,
    /// Sleeps on the wake page that a writer's wake ended.
    pub woken: u64,
    /// Sleeps on the wake page that ran out of time.
    pub slept_out: u64,
}

impl Tail {
    /// Opens a tailer on a tape directory (either layout; it may hold no
    /// segment yet) or on one segment file.
    pub fn open(path: &Path, opts: TailOptions) -> Result<Tail, TapeError> {
        let md = std::fs::metadata(path).map_err(|e| TapeError::io(path, "opening the tape", e))?;
        let read = ReadOptions {
            verify_crc: !opts.skip_crc,
            unknown_types: if opts.skip_unknown {
                UnknownTypes::Skip
            } else {
                UnknownTypes::Reject
            },
            tail: true,
        };
        let (dir, lock_dir, listed) = if md.is_dir() {
            (Some(path.to_path_buf()), path.to_path_buf(), list(path)?)
        } else {
            let lock_dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            (None, lock_dir, vec![TapeSegment::file(path)])
        };
        let mut t = Tail {
            dir,
            lock_dir,
            lanes: Vec::new(),
            read,
            wait: opts.wait,
            writer_wait: opts.writer_wait,
            current: 0,
            next_lane: 0,
            looked: None,
            idle_rounds: 0,
            finish_seen: false,
            gone_since: None,
            verdict: None,
            wake: None,
            counts: TailCounts::default(),
        };
        if let TailStart::At(p) = &opts.start {
            // Every saved series must still be on the tape: a position
            // silently dropped would replay that series from its start.
            for s in &p.series {
                if !listed.iter().any(|l| l.series == s.series) {
                    return Err(TapeError::input(
                        Some(path),
                        format!(
                            "the saved position names series {} (segment created at {}), which this tape does not hold",
                            s.series, s.created_ns
                        ),
                    )
                    .with_hint("tail it from the beginning or the end"));
                }
            }
        }
        for (series, of) in series_groups(&listed) {
            let Some(first) = of.first().map(|l| (*l).clone()) else {
                continue;
            };
            let l = match &opts.start {
                TailStart::Beginning => Lane::new(Cursor::new(first), None),
                TailStart::End => {
                    // The last segment with an event: a journal writer's
                    // spare after it is empty, and the events still coming
                    // go to the one before it.
                    let last = of
                        .iter()
                        .rfind(|l| has_events(l))
                        .map_or(first, |l| (*l).clone());
                    let mut c = Cursor::new(last);
                    c.skip_to_end(read)?;
                    let at = c.position();
                    Lane::new(c, at)
                }
                TailStart::At(p) => match p.get(&series) {
                    Some(s) => {
                        let spot = Spot {
                            created_ns: s.created_ns,
                            offset: s.offset,
                            events: s.events,
                        };
                        let seg = find_created(&of, &series, s.created_ns)?;
                        Lane::new(Cursor::at(seg, &spot)?, Some(spot))
                    }
                    // Nothing of it was handed out when the position was
                    // saved (it may not have existed yet).
                    None => Lane::new(Cursor::new(first), None),
                },
            };
            t.lanes.push(l);
        }
        Ok(t)
    }

    /// Where the tail stands: in each series, after the last event handed
    /// out from it (where it started, for a series nothing was handed out
    /// from yet), naming segments by their `created_ns`. Resuming there
    /// ([`TailStart::At`]) hands out every later event of every series,
    /// each once and in its series' order.
    pub fn position(&self) -> TailPosition {
        TailPosition {
            series: self
                .lanes
                .iter()
                .filter_map(|l| Some(l.handed?.named(&l.cursor.seg.series)))
                .collect(),
        }
    }

    /// The next event, waiting at most `timeout` for it (`Some(ZERO)`: do
    /// not wait; `None`: no limit, until an event, the end, or the writer
    /// gone). Errors name the segment and the byte offset of the damage.
    pub fn next(&mut self, timeout: Option<Duration>) -> Result<TailNext<'_>, TapeError> {
        if let Some(q) = self.ready(timeout)? {
            return Ok(match q {
                Quiet::Timeout => TailNext::Timeout,
                Quiet::End => TailNext::End,
                Quiet::WriterGone => TailNext::WriterGone,
            });
        }
        let unknown = self.read.unknown_types;
        let Some(Lane { cursor, handed, .. }) = self.lanes.get_mut(self.current) else {
            return Err(no_run());
        };
        match cursor.take(unknown, None)? {
            Some((ev, after)) => {
                *handed = Some(after);
                Ok(TailNext::Event(ev))
            }
            None => Err(no_run()),
        }
    }

    /// Stores up to `out.capacity()` trades in `out` (a slice of trades,
    /// the C tailer's array, columns): waits at most `timeout` for the
    /// first as [`Tail::next`] does, then takes what has arrived, stopping
    /// before an event of another type. Each is decoded from the segment
    /// into `out`.
    pub fn next_trades<S: TradeSink + ?Sized>(
        &mut self,
        out: &mut S,
        timeout: Option<Duration>,
    ) -> Result<TailTrades, TapeError> {
        let cap = out.capacity();
        if cap == 0 {
            return Ok(TailTrades::Trades(0));
        }
        if let Some(q) = self.ready(timeout)? {
            return Ok(match q {
                Quiet::Timeout => TailTrades::Timeout,
                Quiet::End => TailTrades::End,
                Quiet::WriterGone => TailTrades::WriterGone,
            });
        }
        let unknown = self.read.unknown_types;
        let mut n = 0;
        while n < cap {
            if self.queued() == 0 && self.fill(false)? == 0 {
                break;
            }
            let Some(Lane { cursor, handed, .. }) = self.lanes.get_mut(self.current) else {
                break;
            };
            let trade = Some(floxlog_core::frame_type::TRADE);
            let Some((Event::Trade(t), after)) = cursor.take(unknown, trade)? else {
                break;
            };
            out.put(n, t);
            *handed = Some(after);
            n += 1;
        }
        Ok(if n == 0 {
            TailTrades::NotTrade
        } else {
            TailTrades::Trades(n)
        })
    }

    /// Events checked and not yet returned (they stay in the segment
    /// until they are).
    pub fn queued(&self) -> usize {
        self.lanes
            .get(self.current)
            .map_or(0, |l| l.cursor.queued())
    }

    /// What this tailer did so far (see [`TailCounts`]).
    pub fn counts(&self) -> TailCounts {
        self.counts
    }

    /// Waits until an event is checked and waiting (`None`) or says why not. An idle
    /// round is one load per series (and one of the wake page's `gen`);
    /// the directory and the lock are looked at when a segment finished,
    /// the wake page says the tape changed, or [`LOOK_EVERY`] passed since
    /// the last look (of any call).
    fn ready(&mut self, timeout: Option<Duration>) -> Result<Option<Quiet>, TapeError> {
        if self.queued() > 0 || self.fill(false)? > 0 {
            return Ok(None);
        }
        // `timeout 0` reads no clock for its deadline: it is due now.
        let now_only = timeout.is_some_and(|t| t.is_zero());
        let deadline = timeout.filter(|_| !now_only).map(|t| Instant::now() + t);
        let mut backoff = wait::Backoff::new(self.wait);
        loop {
            let changed = self
                .wake
                .as_ref()
                .is_some_and(|(p, g)| p.tailers().gen() != *g);
            // The clock is read every CLOCK_EVERY idle rounds (of this
            // call or the ones before) unless something says to look: a
            // clock read costs more than the idle poll itself.
            self.idle_rounds = self.idle_rounds.wrapping_add(1);
            let tick = self.finish_seen
                || changed
                || (backoff.sleeps() && !now_only)
                || self.looked.is_none()
                || self.idle_rounds.is_multiple_of(CLOCK_EVERY);
            if tick {
                let now = Instant::now();
                let look = self.finish_seen
                    || changed
                    || self.looked.is_none_or(|t| now - t >= LOOK_EVERY);
                if look {
                    let q = self.look(now)?;
                    self.verdict = q.flatten();
                    if let Some(q) = q {
                        return Ok(q);
                    }
                }
                if deadline.is_some_and(|d| now >= d) {
                    return Ok(Some(Quiet::Timeout));
                }
                if backoff.sleeps() {
                    if now_only {
                        return Ok(Some(self.verdict.unwrap_or(Quiet::Timeout)));
                    }
                    if self.sleep(&mut backoff, deadline, now)? {
                        return Ok(None);
                    }
                    continue;
                }
            }
            if now_only {
                // Between looks, a poll that cannot wait says what the
                // last look found.
                return Ok(Some(self.verdict.unwrap_or(Quiet::Timeout)));
            }
            backoff.wait(deadline);
            if self.fill(false)? > 0 {
                return Ok(None);
            }
        }
    }

    /// Looks at the directory and the lock: `Some(None)` if events came,
    /// `Some(Some(why))` if the wait is over without one, `None` to go on
    /// waiting.
    fn look(&mut self, now: Instant) -> Result<Option<Option<Quiet>>, TapeError> {
        self.looked = Some(now);
        self.finish_seen = false;
        if self.wake.as_ref().is_none_or(|(p, _)| !p.tailers().armed()) {
            // A writer's page is removed when it closes; the next writer
            // makes a new one.
            self.wake = Page::open(&self.lock_dir).map(|p| (p, 0));
        }
        if let Some((p, g)) = &mut self.wake {
            *g = p.tailers().gen();
        }
        if self.catch_up()? {
            return Ok(Some(None));
        }
        // The lock first, then one more look: a writer releases it only
        // after its last byte is in the file.
        if writer_is_live(&self.lock_dir) {
            self.gone_since = None;
            return Ok(None);
        }
        if self.catch_up()? {
            return Ok(Some(None));
        }
        let done = !self.lanes.is_empty()
            && self.lanes.iter().all(|l| l.finished)
            && !holder_died(&self.lock_dir);
        if done {
            self.gone_since = None;
            return Ok(Some(Some(Quiet::End)));
        }
        // No writer, and the tape was not closed: a writer that starts or
        // comes back within `writer_wait` is followed.
        let since = *self.gone_since.get_or_insert(now);
        if self.writer_wait.is_some_and(|w| now - since >= w) {
            return Ok(Some(Some(Quiet::WriterGone)));
        }
        Ok(None)
    }

    /// Polls every lane (checking each map still shows its file) and
    /// lists the tape, moving lanes on, until nothing changes; whether an
    /// event waits.
    fn catch_up(&mut self) -> Result<bool, TapeError> {
        loop {
            if self.queued() > 0 || self.fill(true)? > 0 {
                return Ok(true);
            }
            if !self.rescan()? {
                return Ok(false);
            }
        }
    }

    /// A sleeping strategy's round (never past `deadline`, nor past the
    /// next look); whether an event waits after it. A blocking tailer
    /// on a tape whose journal writer is alive sleeps on the wake page
    /// until the writer publishes; otherwise the strategy's back-off.
    fn sleep(
        &mut self,
        backoff: &mut wait::Backoff,
        deadline: Option<Instant>,
        now: Instant,
    ) -> Result<bool, TapeError> {
        let armed = self.wake.as_ref().is_some_and(|(p, _)| p.tailers().armed());
        match &self.wake {
            Some((p, _)) if armed => {
                let next_look = self.looked.map_or(now, |t| t + LOOK_EVERY);
                let until = deadline.map_or(next_look, |d| d.min(next_look));
                let max = until.saturating_duration_since(now);
                let seen = p.tailers().prepare();
                // Again after saying so: a frame published before the
                // writer could see the flag is found here.
                if self.fill(false)? > 0 {
                    return Ok(true);
                }
                if let Some((p, _)) = &self.wake {
                    match p.tailers().sleep(seen, max) {
                        Woke::Woken => self.counts.woken += 1,
                        Woke::TimedOut => self.counts.slept_out += 1,
                        Woke::Unsupported => backoff.wait(deadline),
                    }
                }
            }
            _ => backoff.wait(deadline),
        }
        Ok(self.fill(false)? > 0)
    }
}

/// The current lane had no event left when one was said to wait.
fn no_run() -> TapeError {
    TapeError::input(
        None,
        "the tailer found no event where one was checked (a bug in the tailer: please report it)",
    )
}
