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
//! When nothing new arrives, [`Tail::next`] asks the tape lock
//! (`crate::tape::dir::lock::writer_is_live`): with no writer holding it, it
//! returns [`TailNext::End`] if every segment is finished and read and the
//! lock was let go (the writer closed the tape), else
//! [`TailNext::WriterGone`] (a writer killed between two segments leaves
//! only finished ones, but its pid in the lock file), instead of
//! waiting for events that cannot come. Neither is final: a later call
//! carries on if a writer has since appended.

mod cursor;
mod listing;
mod pending;
mod position;
mod wait;

use super::error::TapeError;
use crate::tape::dir::discover::file_order;
use crate::tape::dir::lock::{holder_died, writer_is_live};
use cursor::{Cursor, Polled};
use floxlog_core::{Event, ReadOptions, Trade, UnknownTypes};
use listing::Listed;
use pending::Pending;
use position::Spot;
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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

/// Nothing is queued: why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quiet {
    Timeout,
    End,
    WriterGone,
}

/// One series followed.
struct Lane {
    cursor: Cursor,
    finished: bool,
    /// Its segment left the directory before any event of it was read:
    /// a spare the journal writer had prepared and removed at close. Done
    /// with, until a later segment appears.
    gone: bool,
    /// After the last event handed out from this series (or where it
    /// started); `None`: before its first event. It lags the cursor by
    /// the events queued and not handed out yet.
    handed: Option<Spot>,
}

impl Lane {
    fn new(cursor: Cursor, handed: Option<Spot>) -> Lane {
        Lane {
            cursor,
            finished: false,
            gone: false,
            handed,
        }
    }
}

/// Looks at the directory and the lock at most this often while spinning.
const LOOK_EVERY: Duration = Duration::from_micros(500);

/// A live tailer; see the module docs.
pub struct Tail {
    /// The tape directory (for a single segment file: None).
    dir: Option<PathBuf>,
    /// Where the tape lock is.
    lock_dir: PathBuf,
    lanes: Vec<Lane>,
    read: ReadOptions,
    wait: WaitStrategy,
    pending: Pending,
    next_lane: usize,
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
            (
                Some(path.to_path_buf()),
                path.to_path_buf(),
                listing::list(path)?,
            )
        } else {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let lock_dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let one = Listed {
                path: path.to_path_buf(),
                series: crate::tape::dir::discover::segment_series(&name)
                    .unwrap_or_else(|| crate::tape::dir::discover::MIXED.to_string()),
                name,
            };
            (None, lock_dir, vec![one])
        };
        let mut t = Tail {
            dir,
            lock_dir,
            lanes: Vec::new(),
            read,
            wait: opts.wait,
            pending: Pending::default(),
            next_lane: 0,
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
        for (lane, (series, of)) in series_groups(&listed).into_iter().enumerate() {
            let Some(first) = of.first().map(|l| (*l).clone()) else {
                continue;
            };
            let l = match &opts.start {
                TailStart::Beginning => Lane::new(Cursor::new(first, lane), None),
                TailStart::End => {
                    // The last segment with an event: a journal writer's
                    // spare after it is empty, and the events still coming
                    // go to the one before it.
                    let last = of
                        .iter()
                        .rfind(|l| has_events(l, read))
                        .map_or(first, |l| (*l).clone());
                    let mut c = Cursor::new(last, lane);
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
                        Lane::new(Cursor::at(seg, lane, &spot)?, Some(spot))
                    }
                    // Nothing of it was handed out when the position was
                    // saved (it may not have existed yet).
                    None => Lane::new(Cursor::new(first, lane), None),
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
        let lanes = &mut self.lanes;
        match self.pending.pop() {
            Some((ev, lane, after)) => {
                if let Some(l) = lanes.get_mut(lane) {
                    l.handed = Some(after);
                }
                Ok(TailNext::Event(ev))
            }
            None => Err(TapeError::input(
                None,
                "a queued event could not be decoded again (a bug in the tailer: please report it)",
            )),
        }
    }

    /// Appends up to `cap` trades to `out`: waits at most `timeout` for the
    /// first as [`Tail::next`] does, then takes what has arrived, stopping
    /// before an event of another type.
    pub fn next_trades(
        &mut self,
        out: &mut Vec<Trade>,
        cap: usize,
        timeout: Option<Duration>,
    ) -> Result<TailTrades, TapeError> {
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
        let mut n = 0;
        while n < cap {
            if self.pending.is_empty() && self.fill(false)? == 0 {
                break;
            }
            if self.pending.peek_type() != Some(floxlog_core::frame_type::TRADE) {
                break;
            }
            let Some((Event::Trade(t), lane, after)) = self.pending.pop() else {
                break;
            };
            out.push(t);
            if let Some(l) = self.lanes.get_mut(lane) {
                l.handed = Some(after);
            }
            n += 1;
        }
        Ok(if n == 0 {
            TailTrades::NotTrade
        } else {
            TailTrades::Trades(n)
        })
    }

    /// Events queued and not yet returned (read from the segments already).
    pub fn queued(&self) -> usize {
        self.pending.len()
    }

    /// Waits until an event is queued (`None`) or says why not.
    fn ready(&mut self, timeout: Option<Duration>) -> Result<Option<Quiet>, TapeError> {
        let start = Instant::now();
        let deadline = timeout.map(|t| start + t);
        let mut backoff = wait::Backoff::new(self.wait);
        let mut looked = None::<Instant>;
        loop {
            if !self.pending.is_empty() || self.fill(false)? > 0 {
                return Ok(None);
            }
            let now = Instant::now();
            let due = deadline.is_some_and(|d| now >= d);
            let look = due || backoff.sleeps() || looked.is_none_or(|t| now - t >= LOOK_EVERY);
            if look {
                looked = Some(now);
                if self.fill(true)? > 0 || self.rescan()? {
                    continue;
                }
                // The lock first, then one more look: a writer releases it
                // only after its last byte is in the file.
                if !writer_is_live(&self.lock_dir) {
                    if self.fill(true)? > 0 || self.rescan()? {
                        continue;
                    }
                    let done = !self.lanes.is_empty()
                        && self.lanes.iter().all(|l| l.finished)
                        && !holder_died(&self.lock_dir);
                    return Ok(Some(if done { Quiet::End } else { Quiet::WriterGone }));
                }
            }
            if due {
                return Ok(Some(Quiet::Timeout));
            }
            backoff.wait(deadline);
        }
    }

    /// Polls every lane once, round robin; the events queued. `look`: see
    /// [`Cursor::poll`].
    fn fill(&mut self, look: bool) -> Result<usize, TapeError> {
        let n = self.lanes.len();
        let mut total = 0;
        for k in 0..n {
            let i = (self.next_lane + k) % n;
            let lane = &mut self.lanes[i];
            if lane.gone {
                lane.finished = true;
                continue;
            }
            match lane.cursor.poll(self.read, &mut self.pending, look)? {
                Polled::Got(g) => {
                    lane.finished = false;
                    total += g;
                    // The next fill starts with the lane after this one, so
                    // a busy series never starves another.
                    self.next_lane = (i + 1) % n;
                    break;
                }
                Polled::Idle { finished } => lane.finished = finished,
            }
        }
        Ok(total)
    }

    /// Lists the tape again: moves lanes on to their next segment when the
    /// current one is done (see the module docs), and adds lanes for new
    /// series. Whether anything changed.
    fn rescan(&mut self) -> Result<bool, TapeError> {
        let Some(dir) = &self.dir else {
            return Ok(false);
        };
        let listed = listing::list(dir)?;
        let mut changed = false;
        for i in 0..self.lanes.len() {
            let cur = &self.lanes[i].cursor.seg;
            if !listed.iter().any(|l| l.path == cur.path) && !self.lanes[i].gone {
                if self.lanes[i].cursor.events_read() > 0 {
                    return Err(TapeError::input(
                        Some(&cur.path),
                        "the segment being followed was removed from the tape",
                    )
                    .with_hint("tail the tape again from a saved position"));
                }
                // A spare segment the writer prepared and removed unused.
                self.lanes[i].gone = true;
                self.lanes[i].finished = true;
                changed = true;
            }
            let cur = &self.lanes[i].cursor.seg;
            let later: Vec<&Listed> = listed
                .iter()
                .filter(|l| l.series == cur.series && file_order(&l.name) > file_order(&cur.name))
                .collect();
            let Some(next) = later.first() else {
                continue;
            };
            let move_on = if self.lanes[i].finished {
                true
            } else if later.iter().any(|l| has_events(l, self.read)) {
                // Read the current one again first: its last events were
                // appended before the later segment's first.
                match self.lanes[i]
                    .cursor
                    .poll(self.read, &mut self.pending, true)?
                {
                    Polled::Got(_) => return Ok(true),
                    Polled::Idle { .. } => true,
                }
            } else {
                false
            };
            if move_on {
                // What was handed out stays the lane's position until an
                // event of the next segment is.
                let handed = self.lanes[i].handed;
                self.lanes[i] = Lane::new(Cursor::new((*next).clone(), i), handed);
                changed = true;
            }
        }
        for (series, of) in series_groups(&listed) {
            if self.lanes.iter().any(|l| l.cursor.seg.series == series) {
                continue;
            }
            if let Some(first) = of.first() {
                let lane = self.lanes.len();
                self.lanes
                    .push(Lane::new(Cursor::new((*first).clone(), lane), None));
                changed = true;
            }
        }
        Ok(changed)
    }
}

/// The series of a listing, in order of first appearance, each with its
/// segments in file order (never empty).
fn series_groups(listed: &[Listed]) -> Vec<(String, Vec<&Listed>)> {
    let mut v: Vec<(String, Vec<&Listed>)> = Vec::new();
    for l in listed {
        match v.iter_mut().find(|(s, _)| *s == l.series) {
            Some((_, of)) => of.push(l),
            None => v.push((l.series.clone(), vec![l])),
        }
    }
    v
}

/// Whether a segment holds at least one complete event (or is finished).
fn has_events(l: &Listed, read: ReadOptions) -> bool {
    let mut c = Cursor::new(l.clone(), 0);
    let mut sink = Pending::default();
    matches!(
        c.poll(read, &mut sink, true),
        Ok(Polled::Got(_) | Polled::Idle { finished: true })
    )
}

/// The segment of `series` whose header says `created_ns`.
fn find_created(of: &[&Listed], series: &str, created_ns: i64) -> Result<Listed, TapeError> {
    for l in of {
        let Ok(f) = crate::tape::read::source::SegmentFile::open_with(&l.path, false) else {
            continue;
        };
        if floxlog_core::SegmentHeader::parse(f.bytes()).is_ok_and(|h| h.created_ns == created_ns) {
            return Ok((*l).clone());
        }
    }
    Err(TapeError::input(
        of.first().map(|l| l.path.as_path()),
        format!("no {series} segment of the tape was created at {created_ns} (the saved position's segment): removed or rewritten?"),
    )
    .with_hint("tail it from the beginning or the end"))
}
