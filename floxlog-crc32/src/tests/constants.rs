//! The folding constants and the reduction, recomputed from the polynomial.

use super::Rng;
use crate::constants::{self, k, BARRETT, FOLD_128, FOLD_2048, FOLD_256, FOLD_384, FOLD_512};

/// P = x^32 + x^26 + x^23 + x^22 + x^16 + x^12 + x^11 + x^10 + x^8 + x^7 +
/// x^5 + x^4 + x^2 + x + 1, bit i = coefficient of x^i.
const P: u64 = (1 << 32)
    | (1 << 26)
    | (1 << 23)
    | (1 << 22)
    | (1 << 16)
    | (1 << 12)
    | (1 << 11)
    | (1 << 10)
    | (1 << 8)
    | (1 << 7)
    | (1 << 5)
    | (1 << 4)
    | (1 << 2)
    | (1 << 1)
    | 1;

/// x^e mod P by repeated multiplication by x.
fn xpow_mod(e: u32) -> u64 {
    let mut r: u64 = 1;
    for _ in 0..e {
        r <<= 1;
        if r & (1 << 32) != 0 {
            r ^= P;
        }
    }
    r
}

/// rep64: bit j holds the coefficient of x^(63-j).
fn rep64(normal: u64) -> u64 {
    normal.reverse_bits()
}

/// Carry-less multiply in software.
fn soft_clmul(a: u64, b: u64) -> u128 {
    let mut r = 0u128;
    for i in 0..64 {
        if (b >> i) & 1 == 1 {
            r ^= (a as u128) << i;
        }
    }
    r
}

#[test]
fn polynomial_matches_reflected_constant() {
    assert_eq!((P as u32).reverse_bits(), 0xEDB8_8320);
    assert_eq!(rep64(P), constants::POLY);
}

#[test]
fn fold_constants_are_powers_of_x_mod_p() {
    for e in [63, 95, 127, 191, 255, 319, 383, 447, 511, 575, 2047, 2111] {
        assert_eq!(k(e), rep64(xpow_mod(e)), "x^{e} mod P");
    }
    for (d, pair) in [
        (128, FOLD_128),
        (256, FOLD_256),
        (384, FOLD_384),
        (512, FOLD_512),
        (2048, FOLD_2048),
    ] {
        assert_eq!(
            pair,
            [rep64(xpow_mod(d + 63)), rep64(xpow_mod(d - 1))],
            "fold {d}"
        );
    }
}

#[test]
fn barrett_constant_is_x64_div_p() {
    // Long division of x^64 by P.
    let mut rem: u128 = 1 << 64;
    let mut q: u64 = 0;
    for s in (0..=32).rev() {
        if rem & (1u128 << (s + 32)) != 0 {
            rem ^= (P as u128) << s;
            q |= 1 << s;
        }
    }
    assert!(rem < (1 << 32));
    assert_eq!(rep64(q), constants::MU);
    assert_eq!(BARRETT, [constants::MU, constants::POLY]);
}

/// A fold is a multiplication by x^D mod P: check the folded value against
/// the original on random registers, via the table (which knows nothing of
/// folding). Then the whole reduction, in software, against the table.
#[test]
fn fold_and_reduce_agree_with_table() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..2000 {
        let lo = rng.next();
        let hi = rng.next();
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&lo.to_le_bytes());
        bytes[8..].copy_from_slice(&hi.to_le_bytes());
        let reg = crate::table::update(0, &bytes);
        assert_eq!(constants::reduce_with(lo, hi, soft_clmul), reg);
        // X * x^128 followed by 16 zero bytes: fold once, reduce.
        let folded = soft_clmul(lo, FOLD_128[0]) ^ soft_clmul(hi, FOLD_128[1]);
        let mut msg = [0u8; 32];
        msg[..16].copy_from_slice(&bytes);
        assert_eq!(
            constants::reduce_with(folded as u64, (folded >> 64) as u64, soft_clmul),
            crate::table::update(0, &msg)
        );
    }
}
