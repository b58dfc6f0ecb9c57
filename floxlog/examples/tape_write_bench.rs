//! Tape writer throughput: `cargo run --release -p floxlog --example tape_write_bench [EVENTS] [RUNS] [FILTER]`.
//!
//! Records EVENTS trades (default 5,000,000) through [`TapeWriter`] into a
//! temporary directory (uncompressed and LZ4, `Durability::None` and
//! `SyncOnClose`, uncompressed also in journal mode; the time includes
//! `close`), and beside it the two halves
//! of that work alone: (a) encoding with the core segment writer, draining
//! its output every 1 MiB without any I/O, (b) `write(2)` of the finished
//! segment bytes to a new file in 1 MiB chunks (and with an fsync at the
//! end). Runs are interleaved (every variant once per round) and the best
//! of RUNS (default 5) is reported, as M events/s and MB/s of segment bytes.
//! Lines starting with `RESULT` are for scripts: name, seconds, events, bytes.
//! FILTER keeps only the variants whose name contains it; the `Flush` and
//! `SyncEvery*` variants (slow: a write(2) or fsync every few events) run
//! only when FILTER names them, e.g. `tape none Flush` or `SyncEvery`.
//! Not a test: nothing here asserts a speed.

use floxlog::core::{Compression, Event, Trade, WriterConfig};
use floxlog::segment::vec_writer;
use floxlog::tape::{Durability, Layout, TapeWriter, TapeWriterConfig};
use std::io::Write;
use std::time::Instant;

const CHUNK: usize = 1 << 20;

/// Deterministic, market-like trades (as the core's codec bench).
fn trades(n: usize) -> Vec<Trade> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Trade {
                exchange_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000 + (x % 700) as i64,
                recv_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000 + 5_000,
                price_raw: 6_500_000_000_000 + (x % 200_000) as i64,
                qty_raw: ((x >> 20) % 10_000_000) as i64,
                trade_id: 900_000_000 + i as u64,
                symbol_id: (x % 50) as u32,
                side: (x & 1) as u8,
                instrument: 1,
                exchange_id: 7,
            }
        })
        .collect()
}

fn seg_cfg(lz4: bool) -> WriterConfig {
    WriterConfig {
        compression: if lz4 {
            Compression::Lz4
        } else {
            Compression::None
        },
        created_ns: 1_700_000_000_000_000_000,
        ..WriterConfig::default()
    }
}

/// (a) Encoding alone: returns the segment bytes produced.
fn encode_only(events: &[Trade], lz4: bool) -> u64 {
    let mut w = vec_writer(seg_cfg(lz4)).unwrap();
    for t in events {
        w.append(&Event::Trade(*t)).unwrap();
        let n = w.pending().len();
        if n >= CHUNK {
            std::hint::black_box(w.pending());
            w.consume(n);
        }
    }
    w.finish().unwrap();
    w.pending_offset() + w.pending().len() as u64
}

/// The finished segment bytes of `events` (not timed).
fn encode_all(events: &[Trade], lz4: bool) -> Vec<u8> {
    let mut w = vec_writer(seg_cfg(lz4)).unwrap();
    let mut bytes = Vec::new();
    for t in events {
        w.append(&Event::Trade(*t)).unwrap();
    }
    let h = w.finish().unwrap();
    bytes.extend_from_slice(w.pending());
    bytes[..64].copy_from_slice(&h);
    bytes
}

/// (b) write(2) of `bytes` to a new file in 1 MiB chunks.
fn write_only(dir: &std::path::Path, bytes: &[u8], fsync: bool) {
    let mut f = std::fs::File::create(dir.join("seg.floxlog")).unwrap();
    for c in bytes.chunks(CHUNK) {
        f.write_all(c).unwrap();
    }
    if fsync {
        f.sync_all().unwrap();
    }
}

/// (c) Through the tape writer; returns the segment bytes written.
fn tape(dir: &std::path::Path, events: &[Trade], lz4: bool, durability: Durability) -> u64 {
    tape_in(dir, events, lz4, durability, false)
}

/// (c) with the journal mode on or off.
fn tape_in(
    dir: &std::path::Path,
    events: &[Trade],
    lz4: bool,
    durability: Durability,
    journal: bool,
) -> u64 {
    let cfg = TapeWriterConfig {
        journal,
        layout: Layout::Flox,
        segment: seg_cfg(lz4),
        durability,
        created_ns: Some(1_700_000_000_000_000_000),
        write_manifest: true,
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(dir, cfg).unwrap();
    for t in events {
        w.append(&Event::Trade(*t)).unwrap();
    }
    w.close().unwrap().iter().map(|s| s.size_bytes).sum()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args
        .first()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000_000);
    let runs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let filter = args.get(2).cloned().unwrap_or_default();
    let events = trades(n);
    // Encoded on first use (so a FILTER without them profiles cleanly).
    let plain = std::cell::OnceCell::new();
    let packed = std::cell::OnceCell::new();
    let plain = || -> &Vec<u8> { plain.get_or_init(|| encode_all(&events, false)) };
    let packed = || -> &Vec<u8> { packed.get_or_init(|| encode_all(&events, true)) };
    let tmp = tempfile::tempdir().unwrap();

    type Variant<'a> = (&'static str, Box<dyn Fn(&std::path::Path) -> u64 + 'a>);
    let ev = &events;
    let variants: Vec<Variant<'_>> = vec![
        ("encode none", Box::new(|_| encode_only(ev, false))),
        ("encode lz4", Box::new(|_| encode_only(ev, true))),
        (
            "write(2) none bytes",
            Box::new(|d| {
                write_only(d, plain(), false);
                plain().len() as u64
            }),
        ),
        (
            "write(2)+fsync none bytes",
            Box::new(|d| {
                write_only(d, plain(), true);
                plain().len() as u64
            }),
        ),
        (
            "write(2) lz4 bytes",
            Box::new(|d| {
                write_only(d, packed(), false);
                packed().len() as u64
            }),
        ),
        (
            "tape none None",
            Box::new(|d| tape(d, ev, false, Durability::None)),
        ),
        (
            "tape none SyncOnClose",
            Box::new(|d| tape(d, ev, false, Durability::SyncOnClose)),
        ),
        (
            "tape none None journal",
            Box::new(|d| tape_in(d, ev, false, Durability::None, true)),
        ),
        (
            "tape none SyncOnClose journal",
            Box::new(|d| tape_in(d, ev, false, Durability::SyncOnClose, true)),
        ),
        (
            "tape lz4 None",
            Box::new(|d| tape(d, ev, true, Durability::None)),
        ),
        (
            "tape lz4 SyncOnClose",
            Box::new(|d| tape(d, ev, true, Durability::SyncOnClose)),
        ),
        // Only when FILTER names them (a write(2) or fsync per few events).
        (
            "tape none Flush",
            Box::new(|d| tape(d, ev, false, Durability::Flush)),
        ),
        (
            "tape none SyncEveryN(10000)",
            Box::new(|d| tape(d, ev, false, Durability::SyncEveryN(10_000))),
        ),
        (
            "tape lz4 SyncEveryBlock",
            Box::new(|d| tape(d, ev, true, Durability::SyncEveryBlock)),
        ),
    ];
    let opt_in = |name: &str| name.contains("Flush") || name.contains("SyncEvery");
    let variants: Vec<_> = variants
        .into_iter()
        .filter(|(name, _)| name.contains(filter.as_str()) && (!opt_in(name) || !filter.is_empty()))
        .collect();
    if variants.iter().any(|(name, _)| name.starts_with("write")) {
        plain();
        packed();
    }
    // Warm-up (untimed): on the VM the first few hundred MB of page cache a
    // process writes cost several times what later ones do.
    if variants.iter().any(|(name, _)| !name.starts_with("encode")) {
        let dir = tmp.path().join("warm-up");
        std::fs::create_dir_all(&dir).unwrap();
        let junk = vec![7u8; 64 << 20];
        for _ in 0..2 {
            let mut f = std::fs::File::create(dir.join("junk")).unwrap();
            for _ in 0..8 {
                f.write_all(&junk).unwrap();
            }
            drop(f);
            std::fs::remove_file(dir.join("junk")).unwrap();
        }
    }
    let mut best = vec![(f64::INFINITY, 0u64); variants.len()];
    for _ in 0..runs {
        for (i, (name, f)) in variants.iter().enumerate() {
            let dir = tmp.path().join("run");
            std::fs::create_dir_all(&dir).unwrap();
            let t = Instant::now();
            let bytes = f(&dir);
            let s = t.elapsed().as_secs_f64();
            std::fs::remove_dir_all(&dir).unwrap();
            println!("RESULT\t{name}\t{s:.4}\t{n}\t{bytes}");
            if s < best[i].0 {
                best[i] = (s, bytes);
            }
        }
    }
    println!("best of {runs}, {n} trades:");
    for ((name, _), (s, bytes)) in variants.iter().zip(&best) {
        println!(
            "{name:<28} {s:>7.3} s {:>7.1} M events/s {:>8.0} MB/s",
            n as f64 / s / 1e6,
            *bytes as f64 / s / 1e6
        );
    }
}
