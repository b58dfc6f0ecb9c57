//! What `inspect` tells of a live tape from its files alone: whether a
//! writer holds the tape (the lock's holder, its pid) or died holding it,
//! and which unfinished segments are a journal writer's prepared ones (no
//! event yet: a placeholder header and zeros), told by reading the first
//! frame's size, not the whole file.

use crate::tape::dir::lock::{holder_died, holder_pid, writer_is_live};
use serde_json::{json, Value};
use std::path::Path;

/// Who holds a tape directory's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriterState {
    /// No writer: closed (or never written by a writer that locks).
    None,
    /// A live process holds the lock: the tape is being written.
    Live,
    /// The holder died holding it (killed): `recover` finalises the
    /// segments it left open (a resumed writer does too).
    Died,
}

/// The writer of one tape directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirWriter {
    /// Live, died or none.
    pub state: WriterState,
    /// The pid the lock file names (the live or dead holder's).
    pub pid: Option<u32>,
}

impl DirWriter {
    /// Probes the lock of tape directory `dir` (never blocks, never
    /// creates it).
    pub fn of(dir: &Path) -> DirWriter {
        let state = if writer_is_live(dir) {
            WriterState::Live
        } else if holder_died(dir) {
            WriterState::Died
        } else {
            WriterState::None
        };
        let pid = match state {
            WriterState::None => None,
            _ => holder_pid(dir),
        };
        DirWriter { state, pid }
    }

    /// Its entry in `inspect --json`'s `dirs` (`writer`).
    pub fn to_json(&self) -> Value {
        let state = match self.state {
            WriterState::None => "none",
            WriterState::Live => "live",
            WriterState::Died => "died",
        };
        json!({ "state": state, "pid": self.pid })
    }
}

/// Whether segment bytes `data` (an unfinished segment: placeholder
/// header) hold no event: the first frame's size field, right after the
/// header, is zero. Four bytes read.
pub fn holds_no_event(data: &[u8]) -> bool {
    let at = floxlog_core::SegmentHeader::LEN;
    data.get(at..at + 4).is_none_or(|s| s == [0; 4])
}
