//! The codec-level C API: writer, reader, standalone frames and segment
//! queries over caller buffers, and the C structs of the records.

// Standalone frames and block headers.
pub(crate) mod frame;

// The reader handle.
pub(crate) mod reader;

// Segment queries without a reader (scratch size, header).
pub(crate) mod segment;

// The C structs.
pub(crate) mod types;

// The writer handle.
pub(crate) mod writer;

// Buffer size helpers.
pub(crate) mod sizes;

// Order books over caller storage.
pub(crate) mod book;

// Internal: no C items.
pub(crate) mod chunks;
pub(crate) mod event;
pub(crate) mod records;
