//! Codec throughput: `cargo bench -p floxlog-core --bench codec`.
//!
//! Each line reports millions of events per second and GB/s of segment
//! bytes, beside a memcpy of the same number of bytes (the ceiling for any
//! pass over them). Best of several runs; single thread. Not a test: nothing
//! here asserts a speed.

use floxlog_core::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

const RUNS: usize = 7;

fn best<F: FnMut()>(mut f: F) -> Duration {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
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
            acc = acc
                .wrapping_add(t.exchange_ts_ns as u64 ^ t.recv_ts_ns as u64)
                .wrapping_add(t.price_raw as u64 ^ t.qty_raw as u64)
                .wrapping_add(t.trade_id ^ t.symbol_id as u64)
                .wrapping_add((t.side ^ t.instrument) as u64 + t.exchange_id as u64);
        }
    }
    acc
}

fn main() {
    // In cache: a 20k-trade segment (1.2 MB) processed 100 times per run.
    // From RAM: 2M trades (120 MB), far larger than the caches.
    let small = std::env::var("FLOXLOG_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000usize);
    bench_trades(small, 100, "in cache");
    bench_trades(2_000_000, 1, "from RAM");
    bench_books_and_crc();
}

fn bench_trades(n: usize, reps: usize, tag: &str) {
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
    println!("-- {n} trades, {tag} (x{reps} per run), best of {RUNS}, single thread");
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
    println!("-- {nb} 20-level book snapshots (from RAM), best of {RUNS}");
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
            "crc32 48B (active: crc32fast)",
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
