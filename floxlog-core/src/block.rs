//! The 16-byte header of a compressed (LZ4) block.

use crate::consts::MAGIC_BLOCK;
use crate::le::{put_u16, put_u32, u16_at, u32_at};

/// Byte offsets of the block header fields.
pub mod field {
    /// `u32` magic, `FBLK`.
    pub const MAGIC: usize = 0;
    /// `u32` LZ4 bytes after the header.
    pub const COMPRESSED_SIZE: usize = 4;
    /// `u32` decompressed bytes.
    pub const ORIGINAL_SIZE: usize = 8;
    /// `u16` frames in the block.
    pub const EVENT_COUNT: usize = 12;
    /// `u16` reserved (0 from the reference writer).
    pub const FLAGS: usize = 14;
}

/// A decoded block header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BlockHeader {
    /// The magic as found (`MAGIC_BLOCK` in a valid block).
    pub magic: u32,
    /// Bytes of raw LZ4 block data after the header.
    pub compressed_size: u32,
    /// Bytes of frame stream the LZ4 data decodes to.
    pub original_size: u32,
    /// Frames in the block.
    pub event_count: u16,
    /// Reserved.
    pub flags: u16,
}

impl BlockHeader {
    /// Encoded length.
    pub const LEN: usize = 16;

    /// Decodes the first 16 bytes of `b`; `None` if shorter.
    pub fn parse(b: &[u8]) -> Option<BlockHeader> {
        if b.len() < Self::LEN {
            return None;
        }
        Some(BlockHeader {
            magic: u32_at(b, field::MAGIC),
            compressed_size: u32_at(b, field::COMPRESSED_SIZE),
            original_size: u32_at(b, field::ORIGINAL_SIZE),
            event_count: u16_at(b, field::EVENT_COUNT),
            flags: u16_at(b, field::FLAGS),
        })
    }

    /// Encodes into `out[..16]` with the `FBLK` magic.
    pub fn emit(&self, out: &mut [u8; 16]) {
        put_u32(out, field::MAGIC, MAGIC_BLOCK);
        put_u32(out, field::COMPRESSED_SIZE, self.compressed_size);
        put_u32(out, field::ORIGINAL_SIZE, self.original_size);
        put_u16(out, field::EVENT_COUNT, self.event_count);
        put_u16(out, field::FLAGS, self.flags);
    }
}

/// Worst-case LZ4 block size for `n` input bytes (the liblz4 bound,
/// `n + n/255 + 16`).
pub const fn lz4_bound(n: usize) -> usize {
    n + n / 255 + 16
}
