//! Reading trades into Arrow record batches, beside the limit of the same
//! bytes: a memcpy of the segment files (already in the page cache).
//!
//! `cargo run --release -p floxlog-arrow --example read_bench -- TAPE...`
//! (tapes such as `floxlog demo T --trades 5000000 --book-deltas 0
//! --compression none` writes).

use floxlog::tape::read::Session;
use floxlog::tape::{Filter, OpenOptions, Order, Tape};
use floxlog_arrow::{read_batches, read_table, ReadSpec, RecordType, Symbols};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for arg in std::env::args().skip(1) {
        let tape = Tape::open(&[arg.clone().into()], OpenOptions::default())?;
        let bytes: Vec<Vec<u8>> = tape
            .segments
            .iter()
            .map(|s| std::fs::read(&s.path))
            .collect::<Result<_, _>>()?;
        let total: usize = bytes.iter().map(Vec::len).sum();
        let mut best_copy = f64::MAX;
        let mut sink = vec![0u8; total];
        for _ in 0..3 {
            let t = Instant::now();
            let mut at = 0;
            for b in &bytes {
                sink[at..at + b.len()].copy_from_slice(b);
                at += b.len();
            }
            std::hint::black_box(&sink);
            best_copy = best_copy.min(t.elapsed().as_secs_f64());
        }
        for (order, stream) in [
            (Order::Time, false),
            (Order::File, false),
            (Order::Time, true),
        ] {
            let mut best = f64::MAX;
            let mut rows = 0u64;
            let mut direct = false;
            for _ in 0..3 {
                let tape = Tape::open(&[arg.clone().into()], OpenOptions::default())?;
                let symbols = Symbols::from_tape(&tape);
                let spec = ReadSpec {
                    order,
                    filter: Filter {
                        types: Some(RecordType::Trade.type_mask()),
                        ..Filter::default()
                    },
                    ..ReadSpec::default()
                };
                let mut opened = Session::open(tape, spec.request());
                let t = Instant::now();
                let (kept, s) = if stream {
                    // A stream's consumer holds a batch at a time.
                    let s = read_batches(&mut opened, &spec, &symbols, &mut |_, b| {
                        std::hint::black_box(&b);
                        Ok(())
                    })?;
                    (Vec::new(), s)
                } else {
                    read_table(&mut opened, &spec, &symbols, 0)?
                };
                std::hint::black_box(&kept);
                drop(kept);
                best = best.min(t.elapsed().as_secs_f64());
                rows = s.total_rows();
                direct = s.direct;
            }
            println!(
                "{arg} {order:?}{}: {rows} trades into Arrow in {:.3}s = {:.1} M trades/s ({}); memcpy of the {:.0} MB: {:.3}s = {:.0} M trades/s equivalent",
                if stream { " streamed, one batch held at a time" } else { " table (read_table)" },
                best,
                rows as f64 / best / 1e6,
                if direct { "direct" } else { "merged" },
                total as f64 / 1e6,
                best_copy,
                rows as f64 / best_copy / 1e6
            );
        }
    }
    Ok(())
}
