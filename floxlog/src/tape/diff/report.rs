//! What a comparison of two tapes reports: the verdict, the first
//! difference (events with their differing fields, or bytes), damage found,
//! and the events per type of each tape.

use crate::tape::diff::fields::FieldDiff;
use crate::tape::dir::discover::OpenOptions;
use crate::tape::read::merge::Order;
use floxlog_core::ReadOptions;
use serde::Serialize;
use std::path::PathBuf;

/// How to compare.
#[derive(Clone, Debug, Default)]
pub struct DiffOptions {
    /// File order (segment by segment) or time order (merged).
    pub order: Order,
    /// Compare the segment files byte for byte instead of their events.
    pub bytes: bool,
    /// Torn tails (of a live or crashed writer) count as damage too.
    pub strict: bool,
    /// Codec options (CRC checks, unknown record types).
    pub read: ReadOptions,
    /// How to list each tape's segments.
    pub open: OpenOptions,
}

/// The verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DiffOutcome {
    /// Same events (or bytes).
    Identical,
    /// They differ; see [`DiffReport::first`] or [`DiffReport::bytes`].
    Different,
    /// A tape could not be read in full; see [`DiffReport::damage`].
    Damaged,
}

/// Where an event is in one tape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EventAt {
    /// Segment number in the tape's listing.
    pub segment: usize,
    /// The segment file.
    pub file: PathBuf,
    /// The frame's byte offset, or for LZ4 its block's.
    pub offset: u64,
    /// For LZ4, the frame's offset inside the decompressed block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_block: Option<u32>,
    /// Its record type.
    #[serde(rename = "type")]
    pub type_name: &'static str,
}

/// The first events that differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FirstDifference {
    /// Event number (0-based, in the compared order): how many events
    /// compared equal before it.
    pub event: u64,
    /// The event in tape A; `None` where A ended.
    pub a: Option<EventAt>,
    /// The event in tape B; `None` where B ended.
    pub b: Option<EventAt>,
    /// The fields that differ (empty when one tape ended).
    pub fields: Vec<FieldDiff>,
}

/// A tape that could not be read in full.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Damage {
    /// `"a"` or `"b"`.
    pub tape: &'static str,
    /// The segment file.
    pub file: PathBuf,
    /// The corpus error kind (`crc_mismatch`, `truncated`...).
    pub kind: String,
    /// Byte offset in the file.
    pub offset: u64,
    /// What went wrong.
    pub message: String,
    /// Events read from that segment before it.
    pub segment_events_before: u64,
    /// Events of the tape before it (file order only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<u64>,
}

/// Events per record type of one tape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TypeCounts {
    /// All events.
    pub events: u64,
    /// Frame type 1.
    pub trade: u64,
    /// Frame type 2.
    pub book_snapshot: u64,
    /// Frame type 3.
    pub book_delta: u64,
    /// Frame type 4.
    pub option_quote: u64,
    /// Frame type 5.
    pub pool_state: u64,
}

impl TypeCounts {
    #[inline]
    pub(super) fn add(&mut self, frame_type: u8) {
        self.events += 1;
        match frame_type {
            1 => self.trade += 1,
            2 => self.book_snapshot += 1,
            3 => self.book_delta += 1,
            4 => self.option_quote += 1,
            _ => self.pool_state += 1,
        }
    }
}

/// The outcome of [`diff_tapes`](super::diff_tapes).
#[derive(Clone, Debug, Serialize)]
pub struct DiffReport {
    /// The verdict.
    pub outcome: DiffOutcome,
    /// `"file"` or `"time"` (`"bytes"` for a byte comparison).
    pub mode: &'static str,
    /// Leading events (or bytes) that compared equal.
    pub equal: u64,
    /// The first differing events (event comparison).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<FirstDifference>,
    /// The first differing bytes (byte comparison).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<ByteDifference>,
    /// Damage found, in either tape.
    pub damage: Vec<Damage>,
    /// Events per type in tape A, to its end (event comparison).
    pub counts_a: TypeCounts,
    /// Events per type in tape B, to its end.
    pub counts_b: TypeCounts,
}

/// The first differing bytes of two tapes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ByteDifference {
    /// Segment number (the same in both listings).
    pub segment: usize,
    /// The file in tape A (`None`: A has fewer segments).
    pub file_a: Option<PathBuf>,
    /// The file in tape B (`None`: B has fewer segments).
    pub file_b: Option<PathBuf>,
    /// The first differing byte offset in the files (where the shorter one
    /// ends, if one is a prefix of the other).
    pub offset: u64,
    /// What differs: `bytes`, `length`, `name` or `segment_count`.
    pub reason: &'static str,
}
