//! The read engine's ranges: a tape cut into byte ranges with proven cut
//! points ([`ranges::Split`], on [`super::split`]'s cut points), read on
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
//! [`super::outcome::ReadOutcome`]'s.

pub mod parallel;
pub mod ranges;

pub use parallel::{concat_order, run_parallel, run_parallel_each};
pub use ranges::{RangeEnd, RangeRead, RangeSink, Settle, Split, Track};
