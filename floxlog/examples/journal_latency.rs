//! Append latency, journal mode against the default writer:
//! `cargo run --release -p floxlog --example journal_latency [EVENTS] [SEGMENT_MIB]`.
//!
//! Appends EVENTS trades (default 2,000,000; segments of SEGMENT_MIB,
//! default 64) unpaced, timing each append with the monotonic clock (the
//! first append, which opens the tape's first segment, is left out), and
//! prints percentiles, the max and the appends over 50 µs, and the
//! throughput of the timed appends. Not a test and not the issue's
//! HDR-histogram benchmark: a quick look (the clock read adds ~20 ns).

use floxlog::core::{Event, Trade};
use floxlog::tape::{Durability, TapeWriter, TapeWriterConfig};
use std::time::Instant;

fn trade(i: u64) -> Trade {
    Trade {
        exchange_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000,
        recv_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000 + 5_000,
        price_raw: 6_500_000_000_000 + (i % 2_000) as i64,
        qty_raw: 1_000 + (i % 97) as i64,
        trade_id: i,
        symbol_id: (i % 20) as u32,
        side: (i & 1) as u8,
        ..Default::default()
    }
}

fn run(journal: bool, durability: Durability, n: u64, seg: u64) {
    let t = tempfile::tempdir().unwrap();
    let cfg = TapeWriterConfig {
        max_segment_bytes: seg,
        durability,
        journal,
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(t.path(), cfg).unwrap();
    w.append(&Event::Trade(trade(0))).unwrap();
    let mut ns = Vec::with_capacity(n as usize);
    let start = Instant::now();
    for i in 1..n {
        let a = Instant::now();
        w.append(&Event::Trade(trade(i))).unwrap();
        ns.push(a.elapsed().as_nanos() as u64);
    }
    let secs = start.elapsed().as_secs_f64();
    w.close().unwrap();
    if std::env::var("SLOW").is_ok() {
        // Where the slowest appends fell (index, and trades per segment).
        let mut idx: Vec<usize> = (0..ns.len()).collect();
        idx.sort_unstable_by_key(|&i| std::cmp::Reverse(ns[i]));
        let per_seg = seg / 60;
        for &i in &idx[..8] {
            println!(
                "  slow: append {} ({} into its segment): {} ns",
                i + 1,
                (i as u64 + 1) % per_seg,
                ns[i]
            );
        }
    }
    ns.sort_unstable();
    let p = |q: f64| ns[((ns.len() - 1) as f64 * q) as usize];
    let over = ns.iter().filter(|&&x| x > 50_000).count();
    println!(
        "{:<8} {:<12} p50 {:>5} p90 {:>5} p99 {:>6} p99.9 {:>7} p99.99 {:>8} max {:>9} ns  >50us {:>4}  {:.1} M/s",
        if journal { "journal" } else { "default" },
        format!("{durability:?}"),
        p(0.5),
        p(0.9),
        p(0.99),
        p(0.999),
        p(0.9999),
        ns[ns.len() - 1],
        over,
        (n - 1) as f64 / secs / 1e6
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = args
        .first()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000u64);
    let seg = args
        .get(1)
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(64)
        << 20;
    for durability in [Durability::None, Durability::SyncOnClose] {
        for journal in [false, true] {
            run(journal, durability, n, seg);
        }
    }
}
