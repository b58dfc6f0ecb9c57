//! The tape-level C API, one folder per handle.

pub mod writer;
