//! Writes a reference-profile tape for the time-order memory check of
//! issue 21 (see scripts/bench-time-order.sh): SEGMENTS uncompressed
//! segments of TRADES trades each, 1 µs apart, every timestamp moved by up
//! to 900 ns either way, so that events go back in time inside a segment
//! and across every segment boundary (no segment is Sorted).
//!
//! `cargo run --release -p floxlog --example jittered_tape -- DIR [SEGMENTS] [TRADES]`
//!
//! `... -- --read time|file DIR` reads the tape through
//! a read session's `Events::next_trades` (CRCs checked) and prints events, seconds and
//! events per second: time order against file order without output costs.

use floxlog::core::{Event, Trade, WriterConfig};
use floxlog::segment::{finish_to_vec, vec_writer};

fn read(order: &str, dir: &std::path::Path) {
    use floxlog::tape::read::{Order, Request, Session};
    use floxlog::tape::{OpenOptions, Tape};
    let t0 = std::time::Instant::now();
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let request = Request {
        order: if order == "file" {
            Order::File
        } else {
            Order::Time
        },
        ..Request::default()
    };
    let mut session = Session::open(tape, request);
    let mut r = session.cursor();
    let mut out = vec![Trade::default(); 4096];
    let (mut n, mut last, mut back) = (0u64, i64::MIN, 0u64);
    loop {
        let (run, done) = r.next_trades(&mut out[..]);
        done.unwrap();
        for t in &out[..run.count] {
            back += u64::from(t.exchange_ts_ns < last);
            last = t.exchange_ts_ns;
        }
        n += run.count as u64;
        if run.count < out.len() && !run.declined {
            break;
        }
    }
    assert!(r.outcome().passed());
    let s = t0.elapsed().as_secs_f64();
    println!(
        "{order} order: {n} trades, {back} going back, {s:.3} s, {:.1} M/s",
        n as f64 / s / 1e6
    );
}

const USAGE: &str =
    "usage: jittered_tape DIR [SEGMENTS] [TRADES]\n       jittered_tape --read time|file DIR";

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(first) = args.next() else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    if first == "-h" || first == "--help" {
        println!("{USAGE}");
        return;
    }
    if first.starts_with('-') && first != "--read" {
        // Never a directory to write a tape into (a `--help` folder of
        // 100 segments was once made so).
        eprintln!("unknown option {first}\n{USAGE}");
        std::process::exit(2);
    }
    if first == "--read" {
        let order = args.next().expect("time|file");
        read(&order, std::path::Path::new(&args.next().expect("DIR")));
        return;
    }
    let dir = std::path::PathBuf::from(first);
    let segments: u64 = args.next().map_or(100, |s| s.parse().unwrap());
    let trades: u64 = args.next().map_or(125_000, |s| s.parse().unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let start = 1_700_000_000_000_000_000i64;
    for s in 0..segments {
        let mut w = vec_writer(WriterConfig {
            created_ns: start + (s * trades * 1_000) as i64,
            ..Default::default()
        })
        .unwrap();
        for i in 0..trades {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = s * trades + i;
            let ts = start + n as i64 * 1_000 + (x % 1_801) as i64 - 900;
            let t = Trade {
                exchange_ts_ns: ts,
                recv_ts_ns: ts + 50_000,
                price_raw: 6_000_000_000_000 + (x % 1_000) as i64 * 1_000_000,
                qty_raw: (1 + x % 500) as i64 * 100_000,
                trade_id: n + 1,
                symbol_id: 1 + (x % 8) as u32,
                side: (x % 2) as u8,
                instrument: 0,
                exchange_id: 1,
            };
            w.append(&Event::Trade(t)).unwrap();
        }
        let name = format!("{}.floxlog", start + (s * trades * 1_000) as i64);
        std::fs::write(dir.join(name), finish_to_vec(w).unwrap()).unwrap();
    }
}
