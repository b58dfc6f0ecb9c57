//! Every kernel (and the public, dispatched API) against the `crc` crate.

use super::{kernels, reference, Rng};
use crate::{crc32, crc32_table, crc32_update, crc32_x4};
use proptest::prelude::*;
use std::vec::Vec;

/// Lengths to try: all of 0..=300 and a random sample up to 4096.
fn lengths(rng: &mut Rng) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=300).collect();
    v.extend([511, 512, 513, 1023, 1024, 1025, 4095, 4096]);
    for _ in 0..60 {
        v.push(rng.below(4097));
    }
    v
}

#[test]
fn check_value() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32_table(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
    for (name, update, x4) in kernels() {
        assert_eq!(update(0, b"123456789"), 0xCBF4_3926, "{name}");
        let long = [b'a'; 100];
        assert_eq!(update(0, &long), reference(&long), "{name}");
        let got = x4([b"123456789", b"", &long, &long[..48]]);
        assert_eq!(
            got,
            [0xCBF4_3926, 0, reference(&long), reference(&long[..48])],
            "{name}"
        );
    }
}

#[test]
fn every_kernel_every_alignment() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let buf = rng.bytes(4096 + 64);
    let lens = lengths(&mut rng);
    let ks = kernels();
    std::eprintln!(
        "kernels tested: {:?}",
        ks.iter().map(|k| k.0).collect::<Vec<_>>()
    );
    for align in 0..64 {
        for &len in &lens {
            let d = &buf[align..align + len];
            let want = reference(d);
            for (name, update, _) in &ks {
                assert_eq!(update(0, d), want, "{name} len {len} align {align}");
            }
            assert_eq!(crc32(d), want);
            assert_eq!(crc32_table(d), want);
        }
    }
}

#[test]
fn update_at_random_splits() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    let buf = rng.bytes(4096 + 64);
    let ks = kernels();
    for _ in 0..3000 {
        let align = rng.below(64);
        let len = rng.below(4097);
        let d = &buf[align..align + len];
        let want = reference(d);
        let a = rng.below(len + 1);
        let b = a + rng.below(len - a + 1);
        for (name, update, _) in &ks {
            let s = update(update(update(0, &d[..a]), &d[a..b]), &d[b..]);
            assert_eq!(s, want, "{name} len {len} splits {a} {b}");
            // A non-zero starting state continues the same way.
            assert_eq!(update(update(0, &d[..a]), &d[a..]), want, "{name}");
        }
        assert_eq!(
            crc32_update(crc32_update(crc32(&d[..a]), &d[a..b]), &d[b..]),
            want
        );
        assert_eq!(crc32_update(0, d), want);
    }
}

#[test]
fn x4_equal_and_unequal_lengths() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let buf = rng.bytes(4 * 4200);
    let ks = kernels();
    for round in 0..4000 {
        let equal = round % 2 == 0;
        let max = if round % 3 == 0 { 4097 } else { 300 };
        let l0 = rng.below(max);
        let mut lanes: [&[u8]; 4] = [&[]; 4];
        for (i, lane) in lanes.iter_mut().enumerate() {
            let len = if equal { l0 } else { rng.below(max) };
            // Some empty lanes on purpose.
            let len = if rng.below(10) == 0 { 0 } else { len };
            let start = i * 4200 + rng.below(64);
            *lane = &buf[start..start + len];
        }
        let want = lanes.map(reference);
        for (name, _, x4) in &ks {
            assert_eq!(x4(lanes), want, "{name} lens {:?}", lanes.map(<[u8]>::len));
        }
        assert_eq!(crc32_x4(lanes), want);
    }
}

#[test]
fn x4_consecutive_frames() {
    // The format's layout: 16-byte header, 48-byte payload, repeated.
    let mut rng = Rng(42);
    let buf = rng.bytes(64 * 64);
    let payloads: Vec<&[u8]> = buf.chunks_exact(64).map(|f| &f[16..]).collect();
    for (name, _, x4) in kernels() {
        for g in payloads.chunks_exact(4) {
            let lanes = [g[0], g[1], g[2], g[3]];
            assert_eq!(x4(lanes), lanes.map(reference), "{name}");
        }
    }
}

proptest! {
    #[test]
    fn prop_lanes_and_splits(
        data in proptest::collection::vec(any::<u8>(), 0..2500),
        cuts in proptest::collection::vec(any::<usize>(), 8),
    ) {
        let n = data.len();
        let mut lanes: [&[u8]; 4] = [&[]; 4];
        for (i, lane) in lanes.iter_mut().enumerate() {
            let a = cuts[2 * i] % (n + 1);
            let b = a + cuts[2 * i + 1] % (n - a + 1);
            *lane = &data[a..b];
        }
        let want = lanes.map(reference);
        for (name, update, x4) in kernels() {
            prop_assert_eq!(x4(lanes), want, "{}", name);
            let split = cuts[0] % (n + 1);
            prop_assert_eq!(update(update(0, &data[..split]), &data[split..]), reference(&data), "{}", name);
        }
        prop_assert_eq!(crc32_x4(lanes), want);
    }
}
