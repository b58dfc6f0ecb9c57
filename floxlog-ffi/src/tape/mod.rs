//! The tape-level C API, one folder per handle.

// Tape-level failures: `floxlog_tape_error`.
pub(crate) mod error;

// The tape reader handle.
pub(crate) mod reader;
// The tape writer handle.
pub mod writer;

// Verify, recover and inspect a tape.
pub(crate) mod ops;

// Follow a tape as it is written.
pub(crate) mod tail;

// One symbol's book at a time.
pub(crate) mod book;

// Compare two tapes.
pub(crate) mod diff;

#[cfg(test)]
mod ahead_tests;
#[cfg(test)]
mod stats_tests;
#[cfg(test)]
mod tail_tests;
#[cfg(test)]
mod tests;
