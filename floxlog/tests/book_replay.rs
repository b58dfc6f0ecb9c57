//! Every conformance case with book events, replayed through
//! `book_replay::book_at` and checked against a plain model computed here
//! from the case's `expected.jsonl`: events stably sorted by exchange_ts_ns,
//! a snapshot replacing each side with its listed levels, a delta upserting
//! `qty > 0` and removing `qty == 0`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use floxlog::book_replay::{book_at, ReplayOptions};
use floxlog::core::Level;
use floxlog::tape::{OpenOptions, Tape};
use serde_json::Value;

fn corpus_dir() -> PathBuf {
    std::env::var_os("FLOXLOG_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance"))
}

type Side = BTreeMap<i64, i64>;

fn levels(v: &Value) -> Vec<(i64, i64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| (l[0].as_i64().unwrap(), l[1].as_i64().unwrap()))
        .collect()
}

/// The model's book of `sym` after events stamped <= `at`; `None` if an
/// event the spec leaves undefined (negative quantity, a price twice in a
/// snapshot side) was met.
fn model(events: &[&Value], sym: u64, at: i64) -> Option<(Vec<Level>, Vec<Level>)> {
    let (mut bids, mut asks) = (Side::new(), Side::new());
    for e in events {
        if e["symbol_id"].as_u64() != Some(sym) || e["exchange_ts_ns"].as_i64().unwrap() > at {
            continue;
        }
        let snapshot = e["type"] == "book_snapshot";
        for (side, key) in [(&mut bids, "bids"), (&mut asks, "asks")] {
            let lv = levels(&e[key]);
            if lv.iter().any(|l| l.1 < 0) {
                return None;
            }
            if snapshot {
                side.clear();
                for (p, q) in lv {
                    if side.insert(p, q).is_some() {
                        return None;
                    }
                }
            } else {
                for (p, q) in lv {
                    if q == 0 {
                        side.remove(&p);
                    } else {
                        side.insert(p, q);
                    }
                }
            }
        }
    }
    let lv = |(&p, &q): (&i64, &i64)| Level {
        price_raw: p,
        qty_raw: q,
    };
    Some((
        bids.iter().rev().map(lv).collect(),
        asks.iter().map(lv).collect(),
    ))
}

#[test]
fn corpus_books_match_a_plain_model() {
    let root = corpus_dir();
    let mut dirs = Vec::new();
    for sub in ["cases", "real"] {
        let Ok(rd) = std::fs::read_dir(root.join(sub)) else {
            continue;
        };
        dirs.extend(rd.flatten().map(|e| e.path()));
    }
    assert!(
        !dirs.is_empty(),
        "no conformance corpus at {} (FLOXLOG_CONFORMANCE_DIR)",
        root.display()
    );
    dirs.sort();
    let mut checked = 0;
    for dir in dirs {
        let text = std::fs::read_to_string(dir.join("expected.jsonl")).unwrap();
        let all: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut books: Vec<&Value> = all
            .iter()
            .filter(|e| e["type"] == "book_snapshot" || e["type"] == "book_delta")
            .collect();
        if books.is_empty() {
            continue;
        }
        books.sort_by_key(|e| e["exchange_ts_ns"].as_i64().unwrap());
        let mut syms: Vec<u64> = books
            .iter()
            .map(|e| e["symbol_id"].as_u64().unwrap())
            .collect();
        syms.sort();
        syms.dedup();
        for sym in syms {
            let ts: Vec<i64> = books
                .iter()
                .filter(|e| e["symbol_id"].as_u64() == Some(sym))
                .map(|e| e["exchange_ts_ns"].as_i64().unwrap())
                .collect();
            // The final book, one in the middle, and one before any event.
            for at in [i64::MAX, ts[ts.len() / 2], ts[0] - 1] {
                let tape = Tape::open(&[dir.join("segments")], OpenOptions::default()).unwrap();
                let got = book_at(tape, sym as u32, at, None, &ReplayOptions::default());
                match (model(&books, sym, at), got) {
                    (Some((b, a)), Ok((s, _))) => {
                        assert_eq!(s.bids, b, "{} symbol {sym} at {at}: bids", dir.display());
                        assert_eq!(s.asks, a, "{} symbol {sym} at {at}: asks", dir.display());
                        checked += 1;
                    }
                    (None, Err(e)) => {
                        assert!(e.offset.is_some(), "{e}");
                        checked += 1;
                    }
                    (m, g) => panic!(
                        "{} symbol {sym} at {at}: model {m:?}, replay {g:?}",
                        dir.display()
                    ),
                }
            }
        }
    }
    assert!(checked > 0);
    eprintln!("{checked} corpus books checked");
}
