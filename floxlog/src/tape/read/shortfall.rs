//! Telling a segment cut short (damage) from the torn tail of a segment
//! being written.
//!
//! A reader tolerates a segment that ends early only when it can be a
//! writer's work in progress. A segment listed in a manifest was closed by
//! its writer, and a finished header (index or Sorted flag set, or counts
//! written) says how much follows it; a file shorter than either was cut
//! short by something else (a hand `truncate`, a disk-full clean-up), and
//! its missing events are lost, not still coming. That is damage whenever
//! no live writer holds the tape's lock: with one, the old tolerance stays
//! (a writer that is rewriting its tape is trusted to finish).

use crate::tape::dir::manifest::ManifestSegment;
use crate::tape::read::source::header_is_unfinished;
use floxlog_core::segment_header::flags;
use floxlog_core::SegmentHeader;

/// What says the segment should be longer than it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShortBy {
    /// The manifest lists it with more bytes and this many events; the
    /// second field is the event count of its header if that is finished.
    /// Cut short only if fewer events are read than listed, and the header
    /// does not account for exactly those read (a segment rewritten by
    /// recovery is complete in itself: its listing is stale, not a cut).
    Listing(u64, Option<u64>),
    /// Its finished header puts the index trailer past the end, and counts
    /// this many events: cut short only if fewer are read (the frames can
    /// be intact and the offset alone wrong: a bad index, not a cut).
    IndexOffset(u32),
    /// Its header counts events, but the file ends after the header.
    EventCount(u32),
}

/// A segment shorter than its listing or its header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Short {
    /// Bytes the file has.
    pub len: u64,
    /// Bytes it should have at least.
    pub expected: u64,
    /// Which claim says so.
    pub by: ShortBy,
}

impl Short {
    /// One line on what was found, for messages.
    pub fn describe(&self) -> String {
        match self.by {
            ShortBy::Listing(..) => format!(
                "the file has {} bytes but the manifest lists {}: the segment was cut short after its writer closed it",
                self.len, self.expected
            ),
            ShortBy::IndexOffset(_) => format!(
                "the file has {} bytes but its finished header puts the index at byte {}: the segment was cut short",
                self.len, self.expected
            ),
            ShortBy::EventCount(n) => format!(
                "the file holds only its header but the header counts {n} events: the segment was cut short"
            ),
        }
    }
}

/// What a reader knows about a segment before reading it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SegmentCheck {
    /// A live writer holds the lock of the segment's tape directory.
    pub writer_live: bool,
    /// The file is shorter than its listing or header says (only checked
    /// when no writer is live).
    pub short: Option<Short>,
}

/// Checks segment bytes `data` against its manifest entry and header.
pub fn check(listed: Option<&ManifestSegment>, data: &[u8], writer_live: bool) -> SegmentCheck {
    let mut c = SegmentCheck {
        writer_live,
        short: None,
    };
    if writer_live {
        return c;
    }
    let len = data.len() as u64;
    let header = SegmentHeader::parse(data).ok();
    if let Some(l) = listed.filter(|l| l.size_bytes > len) {
        let finished = header
            .filter(|h| !header_is_unfinished(h))
            .map(|h| u64::from(h.event_count));
        c.short = Some(Short {
            len,
            expected: l.size_bytes,
            by: ShortBy::Listing(l.event_count, finished),
        });
        return c;
    }
    // A damaged header is the reader's to report; only a readable one
    // makes a claim.
    let Some(h) = header else {
        return c;
    };
    if !header_is_unfinished(&h) && h.has(flags::HAS_INDEX) && h.index_offset > len {
        c.short = Some(Short {
            len,
            expected: h.index_offset,
            by: ShortBy::IndexOffset(h.event_count),
        });
    } else if h.event_count > 0 && len == SegmentHeader::LEN as u64 {
        // Even a live LZ4 writer's header counts only events whose block
        // is already written.
        c.short = Some(Short {
            len,
            expected: len + 1,
            by: ShortBy::EventCount(h.event_count),
        });
    }
    c
}

impl Short {
    /// Whether a read that ended cleanly after `events` events (from the
    /// segment's start) shows the cut.
    pub fn lost_events(&self, events: u64) -> bool {
        match self.by {
            ShortBy::IndexOffset(n) => events < u64::from(n),
            ShortBy::Listing(n, finished) => events < n && finished != Some(events),
            ShortBy::EventCount(_) => true,
        }
    }
}

/// The torn-tail wording of a segment (a reader's problem that is
/// tolerated): only a live writer is said to be running.
pub fn torn_why(writer_live: bool) -> &'static str {
    if writer_live {
        "its writer is still running"
    } else {
        "its writer did not close it; no writer holds the tape now"
    }
}
