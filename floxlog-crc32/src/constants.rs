//! Folding and reduction constants shared by the x86-64 and AArch64 kernels.
//!
//! Conventions (reflected CRC, so the first message bit is the highest power):
//! a 64-bit lane holds a polynomial of degree < 64 with bit `j` the
//! coefficient of `x^(63-j)` ("rep64"); a 128-bit register loaded from 16
//! message bytes holds bit `m` as the coefficient of `x^(127-m)`. With that
//! layout a carry-less multiply of two rep64 values, read as a 128-bit
//! register, is `x * A * B` (one extra factor of x), so a constant meant to
//! multiply by `x^e` is stored as `rep64(x^(e-1) mod P)`.
//!
//! Folding a 128-bit accumulator `H*x^64 + L` forward by `D` bits multiplies
//! its high-degree half `H` (low qword) by `x^(D+64)` and its low half `L`
//! (high qword) by `x^D`, each reduced mod P, so each fold is a pair
//! `[rep64(x^(D+63) mod P), rep64(x^(D-1) mod P)]`.
//!
//! `src/tests/constants.rs` recomputes every value from the polynomial.

// Targets without a SIMD kernel (and AArch64, which lacks the 512-bit and
// Barrett-in-register paths) leave some of these unused.
#![allow(dead_code)]

/// `rep64(x^e mod P)` for the exponents used below.
pub(crate) const fn k(e: u32) -> u64 {
    match e {
        63 => 0xb8bc_6765_0000_0000,
        95 => 0xccaa_009e_0000_0000,
        127 => 0x9ba5_4c6f_0000_0000,
        191 => 0x6567_3b46_0000_0000,
        255 => 0x01b5_fd1d_0000_0000,
        319 => 0x9570_d495_0000_0000,
        383 => 0x2a28_3862_0000_0000,
        447 => 0x69cc_fc0d_0000_0000,
        511 => 0xcad3_8e8f_0000_0000,
        575 => 0x653d_9822_0000_0000,
        2047 => 0x03f9_f863_0000_0000,
        2111 => 0x7cc8_e1e7_0000_0000,
        _ => panic!("no such constant"),
    }
}

/// `[low qword multiplier, high qword multiplier]` to fold forward `bits`.
const fn fold(bits: u32) -> [u64; 2] {
    [k(bits + 63), k(bits - 1)]
}

/// Next 16 bytes (fold-by-1).
pub(crate) const FOLD_128: [u64; 2] = fold(128);
/// Combining four accumulators: the first three move forward 384, 256, 128.
pub(crate) const FOLD_256: [u64; 2] = fold(256);
pub(crate) const FOLD_384: [u64; 2] = fold(384);
/// Four accumulators over 64-byte blocks (fold-by-4).
pub(crate) const FOLD_512: [u64; 2] = fold(512);
/// Four 512-bit accumulators over 256-byte blocks (AVX-512 fold-by-16).
pub(crate) const FOLD_2048: [u64; 2] = fold(2048);

/// Reduction of a 128-bit accumulator `X` to `X*x^32 mod P`:
/// `[rep64(x^95 mod P), rep64(x^63 mod P)]` fold it to 96 and then 64 bits.
pub(crate) const REDUCE: [u64; 2] = [k(95), k(63)];
/// Barrett step: `[rep64(floor(x^64 / P)), rep64(P)]`.
pub(crate) const BARRETT: [u64; 2] = [MU, POLY];
/// `floor(x^64 / P)` = 0x1_04D1_01DF, as rep64.
pub(crate) const MU: u64 = 0xfb80_8b20_8000_0000;
/// P = 0x1_04C1_1DB7, as rep64.
pub(crate) const POLY: u64 = 0xedb8_8320_8000_0000;

/// The whole reduction on scalars, given a carry-less multiply; the SIMD
/// kernels do the same steps in vector registers. `lo`/`hi` are the two
/// qwords of the accumulator; returns the raw CRC register.
#[inline(always)]
pub(crate) fn reduce_with(lo: u64, hi: u64, clmul: impl Fn(u64, u64) -> u128) -> u32 {
    // Y = H*x^96 + L*x^32 (< 96 bits, in bits 32..127).
    let y = clmul(lo, REDUCE[0]) ^ ((hi as u128) << 32);
    // Z = A*x^64 + B (< 64 bits, in the high qword).
    let z = ((clmul(y as u64, REDUCE[1]) ^ y) >> 64) as u64;
    // Barrett: q = floor(Zh * mu / x^32), with Zh placed as rep64(Zh*x^31)
    // so the quotient lands as rep64(q) in the low qword.
    let q = clmul((z & 0xffff_ffff) << 1, MU) as u64;
    // R = Zl + (q*P mod x^32); the product carries one factor of x, hence <<1.
    let qp = ((clmul(q, POLY) >> 64) as u64) << 1;
    ((z ^ qp) >> 32) as u32
}
