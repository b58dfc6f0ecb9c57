//! x86-64 PCLMULQDQ kernels (SSE4.1 + PCLMUL): one buffer, and four buffers
//! interleaved so that their multiply latencies overlap.
//!
//! The math and the constants' layout are in `constants.rs`. Every 16-byte
//! load goes through [`load`], which takes a `&[u8; 16]`, so no kernel can
//! read past its slice; anything shorter than 16 bytes goes to the table.

use core::arch::x86_64::*;

use crate::constants::{BARRETT, FOLD_128, FOLD_256, FOLD_384, FOLD_512, REDUCE};
use crate::table;

/// Loads 16 message bytes (unaligned).
#[inline(always)]
pub(crate) fn load(chunk: &[u8; 16]) -> __m128i {
    // SAFETY: `chunk` is 16 readable bytes; `loadu` has no alignment
    // requirement; SSE2 is part of the x86-64 baseline.
    unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub(crate) fn pair(k: [u64; 2]) -> __m128i {
    _mm_set_epi64x(k[1] as i64, k[0] as i64)
}

/// The CRC register `!state` as a value to XOR into the first 16 bytes.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub(crate) fn init(state: u32) -> __m128i {
    _mm_cvtsi32_si128(!state as i32)
}

/// `x` moved forward by the distance the constant pair `k` encodes.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub(crate) fn fold(x: __m128i, k: __m128i) -> __m128i {
    _mm_xor_si128(
        _mm_clmulepi64_si128::<0x00>(x, k),
        _mm_clmulepi64_si128::<0x11>(x, k),
    )
}

/// Folds `chunks` into the accumulator `x` (which already holds at least
/// one chunk): fold-by-4 over 64-byte blocks, then fold-by-1.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub(crate) fn fold_chunks(mut x: __m128i, mut chunks: &[[u8; 16]]) -> __m128i {
    if chunks.len() >= 4 {
        let k512 = pair(FOLD_512);
        // x carries the prefix: it continues as the first accumulator.
        let mut x0 = _mm_xor_si128(fold(x, pair(FOLD_128)), load(&chunks[0]));
        let mut x1 = load(&chunks[1]);
        let mut x2 = load(&chunks[2]);
        let mut x3 = load(&chunks[3]);
        let (blocks, rest) = chunks[4..].as_chunks::<4>();
        for b in blocks {
            x0 = _mm_xor_si128(fold(x0, k512), load(&b[0]));
            x1 = _mm_xor_si128(fold(x1, k512), load(&b[1]));
            x2 = _mm_xor_si128(fold(x2, k512), load(&b[2]));
            x3 = _mm_xor_si128(fold(x3, k512), load(&b[3]));
        }
        x = _mm_xor_si128(
            _mm_xor_si128(fold(x0, pair(FOLD_384)), fold(x1, pair(FOLD_256))),
            _mm_xor_si128(fold(x2, pair(FOLD_128)), x3),
        );
        chunks = rest;
    }
    let k128 = pair(FOLD_128);
    for c in chunks {
        x = _mm_xor_si128(fold(x, k128), load(c));
    }
    x
}

/// The raw CRC register `X * x^32 mod P` of a 128-bit accumulator
/// (same steps as `constants::reduce_with`).
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub(crate) fn reduce(x: __m128i) -> u32 {
    let k = pair(REDUCE);
    let kb = pair(BARRETT);
    // Y = H*x^96 + L*x^32: L moves to bits 32..95, bits 0..31 cleared.
    let l = _mm_blend_epi16::<0b0000_0011>(_mm_srli_si128::<4>(x), _mm_setzero_si128());
    let y = _mm_xor_si128(_mm_clmulepi64_si128::<0x00>(x, k), l);
    // Z in the high qword (the low qword is left over and never read).
    let z = _mm_xor_si128(_mm_clmulepi64_si128::<0x10>(y, k), y);
    // Zh as rep64(Zh*x^31) in the high qword.
    let zh = _mm_srli_epi64::<31>(_mm_slli_epi64::<32>(z));
    let q = _mm_clmulepi64_si128::<0x01>(zh, kb);
    let qp = _mm_slli_epi64::<1>(_mm_clmulepi64_si128::<0x10>(q, kb));
    _mm_extract_epi32::<3>(_mm_xor_si128(z, qp)) as u32
}

/// Finished CRC of `data` continuing from finished `state`.
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub(crate) fn crc32_update(state: u32, data: &[u8]) -> u32 {
    let (chunks, tail) = data.as_chunks::<16>();
    let Some((first, rest)) = chunks.split_first() else {
        return table::crc32_update(state, data);
    };
    let x0 = _mm_xor_si128(load(first), init(state));
    // Up to four chunks (short payloads): each chunk moves forward by its
    // own distance at once, instead of a chain of folds.
    let x = match rest {
        [] => x0,
        [a] => _mm_xor_si128(fold(x0, pair(FOLD_128)), load(a)),
        [a, b] => _mm_xor_si128(
            _mm_xor_si128(fold(x0, pair(FOLD_256)), fold(load(a), pair(FOLD_128))),
            load(b),
        ),
        [a, b, c] => _mm_xor_si128(
            _mm_xor_si128(fold(x0, pair(FOLD_384)), fold(load(a), pair(FOLD_256))),
            _mm_xor_si128(fold(load(b), pair(FOLD_128)), load(c)),
        ),
        _ => fold_chunks(x0, rest),
    };
    let r = reduce(x);
    if tail.is_empty() {
        !r
    } else {
        !table::update(r, tail)
    }
}

/// Four independent CRCs. The common run of 16-byte chunks is folded in
/// lock-step (four independent dependency chains); whatever a lane has
/// beyond that continues on its own.
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub(crate) fn crc32_x4(data: [&[u8]; 4]) -> [u32; 4] {
    let len = data[0].len();
    if len >= 16 && len.is_multiple_of(16) && data.iter().all(|d| d.len() == len) {
        return whole_chunks_x4(data);
    }
    let split = data.map(|d| d.as_chunks::<16>());
    let n = split.iter().map(|(c, _)| c.len()).min().unwrap_or(0);
    if n == 0 {
        return data.map(|d| crc32_update(0, d));
    }
    let [(c0, _), (c1, _), (c2, _), (c3, _)] = split;
    let i = init(0);
    let mut x = [
        _mm_xor_si128(load(&c0[0]), i),
        _mm_xor_si128(load(&c1[0]), i),
        _mm_xor_si128(load(&c2[0]), i),
        _mm_xor_si128(load(&c3[0]), i),
    ];
    let k128 = pair(FOLD_128);
    for (((a, b), c), d) in c0[1..n].iter().zip(&c1[1..n]).zip(&c2[1..n]).zip(&c3[1..n]) {
        x[0] = _mm_xor_si128(fold(x[0], k128), load(a));
        x[1] = _mm_xor_si128(fold(x[1], k128), load(b));
        x[2] = _mm_xor_si128(fold(x[2], k128), load(c));
        x[3] = _mm_xor_si128(fold(x[3], k128), load(d));
    }
    finish_lanes(x, split, n)
}

/// Four lanes of the same length, a multiple of 16 (>= 16): the common case
/// of consecutive same-type frames, with no per-lane leftovers to handle.
/// Its fold loop repeats `crc32_x4`'s on purpose: sharing one helper that
/// takes the common length cost a third of the speed (slice bounds checks
/// on every lane; 186 -> 140 M payloads/s in `benches/crc.rs`).
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
fn whole_chunks_x4(data: [&[u8]; 4]) -> [u32; 4] {
    let [(c0, _), (c1, _), (c2, _), (c3, _)] = data.map(|d| d.as_chunks::<16>());
    let i = init(0);
    let mut x = [
        _mm_xor_si128(load(&c0[0]), i),
        _mm_xor_si128(load(&c1[0]), i),
        _mm_xor_si128(load(&c2[0]), i),
        _mm_xor_si128(load(&c3[0]), i),
    ];
    let k128 = pair(FOLD_128);
    for (((a, b), c), d) in c0[1..].iter().zip(&c1[1..]).zip(&c2[1..]).zip(&c3[1..]) {
        x[0] = _mm_xor_si128(fold(x[0], k128), load(a));
        x[1] = _mm_xor_si128(fold(x[1], k128), load(b));
        x[2] = _mm_xor_si128(fold(x[2], k128), load(c));
        x[3] = _mm_xor_si128(fold(x[3], k128), load(d));
    }
    [!reduce(x[0]), !reduce(x[1]), !reduce(x[2]), !reduce(x[3])]
}

/// `L` lanes of a length `N` fixed when compiling (the caller checks it is
/// a multiple of 16, at least 16): `L` independent fold chains in
/// lock-step, each reduced on its own; the loops unroll for `N` and `L`.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub(crate) fn crc32_same<const N: usize, const L: usize>(data: [&[u8; N]; L]) -> [u32; L] {
    // Chunk `s` of a lane; with `N` and (unrolled) `s` constants, the
    // bounds fold away.
    #[inline(always)]
    fn chunk<const N: usize>(d: &[u8; N], s: usize) -> Option<&[u8; 16]> {
        d.get(s * 16..s * 16 + 16)?.try_into().ok()
    }
    let i = init(0);
    let k128 = pair(FOLD_128);
    let mut x = [_mm_setzero_si128(); L];
    for (x, d) in x.iter_mut().zip(data) {
        if let Some(c) = chunk(d, 0) {
            *x = _mm_xor_si128(load(c), i);
        }
    }
    for s in 1..N / 16 {
        for (x, d) in x.iter_mut().zip(data) {
            if let Some(c) = chunk(d, s) {
                *x = _mm_xor_si128(fold(*x, k128), load(c));
            }
        }
    }
    let mut out = [0u32; L];
    for (o, x) in out.iter_mut().zip(x) {
        *o = !reduce(x);
    }
    out
}

/// Folds each lane's chunks past the first `n`, reduces, and runs the tails.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub(crate) fn finish_lanes(
    x: [__m128i; 4],
    split: [(&[[u8; 16]], &[u8]); 4],
    n: usize,
) -> [u32; 4] {
    let mut out = [0u32; 4];
    for ((o, x), (chunks, tail)) in out.iter_mut().zip(x).zip(split) {
        let x = if chunks.len() > n {
            fold_chunks(x, &chunks[n..])
        } else {
            x
        };
        let r = reduce(x);
        *o = if tail.is_empty() {
            !r
        } else {
            !table::update(r, tail)
        };
    }
    out
}
