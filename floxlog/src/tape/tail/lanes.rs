//! The lanes of a tailer, one per series of the tape: polling them in
//! turn, and moving each on to its series' next segment as the tape's
//! listing (the tape directory's one listing, `dir_segments`) changes.

use super::cursor::{has_events, Cursor, Polled};
use super::position::Spot;
use super::Tail;
use crate::tape::dir::discover::{dir_segments, file_order};
use crate::tape::dir::TapeSegment;
use crate::tape::error::TapeError;
use std::path::Path;

/// One series followed.
pub(super) struct Lane {
    pub(super) cursor: Cursor,
    pub(super) finished: bool,
    /// Its segment left the directory before any event of it was read:
    /// a spare the journal writer had prepared and removed at close. Done
    /// with, until a later segment appears.
    gone: bool,
    /// After the last event handed out from this series (or where it
    /// started); `None`: before its first event. It lags the cursor by
    /// the events of its run.
    pub(super) handed: Option<Spot>,
}

impl Lane {
    pub(super) fn new(cursor: Cursor, handed: Option<Spot>) -> Lane {
        Lane {
            cursor,
            finished: false,
            gone: false,
            handed,
        }
    }
}

impl Tail {
    /// Polls every lane once, round robin, until one has a run; its
    /// events. `look`: see [`Cursor::poll`].
    pub(super) fn fill(&mut self, look: bool) -> Result<usize, TapeError> {
        let n = self.lanes.len();
        let mut total = 0;
        for k in 0..n {
            let i = (self.next_lane + k) % n;
            let lane = &mut self.lanes[i];
            if lane.gone {
                lane.finished = true;
                continue;
            }
            match lane.cursor.poll(self.read, look)? {
                Polled::Got(g) => {
                    self.current = i;
                    lane.finished = false;
                    self.verdict = None;
                    total += g;
                    // The next fill starts with the lane after this one, so
                    // a busy series never starves another.
                    self.next_lane = (i + 1) % n;
                    break;
                }
                Polled::Idle { finished } => {
                    self.finish_seen |= finished && !lane.finished;
                    lane.finished = finished;
                }
            }
        }
        Ok(total)
    }

    /// Lists the tape again: moves lanes on to their next segment when the
    /// current one is done (see the module docs), and adds lanes for new
    /// series. Whether anything changed.
    pub(super) fn rescan(&mut self) -> Result<bool, TapeError> {
        let Some(dir) = &self.dir else {
            return Ok(false);
        };
        let listed = list(dir)?;
        self.counts.listings += 1;
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
            let later: Vec<&TapeSegment> = listed
                .iter()
                .filter(|l| l.series == cur.series && file_order(&l.name) > file_order(&cur.name))
                .collect();
            let Some(next) = later.first() else {
                continue;
            };
            let move_on = if self.lanes[i].finished {
                true
            } else if later.iter().any(|l| has_events(l)) {
                // Read the current one again first: its last events were
                // appended before the later segment's first.
                match self.lanes[i].cursor.poll(self.read, true)? {
                    Polled::Got(_) => {
                        self.current = i;
                        return Ok(true);
                    }
                    Polled::Idle { .. } => true,
                }
            } else {
                false
            };
            if move_on {
                // What was handed out stays the lane's position until an
                // event of the next segment is.
                let handed = self.lanes[i].handed;
                self.lanes[i] = Lane::new(Cursor::new((*next).clone()), handed);
                changed = true;
            }
        }
        for (series, of) in series_groups(&listed) {
            if self.lanes.iter().any(|l| l.cursor.seg.series == series) {
                continue;
            }
            if let Some(first) = of.first() {
                self.lanes
                    .push(Lane::new(Cursor::new((*first).clone()), None));
                changed = true;
            }
        }
        Ok(changed)
    }
}

/// The segment files of the tape directory `dir`, in file order: the tape
/// directory's one listing (a link or a FIFO named like a segment is never
/// opened by a tailer).
pub(super) fn list(dir: &Path) -> Result<Vec<TapeSegment>, TapeError> {
    Ok(dir_segments(dir, 0)?.0)
}

/// The series of a listing, in order of first appearance, each with its
/// segments in file order (never empty).
pub(super) fn series_groups(listed: &[TapeSegment]) -> Vec<(String, Vec<&TapeSegment>)> {
    let mut v: Vec<(String, Vec<&TapeSegment>)> = Vec::new();
    for l in listed {
        match v.iter_mut().find(|(s, _)| *s == l.series) {
            Some((_, of)) => of.push(l),
            None => v.push((l.series.clone(), vec![l])),
        }
    }
    v
}
