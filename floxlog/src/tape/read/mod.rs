//! The read engine: a tape's events merged in time order or in file order
//! ([`TapeReader`]), each segment mapped ([`SegmentFile`]), a read's
//! judged outcome ([`ReadOutcome`]), following a live segment
//! ([`Follower`]), and ranges: a tape cut into byte ranges with proven cut
//! points ([`ranges::Split`], on `crate::tape::read::split`'s cut points, proven
//! before the reads or by them), read on
//! several threads with results handed back in order
//! ([`parallel::run_parallel`], or streamed as they complete:
//! [`parallel::run_parallel_each`], which `verify -j` and `convert -j`
//! use), and put back together as a sequential
//! read would give them: in file order by concatenation; in time order by
//! concatenation when the ranges do not overlap in time
//! ([`parallel::concat_order`]), otherwise by the caller falling back to a
//! [`super::TapeReader`].
//!
//! Front ends (Arrow tables and exports, ...) supply only a sink for the
//! events of a range; every judgement (where a range ends, which ranges a
//! sequential read reaches, the problems and their event counts) is made
//! here, once; whether those problems are errors or warnings is
//! [`crate::tape::read::outcome::ReadOutcome`]'s.

pub(crate) mod follow;
pub(crate) mod merge;
pub(crate) mod outcome;
pub(crate) mod parallel;
pub(crate) mod problem;
pub(crate) mod ranges;
pub(crate) mod read_ahead;
pub(crate) mod shortfall;
pub(crate) mod source;
pub(crate) mod split;
pub(crate) mod track;

pub use follow::{Follower, PollOutcome};
pub use merge::{
    Filter, OpenedTape, Order, ReadConfig, SegmentTrades, TapeReader, TradeRun,
    DEFAULT_REORDER_BYTES,
};
pub use outcome::{Judged, Kept, ReadOutcome};
pub use parallel::{concat_order, run_parallel, run_parallel_each};
pub use problem::Problem;
pub use ranges::{RangeEnd, RangeRead, RangeSink, Settle, Split};
pub use read_ahead::{read_ahead, read_ahead_in, Ahead};
pub use source::{header_is_unfinished, SegmentFile};
pub use split::{range_starts, range_starts_on, ranges as split_ranges};
pub use track::Track;
