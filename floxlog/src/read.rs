//! Reading whole segments from memory (a mapped file or a buffer).

use floxlog_core::{Error, Item, ReadOptions, Segment};

/// Scratch for every block of a compressed segment, sized by the core from
/// the block headers ([`Segment::scratch_len`]: bounded by what each
/// block's compressed bytes can decode to, and by
/// [`floxlog_core::block::MAX_SCRATCH`]). Empty for uncompressed segments.
pub fn block_scratch(seg: &Segment<'_>) -> Vec<u8> {
    vec![0; seg.scratch_len()]
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
