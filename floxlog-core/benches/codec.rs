//! Codec throughput: `cargo bench -p floxlog-core --bench codec`.
//!
//! Each line reports millions of events per second and GB/s of segment
//! bytes, beside a memcpy of the same number of bytes (the ceiling for any
//! pass over them). Best of several runs; single thread. Not a test: nothing
//! here asserts a speed.
//!
//! The `batch` lines read the same segments through the batch trade kernel
//! (`Reader::next_trades`, `next_trade_columns`; 4096 rows a call) beside
//! the per-event `decode` lines.
//!
//! Beside the LZ4 and CRC lines are their limits, on the same bytes:
//! the LZ4 compressor alone on the writer's blocks (ours, whose bytes are
//! liblz4's, beside lz4_flex's compressor), lz4_flex decompressing them, and
//! decompression plus the fastest CRC32 over every frame payload; then the
//! CRC32 candidates over every 48-byte trade payload of the from-RAM
//! segment, the fastest of them, and the reader's way of checking them.
//! `FLOXLOG_BENCH_TRADES` sets the from-RAM trades (default 2,000,000);
//! `--features std` gives floxlog-crc32 its run-time CPU detection, as the
//! std crates of the workspace build it (scripts/bench-limits.sh does).

use floxlog_core::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

const RUNS: usize = 7;

/// The median of RUNS timed runs of `f` (a slow spell of a busy machine
/// moves it less than a mean; a lucky one less than a best).
fn best<F: FnMut()>(mut f: F) -> Duration {
    let mut runs: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    runs.sort();
    runs[RUNS / 2]
}

/// `FLOXLOG_BENCH_ONLY=substring` runs only the lines whose name contains
/// it (for profiling one path).
fn wanted(name: &str) -> bool {
    std::env::var("FLOXLOG_BENCH_ONLY").map_or(true, |f| name.contains(&f))
}

/// Times `f` if `name` is wanted, and reports it against a memcpy of the
/// same bytes done the same way (`reps` copies of `bytes / reps`).
fn bench(name: &str, events: usize, bytes: usize, reps: usize, f: impl FnMut()) {
    if wanted(name) {
        report(name, events, bytes, reps, best(f));
    }
}

/// `FLOXLOG_BENCH_NO_MEMCPY=1` skips the memcpy baseline (for profiling).
fn report(name: &str, events: usize, bytes: usize, reps: usize, d: Duration) {
    if std::env::var_os("FLOXLOG_BENCH_NO_MEMCPY").is_some() {
        let s = d.as_secs_f64();
        println!(
            "{name:<34} {:>8.1} M ev/s {:>7.2} GB/s",
            events as f64 / s / 1e6,
            bytes as f64 / s / 1e9
        );
        return;
    }
    let one = bytes / reps;
    let mut src = vec![7u8; one];
    let mut dst = vec![0u8; one];
    let m = best(|| {
        for _ in 0..reps {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
        }
    });
    src[0] = dst[0];
    let s = d.as_secs_f64();
    println!(
        "{name:<34} {:>8.1} M ev/s {:>7.2} GB/s   (memcpy of the same {:>6.2} MB x{reps}: {:>6.2} GB/s)",
        events as f64 / s / 1e6,
        bytes as f64 / s / 1e9,
        one as f64 / 1e6,
        bytes as f64 / m.as_secs_f64() / 1e9,
    );
}

/// Times lz4_compress (ours, liblz4's bytes) and lz4_flex's compressor on
/// the same inputs, `reps` times, and prints both and their ratio. `bodies`
/// (unless 0): the writer's compressed bytes, which ours must give.
fn compressors(
    inputs: &[Vec<u8>],
    tag: &str,
    bodies: usize,
    events: usize,
    bytes: usize,
    reps: usize,
) {
    let biggest = inputs.iter().map(Vec::len).max().unwrap_or(0);
    let mut zout = vec![
        0u8;
        lz4_flex::block::get_maximum_output_size(biggest)
            .max(lz4_compress::lz4_bound(biggest))
    ];
    let mut table = lz4_compress::CompressTable::new();
    let ours: usize = inputs
        .iter()
        .map(|b| lz4_compress::compress_with(b, &mut zout, &mut table).unwrap())
        .sum();
    if bodies != 0 {
        assert_eq!(
            ours, bodies,
            "lz4_compress alone must give the writer's blocks"
        );
    }
    let flex: usize = inputs
        .iter()
        .map(|b| lz4_flex::block::compress_into(b, &mut zout).unwrap())
        .sum();
    let names = [
        format!("  lz4_compress alone{tag}"),
        format!("  lz4_flex compress alone{tag}"),
    ];
    if !names.iter().any(|n| wanted(n)) {
        return;
    }
    // Interleaved (ours, lz4_flex, ours, ...), best of 3 x RUNS each: a
    // busy machine slows both alike.
    let (mut t_ours, mut t_flex) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 * RUNS {
        let t = Instant::now();
        for _ in 0..reps {
            for b in inputs {
                black_box(
                    lz4_compress::compress_with(black_box(b), &mut zout, &mut table).unwrap(),
                );
            }
        }
        t_ours = t_ours.min(t.elapsed());
        let t = Instant::now();
        for _ in 0..reps {
            for b in inputs {
                black_box(lz4_flex::block::compress_into(black_box(b), &mut zout).unwrap());
            }
        }
        t_flex = t_flex.min(t.elapsed());
    }
    report(&names[0], events, bytes, reps, t_ours);
    report(&names[1], events, bytes, reps, t_flex);
    let mbs = |d: Duration| bytes as f64 / d.as_secs_f64() / 1e6;
    println!(
        "  lz4_compress {:.0} MB/s, lz4_flex {:.0} MB/s: {:.2}x; compressed {} vs {} bytes",
        mbs(t_ours),
        mbs(t_flex),
        t_flex.as_secs_f64() / t_ours.as_secs_f64(),
        ours,
        flex
    );
}

/// Deterministic, market-like trades (LZ4 sees realistic redundancy).
fn trades(n: usize) -> Vec<Event<'static>> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Event::Trade(Trade {
                exchange_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000 + (x % 700) as i64,
                recv_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000 + 5_000,
                price_raw: 6_500_000_000_000 + (x % 200_000) as i64,
                qty_raw: ((x >> 20) % 10_000_000) as i64,
                trade_id: 900_000_000 + i as u64,
                symbol_id: (x % 50) as u32,
                side: (x & 1) as u8,
                instrument: 1,
                exchange_id: 7,
            })
        })
        .collect()
}

fn levels(n: usize, base: i64, step: i64) -> Vec<Level> {
    (0..n as i64)
        .map(|i| Level {
            price_raw: base + i * step,
            qty_raw: 100_000_000 + i * 7_777,
        })
        .collect()
}

struct Out {
    out: Vec<u8>,
    block: Vec<u8>,
    slots: Vec<BlockSlot>,
    index: Vec<IndexEntry>,
}

fn encode(cfg: WriterConfig, events: &[Event<'_>], o: &mut Out) -> usize {
    let bufs = WriterBuffers {
        out: &mut o.out,
        block: &mut o.block,
        slots: &mut o.slots,
        index: &mut o.index,
    };
    let mut w = SegmentWriter::new(cfg, bufs).unwrap();
    for e in events {
        w.append(e).unwrap();
    }
    let h = w.finish().unwrap();
    let n = w.pending().len();
    o.out[..64].copy_from_slice(&h);
    n
}

fn decode(seg: &[u8], opts: ReadOptions, scratch: &mut [u8]) -> u64 {
    let s = Segment::parse(seg).unwrap();
    let mut r = s.reader(opts, scratch);
    let mut acc = 0u64;
    while let Some(ev) = r.next_event().unwrap() {
        // Use every field, as a consumer would, so none is optimised away.
        if let Event::Trade(t) = ev {
            acc = fold(acc, &t);
        }
    }
    acc
}

/// What `decode` does to each trade.
#[inline(always)]
fn fold(acc: u64, t: &Trade) -> u64 {
    acc.wrapping_add(t.exchange_ts_ns as u64 ^ t.recv_ts_ns as u64)
        .wrapping_add(t.price_raw as u64 ^ t.qty_raw as u64)
        .wrapping_add(t.trade_id ^ t.symbol_id as u64)
        .wrapping_add((t.side ^ t.instrument) as u64 + t.exchange_id as u64)
}

/// `decode` through the batch kernel, `out.len()` trades a call (other
/// types through the per-event call).
fn decode_batch(seg: &[u8], opts: ReadOptions, scratch: &mut [u8], out: &mut [Trade]) -> u64 {
    let s = Segment::parse(seg).unwrap();
    let mut r = s.reader(opts, scratch);
    let mut acc = 0u64;
    loop {
        let b = r.next_trades(out);
        acc = out[..b.count].iter().fold(acc, fold);
        match b.stop {
            TradeStop::Full => {}
            TradeStop::OtherType => {
                r.next_event().unwrap();
            }
            TradeStop::End => return acc,
            TradeStop::Error(e) => panic!("{e}"),
        }
    }
}

/// `decode_batch` into columns of `cols.0.len()` rows.
fn decode_columns(seg: &[u8], opts: ReadOptions, scratch: &mut [u8], cols: &mut Cols) -> u64 {
    let s = Segment::parse(seg).unwrap();
    let mut r = s.reader(opts, scratch);
    let mut acc = 0u64;
    loop {
        let b = r.next_trade_columns(&mut TradeColumns {
            exchange_ts_ns: &mut cols.0,
            recv_ts_ns: &mut cols.1,
            price_raw: &mut cols.2,
            qty_raw: &mut cols.3,
            trade_id: &mut cols.4,
            symbol_id: &mut cols.5,
            side: &mut cols.6,
            instrument: &mut cols.7,
            exchange_id: &mut cols.8,
        });
        for i in 0..b.count {
            acc = acc
                .wrapping_add(cols.0[i] as u64 ^ cols.1[i] as u64)
                .wrapping_add(cols.2[i] as u64 ^ cols.3[i] as u64)
                .wrapping_add(cols.4[i] ^ cols.5[i] as u64)
                .wrapping_add((cols.6[i] ^ cols.7[i]) as u64 + cols.8[i] as u64);
        }
        match b.stop {
            TradeStop::Full => {}
            TradeStop::OtherType => {
                r.next_event().unwrap();
            }
            TradeStop::End => return acc,
            TradeStop::Error(e) => panic!("{e}"),
        }
    }
}

/// Owned trade columns.
type Cols = (
    Vec<i64>,
    Vec<i64>,
    Vec<i64>,
    Vec<i64>,
    Vec<u64>,
    Vec<u32>,
    Vec<u8>,
    Vec<u8>,
    Vec<u16>,
);

/// Rows per batch call in the batch lines.
const BATCH: usize = 4096;

fn main() {
    // In cache: a 20k-trade segment (1.2 MB) processed 100 times per run.
    // From RAM: 2M trades (120 MB), far larger than the caches.
    let small = std::env::var("FLOXLOG_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000usize);
    let ram = std::env::var("FLOXLOG_BENCH_TRADES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000usize);
    bench_trades(small, 100, "in cache");
    let seg = bench_trades(ram, 1, "from RAM");
    bench_books_and_crc();
    bench_crc_payloads(&seg, ram);
}

/// CRC32 of four buffers at once: every candidate is called this way, so
/// they differ only in how they compute (one kernel call per payload, or
/// one for four).
type Crc4 = fn([&[u8]; 4]) -> [u32; 4];

fn per_payload<const K: u8>(p: [&[u8]; 4]) -> [u32; 4] {
    let f = |d: &[u8]| match K {
        #[cfg(feature = "fast-crc")]
        0 => crc32fast::hash(d),
        _ => crc32::crc32(d),
    };
    [f(p[0]), f(p[1]), f(p[2]), f(p[3])]
}

/// The fastest CRC32 implementations this build has, by name.
fn crc_candidates() -> Vec<(&'static str, Crc4)> {
    vec![
        #[cfg(feature = "fast-crc")]
        ("crc32fast::hash per payload", per_payload::<0> as Crc4),
        ("crc32::crc32 per payload", per_payload::<1>),
        ("crc32::crc32_x4, groups of 4", crc32::crc32_x4),
    ]
}

/// Walks the frames of `frames` (12-byte header, payload) and checks each
/// payload's CRC32 with `f`, four frames per call; returns the mismatches
/// (0, or the bench is wrong).
#[inline(always)]
fn check_frames(frames: &[u8], f: Crc4) -> usize {
    let mut bad = 0;
    let mut pos = 0;
    while pos < frames.len() {
        let mut lanes: [&[u8]; 4] = [&[]; 4];
        let mut want = [0u32; 4];
        let mut k = 0;
        while k < 4 && pos < frames.len() {
            let h = FrameHeader::parse(&frames[pos..], 0).unwrap();
            let start = pos + FrameHeader::LEN;
            pos = start + h.size as usize;
            lanes[k] = &frames[start..pos];
            want[k] = h.crc32;
            k += 1;
        }
        let got = f(lanes);
        bad += (0..k).filter(|&i| got[i] != want[i]).count();
    }
    bad
}

fn bench_trades(n: usize, reps: usize, tag: &str) -> Vec<u8> {
    let ts = trades(n);
    let mut o = Out {
        out: vec![0; 64 + n * 60 + (1 << 20)],
        block: vec![0; 1 << 20],
        slots: vec![BlockSlot::EMPTY; 1000],
        index: vec![IndexEntry::default(); n / 1000 + 1],
    };
    let plain = WriterConfig::default();
    let lz4 = WriterConfig {
        compression: Compression::Lz4,
        ..WriterConfig::default()
    };
    let verified = ReadOptions::default();
    let unverified = ReadOptions {
        verify_crc: false,
        ..ReadOptions::default()
    };
    let mut scratch = vec![0u8; 1 << 20];
    println!("-- {n} trades, {tag} (x{reps} per run), median of {RUNS}, single thread");
    let ev = n * reps;
    let len = encode(plain, &ts, &mut o);
    let seg = o.out[..len].to_vec();
    let zlen = encode(lz4, &ts, &mut o);
    let zseg = o.out[..zlen].to_vec();

    bench("encode trades", ev, len * reps, reps, || {
        for _ in 0..reps {
            black_box(encode(plain, black_box(&ts), &mut o));
        }
    });
    bench("decode trades (CRC verified)", ev, len * reps, reps, || {
        for _ in 0..reps {
            black_box(decode(&seg, verified, &mut scratch));
        }
    });
    bench("decode trades (no CRC)", ev, len * reps, reps, || {
        for _ in 0..reps {
            black_box(decode(&seg, unverified, &mut scratch));
        }
    });
    let mut rows = vec![Trade::default(); BATCH];
    bench("batch trades (CRC verified)", ev, len * reps, reps, || {
        for _ in 0..reps {
            black_box(decode_batch(&seg, verified, &mut scratch, &mut rows));
        }
    });
    bench("batch trades (no CRC)", ev, len * reps, reps, || {
        for _ in 0..reps {
            black_box(decode_batch(&seg, unverified, &mut scratch, &mut rows));
        }
    });
    let mut cols: Cols = (
        vec![0; BATCH],
        vec![0; BATCH],
        vec![0; BATCH],
        vec![0; BATCH],
        vec![0; BATCH],
        vec![0; BATCH],
        vec![0; BATCH],
        vec![0; BATCH],
        vec![0; BATCH],
    );
    bench(
        "batch trade columns (CRC verified)",
        ev,
        len * reps,
        reps,
        || {
            for _ in 0..reps {
                black_box(decode_columns(&seg, verified, &mut scratch, &mut cols));
            }
        },
    );
    println!(
        "  (LZ4 segment {:.2} MB for {:.2} MB of frames: ratio {:.2}; LZ4 GB/s count frame bytes)",
        zlen as f64 / 1e6,
        (n * 60) as f64 / 1e6,
        (n * 60) as f64 / zlen as f64
    );
    bench(
        "LZ4 encode trades (1000/block)",
        ev,
        n * 60 * reps,
        reps,
        || {
            for _ in 0..reps {
                black_box(encode(lz4, black_box(&ts), &mut o));
            }
        },
    );
    // Its limit: the compressor alone on the same block inputs (each
    // block's frames, recovered by decompressing the segment; not timed),
    // beside lz4_flex's compressor (what the writer used before
    // lz4_compress, built as this crate builds lz4_flex).
    let inputs: Vec<Vec<u8>> = Segment::parse(&zseg)
        .unwrap()
        .blocks()
        .map(|b| b.unwrap().decompress(&mut scratch).unwrap().to_vec())
        .collect();
    let bodies: usize = Segment::parse(&zseg)
        .unwrap()
        .blocks()
        .map(|b| b.unwrap().body.len())
        .sum();
    compressors(&inputs, "", bodies, ev, n * 60 * reps, reps);
    // The same frames in 128 KiB inputs: liblz4's other table mode (u32
    // positions, 5-byte hash) from 64 KiB + 11 bytes on.
    let all = inputs.concat();
    let big: Vec<Vec<u8>> = all.chunks(128 << 10).map(<[u8]>::to_vec).collect();
    println!(
        "  (the same frames as {} inputs of up to 128 KiB)",
        big.len()
    );
    compressors(&big, ", 128 KiB inputs", 0, ev, n * 60 * reps, reps);
    drop(inputs);
    bench(
        "LZ4 decode trades (CRC verified)",
        ev,
        n * 60 * reps,
        reps,
        || {
            for _ in 0..reps {
                black_box(decode(&zseg, verified, &mut scratch));
            }
        },
    );
    bench(
        "LZ4 batch trades (CRC verified)",
        ev,
        n * 60 * reps,
        reps,
        || {
            for _ in 0..reps {
                black_box(decode_batch(&zseg, verified, &mut scratch, &mut rows));
            }
        },
    );
    // The floor: lz4_flex alone on the same blocks.
    bench(
        "  lz4_flex decompress alone",
        ev,
        n * 60 * reps,
        reps,
        || {
            for _ in 0..reps {
                for b in Segment::parse(&zseg).unwrap().blocks() {
                    let b = b.unwrap();
                    let out = &mut scratch[..b.header.original_size as usize];
                    black_box(lz4_flex::block::decompress_into(b.body, out).unwrap());
                }
            }
        },
    );
    // The floor of a CRC-checked read: decompress every block, then check
    // every frame payload's CRC32 with the fastest CRC (each candidate is
    // timed; the best is the line, named after it).
    let mut fastest: Option<(&str, Duration)> = None;
    for (name, f) in crc_candidates() {
        let d = best(|| {
            let mut bad = 0;
            for _ in 0..reps {
                for b in Segment::parse(&zseg).unwrap().blocks() {
                    let frames = b.unwrap().decompress(&mut scratch).unwrap();
                    bad += check_frames(black_box(frames), f);
                }
            }
            assert_eq!(bad, 0, "CRC mismatch in the decompress + CRC limit");
        });
        if fastest.is_none_or(|(_, b)| d < b) {
            fastest = Some((name, d));
        }
    }
    let (name, d) = fastest.unwrap();
    if wanted("decompress + CRC") {
        report(
            &format!("  decompress + CRC ({name})"),
            ev,
            n * 60 * reps,
            reps,
            d,
        );
    }
    seg
}

/// CRC32 over every 48-byte trade payload of `seg` (from RAM when large):
/// each candidate, the fastest (the limit), and the reader's way (frame
/// headers walked, four payloads per `crc32::crc32_x4`, each compared with
/// its header's CRC: what `Reader` does with `verify_crc`).
fn bench_crc_payloads(seg: &[u8], n: usize) {
    println!(
        "-- CRC32 over {n} 48-byte trade payloads (in the segment), median of {RUNS}; run-time CPU detection: {}; floxlog kernel: {}",
        if cfg!(feature = "std") { "on (std)" } else { "off (no std)" },
        crc32::crc32_kernel()
    );
    let frames = &seg[64..64 + n * 60];
    let mut fastest: Option<(&str, Duration)> = None;
    for (name, f) in crc_candidates() {
        let d = best(|| {
            let mut acc = 0u32;
            for g in frames.chunks(240) {
                let mut lanes: [&[u8]; 4] = [&[]; 4];
                for (l, fr) in lanes.iter_mut().zip(g.chunks_exact(60)) {
                    *l = &fr[12..];
                }
                let c = f(black_box(lanes));
                acc ^= c[0] ^ c[1] ^ c[2] ^ c[3];
            }
            black_box(acc);
        });
        report(&format!("crc32 48B: {name}"), n, n * 48, 1, d);
        if fastest.is_none_or(|(_, b)| d < b) {
            fastest = Some((name, d));
        }
    }
    let name8 = "crc32::crc32_same, groups of 8";
    let d = best(|| {
        let mut acc = 0u32;
        for g in frames.chunks_exact(480) {
            let lanes: [&[u8; 48]; 8] =
                core::array::from_fn(|k| g[k * 60 + 12..k * 60 + 60].try_into().unwrap());
            acc ^= crc32::crc32_same(black_box(lanes))
                .iter()
                .fold(0, |a, c| a ^ c);
        }
        black_box(acc);
    });
    report(
        &format!("crc32 48B: {name8}"),
        n / 8 * 8,
        n / 8 * 8 * 48,
        1,
        d,
    );
    if fastest.is_none_or(|(_, b)| d < b) {
        fastest = Some((name8, d));
    }
    let (name, d) = fastest.unwrap();
    report(&format!("limit: fastest CRC ({name})"), n, n * 48, 1, d);
    // What the batch kernel does (reader/trades.rs `clean_trades`): eight
    // frames' headers checked, their payloads' CRCs in one call, compared
    // with the headers'.
    bench("crc32 48B: reader path (x8, checked)", n, n * 48, 1, || {
        let mut bad = 0;
        let whole = black_box(frames).chunks_exact(480);
        let rest = whole.remainder();
        for g in whole {
            let mut lanes = [&[0u8; 48]; 8];
            let mut want = [0u32; 8];
            for ((l, w), f) in lanes.iter_mut().zip(&mut want).zip(g.chunks_exact(60)) {
                let word = |at: usize| u32::from_le_bytes(f[at..at + 4].try_into().unwrap());
                // size 48, type trade, version 1, no flags.
                bad += usize::from(word(0) != 48 || word(8) != 0x0101);
                *l = f[12..].try_into().unwrap();
                *w = word(4);
            }
            bad += usize::from(crc32::crc32_same(lanes) != want);
        }
        bad += check_frames(rest, crc32::crc32_x4);
        assert_eq!(bad, 0);
    });
}

fn bench_books_and_crc() {
    let plain = WriterConfig::default();
    let verified = ReadOptions::default();
    let mut scratch = vec![0u8; 1 << 20];
    let nb = 300_000;
    let mut o = Out {
        out: vec![0; 64 + nb * 400 + (1 << 20)],
        block: vec![0; 1 << 20],
        slots: vec![BlockSlot::EMPTY; 1000],
        index: vec![IndexEntry::default(); nb / 1000 + 1],
    };
    println!("-- {nb} 20-level book snapshots (from RAM), median of {RUNS}");
    // 20-level snapshots (10 bids, 10 asks): 40 + 20*16 = 360-byte payloads.
    let bids = levels(10, 6_500_000_000_000, -1_000_000);
    let asks = levels(10, 6_500_100_000_000, 1_000_000);
    let books: Vec<Event> = (0..nb)
        .map(|i| {
            Event::Book(Book {
                kind: BookKind::Snapshot,
                exchange_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 10_000,
                recv_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 10_000 + 4_000,
                seq: i as i64,
                symbol_id: (i % 20) as u32,
                header_type: 0,
                instrument: 1,
                exchange_id: 7,
                bids: Levels::Slice(&bids),
                asks: Levels::Slice(&asks),
            })
        })
        .collect();
    let len = encode(plain, &books, &mut o);
    let bseg = o.out[..len].to_vec();
    bench("encode 20-level books", nb, len, 1, || {
        black_box(encode(plain, black_box(&books), &mut o));
    });
    bench("decode 20-level books (verified)", nb, len, 1, || {
        let s = Segment::parse(&bseg).unwrap();
        let mut r = s.reader(verified, &mut scratch);
        let mut acc = 0i64;
        while let Some(ev) = r.next_event().unwrap() {
            if let Event::Book(b) = ev {
                // Touch every level, as a consumer would.
                for l in b.bids.iter().chain(b.asks.iter()) {
                    acc = acc.wrapping_add(l.price_raw ^ l.qty_raw);
                }
            }
        }
        black_box(acc);
    });

    // The checksum alone, per 48-byte trade payload (in cache).
    println!("-- CRC32 alone");
    let tseg = {
        let ts = trades(200_000);
        let l = encode(plain, &ts, &mut o);
        o.out[..l].to_vec()
    };
    let payloads: Vec<u8> = tseg[64..64 + 60 * 200_000].to_vec();
    for (name, f) in [
        (
            "crc32 48B (active: floxlog-crc32)",
            crc32::crc32 as fn(&[u8]) -> u32,
        ),
        ("crc32 48B (portable crc table16)", crc32::crc32_portable),
    ] {
        bench(name, 200_000, 200_000 * 48, 1, || {
            let mut acc = 0u32;
            for fr in payloads.chunks_exact(60) {
                acc ^= f(black_box(&fr[12..]));
            }
            black_box(acc);
        });
    }
}
