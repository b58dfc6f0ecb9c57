//! A segment that could not be read to its end: the error, how many events
//! came before it, and whether it is a writer's torn tail (tolerated) or
//! damage (a segment cut short).

use crate::tape::error::TapeError;
use crate::tape::read::shortfall::{torn_why, SegmentCheck, Short};
use std::path::{Path, PathBuf};

/// A segment that could not be read to its end.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Segment number in the tape.
    pub segment: usize,
    /// Its path.
    pub path: PathBuf,
    /// The error that stopped it.
    pub error: floxlog_core::Error,
    /// Events read from it before the error.
    pub events_before: u64,
    /// Whether this is the torn tail of a segment whose header is still a
    /// writer's placeholder (a live or crashed writer): a truncated last
    /// frame or block, or the index trailer of a writer that died closing
    /// the segment before writing the final header. Expected, not damage.
    /// Never for a segment cut short ([`Problem::short`]).
    pub tolerated: bool,
    /// A live writer holds the segment's tape (the wording of a torn tail
    /// depends on it: [`Problem::torn_why`]).
    pub writer_live: bool,
    /// The file is shorter than its listing or finished header says, and
    /// no writer holds the tape: damage, whatever the read found.
    pub short: Option<Short>,
}

impl Problem {
    /// As a [`TapeError`].
    pub fn to_error(&self) -> TapeError {
        let e = TapeError::data(&self.path, self.error);
        match &self.short {
            Some(s) => TapeError {
                message: format!("{}; {}", e.message, s.describe()),
                hint: Some(crate::tape::hint::Hint::new(
                    "no writer holds the tape, so the missing bytes are lost, not still being written: \
                     restore the file from a copy ({} keeps the events it still holds)",
                    &[crate::tape::hint::Remedy::Recover],
                )),
                ..e
            },
            None => e,
        }
    }

    /// Why a tolerated segment ends early, for the warning: only a live
    /// writer is said to be still running.
    pub fn torn_why(&self) -> &'static str {
        torn_why(self.writer_live)
    }

    /// The problem of segment `segment` when it is cut short (`check`) and
    /// its read of `events` events found nothing wrong: where it ends.
    pub fn cut_short(
        segment: usize,
        path: &Path,
        check: SegmentCheck,
        events: u64,
    ) -> Option<Problem> {
        let s = check.short.filter(|s| s.lost_events(events))?;
        let e = floxlog_core::Error::new(
            floxlog_core::ErrorKind::Truncated,
            s.len,
            "the segment ends before its listing or header says",
        );
        Some(Problem::new(segment, path, e, events, false, check))
    }

    /// A problem of segment `segment` (checked `check`), classified: a
    /// segment cut short is never tolerated.
    pub fn new(
        segment: usize,
        path: &Path,
        error: floxlog_core::Error,
        events_before: u64,
        tolerated: bool,
        check: SegmentCheck,
    ) -> Problem {
        Problem {
            segment,
            path: path.to_path_buf(),
            error,
            events_before,
            tolerated: tolerated && check.short.is_none(),
            writer_live: check.writer_live,
            short: check.short,
        }
    }
}
