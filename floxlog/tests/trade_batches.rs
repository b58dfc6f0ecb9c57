//! `TapeReader::next_trades` (the core's batch kernel when segments are
//! read in place) against `TapeReader::next_item`: the same events, the
//! same problems (error, offset, events before), the same late count and
//! the same last position, on tapes of mixed and trade-only segments,
//! damaged or not, in file and time order, with and without filters.

mod common;
use common::mixed_segment;
use floxlog::core::{Compression, Event, Position, Trade};
use floxlog::segment::{finish_to_vec, vec_writer};
use floxlog::synth::mixed_event;
use floxlog::tape::read::engine::OpenedTape;
use floxlog::tape::read::{Filter, Order, Request};
use floxlog::tape::{OpenOptions, Tape};
use std::path::{Path, PathBuf};

/// A segment of `n` events, each a trade but every `every`th (none if 0).
fn trade_segment(compression: Compression, n: u64, every: u64) -> Vec<u8> {
    trade_segment_at(compression, n, every, |i| 1_000 + i as i64)
}

/// [`trade_segment`] with trade `i` at `ts(i)`.
fn trade_segment_at(compression: Compression, n: u64, every: u64, ts: fn(u64) -> i64) -> Vec<u8> {
    let mut w = vec_writer(floxlog::core::WriterConfig {
        compression,
        index_interval: 50,
        created_ns: 1,
        ..Default::default()
    })
    .unwrap();
    for i in 0..n {
        let ev = if every > 0 && i % every == every - 1 {
            // Not a trade (the seed's first events include a book).
            let mut k = 0;
            loop {
                let e = mixed_event(9, k);
                if !matches!(e.as_event(), Event::Trade(_)) {
                    break e;
                }
                k += 1;
            }
        } else {
            mixed_event(3, i)
        };
        let mut e = ev.as_event();
        if let Event::Trade(t) = &mut e {
            t.exchange_ts_ns = ts(i);
            t.symbol_id = (i % 3) as u32;
        }
        w.append(&e).unwrap();
    }
    finish_to_vec(w).unwrap()
}

/// Writes the segments into `dir`, damaging some; returns their paths.
fn write_tape(dir: &Path) -> Vec<PathBuf> {
    let mut segs = Vec::new();
    for (k, z) in [Compression::None, Compression::Lz4]
        .into_iter()
        .enumerate()
    {
        segs.push(trade_segment(z, 3000, 0));
        segs.push(trade_segment(z, 2000, 97));
        segs.push(mixed_segment(z, true, 5 + k as u64, 1500));
        // A flipped byte (CRC or block damage) and a torn tail.
        let mut bad = trade_segment(z, 2000, 301);
        let at = bad.len() * 2 / 3;
        bad[at] ^= 0x20;
        segs.push(bad);
        let mut torn = mixed_segment(z, false, 11, 800);
        torn.truncate(torn.len() - 7);
        segs.push(torn);
    }
    segs.iter()
        .enumerate()
        .map(|(i, s)| {
            let p = dir.join(format!("s{i:02}.floxlog"));
            std::fs::write(&p, s).unwrap();
            p
        })
        .collect()
}

/// Events as text, problems.
type Read = (Vec<String>, Vec<String>);

/// Segment number and position of each event.
type Places = Vec<(usize, Position)>;

fn per_event(paths: &[PathBuf], cfg: &Request) -> (Read, Places) {
    let tape = Tape::open(paths, OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(tape);
    let mut r = o.reader(cfg);
    let (mut v, mut places) = (Vec::new(), Vec::new());
    while let Some(it) = r.next_item().unwrap() {
        v.push(format!("{:?}", it.event));
        places.push((it.segment, it.position));
    }
    let problems = r.problems().iter().map(|p| format!("{p:?}")).collect();
    ((v, problems), places)
}

fn batched(paths: &[PathBuf], cfg: &Request, cap: usize, places: &Places) -> Read {
    let tape = Tape::open(paths, OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(tape);
    let mut r = o.reader(cfg);
    let mut v = Vec::new();
    let mut out = vec![Trade::default(); cap];
    loop {
        let (run, done) = r.next_trades(&mut out[..]);
        done.unwrap();
        v.extend(
            out[..run.count]
                .iter()
                .map(|t| format!("{:?}", Event::Trade(*t))),
        );
        if run.count > 0 {
            assert_eq!(run.last, places.get(v.len() - 1).copied(), "at {}", v.len());
        }
        if run.declined {
            let it = r.current().unwrap().expect("declined event");
            assert!(!matches!(it.event, Event::Trade(_)));
            v.push(format!("{:?}", it.event));
        } else if run.count < cap {
            break;
        }
    }
    let problems = r.problems().iter().map(|p| format!("{p:?}")).collect();
    (v, problems)
}

#[test]
fn trade_batches_read_what_single_events_read() {
    let d = tempfile::tempdir().unwrap();
    let paths = write_tape(d.path());
    let filters = [
        Filter::default(),
        Filter {
            types: Some([false, true, false, true, false, true]),
            ..Filter::default()
        },
        Filter {
            symbols: Some(vec![1]),
            from: Some(1_500),
            ..Filter::default()
        },
    ];
    for order in [Order::File, Order::Time] {
        for filter in &filters {
            let cfg = Request {
                order,
                filter: filter.clone(),
                ..Request::default()
            };
            let (want, places) = per_event(&paths, &cfg);
            assert!(!want.1.is_empty(), "the tape has damage");
            for cap in [1, 5, 4096] {
                let got = batched(&paths, &cfg, cap, &places);
                assert_eq!(got, want, "{order:?} {filter:?} cap {cap}");
            }
        }
    }
    // Time order over one sorted segment is read in place too.
    let one = &paths[..1];
    let cfg = Request::default();
    let (want, places) = per_event(one, &cfg);
    assert_eq!(want.0.len(), 3000);
    for cap in [1, 7, 4096] {
        assert_eq!(batched(one, &cfg, cap, &places), want);
    }
    // A segment flagged Sorted that is not: time order relies on the flag,
    // so it checks it, and stops at the first step back with an error
    // naming the flag; batches read what single events read.
    let mut liar = trade_segment_at(Compression::None, 3000, 0, |i| 1_000 + (i % 7) as i64);
    liar[floxlog::core::segment_header::field::FLAGS] |=
        floxlog::core::segment_header::flags::SORTED;
    let p = d.path().join("liar.floxlog");
    std::fs::write(&p, liar).unwrap();
    let one = [p];
    let (want, places) = per_event(&one, &cfg);
    let file_order = Request {
        order: Order::File,
        ..Request::default()
    };
    let all = per_event(&one, &file_order).0 .0;
    assert_eq!(all.len(), 3000);
    assert!(
        want.0.len() < all.len() && all.starts_with(&want.0),
        "up to the first step back"
    );
    assert_eq!(want.1.len(), 1);
    assert!(want.1[0].contains("flagged Sorted"), "{}", want.1[0]);
    for cap in [1, 7, 4096] {
        assert_eq!(batched(&one, &cfg, cap, &places), want);
    }
}
