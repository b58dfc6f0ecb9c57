//! `floxlog diff`: identical tapes in any codec and layout, the first
//! differing field, an extra event, damage (exit 4), `--bytes`, `--json`.

use serde_json::Value;
use std::path::{Path, PathBuf};
mod common;
use common::{bin, corpus, encode};

/// `diff A B ARGS --json`: exit code and report.
fn diff(a: &Path, b: &Path, args: &[&str]) -> (i32, Value) {
    let out = bin()
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

/// The books-mixed case's events with trades-10k's first 300 (a tape of
/// several record types, 704 events, 509 trades), as a JSONL file in `dir`.
fn events(dir: &Path, mut edit: impl FnMut(&mut Vec<String>)) -> PathBuf {
    let read = |c: &str| {
        std::fs::read_to_string(corpus().join("cases").join(c).join("events.jsonl")).unwrap()
    };
    let mut lines: Vec<String> = read("books-mixed").lines().map(String::from).collect();
    lines.extend(read("trades-10k").lines().take(300).map(String::from));
    // In time order, so that no writer reorders them.
    let ts = |l: &String| serde_json::from_str::<Value>(l).unwrap()["exchange_ts_ns"].as_i64();
    lines.sort_by_key(ts);
    edit(&mut lines);
    let p = dir.join(format!("events-{}.jsonl", lines.len()));
    let p = if p.exists() {
        dir.join("events-edited.jsonl")
    } else {
        p
    };
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

#[test]
fn identical_across_codecs_layouts_and_copies() {
    let t = tempfile::tempdir().unwrap();
    let ev = events(t.path(), |_| {});
    let plain = t.path().join("plain");
    encode(&ev, &plain, &["--compression", "none"]);
    let copy = t.path().join("copy");
    encode(&ev, &copy, &["--compression", "none"]);
    let lz4 = t.path().join("lz4");
    bin()
        .args(["convert", "--compression", "lz4", "-o"])
        .arg(&lz4)
        .arg(&plain)
        .assert()
        .success();
    let spec = t.path().join("spec");
    encode(
        &ev,
        &spec,
        &["--layout", "spec", "--max-segment-bytes", "8K"],
    );

    let (code, v) = diff(&plain, &copy, &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["outcome"], "identical");
    assert_eq!(v["equal"], 704);
    assert_eq!(v["counts_a"]["trade"], 509);
    assert_eq!(v["counts_a"], v["counts_b"]);
    assert_eq!(diff(&plain, &lz4, &[]).0, 0);
    assert_eq!(diff(&lz4, &plain, &["--order", "time"]).0, 0);
    // Per-type series interleave differently in file order, not in time.
    let (code, v) = diff(&plain, &spec, &["--order", "time"]);
    assert_eq!((code, &v["mode"]), (0, &Value::from("time")), "{v}");
    assert_eq!(diff(&plain, &spec, &[]).0, 1);

    // Byte for byte: the copy (same created_ns) is identical, LZ4 is not.
    let (code, v) = diff(&plain, &copy, &["--bytes"]);
    assert_eq!((code, &v["mode"]), (0, &Value::from("bytes")), "{v}");
    let (code, v) = diff(&plain, &lz4, &["--bytes"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["outcome"], "different");
    assert!(v["bytes"]["offset"].is_u64(), "{v}");
}

#[test]
fn names_the_first_differing_field_and_counts_to_the_end() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    encode(&events(t.path(), |_| {}), &a, &["--compression", "lz4"]);
    // Change one trade's price (event 500: a trade after the books).
    let b = t.path().join("b");
    let mut old = 0i64;
    let ev_b = events(t.path(), |l| {
        assert!(l[500].contains("\"trade\""));
        let mut v: Value = serde_json::from_str(&l[500]).unwrap();
        old = v["price_raw"].as_i64().unwrap();
        v["price_raw"] = Value::from(old + 1);
        l[500] = v.to_string();
    });
    encode(&ev_b, &b, &["--compression", "lz4"]);
    let (code, v) = diff(&a, &b, &[]);
    assert_eq!(code, 1, "{v}");
    let f = &v["first"];
    assert_eq!(f["event"], 500);
    assert_eq!(v["equal"], 500);
    assert_eq!(f["fields"][0]["field"], "price_raw");
    assert_eq!(f["fields"][0]["a"], old.to_string());
    assert_eq!(f["fields"][0]["b"], (old + 1).to_string());
    assert_eq!(f["fields"].as_array().unwrap().len(), 1);
    assert_eq!(f["a"]["type"], "trade");
    assert!(f["a"]["in_block"].is_u64(), "LZ4 position: {v}");
    assert!(f["b"]["file"].as_str().unwrap().contains("b/"), "{v}");
    assert!(f["b"]["offset"].as_u64().unwrap() >= 64);
    assert_eq!(v["counts_a"]["events"], 704);
    assert_eq!(v["counts_b"]["events"], 704);

    // The text names the field too.
    bin()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .assert()
        .code(1)
        .stdout(predicates::str::contains(format!(
            "price_raw: {old} vs {}",
            old + 1
        )))
        .stdout(predicates::str::contains("DIFFERENT at event 500"));
}

#[test]
fn one_tape_with_more_events() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    encode(&events(t.path(), |_| {}), &a, &[]);
    let b = t.path().join("b");
    let ev_b = events(t.path(), |l| {
        let last = l[l.len() - 1].clone();
        l.push(last);
    });
    encode(&ev_b, &b, &[]);
    let (code, v) = diff(&a, &b, &[]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["first"]["event"], 704);
    assert!(v["first"]["a"].is_null(), "{v}");
    assert_eq!(v["first"]["b"]["type"], "trade");
    assert_eq!(v["counts_b"]["events"], 705);
    let (code, v) = diff(&b, &a, &["--order", "time"]);
    assert_eq!(code, 1, "{v}");
    assert!(v["first"]["b"].is_null(), "{v}");
}

#[test]
fn damage_exits_4_with_kind_and_offset() {
    let t = tempfile::tempdir().unwrap();
    for case in ["crc-mismatch", "lz4-garbage", "short-trade"] {
        let seg = corpus().join("corrupt").join(case).join("segment.floxlog");
        let copy = t.path().join(format!("{case}.floxlog"));
        std::fs::copy(&seg, &copy).unwrap();
        for order in ["file", "time"] {
            let (code, v) = diff(&seg, &copy, &["--order", order]);
            assert_eq!(code, 4, "{case}: {v}");
            assert_eq!(v["outcome"], "damaged");
            let d = &v["damage"];
            assert_eq!(d.as_array().unwrap().len(), 2, "both tapes: {v}");
            assert_eq!(d[0]["tape"], "a");
            assert_eq!(d[1]["tape"], "b");
            assert!(d[0]["offset"].is_u64() && d[0]["kind"].is_string());
            assert!(v["first"].is_null(), "{v}");
        }
    }
    // A damaged B against an intact A: the events before the damage
    // compared equal.
    let good = corpus().join("cases/trades-10k/segments");
    let a = t.path().join("good");
    std::fs::create_dir(&a).unwrap();
    let b = t.path().join("bad");
    std::fs::create_dir(&b).unwrap();
    for e in std::fs::read_dir(&good).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap();
        std::fs::copy(&p, a.join(name)).unwrap();
        let mut bytes = std::fs::read(&p).unwrap();
        if p.extension().is_some_and(|x| x == "floxlog") {
            // Flip a byte of a frame well inside the segment.
            bytes[64 + 60 * 100 + 20] ^= 0xff;
        }
        std::fs::write(b.join(name), bytes).unwrap();
    }
    let (code, v) = diff(&a, &b, &["--ignore-manifest"]);
    assert_eq!(code, 4, "{v}");
    assert_eq!(v["damage"][0]["tape"], "b");
    assert_eq!(v["damage"][0]["kind"], "crc_mismatch");
    assert_eq!(v["equal"], v["damage"][0]["event"], "{v}");
    assert!(v["equal"].as_u64().unwrap() > 0);
}

#[test]
fn usage_and_io_errors() {
    let t = tempfile::tempdir().unwrap();
    bin()
        .args(["diff", "/nonexistent/a"])
        .arg(t.path())
        .assert()
        .code(3);
    bin()
        .args(["diff", "--order", "sideways"])
        .arg(t.path())
        .arg(t.path())
        .assert()
        .code(2);
    bin()
        .args(["diff", "--help"])
        .assert()
        .success()
        .stdout(predicates::str::contains("Exit codes"));
}
