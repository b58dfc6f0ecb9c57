//! `floxlog_core::lz4_compress` against liblz4's `LZ4_compress_default`
//! (the compressor the flox reference writes its blocks with), byte for
//! byte: every LZ4 block of the conformance corpus, sizes 0..300 and the
//! sizes around liblz4's switch of table mode, and random inputs of many
//! sizes and entropies. liblz4 is the C source bundled in `lz4-sys`
//! (1.10.0, checked below).
#![cfg(feature = "lz4")]

use floxlog_core::lz4_compress::{compress, compress_with, lz4_bound, CompressTable};
use floxlog_core::Segment;
use proptest::prelude::*;
use std::os::raw::{c_char, c_int};
use std::path::{Path, PathBuf};

extern "C" {
    fn LZ4_versionString() -> *const c_char;
}

/// liblz4's output for `src` into `cap` bytes (`None` where it returns 0).
fn liblz4(src: &[u8], cap: usize) -> Option<Vec<u8>> {
    let mut out = vec![0u8; cap];
    // SAFETY: both pointers are valid for the lengths given.
    let n = unsafe {
        lz4_sys::LZ4_compress_default(
            src.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            src.len() as c_int,
            cap as c_int,
        )
    };
    if n <= 0 {
        return None;
    }
    out.truncate(n as usize);
    Some(out)
}

fn ours(src: &[u8], cap: usize) -> Option<Vec<u8>> {
    let mut out = vec![0u8; cap];
    let n = compress(src, &mut out)?;
    out.truncate(n);
    Some(out)
}

fn decompress(z: &[u8], len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    assert_eq!(
        lz4_flex::block::decompress_into(z, &mut out).ok(),
        Some(len)
    );
    out
}

/// Ours equals liblz4's with room to spare, and it decodes back to `src`.
fn check(src: &[u8]) -> Vec<u8> {
    let cap = lz4_bound(src.len());
    let theirs = liblz4(src, cap).expect("liblz4 compresses within its bound");
    let mine = ours(src, cap).expect("compresses within the bound");
    assert!(
        mine == theirs,
        "{} input bytes: ours {} bytes, liblz4 {} bytes, first difference at {:?}",
        src.len(),
        mine.len(),
        theirs.len(),
        mine.iter().zip(&theirs).position(|(a, b)| a != b)
    );
    assert_eq!(decompress(&mine, src.len()), src);
    mine
}

fn corpus() -> PathBuf {
    std::env::var_os("FLOXLOG_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance"))
}

/// Segment files under `dir/*/segments/`.
fn segments(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for case in std::fs::read_dir(dir).unwrap() {
        let case = case.unwrap().path();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with(prefix) {
            continue;
        }
        for f in std::fs::read_dir(case.join("segments")).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "floxlog") {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn liblz4_is_1_10_0() {
    // SAFETY: liblz4 returns a static NUL-terminated string.
    let v = unsafe { std::ffi::CStr::from_ptr(LZ4_versionString()) };
    assert_eq!(v.to_str().unwrap(), "1.10.0");
    assert_eq!(unsafe { lz4_sys::LZ4_versionNumber() }, 11000);
}

/// Every LZ4 block the reference wrote: decompressed, recompressed by us
/// and by liblz4, all three equal.
#[test]
fn corpus_blocks_recompress_to_the_reference_bytes() {
    let root = corpus();
    let mut files = segments(&root.join("cases"), "lz4-");
    files.extend(segments(&root.join("real"), ""));
    let mut blocks = 0;
    let mut compressed_files = 0;
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let seg = Segment::parse(&data).unwrap();
        if !seg.is_compressed() {
            continue;
        }
        compressed_files += 1;
        let mut scratch = vec![0u8; seg.scratch_len()];
        for b in seg.blocks() {
            let b = b.unwrap();
            let raw = b.decompress(&mut scratch).unwrap().to_vec();
            let mine = check(&raw);
            assert!(
                mine == b.body,
                "{}: block at {} differs from the reference's",
                f.display(),
                b.offset
            );
            blocks += 1;
        }
    }
    eprintln!("{compressed_files} LZ4 segments, {blocks} blocks");
    assert!(compressed_files >= 4, "corpus LZ4 segments: {files:?}");
    assert!(blocks >= 8, "{blocks} blocks");
}

/// Deterministic pseudo-random bytes (xorshift).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// 48-byte trade-like records whose fields change a little each time.
fn trades(seed: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 48);
    let mut r = noise(seed, len / 48 + 1).into_iter();
    let mut ts = 1_700_000_000_000_000_000u64.wrapping_add(seed);
    let mut price = 100_000_000_000u64;
    let mut id = seed.wrapping_mul(1000);
    while out.len() < len {
        let d = r.next().unwrap_or(0);
        ts = ts.wrapping_add(u64::from(d) * 1000);
        price = price.wrapping_add(u64::from(d % 7)).wrapping_sub(3);
        id = id.wrapping_add(1);
        out.extend_from_slice(&[1, 1, 40, 0]);
        out.extend_from_slice(&(ts as u32).to_le_bytes());
        out.extend_from_slice(&ts.to_le_bytes());
        out.extend_from_slice(&price.to_le_bytes());
        out.extend_from_slice(&(1000 + u64::from(d & 3)).to_le_bytes());
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&[7, 0, 0, 0, d & 1, 1, 3, 0]);
    }
    out.truncate(len);
    out
}

/// Bytes from an alphabet of `k` symbols.
fn alphabet(seed: u64, len: usize, k: u8) -> Vec<u8> {
    noise(seed, len).into_iter().map(|b| b % k).collect()
}

fn kinds(seed: u64, len: usize) -> Vec<Vec<u8>> {
    vec![
        vec![0; len],
        alphabet(seed, len, 2),
        alphabet(seed, len, 4),
        alphabet(seed, len, 17),
        trades(seed, len),
        noise(seed, len),
    ]
}

#[test]
fn every_size_below_300() {
    for len in 0..300 {
        for src in kinds(len as u64, len) {
            check(&src);
        }
    }
}

#[test]
fn sizes_around_the_table_switch() {
    for len in [
        4096, 65535, 65536, 65537, 65545, 65546, 65547, 65548, 65560, 70000, 131_072, 131_083,
        200_000,
    ] {
        for src in kinds(len as u64, len) {
            check(&src);
        }
    }
}

/// Matches more than 64 KiB back are out of reach in the `u32` mode.
#[test]
fn far_repeats_in_large_inputs() {
    let unit = noise(5, 70_000);
    let mut src = unit.clone();
    src.extend_from_slice(&unit);
    src.extend_from_slice(&unit[..30_000]);
    check(&src);
    let mut src = noise(6, 40_000);
    src.extend_from_slice(&noise(7, 30_000));
    src.extend_from_within(..40_000);
    check(&src);
}

/// Short output buffers: we give up exactly where liblz4 does, else the
/// same bytes.
#[test]
fn short_outputs_fail_where_liblz4_does() {
    let mut table = CompressTable::new();
    for (i, src) in kinds(3, 1000)
        .into_iter()
        .chain(kinds(4, 70_000))
        .enumerate()
    {
        let bound = lz4_bound(src.len());
        let full = liblz4(&src, bound).unwrap().len();
        let mut caps: Vec<usize> = (0..24).map(|d| full.saturating_sub(12) + d).collect();
        caps.extend([0, 1, 2, full / 2, bound - 1]);
        for cap in caps {
            let theirs = liblz4(&src, cap);
            let mut out = vec![0u8; cap];
            let mine = compress_with(&src, &mut out, &mut table).map(|n| out[..n].to_vec());
            assert_eq!(mine, theirs, "input {i} ({} bytes), cap {cap}", src.len());
        }
    }
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    let len = prop_oneof![
        4 => 0usize..2_000,
        2 => 2_000usize..66_000,
        1 => 65_500usize..66_100,
        1 => 66_000usize..200_000,
    ];
    (len, 0u8..6, any::<u64>())
        .prop_map(|(len, kind, seed)| kinds(seed, len).swap_remove(kind as usize))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_inputs_match_liblz4(src in input()) {
        check(&src);
    }

    #[test]
    fn arbitrary_bytes_match_liblz4(src in proptest::collection::vec(any::<u8>(), 0..600)) {
        check(&src);
    }
}

/// The generator of nostd-check/src/lib.rs (`lz4_bytes::input`), copied:
/// its inputs' compressed lengths and CRC32s, which the Cortex-M run checks.
fn nostd_input(out: &mut [u8]) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut ts: u64 = 1_700_000_000_000_000_000;
    let mut price: u64 = 100_000_000_000;
    for (i, rec) in out.chunks_mut(48).enumerate() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let d = (x >> 24) as u8;
        ts += u64::from(d) * 1000;
        price = price.wrapping_add(u64::from(d % 7)).wrapping_sub(3);
        let mut r = [0u8; 48];
        r[..8].copy_from_slice(&ts.to_le_bytes());
        r[8..16].copy_from_slice(&(ts + 5).to_le_bytes());
        r[16..24].copy_from_slice(&price.to_le_bytes());
        r[24..32].copy_from_slice(&(1000 + u64::from(d & 3)).to_le_bytes());
        r[32..40].copy_from_slice(&(i as u64).to_le_bytes());
        r[40..48].copy_from_slice(&[7, 0, 0, 0, d & 1, 1, 3, 0]);
        rec.copy_from_slice(&r[..rec.len()]);
    }
}

/// The values nostd-check's `lz4_bytes::EXPECTED` holds, from liblz4.
#[test]
fn nostd_check_expected_bytes_are_liblz4s() {
    let mut src = vec![0u8; 70_000];
    nostd_input(&mut src);
    let got: Vec<(usize, usize, u32)> = [1_000, 16_384, 70_000]
        .iter()
        .map(|&len| {
            let z = check(&src[..len]);
            (len, z.len(), floxlog_core::crc32::crc32(&z))
        })
        .collect();
    assert_eq!(
        got,
        [
            (1_000, 511, 0xa048_e5bf),
            (16_384, 7856, 0x7dfd_dfa6),
            (70_000, 29977, 0x45fa_b9aa),
        ]
    );
}
