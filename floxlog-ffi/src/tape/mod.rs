//! The tape API's handles, one folder each.

// The tape reader handle.
pub(crate) mod reader;
