//! The read engine. Front ends read through one [`Session`]: a
//! [`Request`] (inputs, filter, order, strictness, CRCs, unknown types,
//! threads), the [`Plan`] decided before any decoding, and one outcome
//! ([`Session::error`]) that folds open errors and read problems. Its
//! outputs: events pulled one at a time, runs of trades read ahead through
//! the core's batch kernel ([`Session::cursor`]: `cat`, the C tape
//! reader), frames ([`Session::frames`]), pieces read on several threads
//! into a [`ColumnSink`] and judged as one sequential read ([`pieces`]),
//! and a dataset's [`fragments`] ([`read_fragment`]).
//!
//! Underneath, and private to the tape layer: the merge in time or file
//! order ([`TapeReader`]), each segment mapped ([`SegmentFile`]), a read's
//! judged outcome ([`ReadOutcome`]), and ranges: a tape cut into byte
//! ranges with proven cut points (`ranges::Split`, on `split`'s cut
//! points), read on several threads with results handed back in order
//! (`parallel`), put back together as a sequential read would give them
//! (every judgement made there, once).

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

pub use merge::{
    Filter, Item, OpenedTape, Order, ReadConfig, TapeReader, TradeRun, DEFAULT_REORDER_BYTES,
};
pub use outcome::{Judged, Kept, ReadOutcome};
pub use problem::Problem;
pub use ranges::ColumnSink;
pub use session::{
    fragments, pieces, read_fragment, Fragment, FragmentRead, Piece, PieceRead, Pieces,
};
pub use session::{Ahead, EventAt, Events, Plan, Proof, Request, Session};
pub use source::{header_is_unfinished, SegmentFile};
