//! The read engine. Front ends read through one [`Session`]: a
//! [`Request`] (order, [`Filter`], reorder bound, codec options,
//! strictness, threads), the plan decided before any decoding, and one
//! outcome ([`Session::error`]) that folds listing findings, open errors
//! and read problems ([`Problem`], judged by [`ReadOutcome`]). Its outputs
//! are its methods: events one at a time ([`Session::events`], each an
//! [`Item`]; or pulled from [`Session::cursor`], whose [`Events`] read runs
//! of trades ahead through the core's batch kernel: `cat`, the C tape
//! reader), frames ([`Session::frames`]), every event into a
//! [`ColumnSink`] in one pass ([`Session::columns`]) or in pieces on
//! several threads judged as one sequential read ([`Session::pieces`],
//! each a [`Piece`]), and a dataset's [`Fragment`]s
//! ([`Session::fragments`], [`Session::read_fragment`]).
//!
//! That is the whole face. Underneath, private to the tape layer: the
//! merge in time or file order (`merge`), each segment mapped (`source`),
//! and ranges: a tape cut into byte ranges with proven cut points
//! (`ranges`, on `split`'s cut points), read on several threads with
//! results handed back in order (`parallel`), put back together as a
//! sequential read would give them (every judgement made there, once).
//! `engine` names the merge for the workspace's own tests only.

pub(crate) mod merge;
pub(crate) mod outcome;
pub(crate) mod parallel;
pub(crate) mod problem;
pub(crate) mod ranges;
pub(crate) mod session;
pub(crate) mod shortfall;
pub(crate) mod source;
pub(crate) mod split;
pub(crate) mod track;

// The face: a session, what it reads and how it went.
pub use merge::{Filter, Item, Order};
pub use outcome::{Kept, ReadOutcome};
pub use problem::Problem;
pub use ranges::ColumnSink;
pub use session::{Events, Fragment, Piece, Request, Session};

/// The engine under the session, named for the workspace's own tests,
/// fuzz targets and examples, which check it directly (the merge against
/// a plain sort, the batch kernel against per-event reads); front ends
/// read through [`Session`]. Not part of the API: it may change in any
/// release.
#[doc(hidden)]
pub mod engine {
    pub use super::merge::{OpenedTape, TapeReader};
    pub use super::session::Ahead;
    pub use super::source::header_is_unfinished;
}
