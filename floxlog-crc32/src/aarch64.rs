//! AArch64 PMULL kernels (NEON + AES): the same folding as `x86.rs`, one
//! buffer and four interleaved lanes. The final reduction runs on scalars
//! (`constants::reduce_with`) with PMULL as the multiply; it is once per
//! CRC. Every load takes a `&[u8; 16]`, so nothing is read past a slice.

use core::arch::aarch64::*;

use crate::constants::{reduce_with, FOLD_128, FOLD_256, FOLD_384, FOLD_512};
use crate::table;

#[inline]
#[target_feature(enable = "neon,aes")]
fn load(chunk: &[u8; 16]) -> uint64x2_t {
    // SAFETY: `chunk` is 16 readable bytes; `vld1q_u8` needs no alignment.
    vreinterpretq_u64_u8(unsafe { vld1q_u8(chunk.as_ptr()) })
}

#[inline]
#[target_feature(enable = "neon,aes")]
fn clmul(a: u64, b: u64) -> u128 {
    vmull_p64(a, b)
}

/// `x` moved forward by the distance the constant pair `k` encodes.
#[inline]
#[target_feature(enable = "neon,aes")]
fn fold(x: uint64x2_t, k: [u64; 2]) -> uint64x2_t {
    let a = clmul(vgetq_lane_u64::<0>(x), k[0]);
    let b = clmul(vgetq_lane_u64::<1>(x), k[1]);
    veorq_u64(vreinterpretq_u64_p128(a), vreinterpretq_u64_p128(b))
}

#[inline]
#[target_feature(enable = "neon,aes")]
fn fold_xor(x: uint64x2_t, k: [u64; 2], chunk: &[u8; 16]) -> uint64x2_t {
    veorq_u64(fold(x, k), load(chunk))
}

/// Folds `chunks` into `x` (which holds at least one chunk already).
#[inline]
#[target_feature(enable = "neon,aes")]
fn fold_chunks(mut x: uint64x2_t, mut chunks: &[[u8; 16]]) -> uint64x2_t {
    if chunks.len() >= 4 {
        let mut x0 = fold_xor(x, FOLD_128, &chunks[0]);
        let mut x1 = load(&chunks[1]);
        let mut x2 = load(&chunks[2]);
        let mut x3 = load(&chunks[3]);
        let (blocks, rest) = chunks[4..].as_chunks::<4>();
        for b in blocks {
            x0 = fold_xor(x0, FOLD_512, &b[0]);
            x1 = fold_xor(x1, FOLD_512, &b[1]);
            x2 = fold_xor(x2, FOLD_512, &b[2]);
            x3 = fold_xor(x3, FOLD_512, &b[3]);
        }
        x = veorq_u64(
            veorq_u64(fold(x0, FOLD_384), fold(x1, FOLD_256)),
            veorq_u64(fold(x2, FOLD_128), x3),
        );
        chunks = rest;
    }
    for c in chunks {
        x = fold_xor(x, FOLD_128, c);
    }
    x
}

#[inline]
#[target_feature(enable = "neon,aes")]
fn reduce(x: uint64x2_t) -> u32 {
    reduce_with(vgetq_lane_u64::<0>(x), vgetq_lane_u64::<1>(x), |a, b| {
        clmul(a, b)
    })
}

#[inline]
#[target_feature(enable = "neon,aes")]
fn first(chunk: &[u8; 16], state: u32) -> uint64x2_t {
    veorq_u64(
        load(chunk),
        vcombine_u64(vcreate_u64(u64::from(!state)), vcreate_u64(0)),
    )
}

#[inline]
#[target_feature(enable = "neon,aes")]
fn finish(x: uint64x2_t, tail: &[u8]) -> u32 {
    let r = reduce(x);
    if tail.is_empty() {
        !r
    } else {
        !table::update(r, tail)
    }
}

/// Finished CRC of `data` continuing from finished `state`.
#[target_feature(enable = "neon,aes")]
pub(crate) fn crc32_update(state: u32, data: &[u8]) -> u32 {
    let (chunks, tail) = data.as_chunks::<16>();
    let Some((c0, rest)) = chunks.split_first() else {
        return table::crc32_update(state, data);
    };
    finish(fold_chunks(first(c0, state), rest), tail)
}

/// Four CRCs: the common run of chunks in lock-step, then each lane alone.
#[target_feature(enable = "neon,aes")]
pub(crate) fn crc32_x4(data: [&[u8]; 4]) -> [u32; 4] {
    let split = data.map(|d| d.as_chunks::<16>());
    let n = split.iter().map(|(c, _)| c.len()).min().unwrap_or(0);
    if n == 0 {
        return data.map(|d| crc32_update(0, d));
    }
    let [(c0, _), (c1, _), (c2, _), (c3, _)] = split;
    let mut x = [
        first(&c0[0], 0),
        first(&c1[0], 0),
        first(&c2[0], 0),
        first(&c3[0], 0),
    ];
    for (((a, b), c), d) in c0[1..n].iter().zip(&c1[1..n]).zip(&c2[1..n]).zip(&c3[1..n]) {
        x[0] = fold_xor(x[0], FOLD_128, a);
        x[1] = fold_xor(x[1], FOLD_128, b);
        x[2] = fold_xor(x[2], FOLD_128, c);
        x[3] = fold_xor(x[3], FOLD_128, d);
    }
    let mut out = [0u32; 4];
    for ((o, x), (chunks, tail)) in out.iter_mut().zip(x).zip(split) {
        let x = if chunks.len() > n {
            fold_chunks(x, &chunks[n..])
        } else {
            x
        };
        *o = finish(x, tail);
    }
    out
}
