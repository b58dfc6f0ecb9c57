//! Short-payload and whole-buffer CRC throughput (no criterion).
//!
//! `cargo bench -p floxlog-crc32 --features std --bench crc`
//!
//! Payloads are laid out like the format's frames: a 16-byte header then a
//! 48-byte payload, repeated, so each payload starts at offset 16 of a
//! 64-byte stride. Each row is the best of 7 passes. "cold" walks 5,000,000
//! frames (320 MB, out of cache); "warm" walks the first 16,384 frames
//! (1 MiB) over and over, for the same count, to show compute cost alone.

use std::hint::black_box;
use std::time::Instant;

const FRAMES: usize = 5_000_000;
const STRIDE: usize = 64;
const WARM_FRAMES: usize = 16_384;
const BIG: usize = 300_000_000;
const RUNS: usize = 7;

/// One measured loop; returns the XOR of the CRCs it computed.
type Row<'a> = Box<dyn Fn() -> u32 + 'a>;

fn best_of<F: FnMut() -> u32>(runs: usize, mut f: F) -> (f64, u32) {
    let mut best = f64::INFINITY;
    let mut out = 0;
    for _ in 0..runs {
        let t = Instant::now();
        out = black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out)
}

/// XOR of the payload CRCs over `frames` payloads of `buf` (wrapping).
fn per_payload(buf: &[u8], frames: usize, f: impl Fn(&[u8]) -> u32) -> u32 {
    let mut acc = 0;
    let mut left = frames;
    while left > 0 {
        for frame in buf.chunks_exact(STRIDE).take(left) {
            acc ^= f(black_box(&frame[16..]));
        }
        left = left.saturating_sub(buf.len() / STRIDE);
    }
    acc
}

fn per_group(buf: &[u8], frames: usize) -> u32 {
    let mut acc = 0;
    let mut left = frames;
    while left > 0 {
        for g in buf.chunks_exact(4 * STRIDE).take(left / 4) {
            let lanes = [&g[16..64], &g[80..128], &g[144..192], &g[208..256]];
            for c in floxlog_crc32::crc32_x4(black_box(lanes)) {
                acc ^= c;
            }
        }
        left = left.saturating_sub(buf.len() / STRIDE);
    }
    acc
}

/// `crc32_same` over groups of `L` payloads.
fn per_same<const L: usize>(buf: &[u8], frames: usize) -> u32 {
    let mut acc = 0;
    let mut left = frames;
    while left > 0 {
        for g in buf.chunks_exact(L * STRIDE).take(left / L) {
            let lanes: [&[u8; 48]; L] = core::array::from_fn(|k| {
                let at = k * STRIDE + 16;
                g[at..at + 48].try_into().unwrap_or(&[0; 48])
            });
            for c in floxlog_crc32::crc32_same(black_box(lanes)) {
                acc ^= c;
            }
        }
        left = left.saturating_sub(buf.len() / STRIDE);
    }
    acc
}

fn main() {
    // Deterministic filler.
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut fill = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s as u8
            })
            .collect()
    };
    // `-- quick`: the warm rows only, 200,000 payloads a pass, best of 51
    // (on a busy machine short passes are likelier to run undisturbed).
    let quick = std::env::args().any(|a| a == "quick");
    let (count, runs) = if quick { (200_000, 51) } else { (FRAMES, RUNS) };
    let frames = fill(FRAMES * STRIDE);
    let big = if quick { Vec::new() } else { fill(BIG) };
    println!("kernel: {}", floxlog_crc32::kernel_name());
    println!("{:<34} {:>10} {:>10}", "48-byte payloads", "M/s", "ns each");
    for (label, buf) in [
        ("cold", &frames[..]),
        ("warm", &frames[..WARM_FRAMES * STRIDE]),
    ] {
        if quick && label == "cold" {
            continue;
        }
        let rows: [(&str, Row); 7] = [
            (
                "crc32fast::hash",
                Box::new(|| per_payload(buf, count, crc32fast::hash)),
            ),
            (
                "crc32_table",
                Box::new(|| per_payload(buf, count, floxlog_crc32::crc32_table)),
            ),
            (
                "crc32",
                Box::new(|| per_payload(buf, count, floxlog_crc32::crc32)),
            ),
            ("crc32_x4 (groups of 4)", Box::new(|| per_group(buf, count))),
            (
                "crc32_same (groups of 4)",
                Box::new(|| per_same::<4>(buf, count)),
            ),
            (
                "crc32_same (groups of 8)",
                Box::new(|| per_same::<8>(buf, count)),
            ),
            (
                "crc32_same (groups of 16)",
                Box::new(|| per_same::<16>(buf, count)),
            ),
        ];
        let mut check = None;
        for (name, f) in rows {
            let (t, out) = best_of(runs, f);
            assert_eq!(*check.get_or_insert(out), out, "{name} disagrees");
            let per_s = count as f64 / t;
            println!(
                "{:<34} {:>10.1} {:>10.2}",
                format!("{name} [{label}]"),
                per_s / 1e6,
                1e9 / per_s
            );
        }
    }
    if quick {
        return;
    }
    println!("{:<34} {:>10}", "one 300 MB buffer", "GB/s");
    let (t_fast, a) = best_of(RUNS, || crc32fast::hash(black_box(&big)));
    let (t_ours, b) = best_of(RUNS, || floxlog_crc32::crc32(black_box(&big)));
    assert_eq!(a, b);
    println!(
        "{:<34} {:>10.2}",
        "crc32fast::hash",
        BIG as f64 / t_fast / 1e9
    );
    println!("{:<34} {:>10.2}", "crc32", BIG as f64 / t_ours / 1e9);
}
