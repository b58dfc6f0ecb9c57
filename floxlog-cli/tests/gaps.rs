//! `floxlog gaps`: planted silences, trade-id and seq jumps, damage and a
//! missing segment are found with their ranges; clean tapes (the
//! conformance corpus's cases, the demo tape) give nothing.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
mod common;
use common::{bin, corpus, encode};

const T0: i64 = 1_714_123_456_000_000_000;
const MS: i64 = 1_000_000;

fn trade(ts: i64, sym: u32, id: u64) -> Value {
    json!({"type": "trade", "exchange_ts_ns": ts, "recv_ts_ns": ts + 7, "price_raw": 100,
           "qty_raw": 1, "trade_id": id, "symbol_id": sym, "side": 0, "instrument": 0,
           "exchange_id": 0})
}

fn delta(ts: i64, sym: u32, seq: i64) -> Value {
    json!({"type": "book_delta", "exchange_ts_ns": ts, "recv_ts_ns": ts + 9, "seq": seq,
           "symbol_id": sym, "header_type": 1, "instrument": 0, "exchange_id": 0,
           "bids": [[99, 1]], "asks": []})
}

/// Writes `events` as a tape `dir/name` (small segments) and returns it.
fn tape(dir: &Path, name: &str, events: &[Value], extra: &[&str]) -> PathBuf {
    let input = dir.join(format!("{name}.jsonl"));
    let text: String = events.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let out = dir.join(name);
    encode(&input, &out, extra);
    out
}

fn gaps_json(path: &Path, extra: &[&str], code: i32) -> Vec<Value> {
    let out = bin()
        .arg("gaps")
        .arg(path)
        .arg("--json")
        .args(extra)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Symbol 1: trades every ms with consecutive ids, silent 30 s after the
/// 500th, ids 1001..1003 missing later. Symbol 2: deltas every 2 ms with
/// seq 1, 2, ... except 40..49 missing. Symbol 3: a thin series, a trade
/// every 20 s whose ids step by 5 (not a consecutive counter).
fn planted() -> Vec<Value> {
    let mut ev = Vec::new();
    let mut ts = T0;
    for id in 1..=2000u64 {
        if id == 501 {
            ts += 30_000 * MS;
        }
        let id = if id > 1000 { id + 3 } else { id };
        ev.push(trade(ts, 1, id));
        ts += MS;
    }
    for i in 0..1000i64 {
        let seq = if i >= 39 { i + 11 } else { i + 1 };
        ev.push(delta(T0 + i * 2 * MS + 1, 2, seq));
    }
    for i in 0..30u64 {
        ev.push(trade(T0 + i as i64 * 20_000 * MS + 3, 3, 1 + i * 5));
    }
    ev.sort_by_key(|e| e["exchange_ts_ns"].as_i64().unwrap());
    ev
}

fn find<'a>(found: &'a [Value], kind: &str) -> Vec<&'a Value> {
    found.iter().filter(|g| g["kind"] == kind).collect()
}

#[test]
fn planted_silence_id_and_seq_jumps_are_found_and_nothing_else() {
    let d = tempfile::tempdir().unwrap();
    for layout in ["flox", "spec"] {
        let t = tape(
            d.path(),
            layout,
            &planted(),
            &["--layout", layout, "--max-segment-bytes", "16K"],
        );
        let found = gaps_json(&t, &[], 1);
        let quiet = find(&found, "quiet");
        assert_eq!(quiet.len(), 1, "{layout}: {found:?}");
        assert_eq!(quiet[0]["symbol_id"], 1);
        assert_eq!(quiet[0]["type"], "trade");
        assert_eq!(quiet[0]["from_ns"], T0 + 499 * MS);
        assert_eq!(quiet[0]["to_ns"], T0 + 500 * MS + 30_000 * MS);
        assert_eq!(quiet[0]["to_recv_ns"], T0 + 500 * MS + 30_000 * MS + 7);
        let ids = find(&found, "trade_id");
        assert_eq!(ids.len(), 1, "{layout}: {found:?}");
        assert_eq!(ids[0]["symbol_id"], 1);
        assert_eq!(
            (&ids[0]["first_missing"], &ids[0]["last_missing"]),
            (&json!(1001), &json!(1003))
        );
        let seqs = find(&found, "book_seq");
        assert_eq!(seqs.len(), 1, "{layout}: {found:?}");
        assert_eq!(seqs[0]["symbol_id"], 2);
        assert_eq!(
            (&seqs[0]["first_missing"], &seqs[0]["last_missing"]),
            (&json!(40), &json!(49))
        );
        assert_eq!(seqs[0]["from_ns"], T0 + 38 * 2 * MS + 1);
        assert_eq!(found.len(), 3, "{layout}: {found:?}");
        // A longer --min-gap drops the silence; --symbol keeps one symbol.
        assert_eq!(gaps_json(&t, &["--min-gap", "1m"], 1).len(), 2);
        let only2 = gaps_json(&t, &["--symbol", "2"], 1);
        assert_eq!(only2.len(), 1);
        assert_eq!(only2[0]["kind"], "book_seq");
        assert!(gaps_json(&t, &["--symbol", "3"], 0).is_empty());
        assert!(gaps_json(&t, &["--type", "trade", "--symbol", "2"], 0).is_empty());
    }
}

#[test]
fn text_names_times_in_utc_and_durations() {
    let d = tempfile::tempdir().unwrap();
    let t = tape(d.path(), "t", &planted(), &[]);
    let out = bin()
        .arg("gaps")
        .arg(&t)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("quiet     symbol 1 trade: no events 2024-04-26T09:24:16.499000000Z .. 2024-04-26T09:24:46.500000000Z (30.00 s), typically one every 1.00 ms"), "{text}");
    assert!(text.contains("trade ids 1001..1003 missing (3)"), "{text}");
    assert!(text.contains("seq 40..49 missing (10)"), "{text}");
    assert!(
        text.contains("gaps found: 1 quiet, 1 trade_id, 1 book_seq, 0 damage in 3030 events"),
        "{text}"
    );
}

#[test]
fn damage_and_a_missing_segment_are_found_with_file_and_offset() {
    let d = tempfile::tempdir().unwrap();
    let ev: Vec<Value> = (0..3000)
        .map(|i| trade(T0 + i * MS, 1, i as u64 + 1))
        .collect();
    let t = tape(
        d.path(),
        "t",
        &ev,
        &["--compression", "none", "--max-segment-bytes", "32K"],
    );
    let mut segs: Vec<PathBuf> = std::fs::read_dir(&t)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "floxlog"))
        .collect();
    segs.sort();
    assert!(segs.len() >= 4, "{segs:?}");
    assert!(gaps_json(&t, &[], 0).is_empty());
    // Flip a byte in a frame of the second segment: its CRC fails there.
    let mut b = std::fs::read(&segs[1]).unwrap();
    let at = 64 + 16 + 64 * 10 + 20;
    b[at] ^= 0xff;
    std::fs::write(&segs[1], &b).unwrap();
    // The third goes missing: a hole.
    std::fs::remove_file(&segs[2]).unwrap();
    let found = gaps_json(&t, &[], 1);
    let damage = find(&found, "damage");
    assert_eq!(damage.len(), 2, "{found:?}");
    let crc = damage.iter().find(|g| g.get("offset").is_some()).unwrap();
    assert_eq!(crc["file"], segs[1].display().to_string());
    assert!(crc["offset"].as_u64().unwrap() <= at as u64, "{crc}");
    assert!(
        crc["from_ns"].as_i64().is_some() && crc["to_ns"].as_i64().is_some(),
        "{crc}"
    );
    let missing = damage.iter().find(|g| g.get("offset").is_none()).unwrap();
    // The listing's finding: the manifest that lists it, naming the file.
    let name = segs[2].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        missing["message"].as_str().unwrap().contains(&name),
        "{missing}"
    );
    // The events lost with the damage and the hole are a jump in the ids.
    assert!(!find(&found, "trade_id").is_empty(), "{found:?}");
}

#[test]
fn clean_corpus_cases_and_the_demo_tape_give_nothing() {
    let cases = corpus().join("cases");
    let mut n = 0;
    for e in std::fs::read_dir(&cases).unwrap() {
        let dir = e.unwrap().path().join("segments");
        if !dir.is_dir() {
            continue; // a writer-only case (empty input)
        }
        let found = gaps_json(&dir, &["--skip-unknown"], 0);
        assert!(found.is_empty(), "{}: {found:?}", dir.display());
        n += 1;
    }
    assert!(n >= 5);
    let d = tempfile::tempdir().unwrap();
    let demo = d.path().join("demo");
    bin().arg("demo").arg(&demo).assert().success();
    assert!(gaps_json(&demo, &[], 0).is_empty());
}

#[test]
fn usage_and_unreadable_tapes_have_their_exit_codes() {
    bin()
        .args(["gaps", "x", "--min-gap", "soon"])
        .assert()
        .code(2);
    let d = tempfile::tempdir().unwrap();
    bin()
        .arg("gaps")
        .arg(d.path().join("none"))
        .assert()
        .code(3);
}
