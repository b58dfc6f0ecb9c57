//! End-to-end tests of the `floxlog` binary on the conformance corpus
//! (`FLOXLOG_CONFORMANCE_DIR`, default the repository's `conformance/`)
//! and on tapes the tests write.

use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
mod common;
use common::{bin, corpus, encode};

fn case_dirs(kind: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus().join(kind))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no {kind} in the corpus");
    v
}

/// The case folders with segments to read (a writer-only case, such as
/// empty input, has none).
fn read_case_dirs(kind: &str) -> Vec<PathBuf> {
    let mut v = case_dirs(kind);
    v.retain(|d| d.join("segments").is_dir());
    v
}

/// A `cases/` case made to test readers only (`odd-*`: a header oddity a
/// reader must accept), with no writer input to encode.
fn is_reader_oddity(dir: &Path) -> bool {
    dir.parent().and_then(Path::file_name) == Some(std::ffi::OsStr::new("cases"))
        && !dir.join("events.jsonl").exists()
}

fn jsonl(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn read_jsonl(p: &Path) -> Vec<Value> {
    jsonl(&std::fs::read(p).unwrap())
}

fn ts(v: &Value) -> i64 {
    v["exchange_ts_ns"].as_i64().unwrap()
}

/// Stable sort by timestamp: what merged reading must give.
fn time_sorted(v: &[Value]) -> Vec<Value> {
    let mut v = v.to_vec();
    v.sort_by_key(ts);
    v
}

/// Order-free comparison key.
fn multiset(v: &[Value]) -> Vec<String> {
    let mut s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    s.sort();
    s
}

fn cat(args: &[&str]) -> Vec<Value> {
    let out = bin()
        .arg("cat")
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    jsonl(&out)
}

#[test]
fn cat_reads_every_case_as_expected_in_file_and_time_order() {
    for dir in read_case_dirs("cases")
        .into_iter()
        .chain(read_case_dirs("real"))
    {
        let expected = read_jsonl(&dir.join("expected.jsonl"));
        let segs = dir.join("segments");
        let s = segs.to_str().unwrap();
        assert_eq!(cat(&["--file-order", s]), expected, "{}", dir.display());
        // Merged: a stable sort of the file order (segment order breaks ties).
        assert_eq!(
            cat(&[s]),
            time_sorted(&expected),
            "{} (time order)",
            dir.display()
        );
        // Segment files given one by one read the same.
        let mut files: Vec<String> = std::fs::read_dir(&segs)
            .unwrap()
            .map(|e| e.unwrap().path().to_str().unwrap().to_string())
            .collect();
        files.sort();
        let mut args = vec!["--file-order"];
        args.extend(files.iter().map(String::as_str));
        assert_eq!(cat(&args), expected, "{} (files)", dir.display());
    }
}

#[test]
fn verify_passes_on_cases_and_real_and_fails_on_corrupt_with_the_right_kind() {
    for dir in read_case_dirs("cases")
        .into_iter()
        .chain(read_case_dirs("real"))
    {
        if is_reader_oddity(&dir) {
            // A reader must read these; verify, which also checks that the
            // header agrees with the frames, may say where it does not.
            let out = bin()
                .arg("verify")
                .arg(dir.join("segments"))
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            match out.status.code() {
                Some(0) => assert!(text.contains("OK:"), "{}: {text}", dir.display()),
                Some(1) => assert!(text.contains("error[header_"), "{}: {text}", dir.display()),
                c => panic!("{}: verify exited {c:?}: {text}", dir.display()),
            }
            continue;
        }
        bin()
            .arg("verify")
            .arg(dir.join("segments"))
            .assert()
            .success()
            .stdout(predicate::str::contains("OK:"));
    }
    for dir in case_dirs("corrupt") {
        let case: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
        let exp = &case["expect"];
        if case["name"] == "zero-tail" {
            // An unfinished segment whose frames end in zeros is what a
            // crashed journal writer leaves: a strict segment reader says
            // `truncated`, the tape tools read its events and warn.
            bin()
                .arg("verify")
                .arg(dir.join("segment.floxlog"))
                .assert()
                .success()
                .stdout(predicate::str::contains("warning[zero_tail]"));
            continue;
        }
        let out = bin()
            .args(["verify", "--json"])
            .arg(dir.join("segment.floxlog"))
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone();
        let rep: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(rep["ok"], false);
        let errors: Vec<&Value> = rep["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .collect();
        let first = errors
            .first()
            .unwrap_or_else(|| panic!("{}: no error", dir.display()));
        let kind = exp.get("error").or(exp.get("index_error")).unwrap();
        assert_eq!(&first["kind"], kind, "{}: {rep}", dir.display());
        if let Some(off) = exp.get("error_offset") {
            assert_eq!(&first["offset"], off, "{}", dir.display());
        }
        assert!(first["path"].as_str().unwrap().ends_with("segment.floxlog"));
        // Human output names the file and offset too.
        bin()
            .arg("verify")
            .arg(dir.join("segment.floxlog"))
            .assert()
            .code(1)
            .stdout(predicate::str::contains(kind.as_str().unwrap()));
    }
}

#[test]
fn cat_on_damage_prints_the_good_events_then_fails_naming_file_and_offset() {
    let dir = corpus().join("corrupt/crc-mismatch");
    let out = bin()
        .arg("cat")
        .arg(dir.join("segment.floxlog"))
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("segment.floxlog at byte 12852")
                .and(predicate::str::contains("crc_mismatch"))
                .and(predicate::str::contains("hint")),
        );
    assert_eq!(jsonl(&out.get_output().stdout).len(), 57);
}

fn placeholder(data: &[u8]) -> Vec<u8> {
    // What the reference leaves at offset 0 of an uncompressed segment until close.
    let mut d = data.to_vec();
    d[6] &= 0x02; // flags: keep Compressed only
    d[16..48].fill(0); // first/last, event_count, symbol_count, index_offset
    d
}

#[test]
fn truncated_segment_reads_to_last_complete_event_and_recovers() {
    let t = tempfile::tempdir().unwrap();
    let src = corpus().join("cases/trades-10k/segments/segment-000.floxlog");
    let expected = read_jsonl(&corpus().join("cases/trades-10k/expected.jsonl"));
    let data = std::fs::read(&src).unwrap();
    // 64 + 1234 frames of 60 bytes, then 25 bytes of the next one.
    let cut = 64 + 1234 * 60 + 25;
    let seg = t.path().join("1.floxlog");
    std::fs::write(&seg, placeholder(&data[..cut])).unwrap();
    let s = seg.to_str().unwrap();
    // A live/crashed segment reads up to its last complete event, with a warning.
    let out = bin()
        .args(["cat", s])
        .assert()
        .success()
        .stderr(predicate::str::contains("torn record"))
        .get_output()
        .stdout
        .clone();
    assert_eq!(jsonl(&out), expected[..1234]);
    bin().args(["cat", "--strict", s]).assert().code(1);
    bin()
        .args(["verify", "--json", s])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("\"truncated\""));
    let rep = bin()
        .args(["recover", s])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let rep = String::from_utf8(rep).unwrap();
    assert!(rep.contains("1234 complete events"), "{rep}");
    assert!(rep.contains("dropped 25 bytes from byte 74104"), "{rep}");
    assert!(
        rep.contains("claiming 48 payload bytes, 13 present"),
        "{rep}"
    );
    assert!(t.path().join("1.floxlog.damaged").exists());
    bin().args(["verify", "--strict", s]).assert().success();
    assert_eq!(cat(&["--file-order", s]), expected[..1234]);
    // Frames are copied byte for byte: the recovered segment equals the
    // reference's first 1234 frames.
    let rec = std::fs::read(&seg).unwrap();
    assert_eq!(&rec[64..cut - 25], &data[64..cut - 25]);
    // A second recover has nothing to do.
    bin()
        .args(["recover", s])
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing to do"));

    // Placeholder header but every frame complete: a warning, not an error.
    let seg2 = t.path().join("2.floxlog");
    std::fs::write(&seg2, placeholder(&data[..64 + 100 * 60])).unwrap();
    bin()
        .args(["verify", seg2.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("stale_header"));
    bin()
        .args(["verify", "--strict", seg2.to_str().unwrap()])
        .assert()
        .code(1);
}

#[test]
fn torn_lz4_block_recovers_complete_blocks() {
    let t = tempfile::tempdir().unwrap();
    let seg = t.path().join("x.floxlog");
    std::fs::copy(corpus().join("corrupt/lz4-truncated/segment.floxlog"), &seg).unwrap();
    std::fs::set_permissions(&seg, std::fs::Permissions::from_mode(0o644)).unwrap();
    let s = seg.to_str().unwrap();
    let out = bin()
        .args(["recover", "--json", s])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let rep: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(rep[0]["events_kept"], 100);
    assert_eq!(rep[0]["dropped_at"], 9595);
    assert!(rep[0]["reason"].as_str().unwrap().starts_with("truncated"));
    bin().args(["verify", s]).assert().success();
    assert_eq!(cat(&[s]).len(), 100);
}

use std::os::unix::fs::PermissionsExt;

#[test]
fn encode_then_cat_round_trips_every_case_in_both_layouts() {
    let t = tempfile::tempdir().unwrap();
    for dir in case_dirs("cases") {
        if is_reader_oddity(&dir) {
            continue;
        }
        let events_path = dir.join("events.jsonl");
        let events = read_jsonl(&events_path);
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        for (tag, extra) in [
            (
                "plain",
                vec!["--compression", "none", "--index-interval", "7"],
            ),
            (
                "lz4",
                vec!["--compression", "lz4", "--index-interval", "64"],
            ),
            (
                "spec",
                vec![
                    "--layout",
                    "spec",
                    "--compression",
                    "none",
                    "--max-segment-bytes",
                    "8K",
                ],
            ),
            ("onefile", vec!["--segment", "--compression", "lz4"]),
        ] {
            let out = t.path().join(format!("{name}-{tag}"));
            encode(&events_path, &out, &extra);
            let o = out.to_str().unwrap();
            bin().args(["verify", o]).assert().success();
            let merged = cat(&[o]);
            if tag == "spec" {
                // Series are separate segments: equal timestamps of different
                // types may come out in series order.
                assert_eq!(multiset(&merged), multiset(&events), "{name} {tag}");
                assert!(merged.windows(2).all(|w| ts(&w[0]) <= ts(&w[1])));
            } else {
                assert_eq!(merged, time_sorted(&events), "{name} {tag}");
            }
            if tag == "plain" {
                assert_eq!(cat(&["--file-order", o]), events, "{name} {tag}");
            }
        }
    }
}

#[test]
fn encode_writes_reference_bytes() {
    // With the case's settings and created_ns, encode reproduces the
    // reference segment byte for byte.
    let t = tempfile::tempdir().unwrap();
    let dir = corpus().join("cases/books-mixed");
    let case: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
    let created = case["segments"][0]["created_ns"]
        .as_i64()
        .unwrap()
        .to_string();
    let out = t.path().join("seg.floxlog");
    bin()
        .arg("encode")
        .arg(dir.join("events.jsonl"))
        .arg("-o")
        .arg(&out)
        .args([
            "--segment",
            "--compression",
            "none",
            "--index-interval",
            "50",
            "--created-ns",
            &created,
        ])
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(dir.join("segments/segment-000.floxlog")).unwrap()
    );
}

#[test]
fn convert_round_trips_preserve_every_record() {
    let t = tempfile::tempdir().unwrap();
    // Mixed record types (option quotes and pool states included), unsorted LZ4, and rotation.
    let src = t.path().join("src");
    let mut lines = Vec::new();
    for c in ["extensions", "books-mixed", "lz4-mixed-unsorted"] {
        lines.extend(
            std::fs::read_to_string(corpus().join("cases").join(c).join("events.jsonl"))
                .unwrap()
                .lines()
                .map(str::to_string),
        );
    }
    let input = t.path().join("in.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let events = read_jsonl(&input);
    encode(
        &input,
        &src,
        &["--compression", "none", "--max-segment-bytes", "16K"],
    );
    let s = src.to_str().unwrap();
    let base_file = cat(&["--file-order", s]);
    assert_eq!(base_file, events);
    let base_time = cat(&[s]);
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("lz4", vec!["--compression", "lz4"]),
        ("none", vec!["--compression", "none"]),
        ("reindex", vec!["--index-interval", "3"]),
        ("noindex", vec!["--no-index"]),
        (
            "merge",
            vec!["--order", "time", "--max-segment-bytes", "1G"],
        ),
        ("split", vec!["--max-segment-bytes", "4K"]),
        ("split-time", vec!["--rotate-every", "1ms"]),
        ("spec", vec!["--layout", "spec"]),
        ("segment", vec!["--segment"]),
    ];
    for (tag, extra) in cases {
        let out = t.path().join(format!("c-{tag}"));
        bin()
            .arg("convert")
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .args(&extra)
            .assert()
            .success();
        let o = out.to_str().unwrap();
        bin().args(["verify", o]).assert().success();
        let file = cat(&["--file-order", o]);
        assert_eq!(
            multiset(&file),
            multiset(&events),
            "{tag}: every record kept"
        );
        match tag {
            "none" | "reindex" | "noindex" | "split" | "split-time" | "segment" => {
                assert_eq!(file, base_file, "{tag}: file order kept")
            }
            "merge" => assert_eq!(file, base_time, "{tag}: merged order"),
            _ => {}
        }
        if tag != "spec" {
            assert_eq!(cat(&[o]), base_time, "{tag}: merged reading");
        }
        // And back to the original settings: the same bytes per record.
        let back = t.path().join(format!("b-{tag}"));
        bin()
            .arg("convert")
            .arg(&out)
            .arg("-o")
            .arg(&back)
            .args(["--compression", "none"])
            .assert()
            .success();
        assert_eq!(multiset(&cat(&[back.to_str().unwrap()])), multiset(&events));
    }
    // The "split" conversion produced several segments, "merge" one.
    let n = |d: &str| {
        std::fs::read_dir(t.path().join(d))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "floxlog")
            })
            .count()
    };
    assert!(n("c-split") > n("src"));
    assert_eq!(n("c-merge"), 1);
    // Convert fails loudly on damage and leaves no output behind.
    let bad = t.path().join("bad");
    bin()
        .arg("convert")
        .arg(corpus().join("corrupt/crc-mismatch/segment.floxlog"))
        .arg("-o")
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("crc_mismatch"));
    assert!(!bad.exists());
}

#[test]
fn spec_layout_manifest_disagreements_and_versions() {
    let t = tempfile::tempdir().unwrap();
    let tape = t.path().join("tape");
    let input = corpus().join("cases/extensions/events.jsonl");
    encode(
        &input,
        &tape,
        &["--layout", "spec", "--compression", "none"],
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(tape.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["schema_version"], 1);
    assert_eq!(m["format_version"], 1);
    let names: Vec<&str> = m["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for n in [
        "trades-000000.bin",
        "book-000000.bin",
        "options-000000.bin",
        "pools-000000.bin",
    ] {
        assert!(names.contains(&n), "{names:?}");
        assert!(tape.join(n).exists());
    }
    let total: u64 = m["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["event_count"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 200);
    let tp = tape.to_str().unwrap();
    assert_eq!(
        cat(&["--type", "trade", tp]).len() as u64,
        m["segments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["type"] == "trades")
            .unwrap()["event_count"]
            .as_u64()
            .unwrap()
    );

    // A manifest that disagrees with the files: still read, reported, verify fails.
    let text = std::fs::read_to_string(tape.join("manifest.json")).unwrap();
    let mut bad: Value = serde_json::from_str(&text).unwrap();
    bad["segments"][0]["event_count"] = Value::from(1);
    bad["segments"].as_array_mut().unwrap().push(serde_json::json!({"name": "trades-000009.bin", "type": "trades", "size_bytes": 1, "first_event_ns": 0, "last_event_ns": 0, "event_count": 1}));
    std::fs::write(tape.join("manifest.json"), bad.to_string()).unwrap();
    // A listed file is missing: every event that is there is printed, the
    // missing one is named, and the exit code says data is missing.
    let out = bin()
        .args(["cat", tp])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("file is missing"));
    assert_eq!(jsonl(&out.get_output().stdout).len(), 200);
    let out = bin()
        .args(["verify", "--json", tp])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8(out)
        .unwrap()
        .contains("manifest_mismatch"));
    // Rebuilding the manifest fixes it.
    bin().args(["manifest", tp]).assert().success();
    bin().args(["verify", "--strict", tp]).assert().success();

    // Another format version fails loudly; an unknown schema is rejected.
    std::fs::write(
        tape.join("manifest.json"),
        text.replace("\"format_version\": 1", "\"format_version\": 2"),
    )
    .unwrap();
    bin()
        .args(["cat", tp])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("format_version 2"));
    std::fs::write(
        tape.join("manifest.json"),
        text.replace("\"schema_version\": 1", "\"schema_version\": 7"),
    )
    .unwrap();
    bin()
        .args(["verify", tp])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("schema_version 7"));
    assert_eq!(cat(&["--ignore-manifest", tp]).len(), 200);
    // No manifest at all: the files are enough.
    std::fs::remove_file(tape.join("manifest.json")).unwrap();
    assert_eq!(cat(&[tp]).len(), 200);
}

/// A second `demo` into the same folder replaces the first tape, whatever
/// a writer leaves beside it (the lock file, a killed run's temporary
/// files); a folder with other files is refused.
#[test]
fn demo_run_again_replaces_its_tape() {
    let t = tempfile::tempdir().unwrap();
    let tape = t.path().join("demo");
    let demo = || {
        bin()
            .arg("demo")
            .arg(&tape)
            .args(["--trades", "300", "--book-deltas", "200"])
            .assert()
    };
    demo().success();
    std::fs::write(tape.join(".manifest.json.tmp"), b"{").unwrap();
    demo()
        .success()
        .stdout(predicate::str::contains("verify: OK"));
    assert!(!tape.join(".manifest.json.tmp").exists());
    std::fs::write(tape.join("notes.txt"), b"mine").unwrap();
    demo().code(2).stderr(predicate::str::contains(
        "holds files other than a tape (notes.txt)",
    ));
    assert!(tape.join("notes.txt").exists());
}

#[test]
fn flox_layout_reads_with_flox_manifest_and_metadata() {
    let t = tempfile::tempdir().unwrap();
    let tape = t.path().join("demo");
    bin()
        .arg("demo")
        .arg(&tape)
        .args([
            "--trades",
            "3000",
            "--book-deltas",
            "2000",
            "--max-segment-bytes",
            "64K",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("verify: OK"));
    let segs: Vec<_> = std::fs::read_dir(&tape)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".floxlog"))
        .collect();
    assert!(segs.len() > 1, "rotation");
    let tp = tape.to_str().unwrap();
    bin().args(["manifest", "--flox", tp]).assert().success();
    let fman = std::fs::read(tape.join(".manifest")).unwrap();
    assert_eq!(&fman[..4], b"NAMF");
    bin().args(["verify", "--strict", tp]).assert().success();
    let all = cat(&[tp]);
    assert!(all.windows(2).all(|w| ts(&w[0]) <= ts(&w[1])));
    // Without manifest.json (flox's own layout): file-name order, same events.
    std::fs::remove_file(tape.join("manifest.json")).unwrap();
    assert_eq!(cat(&[tp]), all);
    // Filters: symbol by name (metadata.json), type, time range in ISO-8601 and ns.
    let from = ts(&all[all.len() / 3]);
    let to = ts(&all[2 * all.len() / 3]);
    let iso = |ns: i64| floxlog::time::format_ns(ns);
    let got = cat(&[
        tp,
        "--symbol",
        "ETHUSDT",
        "--type",
        "trade",
        "--from",
        &iso(from),
        "--to",
        &to.to_string(),
    ]);
    let want: Vec<Value> = all
        .iter()
        .filter(|e| e["symbol_id"] == 2 && e["type"] == "trade" && ts(e) >= from && ts(e) < to)
        .cloned()
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    bin().args(["cat", tp, "--symbol", "NOPE"]).assert().code(2);
    // CSV and decimal prices.
    let csv = bin()
        .args([
            "cat", tp, "--format", "csv", "--type", "trade", "--prices", "decimal",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let csv = String::from_utf8(csv).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "type,exchange_ts_ns,recv_ts_ns,symbol_id,instrument,exchange_id,price,qty,trade_id,side"
    );
    assert_eq!(lines.count(), 3000);
    // inspect --json summary.
    let out = bin()
        .args(["inspect", "--json", tp])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["total"]["by_type"]["trade"], 3000);
    assert_eq!(v["total"]["symbols"], serde_json::json!([1, 2, 3]));
    assert!(v["total"]["compression_ratio"].as_f64().unwrap() > 1.0);
}

#[test]
fn follow_reads_a_segment_while_it_is_written() {
    let t = tempfile::tempdir().unwrap();
    let src =
        std::fs::read(corpus().join("cases/trades-10k/segments/segment-000.floxlog")).unwrap();
    let expected = read_jsonl(&corpus().join("cases/trades-10k/expected.jsonl"));
    let seg = t.path().join("live.floxlog");
    let half = 64 + 5000 * 60 + 30;
    std::fs::write(&seg, placeholder(&src[..half])).unwrap();
    // The writer holds the tape lock while it writes.
    let lock = floxlog::tape::dir::TapeLock::acquire(t.path(), "writing").unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("floxlog"))
        .args(["cat", "--follow", "--poll-ms", "20", "--idle-timeout", "20"])
        .arg(&seg)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&seg).unwrap();
        f.seek(SeekFrom::End(0)).unwrap();
        f.write_all(&src[half..]).unwrap();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.write_all(&src[..64]).unwrap(); // the final header: the writer closed it
    }
    drop(lock);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(jsonl(&out.stdout), expected);
}

#[test]
fn follow_says_file_order_and_fails_when_the_writer_is_gone() {
    let t = tempfile::tempdir().unwrap();
    let src =
        std::fs::read(corpus().join("cases/trades-10k/segments/segment-000.floxlog")).unwrap();
    let expected = read_jsonl(&corpus().join("cases/trades-10k/expected.jsonl"));
    // A writer killed mid-frame: no lock holder, a placeholder header.
    let seg = t.path().join("1.floxlog");
    let half = 64 + 5000 * 60 + 30;
    std::fs::write(&seg, placeholder(&src[..half])).unwrap();
    let out = bin()
        .args(["cat", "--follow"])
        .arg(t.path())
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("in file order"), "{err}");
    assert!(err.contains("writer") && err.contains("is gone"), "{err}");
    assert!(err.contains("floxlog recover"), "{err}");
    assert_eq!(jsonl(&out.stdout), expected[..5000].to_vec());
}

#[test]
fn exit_codes_and_help() {
    bin()
        .args(["cat", "/nonexistent/tape"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("/nonexistent/tape"));
    bin()
        .args(["cat", "--from", "yesterday", "x"])
        .assert()
        .code(2);
    bin().arg("frobnicate").assert().code(2);
    for sub in [
        "inspect", "verify", "cat", "encode", "convert", "recover", "reindex", "manifest", "demo",
    ] {
        bin()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Exit codes"));
    }
    bin()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("demo"));
    // A bad JSON line names the input line.
    let t = tempfile::tempdir().unwrap();
    let input = t.path().join("e.jsonl");
    std::fs::write(&input, "{\"type\":\"trade\"}\n").unwrap();
    let out = t.path().join("o");
    bin()
        .arg("encode")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("e.jsonl:1"));
    assert!(!out.exists());
}

#[test]
fn reindex_rebuilds_a_bad_index_without_touching_frames() {
    let t = tempfile::tempdir().unwrap();
    let seg = t.path().join("s.floxlog");
    std::fs::copy(corpus().join("corrupt/index-crc/segment.floxlog"), &seg).unwrap();
    std::fs::set_permissions(&seg, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = std::fs::read(&seg).unwrap();
    let s = seg.to_str().unwrap();
    bin().args(["verify", s]).assert().code(1);
    bin().args(["reindex", s]).assert().success();
    bin().args(["verify", "--strict", s]).assert().success();
    let after = std::fs::read(&seg).unwrap();
    let h = floxlog::core::SegmentHeader::parse(&after).unwrap();
    assert_eq!(
        &after[64..h.index_offset as usize],
        &before[64..h.index_offset as usize]
    );
    assert_eq!(
        cat(&["--file-order", s]),
        read_jsonl(&corpus().join("cases/books-mixed/expected.jsonl"))
    );
}
