//! The tape-level C API, one folder per handle.

// The tape reader handle.
pub(crate) mod reader;
// The tape writer handle.
pub mod writer;
