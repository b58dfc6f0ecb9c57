//! Compressed (LZ4) blocks: the 16-byte block header, the walk over the
//! blocks of a segment, and the only LZ4 calls of the project (checked
//! decompression into caller scratch, compression into caller output).

use crate::consts::MAGIC_BLOCK;
use crate::error::{Error, ErrorKind, Result};
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

/// Largest block scratch this implementation asks a caller for (256 MiB;
/// the reference's own limit is 100 MiB). [`crate::Segment::scratch_len`]
/// never returns more, so a damaged header never costs gigabytes.
pub const MAX_SCRATCH: usize = 256 << 20;

/// LZ4 cannot expand data by more than this factor (a 255-run byte encodes
/// at most 255 more bytes), so a block claiming more is damaged.
pub const MAX_RATIO: u64 = 256;

/// A decoded block header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BlockHeader {
    /// The magic as found (`MAGIC_BLOCK` once parsed).
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

    /// A header for `event_count` frames of `original_size` bytes stored as
    /// `compressed_size` LZ4 bytes.
    pub const fn new(compressed_size: u32, original_size: u32, event_count: u16) -> BlockHeader {
        BlockHeader {
            magic: MAGIC_BLOCK,
            compressed_size,
            original_size,
            event_count,
            flags: 0,
        }
    }

    /// Decodes the first 16 bytes of `b`, which starts at byte `at` of the
    /// segment (what errors report): `Truncated` (needing 16) if shorter,
    /// `BadBlockMagic` unless the magic is `FBLK`.
    pub fn parse(b: &[u8], at: u64) -> Result<BlockHeader> {
        if b.len() < Self::LEN {
            return Err(
                Error::new(ErrorKind::Truncated, at, "data ends inside a block header")
                    .needing(Self::LEN as u64),
            );
        }
        let magic = u32_at(b, field::MAGIC);
        if magic != MAGIC_BLOCK {
            return Err(Error::new(
                ErrorKind::BadBlockMagic,
                at,
                "block magic is not FBLK",
            ));
        }
        Ok(BlockHeader {
            magic,
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

    /// Encoded length of the block: header plus LZ4 bytes.
    pub const fn block_len(&self) -> u64 {
        Self::LEN as u64 + self.compressed_size as u64
    }

    /// The most scratch decoding this block can need: `original_size`, but
    /// never more than `compressed_size` could decode to (256:1), nor
    /// [`MAX_SCRATCH`].
    pub fn scratch_needed(&self) -> usize {
        let plausible = self.compressed_size as u64 * MAX_RATIO + 64;
        (self.original_size as u64)
            .min(plausible)
            .min(MAX_SCRATCH as u64) as usize
    }
}

/// One compressed block of a segment: where it starts, its header and its
/// LZ4 bytes (a view into the segment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block<'a> {
    /// Offset of the block header in the segment.
    pub offset: u64,
    /// The header.
    pub header: BlockHeader,
    /// The `compressed_size` LZ4 bytes after the header.
    pub body: &'a [u8],
}

impl<'a> Block<'a> {
    /// The block at byte `at` of `data` (the segment's bytes up to the end
    /// of its frame area): `Truncated` if the header or the LZ4 bytes run
    /// past the end (with the bytes needed), `BadBlockMagic`.
    pub fn at(data: &'a [u8], at: u64) -> Result<Block<'a>> {
        let rest = usize::try_from(at)
            .ok()
            .and_then(|a| data.get(a..))
            .unwrap_or_default();
        let header = BlockHeader::parse(rest, at)?;
        let len = header.block_len();
        if len > rest.len() as u64 {
            return Err(Error::new(
                ErrorKind::Truncated,
                at,
                "data ends inside a compressed block (compressed_size past the end)",
            )
            .needing(at + len));
        }
        Ok(Block {
            offset: at,
            header,
            body: &rest[BlockHeader::LEN..len as usize],
        })
    }

    /// Offset just past the block.
    pub fn end(&self) -> u64 {
        self.offset + self.header.block_len()
    }

    /// Decompresses the block into the start of `scratch` and returns the
    /// `original_size` bytes of frames. `BufferTooSmall` (needing
    /// `original_size`) if the scratch is shorter; `DecompressionFailed`
    /// unless the LZ4 data decodes to exactly `original_size` bytes;
    /// `Lz4Unsupported` without the `lz4` feature. Errors report the block
    /// header's offset.
    pub fn decompress<'s>(&self, scratch: &'s mut [u8]) -> Result<&'s [u8]> {
        let orig = self.header.original_size as usize;
        let Some(dst) = scratch.get_mut(..orig) else {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                self.offset,
                "block original_size exceeds the decompression scratch",
            )
            .needing(orig as u64));
        };
        decompress_exact(self.body, dst, self.offset)?;
        Ok(dst)
    }
}

/// The blocks of a compressed segment's frame area, in file order, without
/// decompressing them. Yields each block, or the error that ends the walk
/// (then nothing).
#[derive(Clone, Debug)]
pub struct Blocks<'a> {
    data: &'a [u8],
    pos: u64,
    end: u64,
}

impl<'a> Blocks<'a> {
    /// The blocks of `data` from byte `start` to byte `end`.
    pub fn new(data: &'a [u8], start: u64, end: u64) -> Blocks<'a> {
        let end = end.min(data.len() as u64);
        Blocks {
            data: &data[..end as usize],
            pos: start,
            end,
        }
    }

    /// Where the next block would start (after an error: where it is).
    pub fn offset(&self) -> u64 {
        self.pos
    }
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Result<Block<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.end {
            return None;
        }
        match Block::at(self.data, self.pos) {
            Ok(b) => {
                self.pos = b.end();
                Some(Ok(b))
            }
            Err(e) => {
                self.end = self.pos;
                Some(Err(e))
            }
        }
    }
}

/// Worst-case LZ4 block size for `n` input bytes (the liblz4 bound,
/// `n + n/255 + 16`), saturating at `usize::MAX`.
pub const fn lz4_bound(n: usize) -> usize {
    n.saturating_add(n / 255).saturating_add(16)
}

/// Output room the writer reserves for compressing `n` bytes: liblz4's
/// bound ([`lz4_bound`]), with which the compressor never runs out of room.
pub const fn compress_bound(n: usize) -> usize {
    lz4_bound(n)
}

/// Compresses `src` as one LZ4 block into `dst` with
/// [`crate::lz4_compress`] (the bytes liblz4's `LZ4_compress_default`
/// gives, as the reference writes them); the compressed length, or
/// `BufferTooSmall` at `at` (also without the `lz4` feature, which the
/// writer refuses up front).
pub(crate) fn compress_into(src: &[u8], dst: &mut [u8], at: u64) -> Result<usize> {
    let fail = Error::new(
        ErrorKind::BufferTooSmall,
        at,
        "LZ4 compression did not fit the output buffer",
    );
    #[cfg(feature = "lz4")]
    {
        crate::lz4_compress::compress(src, dst).ok_or(fail)
    }
    #[cfg(not(feature = "lz4"))]
    {
        let _ = (src, dst);
        Err(fail)
    }
}

#[cfg(feature = "lz4")]
fn decompress_exact(src: &[u8], dst: &mut [u8], off: u64) -> Result<()> {
    match lz4_flex::block::decompress_into(src, dst) {
        Ok(n) if n == dst.len() => Ok(()),
        Ok(_) => Err(Error::new(
            ErrorKind::DecompressionFailed,
            off,
            "LZ4 block decodes to fewer bytes than original_size",
        )),
        Err(_) => Err(Error::new(
            ErrorKind::DecompressionFailed,
            off,
            "LZ4 block data is invalid or decodes past original_size",
        )),
    }
}

#[cfg(not(feature = "lz4"))]
fn decompress_exact(_src: &[u8], _dst: &mut [u8], off: u64) -> Result<()> {
    Err(Error::new(
        ErrorKind::Lz4Unsupported,
        off,
        "compressed segment, and this build has no LZ4 support (feature `lz4`)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_header_golden_bytes() {
        let h = BlockHeader::new(0x0102, 0x0a0b_0c0d, 1000);
        let mut b = [0u8; 16];
        h.emit(&mut b);
        assert_eq!(
            b,
            [b'F', b'B', b'L', b'K', 0x02, 0x01, 0, 0, 0x0d, 0x0c, 0x0b, 0x0a, 0xe8, 0x03, 0, 0]
        );
        assert_eq!(BlockHeader::parse(&b, 64), Ok(h));
        let e = BlockHeader::parse(&b[..15], 64).unwrap_err();
        assert_eq!(
            (e.kind, e.offset, e.needed),
            (ErrorKind::Truncated, 64, Some(16))
        );
        b[0] = b'X';
        assert_eq!(
            BlockHeader::parse(&b, 80).unwrap_err().kind,
            ErrorKind::BadBlockMagic
        );
    }

    #[test]
    fn walk_stops_at_a_torn_block() {
        let mut data = [0u8; 64 + 16 + 4 + 10];
        let mut hb = [0u8; 16];
        BlockHeader::new(4, 1, 1).emit(&mut hb);
        data[64..80].copy_from_slice(&hb);
        BlockHeader::new(100, 1, 1).emit(&mut hb);
        data[84..94].copy_from_slice(&hb[..10]);
        let mut it = Blocks::new(&data, 64, data.len() as u64);
        let first = it.next().unwrap().unwrap();
        assert_eq!((first.offset, first.end(), first.body.len()), (64, 84, 4));
        let e = it.next().unwrap().unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::Truncated, 84));
        assert!(it.next().is_none());
    }

    #[test]
    fn compress_bound_saturates() {
        assert_eq!(lz4_bound(255), 255 + 1 + 16);
        assert!(compress_bound(1000) >= lz4_bound(1000));
        assert!(compress_bound(u32::MAX as usize) >= lz4_bound(u32::MAX as usize));
        for huge in [u32::MAX as usize + 1, usize::MAX / 4, usize::MAX] {
            assert!(compress_bound(huge) >= lz4_bound(huge), "{huge}");
        }
    }

    #[test]
    fn scratch_needed_is_bounded_by_the_lz4_ratio() {
        assert_eq!(BlockHeader::new(10, 100, 1).scratch_needed(), 100);
        assert_eq!(BlockHeader::new(1, u32::MAX, 1).scratch_needed(), 256 + 64);
        assert_eq!(
            BlockHeader::new(u32::MAX, u32::MAX, 1).scratch_needed(),
            MAX_SCRATCH
        );
    }

    #[cfg(feature = "lz4")]
    #[test]
    fn decompress_is_exact_and_checks_the_scratch() {
        let src = [7u8; 300];
        let mut z = [0u8; 400];
        let n = compress_into(&src, &mut z, 0).unwrap();
        let mut data = [0u8; 512];
        let mut hb = [0u8; 16];
        BlockHeader::new(n as u32, 300, 1).emit(&mut hb);
        data[..16].copy_from_slice(&hb);
        data[16..16 + n].copy_from_slice(&z[..n]);
        let b = Block::at(&data[..16 + n], 0).unwrap();
        let mut scratch = [0u8; 300];
        assert_eq!(b.decompress(&mut scratch).unwrap(), &src[..]);
        let e = b.decompress(&mut [0u8; 299]).unwrap_err();
        assert_eq!((e.kind, e.needed), (ErrorKind::BufferTooSmall, Some(300)));
        BlockHeader::new(n as u32, 301, 1).emit(&mut hb);
        data[..16].copy_from_slice(&hb);
        let b = Block::at(&data[..16 + n], 0).unwrap();
        let e = b.decompress(&mut [0u8; 400]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::DecompressionFailed);
    }
}
