//! `floxlog conformance` end to end: floxlog's own adapters pass the
//! corpus, and adapters broken on purpose (scripts wrapping the good ones)
//! are caught with the right case id and difference.

use assert_cmd::assert::Assert;
use std::path::{Path, PathBuf};
use std::time::Instant;
mod common;
use common::{adapter, bin, bin_path, corpus, script};

fn read_tmpl(p: &Path) -> String {
    format!("'{}' {{segment}}", p.display())
}

fn write_tmpl(p: &Path) -> String {
    format!("'{}' {{events}} {{out_dir}} {{settings}}", p.display())
}

/// `floxlog conformance ARGS` with `$FLOXLOG` set for the adapters.
fn kit(args: &[&str]) -> Assert {
    bin()
        .env("FLOXLOG", bin_path())
        .env_remove("FLOXLOG_CONFORMANCE_DIR")
        .arg("conformance")
        .arg("--corpus")
        .arg(corpus())
        .args(args)
        .assert()
}

fn stdout(a: &Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn stderr(a: &Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// A reader adapter: the good one, its output passed through `filter` (sh).
fn wrapped_reader(dir: &Path, filter: &str) -> PathBuf {
    script(
        dir,
        "reader.sh",
        &format!(
            "#!/bin/sh\nout=$('{}' \"$@\"); rc=$?\nprintf '%s\\n' \"$out\" | {filter}\nexit $rc\n",
            adapter("read.sh").display()
        ),
    )
}

fn good_reader() -> String {
    read_tmpl(&adapter("read.sh"))
}

fn good_writer() -> String {
    write_tmpl(&adapter("write.sh"))
}

#[test]
fn floxlogs_own_adapters_pass_every_case() {
    let a = kit(&["--reader", &good_reader(), "--writer", &good_writer()]).success();
    let out = stdout(&a);
    let lines: Vec<&str> = out.lines().collect();
    let (summary, cases) = lines.split_last().unwrap();
    assert!(cases.len() > 50, "{out}");
    for l in cases {
        assert!(l.starts_with("ok "), "{l}");
    }
    assert_eq!(
        *summary,
        format!("{} passed, 0 failed, 0 skipped", cases.len())
    );
    for id in [
        "ok read/cases/rotation",
        "ok read/real/flox-demo-sample",
        "ok read/corrupt/crc-mismatch",
        "ok index/corrupt/index-crc",
        "ok write/cases/rotation",
        "ok write/cases/lz4-trades-5k",
    ] {
        assert!(cases.contains(&id), "{id} missing:\n{out}");
    }
}

/// The kit's example of another implementation: the pure-Python reader in
/// `conformance/adapters/python/` (no floxlog code) passes the reader half,
/// damaged segments and index checks included.
#[test]
fn the_independent_python_reader_passes_the_reader_half() {
    let py = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/adapters/python/floxlog_reader.py");
    let tmpl = format!("python3 '{}' {{segment}}", py.display());
    let a = kit(&["--reader", &tmpl]).success();
    let out = stdout(&a);
    let lines: Vec<&str> = out.lines().collect();
    let (summary, cases) = lines.split_last().unwrap();
    for l in cases {
        assert!(l.starts_with("ok "), "{l}\n{out}");
    }
    assert_eq!(
        *summary,
        format!("{} passed, 0 failed, 0 skipped", cases.len())
    );
    for id in [
        "ok read/cases/lz4-mixed-unsorted",
        "ok read/real/flox-demo-sample",
        "ok read/corrupt/lz4-size-lie",
        "ok index/corrupt/index-offset-past-end",
        "ok index/corrupt/bad-magic",
    ] {
        assert!(cases.contains(&id), "{id} missing:\n{out}");
    }
}

#[test]
fn a_reader_that_drops_an_event_is_caught() {
    let t = tempfile::tempdir().unwrap();
    let r = wrapped_reader(t.path(), "sed 5d");
    let a = kit(&["--reader", &read_tmpl(&r), "--filter", "cases/trades-7"]).code(1);
    let out = stdout(&a);
    assert!(
        out.contains("FAIL read/cases/trades-7: event 4 (segment-000.floxlog output line 5; expected.jsonl event 5): field `exchange_ts_ns`"),
        "{out}"
    );
    // The index check of the same reader is unaffected.
    assert!(out.contains("ok index/cases/trades-7"), "{out}");
    assert!(out.ends_with("1 passed, 1 failed, 0 skipped\n"), "{out}");
}

#[test]
fn a_reader_that_changes_one_field_is_caught() {
    let t = tempfile::tempdir().unwrap();
    let r = wrapped_reader(
        t.path(),
        r#"sed '3s/"qty_raw":70000000/"qty_raw":70000001/'"#,
    );
    let a = kit(&[
        "--reader",
        &read_tmpl(&r),
        "--filter",
        "read/cases/trades-7",
    ])
    .code(1);
    let out = stdout(&a);
    assert!(
        out.contains("FAIL read/cases/trades-7: event 2 (segment-000.floxlog output line 3; expected.jsonl event 3): field `qty_raw`: expected 70000000, got 70000001"),
        "{out}"
    );
}

#[test]
fn a_reader_that_accepts_a_damaged_segment_is_caught() {
    let t = tempfile::tempdir().unwrap();
    let r = script(
        t.path(),
        "lenient.sh",
        &format!(
            "#!/bin/sh\n'{}' \"$@\" 2>/dev/null\nexit 0\n",
            adapter("read.sh").display()
        ),
    );
    let a = kit(&[
        "--reader",
        &read_tmpl(&r),
        "--filter",
        "read/corrupt/crc-mismatch",
    ])
    .code(1);
    assert_eq!(
        stdout(&a),
        "FAIL read/corrupt/crc-mismatch: expected 57 events then error crc_mismatch at offset 12852; \
         the reader exited 0 after 57 events (it accepted the damaged segment)\n\
         0 passed, 1 failed, 0 skipped\n"
    );
}

#[test]
fn a_writer_that_flips_a_crc_byte_is_caught_at_the_field() {
    let t = tempfile::tempdir().unwrap();
    let w = script(
        t.path(),
        "writer.sh",
        &format!(
            "#!/bin/sh\n'{}' \"$@\" || exit $?\nf=$(ls \"$2\"/*.floxlog | head -1)\n\
             python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,\"rb\").read()); b[68]^=1; open(p,\"wb\").write(b)' \"$f\"\n",
            adapter("write.sh").display()
        ),
    );
    let a = kit(&[
        "--writer",
        &write_tmpl(&w),
        "--filter",
        "write/cases/trades-7",
    ])
    .code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with("FAIL write/cases/trades-7: segment 0 (output "),
        "{out}"
    );
    assert!(
        out.contains("expected segment-000.floxlog): bytes differ at offset 68 (frame 0 (trade) header, field crc32)"),
        "{out}"
    );
}

#[test]
fn a_writer_that_rotates_one_event_late_is_caught() {
    // The good writer with a larger max_segment_bytes: segment 1 keeps one
    // more frame than the reference's did.
    let t = tempfile::tempdir().unwrap();
    let w = script(
        t.path(),
        "writer.sh",
        &format!(
            "#!/bin/sh\npython3 -c 'import json,sys; p=sys.argv[1]; s=json.load(open(p)); s[\"max_segment_bytes\"]+=64; json.dump(s,open(p,\"w\"))' \"$3\" || exit 1\nexec '{}' \"$@\"\n",
            adapter("write.sh").display()
        ),
    );
    let a = kit(&[
        "--writer",
        &write_tmpl(&w),
        "--filter",
        "write/cases/rotation",
    ])
    .code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with("FAIL write/cases/rotation: segment 1 (output "),
        "{out}"
    );
    // The header comes first: its last event is the late one.
    assert!(
        out.contains("expected segment-001.floxlog): bytes differ at offset 24 (segment header, field last_event_ns)"),
        "{out}"
    );
}

#[test]
fn expect_fail_turns_a_failure_into_xfail_and_a_pass_into_xpass() {
    let t = tempfile::tempdir().unwrap();
    let list = t.path().join("xfail.txt");
    std::fs::write(
        &list,
        "# known problems\n\nread/cases/trades-7   # drops event 4\nread/cases/no-such-case\n",
    )
    .unwrap();
    let r = wrapped_reader(t.path(), "sed 5d");
    let l = list.to_str().unwrap();
    let a = kit(&[
        "--reader",
        &read_tmpl(&r),
        "--filter",
        "read/cases/trades-7",
        "--expect-fail",
        l,
    ])
    .success();
    assert_eq!(
        stdout(&a),
        "xfail read/cases/trades-7\n0 passed, 0 failed, 0 skipped\n1 expected failures\n"
    );
    assert!(
        stderr(&a).contains("xfail.txt:4: `read/cases/no-such-case` names no case of the corpus"),
        "{}",
        stderr(&a)
    );
    let a = kit(&[
        "--reader",
        &good_reader(),
        "--filter",
        "read/cases/trades-7",
        "--expect-fail",
        l,
    ])
    .code(1);
    assert_eq!(
        stdout(&a),
        "XPASS read/cases/trades-7: listed in --expect-fail but passed\n0 passed, 1 failed, 0 skipped\n"
    );
}

#[test]
fn junit_report_is_xml_with_the_counts() {
    let t = tempfile::tempdir().unwrap();
    let r = wrapped_reader(t.path(), "sed 5d");
    let x = t.path().join("report.xml");
    kit(&[
        "--reader",
        &read_tmpl(&r),
        "--filter",
        "cases/trades-7",
        "--junit",
        x.to_str().unwrap(),
    ])
    .code(1);
    // Parsed by a real XML parser, not by string matching.
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as E\n\
             s = E.parse(sys.argv[1]).getroot().find('testsuite')\n\
             print(s.get('tests'), s.get('failures'), s.get('skipped'))\n\
             for c in s.findall('testcase'):\n\
             \x20   f = c.find('failure')\n\
             \x20   print(c.get('name'), 'FAIL' if f is not None else 'ok', '' if f is None else f.get('message')[:40])",
            x.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "2 1 0");
    assert_eq!(
        lines[1].trim_end(),
        "read/cases/trades-7 FAIL event 4 (segment-000.floxlog output line"
    );
    assert_eq!(lines[2].trim_end(), "index/cases/trades-7 ok");
}

#[test]
fn a_hanging_adapter_is_killed_at_the_timeout() {
    let t = tempfile::tempdir().unwrap();
    // sh waits for sleep: only killing the process group ends both.
    let r = script(t.path(), "hang.sh", "#!/bin/sh\nsleep 60\necho never\n");
    let t0 = Instant::now();
    let a = kit(&[
        "--reader",
        &read_tmpl(&r),
        "--filter",
        "read/cases/trades-7",
        "--timeout",
        "1",
    ])
    .code(1);
    assert!(t0.elapsed().as_secs() < 20, "took {:?}", t0.elapsed());
    assert_eq!(
        stdout(&a),
        "FAIL read/cases/trades-7: segment-000.floxlog: timed out after 1 s\n0 passed, 1 failed, 0 skipped\n"
    );
}

#[test]
fn a_missing_or_unexecutable_adapter_is_a_usage_error() {
    let a = kit(&["--reader", "/nonexistent/read.sh {segment}"]).code(2);
    assert!(
        stderr(&a).contains("--reader: adapter program `/nonexistent/read.sh` not found"),
        "{}",
        stderr(&a)
    );
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("plain.sh");
    std::fs::write(&p, "#!/bin/sh\n").unwrap();
    let a = kit(&["--writer", &write_tmpl(&p)]).code(2);
    assert!(
        stderr(&a).contains("is not an executable file"),
        "{}",
        stderr(&a)
    );
    let a = kit(&["--reader", "read.sh"]).code(2);
    assert!(
        stderr(&a).contains("does not contain {segment}"),
        "{}",
        stderr(&a)
    );
    bin().args(["conformance"]).assert().code(2);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

#[test]
fn any_corpus_with_the_layout_runs_new_and_malformed_cases() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("corpus");
    // A case the kit has never seen, with a field it does not know.
    let new = root.join("cases/zz-new-case");
    copy_dir(&corpus().join("cases/trades-7"), &new);
    let cj = new.join("case.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cj).unwrap()).unwrap();
    v["future_field"] = serde_json::json!({"x": 1});
    std::fs::write(&cj, v.to_string()).unwrap();
    copy_dir(
        &corpus().join("corrupt/crc-mismatch"),
        &root.join("corrupt/zz-crc"),
    );
    let bad = root.join("cases/broken");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("case.json"), "{\"name\": \"broken\",").unwrap();

    let a = bin()
        .env("FLOXLOG", bin_path())
        .args([
            "conformance",
            "--reader",
            &good_reader(),
            "--writer",
            &good_writer(),
            "--corpus",
        ])
        .arg(&root)
        .assert()
        .code(1);
    let out = stdout(&a);
    for id in [
        "ok read/cases/zz-new-case",
        "ok index/cases/zz-new-case",
        "ok write/cases/zz-new-case",
        "ok read/corrupt/zz-crc",
        "ok index/corrupt/zz-crc",
    ] {
        assert!(out.lines().any(|l| l == id), "{id}:\n{out}");
    }
    let broken = format!("{}: invalid JSON", bad.join("case.json").display());
    for id in ["read/cases/broken", "index/cases/broken"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("FAIL {id}: {broken}"))),
            "{id}:\n{out}"
        );
    }
    assert!(out.ends_with("5 passed, 2 failed, 0 skipped\n"), "{out}");
}

#[test]
fn the_corpus_is_found_beside_a_cargo_build_or_refused() {
    // target/<profile>/floxlog finds the repository's conformance/.
    let a = bin()
        .env("FLOXLOG", bin_path())
        .env_remove("FLOXLOG_CONFORMANCE_DIR")
        .args([
            "conformance",
            "--reader",
            &good_reader(),
            "--filter",
            "read/cases/trades-7",
        ])
        .assert()
        .success();
    assert_eq!(
        stdout(&a),
        "ok read/cases/trades-7\n1 passed, 0 failed, 0 skipped\n"
    );
    let t = tempfile::tempdir().unwrap();
    let a = bin()
        .env("FLOXLOG_CONFORMANCE_DIR", t.path())
        .args(["conformance", "--reader", &good_reader()])
        .assert()
        .code(2);
    assert!(
        stderr(&a).contains("is not a conformance corpus"),
        "{}",
        stderr(&a)
    );
    let a = kit(&["--reader", &good_reader(), "--filter", "no-such-id"]).code(2);
    assert!(
        stderr(&a).contains("matches --filter no-such-id"),
        "{}",
        stderr(&a)
    );
}

/// `floxlog conformance ARGS --corpus ROOT` with floxlog's writer.
fn kit_on(root: &Path, args: &[&str]) -> Assert {
    bin()
        .env("FLOXLOG", bin_path())
        .env_remove("FLOXLOG_CONFORMANCE_DIR")
        .args(["conformance", "--writer", &good_writer()])
        .args(args)
        .arg("--corpus")
        .arg(root)
        .assert()
}

#[test]
fn lz4_exact_compares_compressed_cases_byte_for_byte() {
    // Our LZ4 blocks equal liblz4's, so the corpus's LZ4 cases are
    // byte-exact and pass as such.
    let id = "write/cases/lz4-partial-block";
    let case = corpus().join("cases/lz4-partial-block");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).unwrap()).unwrap();
    assert_eq!(v["byte_exact"], true);
    let a = kit(&["--writer", &good_writer(), "--filter", id]).success();
    assert_eq!(
        stdout(&a),
        format!("ok {id}\n1 passed, 0 failed, 0 skipped\n")
    );

    // A corpus that does not claim byte-exactness, whose reference segment
    // differs from ours only where the LZ4 rule allows (the index CRC):
    // the rule passes it, --lz4-exact names the first differing byte.
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("corpus");
    let copy = root.join("cases/lz4-partial-block");
    copy_dir(&case, &copy);
    let mut v = v;
    v["byte_exact"] = serde_json::json!(false);
    std::fs::write(copy.join("case.json"), v.to_string()).unwrap();
    let a = kit_on(&root, &["--lz4-exact"]).success();
    assert_eq!(
        stdout(&a),
        format!("ok {id}\n1 passed, 0 failed, 0 skipped\n")
    );

    // Now the reference blocks re-encoded as literals only: valid LZ4,
    // other bytes, the same frames.
    let seg = copy.join("segments/segment-000.floxlog");
    let relit = literal_only_blocks(&std::fs::read(&seg).unwrap());
    std::fs::write(&seg, &relit).unwrap();
    let a = kit_on(&root, &[]).success();
    assert_eq!(
        stdout(&a),
        format!("ok {id}\n1 passed, 0 failed, 0 skipped\n")
    );
    let a = kit_on(&root, &["--lz4-exact"]).code(1);
    let text = stdout(&a);
    assert!(
        text.starts_with(&format!("FAIL {id}: segment 0 (output "))
            && text.contains("bytes differ at offset"),
        "{text}"
    );
}

/// An LZ4 segment rebuilt with each block's data as one literal run (valid
/// LZ4 that liblz4 would never write), block sizes, index offsets and the
/// header's index offset and index trailer made to fit.
fn literal_only_blocks(seg: &[u8]) -> Vec<u8> {
    use floxlog::core::{index, Block, BlockHeader, Index, IndexEntry, SegmentHeader};
    let mut h = SegmentHeader::parse(seg).unwrap();
    let old_index = Index::parse(seg, &h).unwrap().unwrap();
    let mut out = seg[..SegmentHeader::LEN].to_vec();
    let mut moved = Vec::new(); // (old offset, new offset) of each block
    let mut at = SegmentHeader::LEN as u64;
    let mut scratch = vec![0u8; 1 << 20];
    while at < h.index_offset {
        let b = Block::at(seg, at).unwrap();
        let plain = b.decompress(&mut scratch).unwrap().to_vec();
        // Token: literal length (15 = more bytes follow), no match.
        let mut lz = vec![0xf0u8];
        let mut rest = plain.len() - 15;
        while rest >= 255 {
            lz.push(255);
            rest -= 255;
        }
        lz.push(rest as u8);
        lz.extend_from_slice(&plain);
        moved.push((at, out.len() as u64));
        let bh = BlockHeader {
            compressed_size: lz.len() as u32,
            ..b.header
        };
        let mut hb = [0u8; 16];
        bh.emit(&mut hb);
        out.extend_from_slice(&hb);
        out.extend_from_slice(&lz);
        at = b.end();
    }
    let entries: Vec<IndexEntry> = old_index
        .iter()
        .map(|e| IndexEntry {
            file_offset: moved.iter().find(|m| m.0 == e.file_offset).unwrap().1,
            ..e
        })
        .collect();
    h.index_offset = out.len() as u64;
    let mut trailer = vec![0u8; index::trailer_len(entries.len())];
    index::emit_trailer(&entries, old_index.header().interval, &mut trailer);
    out.extend_from_slice(&trailer);
    let mut hb = [0u8; 64];
    h.emit(&mut hb);
    out[..64].copy_from_slice(&hb);
    out
}

// The CLI options floxlog's adapters stand on.

#[test]
fn cat_error_format_kit_ends_stderr_with_kind_and_offset() {
    let seg = corpus().join("corrupt/crc-mismatch/segment.floxlog");
    let a = bin()
        .args(["cat", "--file-order", "--strict", "--error-format", "kit"])
        .arg(&seg)
        .assert()
        .code(1);
    assert_eq!(
        String::from_utf8_lossy(&a.get_output().stdout)
            .lines()
            .count(),
        57
    );
    let err = stderr(&a);
    assert_eq!(
        err.lines().last(),
        Some("error crc_mismatch 12852"),
        "{err}"
    );
    // The default format has no such line.
    let a = bin()
        .args(["cat", "--file-order", "--strict"])
        .arg(&seg)
        .assert()
        .code(1);
    assert!(
        !stderr(&a).contains("error crc_mismatch 12852"),
        "{}",
        stderr(&a)
    );
    // A header error (the segment opens to nothing) too.
    let a = bin()
        .args(["cat", "--file-order", "--error-format", "kit"])
        .arg(corpus().join("corrupt/bad-magic/segment.floxlog"))
        .assert()
        .code(1);
    assert_eq!(stderr(&a).lines().last(), Some("error bad_magic 0"));
}

#[test]
fn verify_index_only_judges_the_index_trailer() {
    let crc = corpus().join("corrupt/index-crc/segment.floxlog");
    let a = bin()
        .args(["verify", "--index-only", "--error-format", "kit"])
        .arg(&crc)
        .assert()
        .code(1);
    assert_eq!(stdout(&a), "index_error index_crc_mismatch\n");
    let a = bin()
        .args(["verify", "--index-only"])
        .arg(&crc)
        .assert()
        .code(1);
    assert!(
        stdout(&a).contains("index_error index_crc_mismatch at byte 56616"),
        "{}",
        stdout(&a)
    );
    let clean = corpus().join("cases/trades-10k/segments/segment-000.floxlog");
    let a = bin()
        .args(["verify", "--index-only"])
        .arg(&clean)
        .assert()
        .success();
    assert!(
        stdout(&a).ends_with(": index ok (10 entries)\n"),
        "{}",
        stdout(&a)
    );
    // Damaged frames before index entries: the trailer itself is intact.
    let a = bin()
        .args(["verify", "--index-only", "--error-format", "kit"])
        .arg(corpus().join("corrupt/huge-frame/segment.floxlog"))
        .assert()
        .success();
    assert_eq!(stdout(&a), "index ok\n");
    bin()
        .args(["verify", "--error-format", "kit"])
        .arg(&clean)
        .assert()
        .code(2);
}

#[test]
fn encode_settings_stamps_each_segment_and_names_bad_fields() {
    let case = corpus().join("cases/rotation");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).unwrap()).unwrap();
    let created: Vec<i64> = v["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["created_ns"].as_i64().unwrap())
        .collect();
    let t = tempfile::tempdir().unwrap();
    let sp = t.path().join("settings.json");
    let mut settings = serde_json::json!({"compression": "none", "create_index": true,
        "index_interval": 10, "exchange_id": 0, "max_segment_bytes": 4096,
        "profile": "reference", "created_ns": created});
    std::fs::write(&sp, settings.to_string()).unwrap();
    let out = t.path().join("out");
    std::fs::create_dir(&out).unwrap();
    bin()
        .args(["encode", "--settings"])
        .arg(&sp)
        .arg("-o")
        .arg(&out)
        .arg(case.join("events.jsonl"))
        .assert()
        .success();
    for (i, c) in created.iter().enumerate() {
        let got = std::fs::read(out.join(format!("{c}.floxlog"))).unwrap();
        let want = std::fs::read(case.join(format!("segments/segment-{i:03}.floxlog"))).unwrap();
        assert!(got == want, "segment {i}");
    }
    settings["index_interval"] = serde_json::json!(70000);
    std::fs::write(&sp, settings.to_string()).unwrap();
    let a = bin()
        .args(["encode", "--settings"])
        .arg(&sp)
        .arg("-o")
        .arg(t.path().join("out2"))
        .arg(case.join("events.jsonl"))
        .assert()
        .code(1);
    assert!(
        stderr(&a).contains("settings.json: `index_interval` is not in 1..=65535"),
        "{}",
        stderr(&a)
    );
    bin()
        .args(["encode", "--compression", "none", "--settings"])
        .arg(&sp)
        .arg("-o")
        .arg(t.path().join("out3"))
        .assert()
        .code(2);
}
