//! Tapes: directories of segment files, and the operations users run on
//! them (read merged or in file order, write with rotation and durability,
//! verify, recover, rewrite, rebuild manifests, follow a live segment).

pub mod diff;
mod diff_bytes;
mod diff_fields;
pub mod dir;
pub mod error;
pub mod files;
pub mod flox_manifest;
pub mod follow;
pub mod hint;
pub mod inspect;
mod journal;
pub mod lock;
pub mod manifest;
pub mod merge;
pub mod outcome;
pub mod read;
pub mod read_ahead;
pub mod rebuild;
pub mod recover;
pub mod repack;
pub mod report;
pub mod scan;
pub mod shortfall;
pub mod source;
pub mod split;
pub mod tail;
pub mod time;
pub mod verify;
pub mod writer;

pub use dir::{Layout, OpenOptions, Tape, TapeSegment};
pub use error::{TapeError, TapeErrorKind};
pub use hint::{Hint, Neutral, Remedy, Vocabulary};
pub use manifest::{Manifest, ManifestSegment};
pub use merge::{Filter, OpenedTape, Order, ReadConfig, TapeReader};
pub use outcome::{Judged, Kept, ReadOutcome};
pub use report::{Finding, FindingKind, Severity};
pub use tail::{
    SeriesPosition, Tail, TailNext, TailOptions, TailPosition, TailStart, TailTrades, WaitStrategy,
};
pub use writer::{Durability, TapeWriter, TapeWriterConfig};
