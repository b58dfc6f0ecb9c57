//! Tapes: directories of segment files, and the operations users run on
//! them, in folders by job:
//!
//! - [`dir`]: a tape directory: finding its segments, `manifest.json` and
//!   flox's manifest, the tape lock, opening files safely.
//! - [`read`]: the read engine behind one read session ([`Session`]):
//!   merged or file-order reads, the ranges read on several threads,
//!   read-ahead, and a read's judged outcome.
//! - [`check`]: verify, scan, inspect, recover and reindex, rebuild
//!   manifests, re-pack LZ4 blocks.
//! - [`diff`]: comparing two tapes.
//! - [`tail`]: live tailing across rotations.
//! - [`writer`] (with its journal mode): writing with rotation and
//!   durability.
//! - [`remote`]: tapes on object storage (`s3://`), read in place.
//! - `wake`: the tape's shared wake page (a journal writer wakes its
//!   sleeping tailers through it).
//!
//! Shared by all: errors ([`TapeError`]), hints ([`Hint`]) and findings
//! ([`Finding`]). Each folder's `mod.rs` is its public face; front ends use
//! the faces and the re-exports here, not the files inside.

pub mod check;
pub mod diff;
pub mod dir;
mod error;
mod hint;
mod journal;
pub mod read;
pub mod remote;
mod report;
pub mod tail;
pub(crate) mod wake;
/// The wake page's file name in a tape directory (beside the lock file).
pub use wake::WAKE_FILE;
pub mod writer;

pub use dir::{Layout, OpenOptions, Tape, TapeSegment};
pub use dir::{Manifest, ManifestSegment};
pub use error::{TapeError, TapeErrorKind};
pub use hint::{set_program_vocabulary, Hint, Neutral, Remedy, Vocabulary};
pub use read::{Filter, Kept, Order, ReadOutcome, Request, Session};
pub use report::{Finding, FindingKind, Severity};
pub use tail::{
    SeriesPosition, Tail, TailNext, TailOptions, TailPosition, TailStart, TailTrades, WaitStrategy,
};
pub use writer::{
    Appender, CpuSet, Durability, TapeWriter, TapeWriterConfig, TapeWriterCounts, TapeWriterHealth,
};
