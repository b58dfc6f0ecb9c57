//! The one read wiring of the `see` modules: a tape's events in time
//! order through the read engine, and what could not be read. Kept to
//! one function so a new read front (a read session) replaces it here.

use crate::tape::read::merge::{Filter, OpenedTape, Order};
use crate::tape::read::Problem;
use crate::tape::read::Request;
use crate::tape::{ReadOutcome, Tape, TapeError};
use floxlog_core::{Event, ReadOptions};

/// What a read could not deliver.
#[derive(Debug, Default)]
pub struct ReadEnd {
    /// Segments that could not be opened.
    pub open_errors: Vec<TapeError>,
    /// Segments whose read stopped on damage (torn tails of unfinished
    /// segments are not damage and are left out).
    pub damaged: Vec<Problem>,
    /// Events delivered.
    pub events: u64,
}

/// Calls `f(segment, event)` with every event of `tape` that `filter`
/// keeps, merged in time order (any order on disk, either layout).
pub fn read_events(
    tape: Tape,
    filter: Filter,
    read: ReadOptions,
    mut f: impl FnMut(usize, &Event<'_>),
) -> Result<ReadEnd, TapeError> {
    let cfg = Request {
        order: Order::Time,
        filter,
        read,
        ..Request::default()
    };
    let mut opened = OpenedTape::open(tape);
    let open_errors = std::mem::take(&mut opened.open_errors);
    let mut r = opened.reader(&cfg);
    let mut events = 0u64;
    while let Some(it) = r.next_item()? {
        events += 1;
        f(it.segment, &it.event);
    }
    let damaged = ReadOutcome::new(r.problems(), false)
        .errors()
        .cloned()
        .collect();
    Ok(ReadEnd {
        open_errors,
        damaged,
        events,
    })
}
