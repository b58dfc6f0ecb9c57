//! `floxlog book`: books at a time and sampled, on tapes written here from
//! hand-made events (books computed by hand) and on the conformance corpus.

use predicates::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
mod common;
use common::{bin, corpus};

fn book(kind: &str, ts: i64, sym: u32, bids: Value, asks: Value) -> Value {
    json!({"type": kind, "exchange_ts_ns": ts, "recv_ts_ns": ts, "seq": 0, "symbol_id": sym,
           "header_type": if kind == "book_snapshot" { 0 } else { 1 }, "instrument": 0,
           "exchange_id": 0, "bids": bids, "asks": asks})
}

/// Encodes `events` into a one-segment file in `dir`; returns its path.
fn tape(dir: &Path, events: &[Value]) -> PathBuf {
    let input = dir.join("in.jsonl");
    let text: String = events.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let out = dir.join("t.floxlog");
    bin()
        .arg("encode")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .args(["--segment", "--compression", "none", "--created-ns", "1"])
        .assert()
        .success();
    out
}

fn hand_events() -> Vec<Value> {
    vec![
        book(
            "book_snapshot",
            100,
            7,
            json!([[98, 2], [100, 1]]),
            json!([[101, 3], [103, 4]]),
        ),
        book("book_delta", 150, 8, json!([[1, 1]]), json!([])),
        book(
            "book_delta",
            200,
            7,
            json!([[99, 7], [100, 5]]),
            json!([[101, 0]]),
        ),
        book("book_delta", 300, 7, json!([[98, 0]]), json!([[102, 1]])),
    ]
}

fn at_json(t: &Path, sym: &str, at: &str, extra: &[&str]) -> Value {
    let out = bin()
        .arg("book")
        .arg(t)
        .args(["--symbol", sym, "--at", at, "--json"])
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn book_at_hand_computed() {
    let d = tempfile::tempdir().unwrap();
    let t = tape(d.path(), &hand_events());
    let v = at_json(&t, "7", "99", &[]);
    assert_eq!(v["bids"], json!([]));
    assert_eq!(v["last_event_ts"], Value::Null);
    let v = at_json(&t, "7", "100", &[]);
    assert_eq!(v["bids"], json!([[100, 1], [98, 2]]));
    assert_eq!(v["asks"], json!([[101, 3], [103, 4]]));
    let v = at_json(&t, "7", "299", &[]);
    assert_eq!(v["bids"], json!([[100, 5], [99, 7], [98, 2]]));
    assert_eq!(v["asks"], json!([[103, 4]]));
    assert_eq!(
        (v["at"].clone(), v["last_event_ts"].clone()),
        (json!(299), json!(200))
    );
    let v = at_json(&t, "7", "300", &["--depth", "1"]);
    assert_eq!(v["bids"], json!([[100, 5]]));
    assert_eq!(v["asks"], json!([[102, 1]]));
    assert_eq!(at_json(&t, "8", "1000", &[])["bids"], json!([[1, 1]]));
    // Text output: decimal prices, best levels first.
    bin()
        .arg("book")
        .arg(&t)
        .args(["--symbol", "7", "--at", "1000"])
        .assert()
        .success()
        .stdout(predicate::str::contains("last book event 300"))
        .stdout(predicate::str::contains("0.00000005"));
}

#[test]
fn book_every_csv_and_jsonl() {
    let d = tempfile::tempdir().unwrap();
    let t = tape(d.path(), &hand_events());
    let out = bin()
        .arg("book")
        .arg(&t)
        .args([
            "--symbol", "7", "--every", "100", "--from", "50", "--to", "350",
        ])
        .args(["--depth", "2"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let want = "ts,last_event_ts,bid_price_raw_1,bid_qty_raw_1,bid_price_raw_2,bid_qty_raw_2,ask_price_raw_1,ask_qty_raw_1,ask_price_raw_2,ask_qty_raw_2\n\
50,,,,,,,,,\n\
150,100,100,1,98,2,101,3,103,4\n\
250,200,100,5,99,7,103,4,,\n";
    assert_eq!(String::from_utf8(out).unwrap(), want);
    let f = d.path().join("s.jsonl");
    bin()
        .arg("book")
        .arg(&t)
        .args([
            "--symbol", "7", "--every", "100", "--from", "300", "--to", "301",
        ])
        .args(["--format", "jsonl", "-o"])
        .arg(&f)
        .assert()
        .success();
    let v: Value = serde_json::from_str(std::fs::read_to_string(&f).unwrap().trim()).unwrap();
    assert_eq!(v["bids"], json!([[100, 5], [99, 7]]));
    assert_eq!(v["asks"], json!([[102, 1], [103, 4]]));
    // Parquet (its columns are checked in floxlog-arrow's book_samples).
    let pq = d.path().join("s.parquet");
    bin()
        .arg("book")
        .arg(&t)
        .args([
            "--symbol", "7", "--every", "100", "--from", "50", "--to", "350",
        ])
        .args(["--format", "parquet", "-o"])
        .arg(&pq)
        .assert()
        .success();
    let bytes = std::fs::read(&pq).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    bin()
        .arg("book")
        .arg(&t)
        .args([
            "--symbol", "7", "--every", "100", "--from", "50", "--to", "350",
        ])
        .args(["--format", "parquet"])
        .assert()
        .code(2);
}

#[test]
fn book_errors_and_exit_codes() {
    let d = tempfile::tempdir().unwrap();
    let mut ev = hand_events();
    ev.push(book("book_delta", 400, 7, json!([[97, -5]]), json!([])));
    let t = tape(d.path(), &ev);
    // The bad event: fifth frame after the 64-byte header; frames are 12 + payload.
    let off = 64 + (12 + 40 + 16 * 4) + (12 + 40 + 16) + (12 + 40 + 16 * 3) + (12 + 40 + 16 * 2);
    bin()
        .arg("book")
        .arg(&t)
        .args(["--symbol", "7", "--at", "400"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("t.floxlog"))
        .stderr(predicate::str::contains(format!("byte {off}")))
        .stderr(predicate::str::contains("negative qty_raw"));
    // Before it, fine.
    assert_eq!(
        at_json(&t, "7", "399", &[])["asks"],
        json!([[102, 1], [103, 4]])
    );
    // Capacity: three bids do not fit in two.
    bin()
        .arg("book")
        .arg(&t)
        .args(["--symbol", "7", "--at", "250", "--capacity", "2"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("capacity"));
    for args in [
        &["--symbol", "7"][..],
        &["--symbol", "NOPE", "--at", "1"],
        &["--symbol", "7", "--every", "1s"],
        &[
            "--symbol", "7", "--at", "1", "--every", "1s", "--from", "0", "--to", "1",
        ],
        &["--symbol", "7", "--every", "0s", "--from", "0", "--to", "1"],
        &["--symbol", "7", "--at", "yesterday"],
    ] {
        bin().arg("book").arg(&t).args(args).assert().code(2);
    }
    bin()
        .arg("book")
        .arg(d.path().join("missing"))
        .args(["--symbol", "7", "--at", "1"])
        .assert()
        .code(3);
}

/// Every corpus case with book events: `--at` after the last event equals
/// a plain replay of `expected.jsonl` (stably sorted by exchange_ts_ns).
#[test]
fn corpus_final_books() {
    let cases = corpus().join("cases");
    let rd = std::fs::read_dir(&cases)
        .unwrap_or_else(|e| panic!("no conformance corpus at {}: {e}", cases.display()));
    let mut checked = 0;
    for dir in rd.flatten().map(|e| e.path()) {
        let text = std::fs::read_to_string(dir.join("expected.jsonl")).unwrap();
        let mut evs: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|e: &Value| e["type"] == "book_snapshot" || e["type"] == "book_delta")
            .collect();
        let Some(sym) = evs.first().map(|e| e["symbol_id"].as_u64().unwrap()) else {
            continue;
        };
        evs.sort_by_key(|e| e["exchange_ts_ns"].as_i64().unwrap());
        let mut sides = [
            std::collections::BTreeMap::new(),
            std::collections::BTreeMap::new(),
        ];
        let mut bad = false;
        for e in evs.iter().filter(|e| e["symbol_id"].as_u64() == Some(sym)) {
            for (side, key) in sides.iter_mut().zip(["bids", "asks"]) {
                if e["type"] == "book_snapshot" {
                    side.clear();
                }
                for l in e[key].as_array().unwrap() {
                    let (p, q) = (l[0].as_i64().unwrap(), l[1].as_i64().unwrap());
                    bad |= q < 0;
                    if q == 0 && e["type"] == "book_delta" {
                        side.remove(&p);
                    } else {
                        bad |= side.insert(p, q).is_some() && e["type"] == "book_snapshot";
                    }
                }
            }
        }
        let mut cmd = bin();
        cmd.arg("book").arg(dir.join("segments")).args([
            "--symbol",
            &sym.to_string(),
            "--at",
            &i64::MAX.to_string(),
            "--json",
        ]);
        if bad {
            cmd.assert().code(1);
        } else {
            let out = cmd.assert().success().get_output().stdout.clone();
            let v: Value = serde_json::from_slice(&out).unwrap();
            let bids: Vec<Value> = sides[0].iter().rev().map(|(p, q)| json!([p, q])).collect();
            let asks: Vec<Value> = sides[1].iter().map(|(p, q)| json!([p, q])).collect();
            assert_eq!(v["bids"], Value::Array(bids), "{}", dir.display());
            assert_eq!(v["asks"], Value::Array(asks), "{}", dir.display());
        }
        checked += 1;
    }
    assert!(checked > 0);
}
