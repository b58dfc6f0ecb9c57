//! Several appender threads into one tape (issue 34):
//! `cargo run --release -p floxlog --example appenders_bench [EVENTS]`,
//! or `scripts/bench-appenders.sh`.
//!
//! For the journal and the default writer (durability `none`, 64 MiB
//! segments), 1, 2 and 4 threads, each with its own `Appender`, append
//! EVENTS trades in all (default 4,000,000), started together. Two passes
//! each: unclocked, for the aggregate appends/s over the wall clock and
//! the CPU time the appending threads used per append (their
//! `CLOCK_THREAD_CPUTIME_ID`, summed: what an append costs, contention
//! included, whatever else the machine runs); clocked, for the per-append
//! latency histogram of every thread together (p50 … p99.99, max; the
//! clock read adds ~20 ns to each). Each case's rate (appends/s, and
//! appends per CPU second) is also given as a ratio to one appender's in
//! the same run. On a 2-core machine 4 threads share 2 cores: that case
//! measures what an append costs when threads contend for the tape's lock
//! and the cores, not scaling; on a loaded machine the wall-clock rate
//! follows the share of the cores the threads get, the CPU cost does not.
//! A benchmark, not a test.

use floxlog::core::{Event, Trade};
use floxlog::tape::{Durability, TapeWriter, TapeWriterConfig};
use std::sync::{Arc, Barrier};
use std::time::Instant;

fn trade(a: u32, i: u64) -> Trade {
    Trade {
        exchange_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000,
        recv_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000 + 5_000,
        price_raw: 6_500_000_000_000 + (i % 2_000) as i64,
        qty_raw: 1_000 + (i % 97) as i64,
        trade_id: i,
        symbol_id: a + 1,
        side: (i & 1) as u8,
        ..Default::default()
    }
}

/// CPU time this thread has used, ns (0 where the clock is missing).
fn thread_cpu_ns() -> u64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a plain system call writing the struct passed.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        }
    }
    0
}

/// Appends `n` trades in all from `threads` appenders; returns the
/// aggregate appends/s, the appending threads' CPU ns per append and,
/// when `clocked`, every append's ns.
fn run(journal: bool, threads: u32, n: u64, clocked: bool) -> (f64, f64, Vec<u32>) {
    let t = tempfile::tempdir().unwrap();
    let cfg = TapeWriterConfig {
        max_segment_bytes: 64 << 20,
        durability: Durability::None,
        journal,
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(t.path(), cfg).unwrap();
    // The first segment opens outside the measurement.
    w.append(&Event::Trade(trade(0, 0))).unwrap();
    let per = n / threads as u64;
    let start = Arc::new(Barrier::new(threads as usize + 1));
    let handles: Vec<_> = (0..threads)
        .map(|a| {
            let mut ap = w.appender().unwrap();
            let start = start.clone();
            std::thread::spawn(move || {
                let mut ns = Vec::with_capacity(if clocked { per as usize } else { 0 });
                start.wait();
                let cpu0 = thread_cpu_ns();
                for i in 0..per {
                    let ev = Event::Trade(trade(a, i));
                    if clocked {
                        let t0 = Instant::now();
                        ap.append(&ev).unwrap();
                        ns.push(t0.elapsed().as_nanos().min(u32::MAX as u128) as u32);
                    } else {
                        ap.append(&ev).unwrap();
                    }
                }
                (Instant::now(), thread_cpu_ns() - cpu0, ns)
            })
        })
        .collect();
    start.wait();
    let t0 = Instant::now();
    let mut all = Vec::new();
    let (mut end, mut cpu) = (t0, 0u64);
    for h in handles {
        let (done, used, ns) = h.join().unwrap();
        end = end.max(done);
        cpu += used;
        all.extend(ns);
    }
    let secs = (end - t0).as_secs_f64();
    w.close().unwrap();
    let appends = per as f64 * threads as f64;
    (appends / secs, cpu as f64 / appends, all)
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4_000_000);
    println!("{n} trades per case, 64 MiB segments, durability none");
    println!(
        "{:<8} {:>7} {:>10} {:>7} {:>8} {:>7} {:>6} {:>6} {:>6} {:>7} {:>8} {:>9}",
        "writer",
        "threads",
        "appends/s",
        "x 1 thr",
        "cpu ns/a",
        "x 1 thr",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "p99.99",
        "max ns"
    );
    for journal in [true, false] {
        let (mut one, mut one_cpu) = (0.0, 0.0);
        for threads in [1u32, 2, 4] {
            let (rate, cpu, _) = run(journal, threads, n, false);
            if threads == 1 {
                (one, one_cpu) = (rate, cpu);
            }
            let (_, _, mut ns) = run(journal, threads, n, true);
            ns.sort_unstable();
            let p = |q: f64| ns[((ns.len() - 1) as f64 * q) as usize];
            println!(
                "{:<8} {:>7} {:>10.0} {:>7.2} {:>8.1} {:>7.2} {:>6} {:>6} {:>6} {:>7} {:>8} {:>9}",
                if journal { "journal" } else { "default" },
                threads,
                rate,
                rate / one,
                cpu,
                one_cpu / cpu,
                p(0.5),
                p(0.9),
                p(0.99),
                p(0.999),
                p(0.9999),
                ns[ns.len() - 1]
            );
        }
    }
}
