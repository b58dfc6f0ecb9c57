//! floxlog-core's LZ4 compressor against liblz4's `LZ4_compress_default`
//! (lz4-sys, liblz4 1.10.0): the same bytes, or both giving up when the
//! output room is short, and our block decompresses back to the input
//! (lz4_flex's checked decoder, the one the reader uses).
#![no_main]

use floxlog_core::lz4_compress::{compress, lz4_bound};
use libfuzzer_sys::fuzz_target;
use std::os::raw::c_int;

fuzz_target!(|data: &[u8]| {
    // First byte: 0..=191 gives the full bound as room; else the room is
    // the bound minus up to 64 bytes, to reach liblz4's give-up checks.
    let Some((&mode, src)) = data.split_first() else {
        return;
    };
    let bound = lz4_bound(src.len());
    let cap = if mode < 192 {
        bound
    } else {
        bound.saturating_sub(usize::from(mode - 191) * src.len().div_ceil(64).max(1))
    };
    let mut theirs = vec![0u8; cap];
    // SAFETY: both buffers are valid for the lengths given.
    let n = unsafe {
        lz4_sys::LZ4_compress_default(
            src.as_ptr().cast(),
            theirs.as_mut_ptr().cast(),
            src.len() as c_int,
            cap as c_int,
        )
    };
    let mut ours = vec![0u8; cap];
    let m = compress(src, &mut ours);
    assert_eq!(m, usize::try_from(n).ok().filter(|&n| n > 0));
    let Some(m) = m else { return };
    assert!(ours[..m] == theirs[..m], "bytes differ from liblz4's");
    let mut back = vec![0u8; src.len()];
    assert_eq!(
        lz4_flex::block::decompress_into(&ours[..m], &mut back).ok(),
        Some(src.len())
    );
    assert!(back == src);
});
