//! x86-64 VPCLMULQDQ + AVX-512 kernels: the four lanes of `crc32_x4` in the
//! four 128-bit parts of one 512-bit register (one instruction does four
//! lanes' multiplies), and fold-by-16 over 256-byte blocks for long buffers.
//! Short single buffers and per-lane leftovers reuse the PCLMULQDQ code.

use core::arch::x86_64::*;

use crate::constants::{BARRETT, FOLD_128, FOLD_2048, FOLD_256, FOLD_384, FOLD_512, REDUCE};
use crate::table;
use crate::x86::{self, init, load, pair};

/// Below this many bytes the 128-bit fold-by-4 is as fast (the 512-bit
/// setup and final combine don't pay off).
const WIDE_MIN: usize = 512;

/// Four 16-byte chunks (one per lane) as one register, lane 0 lowest.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vpclmulqdq,pclmulqdq,sse4.1")]
fn load4(a: &[u8; 16], b: &[u8; 16], c: &[u8; 16], d: &[u8; 16]) -> __m512i {
    let lo = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(load(a)), load(b));
    let hi = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(load(c)), load(d));
    _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
}

/// 64 consecutive bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vpclmulqdq,pclmulqdq,sse4.1")]
fn load64(block: &[[u8; 16]; 4]) -> __m512i {
    // SAFETY: `block` is 64 readable bytes; `loadu` needs no alignment.
    unsafe { _mm512_loadu_si512(block.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vpclmulqdq,pclmulqdq,sse4.1")]
fn wide(k: [u64; 2]) -> __m512i {
    _mm512_broadcast_i32x4(pair(k))
}

/// Each 128-bit part of `x` moved forward by `k`'s distance, plus `next`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vpclmulqdq,pclmulqdq,sse4.1")]
fn fold_xor(x: __m512i, k: __m512i, next: __m512i) -> __m512i {
    _mm512_ternarylogic_epi64::<0x96>(
        _mm512_clmulepi64_epi128::<0x00>(x, k),
        _mm512_clmulepi64_epi128::<0x11>(x, k),
        next,
    )
}

/// `x86::reduce` on each 128-bit part: four raw CRC registers.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vpclmulqdq,pclmulqdq,sse4.1")]
fn reduce4(x: __m512i) -> [u32; 4] {
    let k = wide(REDUCE);
    let kb = wide(BARRETT);
    // Byte shift within each part, then clear dword 0 of each part.
    let l = _mm512_maskz_mov_epi32(0xEEEE, _mm512_bsrli_epi128::<4>(x));
    let y = _mm512_xor_si512(_mm512_clmulepi64_epi128::<0x00>(x, k), l);
    let z = _mm512_xor_si512(_mm512_clmulepi64_epi128::<0x10>(y, k), y);
    let zh = _mm512_srli_epi64::<31>(_mm512_slli_epi64::<32>(z));
    let q = _mm512_clmulepi64_epi128::<0x01>(zh, kb);
    let qp = _mm512_slli_epi64::<1>(_mm512_clmulepi64_epi128::<0x10>(q, kb));
    let r = _mm512_xor_si512(z, qp);
    // Dword 3 of each part into the low 128 bits.
    let idx = _mm512_setr_epi32(3, 7, 11, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    let v = _mm512_castsi512_si128(_mm512_permutexvar_epi32(idx, r));
    [
        _mm_cvtsi128_si32(v) as u32,
        _mm_extract_epi32::<1>(v) as u32,
        _mm_extract_epi32::<2>(v) as u32,
        _mm_extract_epi32::<3>(v) as u32,
    ]
}

/// The table over a tail, with the usual empty tail kept out of line.
#[inline(always)]
fn tail_update(reg: u32, tail: &[u8]) -> u32 {
    if tail.is_empty() {
        reg
    } else {
        table::update(reg, tail)
    }
}

/// Four CRCs, one lane per 128-bit part.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vpclmulqdq,pclmulqdq,sse4.1")]
pub(crate) fn crc32_x4(data: [&[u8]; 4]) -> [u32; 4] {
    let len = data[0].len();
    if len >= 16 && len.is_multiple_of(16) && data.iter().all(|d| d.len() == len) {
        return whole_chunks_x4(data).map(|r| !r);
    }
    let split = data.map(|d| d.as_chunks::<16>());
    let n = split.iter().map(|(c, _)| c.len()).min().unwrap_or(0);
    if n == 0 {
        return data.map(|d| x86::crc32_update(0, d));
    }
    let [(c0, _), (c1, _), (c2, _), (c3, _)] = split;
    // The init value 0xFFFFFFFF into dword 0 of every lane.
    let mut x = _mm512_xor_si512(
        load4(&c0[0], &c1[0], &c2[0], &c3[0]),
        _mm512_maskz_set1_epi32(0x1111, -1),
    );
    let k = wide(FOLD_128);
    for (((a, b), c), d) in c0[1..n].iter().zip(&c1[1..n]).zip(&c2[1..n]).zip(&c3[1..n]) {
        x = fold_xor(x, k, load4(a, b, c, d));
    }
    if split.iter().all(|(c, _)| c.len() == n) {
        let regs = reduce4(x);
        let mut out = [0u32; 4];
        for ((o, r), (_, tail)) in out.iter_mut().zip(regs).zip(split) {
            *o = !tail_update(r, tail);
        }
        return out;
    }
    let lanes = [
        _mm512_castsi512_si128(x),
        _mm512_extracti32x4_epi32::<1>(x),
        _mm512_extracti32x4_epi32::<2>(x),
        _mm512_extracti32x4_epi32::<3>(x),
    ];
    x86::finish_lanes(lanes, split, n)
}

/// Raw registers of four lanes of the same length, a multiple of 16 (>= 16).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vpclmulqdq,pclmulqdq,sse4.1")]
fn whole_chunks_x4(data: [&[u8]; 4]) -> [u32; 4] {
    let [(c0, _), (c1, _), (c2, _), (c3, _)] = data.map(|d| d.as_chunks::<16>());
    let mut x = _mm512_xor_si512(
        load4(&c0[0], &c1[0], &c2[0], &c3[0]),
        _mm512_maskz_set1_epi32(0x1111, -1),
    );
    let k = wide(FOLD_128);
    for (((a, b), c), d) in c0[1..].iter().zip(&c1[1..]).zip(&c2[1..]).zip(&c3[1..]) {
        x = fold_xor(x, k, load4(a, b, c, d));
    }
    reduce4(x)
}

/// One buffer: fold-by-16 (four 512-bit accumulators over 256-byte blocks)
/// when long, else the 128-bit kernel.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vpclmulqdq,pclmulqdq,sse4.1")]
pub(crate) fn crc32_update(state: u32, data: &[u8]) -> u32 {
    if data.len() < WIDE_MIN {
        return x86::crc32_update(state, data);
    }
    let (chunks, tail) = data.as_chunks::<16>();
    let (blocks, rest) = chunks.as_chunks::<4>();
    // blocks.len() >= 8 here.
    let mut z = [
        _mm512_xor_si512(load64(&blocks[0]), _mm512_zextsi128_si512(init(state))),
        load64(&blocks[1]),
        load64(&blocks[2]),
        load64(&blocks[3]),
    ];
    let (quads, extra) = blocks[4..].as_chunks::<4>();
    let k2048 = wide(FOLD_2048);
    for q in quads {
        z[0] = fold_xor(z[0], k2048, load64(&q[0]));
        z[1] = fold_xor(z[1], k2048, load64(&q[1]));
        z[2] = fold_xor(z[2], k2048, load64(&q[2]));
        z[3] = fold_xor(z[3], k2048, load64(&q[3]));
    }
    // One 512-bit accumulator, then the leftover 64-byte blocks.
    let k512 = wide(FOLD_512);
    let mut acc = fold_xor(z[0], k512, z[1]);
    acc = fold_xor(acc, k512, z[2]);
    acc = fold_xor(acc, k512, z[3]);
    for b in extra {
        acc = fold_xor(acc, k512, load64(b));
    }
    // Its four parts are consecutive 16-byte positions: fold them into one.
    let x = _mm_xor_si128(
        _mm_xor_si128(
            x86::fold(_mm512_castsi512_si128(acc), pair(FOLD_384)),
            x86::fold(_mm512_extracti32x4_epi32::<1>(acc), pair(FOLD_256)),
        ),
        _mm_xor_si128(
            x86::fold(_mm512_extracti32x4_epi32::<2>(acc), pair(FOLD_128)),
            _mm512_extracti32x4_epi32::<3>(acc),
        ),
    );
    let x = x86::fold_chunks(x, rest);
    !table::update(x86::reduce(x), tail)
}
