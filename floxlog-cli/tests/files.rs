//! Issue 23: segments cut short after their writer closed them, files in a
//! tape directory that are not segment files, and `reindex` keeping the
//! file order of LZ4 segments.

use floxlog::core::segment_header::flags;
use floxlog::core::{Event, SegmentHeader, Trade};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
mod common;
use common::{bin, encode};

/// Trades at `ts` as JSON lines in the corpus schema.
fn trades_jsonl(ts: &[i64]) -> String {
    ts.iter()
        .map(|&t| {
            let tr = Trade {
                exchange_ts_ns: t,
                recv_ts_ns: t,
                price_raw: 100_000_000,
                qty_raw: 1,
                trade_id: t as u64,
                symbol_id: 1,
                ..Trade::default()
            };
            let v =
                floxlog::json::event_to_value(&Event::Trade(tr), floxlog::json::PriceStyle::Raw);
            format!("{v}\n")
        })
        .collect()
}

/// A tape of `n` trades in several segments (with a manifest.json);
/// its segment files in order.
fn tape(dir: &Path, n: i64, extra: &[&str]) -> (PathBuf, Vec<PathBuf>) {
    let tape = dir.join("tape");
    let input = dir.join("in.jsonl");
    std::fs::write(&input, trades_jsonl(&(1..=n).collect::<Vec<_>>())).unwrap();
    encode(
        &input,
        &tape,
        &[&["--max-segment-bytes", "4K"], extra].concat(),
    );
    let mut segs: Vec<PathBuf> = std::fs::read_dir(&tape)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "floxlog"))
        .collect();
    segs.sort();
    assert!(segs.len() >= 3);
    (tape, segs)
}

fn truncate(p: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(p)
        .unwrap()
        .set_len(len)
        .unwrap();
}

fn cat_trades(tape: &Path) -> std::process::Output {
    bin()
        .arg("cat")
        .arg(tape)
        .args(["--type", "trade"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// Issue 23 item 2: a listed segment truncated to 0 or 64 bytes in a tape
/// whose writer is gone was read with a warning ("writer is still
/// running") and exit 0, its trades dropped. It is damage (exit 1, the
/// file named); with a live writer holding the tape it stays tolerated.
#[test]
fn listed_segment_cut_to_0_or_64_bytes_is_damage_when_no_writer_holds_the_tape() {
    for compression in ["lz4", "none"] {
        for len in [0, 64] {
            let d = tempfile::tempdir().unwrap();
            let (tape, segs) = tape(d.path(), 3000, &["--compression", compression]);
            assert!(tape.join("manifest.json").exists());
            let cut = &segs[1];
            let name = cut.file_name().unwrap().to_str().unwrap().to_string();
            truncate(cut, len);
            let o = cat_trades(&tape);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{compression} {len}: {err}");
            assert!(
                err.contains(&format!("{name} at byte {len}")) && err.contains("cut short"),
                "{err}"
            );
            assert!(!err.contains("still running"), "{err}");
            // A live writer holds the tape: its torn tail is tolerated.
            let live = floxlog::tape::dir::TapeLock::acquire(&tape, "writing").unwrap();
            let o = cat_trades(&tape);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(0), "{compression} {len}: {err}");
            if len == 0 {
                assert!(err.contains("its writer is still running"), "{err}");
            }
            drop(live);
        }
    }
}

/// Issue 23 item 2: without a manifest, a finished segment (index written)
/// cut to its header is damage too; the torn tail of an unfinished one is
/// a warning that does not claim a running writer.
#[test]
fn finished_segment_cut_to_its_header_is_damage_without_a_manifest() {
    let d = tempfile::tempdir().unwrap();
    let (tape, segs) = tape(d.path(), 3000, &["--compression", "none"]);
    std::fs::remove_file(tape.join("manifest.json")).unwrap();
    let _ = std::fs::remove_file(tape.join(".manifest"));
    let first = std::fs::read(&segs[0]).unwrap();
    truncate(&segs[0], 64);
    let o = cat_trades(&tape);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let name = segs[0].file_name().unwrap().to_str().unwrap();
    assert!(err.contains(&format!("{name} at byte 64")), "{err}");
    assert!(err.contains("finished header puts the index"), "{err}");
    // An unfinished last segment (placeholder header) cut mid-frame: a
    // torn tail, tolerated, but no writer is said to run.
    let last = segs.last().unwrap();
    let bytes = std::fs::read(&segs[2]).unwrap();
    let mut placeholder = bytes[..64 + 60 + 7].to_vec();
    let h = SegmentHeader {
        flags: 0,
        event_count: 0,
        first_event_ns: 0,
        last_event_ns: 0,
        index_offset: 0,
        ..SegmentHeader::parse(&bytes).unwrap()
    };
    placeholder[..64].copy_from_slice(&h.to_bytes());
    std::fs::write(last, placeholder).unwrap();
    std::fs::write(&segs[0], first).unwrap();
    let o = cat_trades(&tape);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("no writer holds the tape now"), "{err}");
    assert!(!err.contains("still running"), "{err}");
}

/// A FIFO and a symbolic link to a file outside the tape, named like
/// segments, in tape `dir` (without a manifest); their paths.
#[cfg(unix)]
fn plant(tape: &Path, outside: &Path) -> (PathBuf, PathBuf) {
    let fifo = tape.join("1.floxlog");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(ok.success());
    let link = tape.join("2.floxlog");
    std::os::unix::fs::symlink(outside, &link).unwrap();
    (fifo, link)
}

/// Issue 23 item 3: a FIFO or a link out of the tape directory named like
/// a segment was skipped by `verify` with exit 0 and no word. Now each is
/// named with why (a warning; an error with --strict); no reader opens
/// the FIFO (no hang) or follows the link.
#[cfg(unix)]
#[test]
fn fifos_and_outside_links_are_named_and_never_opened() {
    let d = tempfile::tempdir().unwrap();
    let (tape, _) = tape(d.path(), 3000, &[]);
    std::fs::remove_file(tape.join("manifest.json")).unwrap();
    // A valid segment outside the tape: read, it would add its trades.
    let outside = d.path().join("outside.floxlog");
    encode(
        &{
            let p = d.path().join("o.jsonl");
            std::fs::write(&p, trades_jsonl(&[1000, 1001])).unwrap();
            p
        },
        &outside,
        &["--segment"],
    );
    let (fifo, link) = plant(&tape, &outside);
    let run = |args: &[&str]| {
        bin()
            .args(args)
            .arg(&tape)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap()
    };
    let o = run(&["verify"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string() + &String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{err}");
    for (p, why) in [(&fifo, "FIFO"), (&link, "symbolic link")] {
        let line = err
            .lines()
            .find(|l| l.contains(p.to_str().unwrap()))
            .unwrap_or_else(|| panic!("{p:?} not named: {err}"));
        assert!(
            line.starts_with("warning[skipped_file]") && line.contains(why),
            "{line}"
        );
    }
    assert_eq!(run(&["verify", "--strict"]).status.code(), Some(1));
    let o = run(&["inspect"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string() + &String::from_utf8_lossy(&o.stdout);
    assert!(
        err.contains("1.floxlog") && err.contains("2.floxlog"),
        "{err}"
    );
    let o = run(&["cat", "--type", "trade"]);
    assert_eq!(o.status.code(), Some(0));
    let ts: Vec<i64> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["exchange_ts_ns"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(
        ts,
        (1..=3000).collect::<Vec<_>>(),
        "nothing read through the link"
    );
    // Named on the command line, a FIFO is refused, not opened.
    let o = bin()
        .arg("cat")
        .arg(&fifo)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("FIFO"));
    // Listed in a manifest, a FIFO is a listed segment not read: exit 1.
    bin().args(["manifest"]).arg(&tape).assert().success();
    let m = tape.join("manifest.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    let mut extra = v["segments"][0].clone();
    extra["name"] = "1.floxlog".into();
    v["segments"].as_array_mut().unwrap().insert(0, extra);
    std::fs::write(&m, v.to_string()).unwrap();
    let o = run(&["cat"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not_a_file") && err.contains("FIFO"), "{err}");
}

fn file_order(seg: &Path) -> Vec<i64> {
    let o = bin()
        .args(["cat", "--file-order"])
        .arg(seg)
        .assert()
        .success();
    String::from_utf8_lossy(&o.get_output().stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["exchange_ts_ns"]
                .as_i64()
                .unwrap()
        })
        .collect()
}

fn header(seg: &Path) -> SegmentHeader {
    SegmentHeader::parse(&std::fs::read(seg).unwrap()).unwrap()
}

/// Issue 23 item 4: `reindex --index-interval N` re-packed an LZ4
/// segment's blocks and sorted each, so its file order changed. Now the
/// file order is kept, and Sorted says what the result is.
#[test]
fn reindex_repacks_lz4_blocks_in_file_order() {
    let d = tempfile::tempdir().unwrap();
    let seg = d.path().join("seg.floxlog");
    // Blocks of 2, each sorted by the writer; out of order across blocks.
    let ts = [10, 20, 5, 6, 30, 1, 40, 41];
    let input = d.path().join("in.jsonl");
    std::fs::write(&input, trades_jsonl(&ts)).unwrap();
    encode(
        &input,
        &seg,
        &["--segment", "--compression", "lz4", "--index-interval", "2"],
    );
    let before = file_order(&seg);
    assert_eq!(before, [10, 20, 5, 6, 1, 30, 40, 41]);
    // Blocks of 4 then 3: events out of order inside blocks now.
    for n in ["4", "3", "1", "8"] {
        let o = bin()
            .args(["reindex", "--index-interval", n])
            .arg(&seg)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(file_order(&seg), before, "interval {n}");
        let h = header(&seg);
        assert!(!h.has(flags::SORTED), "interval {n}");
        assert!(h.has(flags::HAS_INDEX) && h.has(flags::COMPRESSED));
        assert_eq!(h.event_count, 8);
        bin().arg("verify").arg(&seg).assert().success();
    }
    // A stream in order gets the Sorted flag, and the index seeks.
    let sorted = d.path().join("sorted.floxlog");
    std::fs::write(&input, trades_jsonl(&[1, 2, 2, 3, 5, 8, 13])).unwrap();
    encode(
        &input,
        &sorted,
        &["--segment", "--compression", "lz4", "--index-interval", "2"],
    );
    bin()
        .args(["reindex", "--index-interval", "3"])
        .arg(&sorted)
        .assert()
        .success();
    assert!(header(&sorted).has(flags::SORTED));
    assert_eq!(file_order(&sorted), [1, 2, 2, 3, 5, 8, 13]);
    bin()
        .args(["verify", "--strict"])
        .arg(&sorted)
        .assert()
        .success();
    let o = bin()
        .args(["cat", "--from", "5"])
        .arg(&sorted)
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&o.get_output().stdout)
            .lines()
            .count(),
        3
    );
    // The one-line help says what it does.
    let o = bin().arg("--help").assert().success();
    let help = String::from_utf8_lossy(&o.get_output().stdout).to_string();
    assert!(
        help.contains("keeping every frame in its file order"),
        "{help}"
    );
}
