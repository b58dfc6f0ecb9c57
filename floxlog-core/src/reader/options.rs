//! The reader's settings.

use crate::event::UnknownTypes;

/// Reader settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Check every frame's CRC32 (default true).
    pub verify_crc: bool,
    /// Unknown frame types: error (default) or skip by size.
    pub unknown_types: UnknownTypes,
    /// The segment may still be growing (a writer is appending to it):
    /// data that ends inside a frame or block, or an index trailer where
    /// the frames were to go on (a writer closing the segment), ends the
    /// read with [`Reader::needs_more`](super::Reader::needs_more) instead of `Truncated`. Default
    /// false.
    pub tail: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            verify_crc: true,
            unknown_types: UnknownTypes::Reject,
            tail: false,
        }
    }
}
