//! Checking and repairing tapes: the full integrity check ([`verify_tape`],
//! on one pass per segment: [`scan_segment`]), the summary `inspect`
//! prints ([`inspect_tape`]), recovery and re-indexing of segments
//! ([`recover_tape`], [`reindex_segment`], `repack_lz`) and manifests
//! rebuilt from the segment files ([`build_manifests`]).

pub(crate) mod inspect;
pub mod live;
pub(crate) mod rebuild;
pub(crate) mod recover;
pub(crate) mod repack;
pub(crate) mod scan;
pub(crate) mod verify;

pub use inspect::{flag_names, inspect_tape, InspectOptions, Inspection};
pub use rebuild::build_manifests;
pub use recover::{
    recover_file, recover_tape, reindex_segment, RecoverEvent, RecoverOptions, RecoverReport,
};
pub use repack::repack_lz4;
pub use scan::{scan_segment, Scanner};
// Where `verify -j` cuts a segment for its scans on several threads (the
// read engine's proven cut points).
pub use crate::tape::read::split::{range_starts, range_starts_on, ranges as split_ranges};
pub use verify::{verify_tape, verify_tape_with, VerifyReport};
