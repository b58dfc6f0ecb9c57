//! `floxlog`: `.floxlog` tapes on disk, on top of the `floxlog-core` codec.
//!
//! - [`owned`]: heap-owning events for parsing, buffering and merging.
//! - [`json`]: the conformance corpus's JSON-lines event schema.
//! - [`segment`]: whole segments in memory (growable writer storage).
//! - [`corpus`]: loading a conformance corpus laid out like
//!   `shared/conformance/`, and [`conformance`]: running it.

pub mod conformance;
pub mod corpus;
pub mod json;
pub mod owned;
pub mod read;
pub mod segment;

pub use floxlog_core as core;
pub use owned::OwnedEvent;
