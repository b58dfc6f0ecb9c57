//! Following a segment that a recorder is still writing: the file is
//! re-mapped on every poll and read by the core reader in tail mode from
//! where the last poll stopped, up to its last complete frame (or block).

use crate::tape::error::TapeError;
use crate::tape::read::source::{header_is_unfinished, SegmentFile};
use floxlog_core::{Event, RawFrame, ReadOptions, Segment, SegmentHeader};
use std::path::{Path, PathBuf};

/// What a poll found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollOutcome {
    /// This many new events.
    Events(u64),
    /// The segment is closed (final header) and fully read.
    Finished,
}

/// Incremental reader of one growing segment.
pub struct Follower {
    path: PathBuf,
    pos: u64,
    scratch: Vec<u8>,
    opts: ReadOptions,
    events: u64,
}

impl Follower {
    /// A follower from the start of `path`. `opts.tail` is set for it.
    pub fn new(path: &Path, opts: ReadOptions) -> Follower {
        Follower {
            path: path.to_path_buf(),
            pos: SegmentHeader::LEN as u64,
            scratch: Vec::new(),
            opts: ReadOptions { tail: true, ..opts },
            events: 0,
        }
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Reads the complete events added since the last poll, calling `f`
    /// for each (frame bytes included).
    pub fn poll(
        &mut self,
        f: &mut dyn FnMut(&Event<'_>, &RawFrame<'_>) -> Result<(), TapeError>,
    ) -> Result<PollOutcome, TapeError> {
        let file = SegmentFile::open(&self.path)?;
        let data = file.bytes();
        if self.pos > SegmentHeader::LEN as u64 && (data.len() as u64) < self.pos {
            // Cut below what was already read: not a file that grows.
            return Err(TapeError::data(
                &self.path,
                floxlog_core::Error::new(
                    floxlog_core::ErrorKind::Truncated,
                    data.len() as u64,
                    crate::tape::error::SHRANK,
                ),
            ));
        }
        if data.len() < SegmentHeader::LEN {
            return Ok(PollOutcome::Events(0));
        }
        let seg = Segment::parse(data).map_err(|e| TapeError::data(&self.path, e))?;
        let closed = !header_is_unfinished(seg.header());
        let need = seg.scratch_len_from(self.pos);
        if self.scratch.len() < need {
            self.scratch.resize(need, 0);
        }
        let mut r = seg
            .reader_at(self.pos, self.opts, &mut self.scratch)
            .map_err(|e| TapeError::data(&self.path, e))?;
        let before = self.events;
        let stopped = loop {
            match r.next_item() {
                Ok(Some(it)) => {
                    f(&it.event, &it.frame)?;
                    self.events += 1;
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        let needs_more = r.needs_more();
        self.pos = r.next_offset();
        if let Some(e) = stopped {
            let e = file.shrink_error(Some(&e)).unwrap_or(e);
            return Err(TapeError::data(&self.path, e));
        }
        let new = self.events - before;
        if closed && needs_more {
            return Err(TapeError::data(
                &self.path,
                floxlog_core::Error::new(
                    floxlog_core::ErrorKind::Truncated,
                    self.pos,
                    "closed segment ends inside a frame or block",
                ),
            ));
        }
        if closed && new == 0 {
            return Ok(PollOutcome::Finished);
        }
        Ok(PollOutcome::Events(new))
    }
}
