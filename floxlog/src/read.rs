//! Reading whole segments from memory (a mapped file or a buffer).

use floxlog_core::{BlockHeader, Error, Item, ReadOptions, Segment, SegmentHeader, MAGIC_BLOCK};

/// Largest decompressed LZ4 block this crate allocates scratch for (256 MiB;
/// the reference's own limit is 100 MiB). A larger block gets the core's
/// `BufferTooSmall` error, never an allocation of the claimed size.
pub const MAX_BLOCK_BYTES: usize = 256 << 20;

/// LZ4 cannot expand data by more than this factor (a 255-run byte encodes
/// at most 255 more bytes), so a block claiming more is damaged.
const LZ4_MAX_RATIO: u64 = 256;

/// Scratch big enough for every plausible block of a compressed segment:
/// walks the block headers (without decompressing) and takes the largest
/// `original_size` that its `compressed_size` could decode to, capped at
/// [`MAX_BLOCK_BYTES`]. Empty for uncompressed segments.
pub fn block_scratch(seg: &Segment<'_>) -> Vec<u8> {
    if !seg.is_compressed() {
        return Vec::new();
    }
    let data = seg.data();
    let end = seg.frames_end() as usize;
    let mut pos = SegmentHeader::LEN;
    let mut need = 0usize;
    while pos < end {
        let Some(h) = BlockHeader::parse(&data[pos..end]) else {
            break;
        };
        if h.magic != MAGIC_BLOCK {
            break;
        }
        let plausible = (h.compressed_size as u64 * LZ4_MAX_RATIO + 64).min(MAX_BLOCK_BYTES as u64);
        need = need.max((h.original_size as u64).min(plausible) as usize);
        pos = pos.saturating_add(BlockHeader::LEN + h.compressed_size as usize);
    }
    vec![0; need]
}

/// Reads every event of `data`, calling `f` for each; returns how many were
/// read, or the error that stopped the read together with that count.
pub fn for_each_item(
    data: &[u8],
    opts: ReadOptions,
    mut f: impl FnMut(&Item<'_>),
) -> Result<u64, (u64, Error)> {
    let seg = Segment::parse(data).map_err(|e| (0, e))?;
    let mut scratch = block_scratch(&seg);
    let mut r = seg.reader(opts, &mut scratch);
    loop {
        match r.next_item() {
            Ok(Some(item)) => f(&item),
            Ok(None) => return Ok(r.events_read()),
            Err(e) => return Err((r.events_read(), e)),
        }
    }
}
