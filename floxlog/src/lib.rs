//! `floxlog`: `.floxlog` tapes on disk, on top of the `floxlog-core` codec.
//!
//! - [`owned`]: heap-owning events for parsing, buffering and merging.
//! - [`book_replay`]: order books replayed from a tape, per symbol.
//! - [`json`]: the conformance corpus's JSON-lines event schema.
//! - [`markup`]: the one escape of the HTML and XML we write.
//! - [`output`]: fast JSON-lines and CSV event writers.
//! - [`see`]: a tape at a glance: gaps a recording may have missed.
//! - [`segment`]: whole segments in memory (growable writer storage).
//! - [`read`]: reading whole segments from memory.
//! - [`tape`]: tapes (directories of segments): reading merged or in file
//!   order, writing with rotation and durability, verify, recover, rewrite.
//! - [`par`]: a worker pool that delivers results in input order.
//! - [`synth`]: synthetic market data (the `demo` tape, benchmarks).
//! - [`conformance`]: the conformance kit: a corpus loader and a runner
//!   that checks any implementation through adapter programs.

pub mod book_replay;
pub mod conformance;
pub mod json;
pub mod markup;
pub mod output;
pub mod owned;
pub mod par;
pub mod read;
pub mod see;
pub mod segment;
pub mod synth;
pub mod tape;
pub mod time;

pub use floxlog_core as core;
pub use owned::OwnedEvent;
