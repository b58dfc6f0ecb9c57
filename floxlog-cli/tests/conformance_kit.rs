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

/// The report without its first line, the corpus line every run starts
/// with (`corpus ROOT version X: N files match SHA256SUMS`).
fn stdout(a: &Assert) -> String {
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    match out.split_once('\n') {
        Some((first, rest)) if first.starts_with("corpus ") => rest.to_string(),
        _ => out,
    }
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
    // The CRC is what differs, the payload it covers does not: the CRC is
    // the source, named as such.
    assert!(
        out.contains("expected segment-000.floxlog): record 0 (trade, at offset 64 of the output): frame header field crc32:"),
        "{out}"
    );
    assert!(
        out.contains(
            "[byte level: bytes differ at offset 68 (frame 0 (trade) header, field crc32)"
        ),
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
    // Named by its source, the extra record (not the header fields that
    // follow from it).
    assert!(
        out.contains("expected segment-001.floxlog): expected "),
        "{out}"
    );
    assert!(out.contains("records, the output has "), "{out}");
    assert!(out.contains("; the first extra is record "), "{out}");
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
    // The case the damaged segment was made from (its events come first).
    copy_dir(
        &corpus().join("cases/books-mixed"),
        &root.join("cases/books-mixed"),
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
    assert!(out.ends_with("8 passed, 2 failed, 0 skipped\n"), "{out}");
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

// The experiment of issue 37, repeated: each way of passing without
// conforming is caught, with a message that names the cause.

fn raw_stdout(a: &Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

#[test]
fn every_report_starts_with_the_corpus_version_and_its_checksums() {
    let version = std::fs::read_to_string(corpus().join("VERSION")).unwrap();
    let a = kit(&[
        "--reader",
        &good_reader(),
        "--filter",
        "read/cases/trades-7",
    ])
    .success();
    let first = raw_stdout(&a).lines().next().unwrap().to_string();
    assert!(
        first.starts_with("corpus ")
            && first.contains(&format!(" version {}: ", version.trim()))
            && first.ends_with(" files match SHA256SUMS"),
        "{first}"
    );
}

#[test]
fn a_reader_printing_empty_objects_fails_the_damaged_cases() {
    // Same number of lines, same exit status and error line: only the
    // events are wrong, and each one before the damage is compared.
    let t = tempfile::tempdir().unwrap();
    let r = wrapped_reader(t.path(), "sed 's/^{.*}$/{}/'");
    let a = kit(&[
        "--reader",
        &read_tmpl(&r),
        "--filter",
        "read/corrupt/crc-mismatch",
    ])
    .code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with(
            "FAIL read/corrupt/crc-mismatch: before the damage: event 0 \
             (segment.floxlog output line 1; expected.jsonl event 1): field `"
        ) && out.contains("` missing (expected "),
        "{out}"
    );
}

fn small_corpus(t: &Path) -> PathBuf {
    let root = t.join("corpus");
    for f in ["cases/trades-7", "cases/lz4-partial-block"] {
        copy_dir(&corpus().join(f), &root.join(f));
    }
    for f in ["VERSION", "SHA256SUMS"] {
        std::fs::copy(corpus().join(f), root.join(f)).unwrap();
    }
    root
}

#[test]
fn a_flipped_corpus_byte_is_corpus_damage_not_a_failure() {
    let t = tempfile::tempdir().unwrap();
    let root = small_corpus(t.path());
    let seg = root.join("cases/trades-7/segments/segment-000.floxlog");
    let mut b = std::fs::read(&seg).unwrap();
    b[100] ^= 1;
    std::fs::write(&seg, &b).unwrap();
    let a = bin()
        .env("FLOXLOG", bin_path())
        .args(["conformance", "--reader", &good_reader(), "--corpus"])
        .arg(&root)
        .assert()
        .code(2);
    let err = stderr(&a);
    assert!(
        err.contains(&format!(
            "corpus damaged: {} does not match SHA256SUMS",
            seg.display()
        )) && err.contains("no adapter was run"),
        "{err}"
    );
    assert!(raw_stdout(&a).is_empty(), "{}", raw_stdout(&a));
}

#[test]
fn an_index_half_answering_unsupported_is_said_and_can_be_required() {
    let t = tempfile::tempdir().unwrap();
    let r = script(
        t.path(),
        "noindex.sh",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = --index ]; then echo 'index unsupported'; exit 0; fi\nexec '{}' \"$@\"\n",
            adapter("read.sh").display()
        ),
    );
    let args = ["--reader", &read_tmpl(&r), "--filter", "cases/trades-7"];
    let a = kit(&args).success();
    assert!(
        stdout(&a).ends_with(
            "1 passed, 0 failed, 1 skipped; index unsupported: the reader checked no index \
             (1 index checks skipped; --require-index fails them)\n"
        ),
        "{}",
        stdout(&a)
    );
    let a = kit(&[&args[..], &["--require-index"]].concat()).code(1);
    assert!(
        stdout(&a).contains(
            "FAIL index/cases/trades-7: segment-000.floxlog: the reader answered `index unsupported` and --require-index was given"
        ),
        "{}",
        stdout(&a)
    );
}

#[test]
fn a_writer_off_by_one_field_is_named_by_the_record_field() {
    // The writer is handed event 3 with its price one tick up: the diff
    // names the record and field, not the CRC that follows from it.
    let t = tempfile::tempdir().unwrap();
    let w = script(
        t.path(),
        "writer.sh",
        &format!(
            "#!/bin/sh\nev=\"$2/../events.jsonl\"\n\
             python3 -c 'import json,sys; l=open(sys.argv[1]).read().splitlines(); e=json.loads(l[3]); e[\"price_raw\"]+=1; l[3]=json.dumps(e); open(sys.argv[2],\"w\").write(\"\\n\".join(l)+\"\\n\")' \"$1\" \"$ev\" || exit 1\n\
             exec '{}' \"$ev\" \"$2\" \"$3\"\n",
            adapter("write.sh").display()
        ),
    );
    let keep = t.path().join("kept");
    let a = kit(&[
        "--writer",
        &write_tmpl(&w),
        "--filter",
        "write/cases/trades-7",
        "--keep",
        keep.to_str().unwrap(),
    ])
    .code(1);
    let out = stdout(&a);
    assert!(
        out.contains("record 3 (trade, at offset 244 of the output): field price_raw differs (payload byte +16:"),
        "{out}"
    );
    // --keep left the output, and the settings it was written with.
    assert!(keep.join("trades-7/settings.json").is_file());
    let kept: Vec<_> = std::fs::read_dir(keep.join("trades-7/out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".floxlog"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
}

#[test]
fn the_adapters_stderr_tail_is_in_the_report_and_junit() {
    let t = tempfile::tempdir().unwrap();
    let r = script(
        t.path(),
        "noisy.sh",
        "#!/bin/sh\ni=1\nwhile [ $i -le 25 ]; do echo \"trace $i\" >&2; i=$((i+1)); done\n\
         echo 'Node.js v20.20.2' >&2\nexit 3\n",
    );
    let junit = t.path().join("j.xml");
    let a = kit(&[
        "--reader",
        &read_tmpl(&r),
        "--filter",
        "read/cases/trades-7",
        "--junit",
        junit.to_str().unwrap(),
    ])
    .code(1);
    let out = stdout(&a);
    let mut want = String::from("    adapter stderr (last lines):\n");
    for i in 7..=25 {
        want.push_str(&format!("    | trace {i}\n"));
    }
    want.push_str("    | Node.js v20.20.2\n");
    assert!(out.contains(&want), "{out}");
    assert!(!out.contains("trace 6\n"), "{out}");
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(
        x.contains("<system-err>trace 7\ntrace 8\n")
            && x.contains("trace 25\nNode.js v20.20.2</system-err>"),
        "{x}"
    );
    assert!(
        x.contains("<property name=\"corpus_version\" value=\""),
        "{x}"
    );
}

#[test]
fn lz4_decoded_judges_byte_exact_lz4_cases_by_their_decoded_blocks() {
    // A byte-exact corpus whose reference LZ4 blocks are literal runs: our
    // liblz4-identical bytes differ, the frames do not.
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("corpus");
    let case = root.join("cases/lz4-partial-block");
    copy_dir(&corpus().join("cases/lz4-partial-block"), &case);
    let seg = case.join("segments/segment-000.floxlog");
    std::fs::write(&seg, literal_only_blocks(&std::fs::read(&seg).unwrap())).unwrap();
    let id = "write/cases/lz4-partial-block";
    let a = kit_on(&root, &[]).code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with(&format!("FAIL {id}: segment 0 (output "))
            && out.contains("block 0 (at offset 64 of the output): the LZ4 data differs at +")
            && out.contains("--lz4-decoded judges by decoded blocks"),
        "{out}"
    );
    let a = kit_on(&root, &["--lz4-decoded"]).success();
    assert!(
        stdout(&a).starts_with(&format!("ok {id}\n")),
        "{}",
        stdout(&a)
    );
}

#[test]
fn a_recommended_case_that_fails_warns_without_failing_the_run() {
    let t = tempfile::tempdir().unwrap();
    let root = small_corpus(t.path());
    std::fs::remove_file(root.join("SHA256SUMS")).unwrap();
    let cj = root.join("cases/trades-7/case.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cj).unwrap()).unwrap();
    v["recommended"] = serde_json::json!(["read"]);
    std::fs::write(&cj, v.to_string()).unwrap();
    let r = wrapped_reader(t.path(), "sed 5d");
    let a = bin()
        .env("FLOXLOG", bin_path())
        .args([
            "conformance",
            "--reader",
            &read_tmpl(&r),
            "--filter",
            "read/cases/trades-7",
            "--corpus",
        ])
        .arg(&root)
        .assert()
        .success();
    let out = raw_stdout(&a);
    assert!(out.starts_with("corpus "), "{out}");
    assert!(out.contains("no SHA256SUMS"), "{out}");
    assert!(
        out.contains("\nwarn read/cases/trades-7 (recommended, not required): event 4 "),
        "{out}"
    );
    assert!(
        out.ends_with(
            "0 passed, 0 failed, 0 skipped; 1 recommended (not required) checks failed\n"
        ),
        "{out}"
    );
}

/// Both shipped readers, floxlog's and the independent Python one, give
/// the same answer on a generated edge set: every segment header byte
/// flipped, bytes flipped and cuts made through the frames, blocks and
/// index of an uncompressed and an LZ4 segment (events, exit status, the
/// error line, and the index verdict).
#[test]
fn both_readers_agree_on_generated_damage() {
    use std::process::Command;
    let py = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/adapters/python/floxlog_reader.py");
    let t = tempfile::tempdir().unwrap();
    let seg = t.path().join("m.floxlog");
    let answer = |args: &[&str]| -> (Vec<serde_json::Value>, bool, String) {
        let run = |mut c: Command| {
            let o = c.args(args).arg(&seg).output().unwrap();
            let events = String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap_or(serde_json::Value::String(l.into())))
                .collect::<Vec<_>>();
            let err = String::from_utf8_lossy(&o.stderr);
            let last = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            (events, o.status.success(), last)
        };
        let mut f = Command::new(adapter("read.sh"));
        f.env("FLOXLOG", bin_path());
        let mut p = Command::new("python3");
        p.arg(&py);
        let (a, b) = (run(f), run(p));
        assert_eq!(
            a, b,
            "floxlog (left) and Python (right) disagree on {args:?}"
        );
        a
    };
    let mut n = 0;
    for case in ["cases/trades-7", "cases/lz4-partial-block"] {
        let dir = corpus().join(case).join("segments");
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let orig = std::fs::read(file).unwrap();
        let mut edits: Vec<Vec<u8>> = Vec::new();
        for i in 0..64 {
            let mut b = orig.clone();
            b[i] ^= if i % 2 == 0 { 0x01 } else { 0xff };
            edits.push(b);
        }
        for i in (64..orig.len()).step_by(97) {
            let mut b = orig.clone();
            b[i] ^= 0x10;
            edits.push(b);
        }
        for cut in (0..orig.len()).step_by(199) {
            edits.push(orig[..cut].to_vec());
        }
        for b in edits {
            std::fs::write(&seg, &b).unwrap();
            let (_, ok, last) = answer(&[]);
            assert!(ok || last.starts_with("error "), "{last}");
            answer(&["--index"]);
            n += 1;
        }
    }
    assert!(n > 150, "{n}");
}

#[test]
fn a_tape_read_in_file_order_fails_the_time_order_merge() {
    let t = tempfile::tempdir().unwrap();
    let r = script(
        t.path(),
        "fileorder.sh",
        "#!/bin/sh\n[ \"$1\" = --tape ] || exit 2\nexec \"$FLOXLOG\" cat --format jsonl --file-order -- \"$2\"\n",
    );
    let a = kit(&[
        "--reader",
        &read_tmpl(&r),
        "--filter",
        "read/tapes/merge-overlap",
    ])
    .code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with("FAIL read/tapes/merge-overlap: event 1 (tape output line 2; expected.jsonl event 2): field `"),
        "{out}"
    );
    let a = kit(&["--reader", &good_reader(), "--filter", "read/tapes/"]).success();
    assert_eq!(
        stdout(&a),
        "ok read/tapes/flox-rotation\nok read/tapes/merge-overlap\nok read/tapes/missing-listed-segment\n\
         ok read/tapes/spec-series\n4 passed, 0 failed, 0 skipped\n"
    );
}

#[test]
fn a_tape_read_that_fails_without_naming_the_kind_is_caught() {
    let t = tempfile::tempdir().unwrap();
    // Reads the tape as floxlog does, but says nothing of why it failed.
    let r = script(
        t.path(),
        "mute.sh",
        "#!/bin/sh\n[ \"$1\" = --tape ] || exit 2\n\"$FLOXLOG\" cat --format jsonl --strict -- \"$2\" 2>/dev/null\n",
    );
    let a = kit(&[
        "--reader",
        &read_tmpl(&r),
        "--filter",
        "read/tapes/missing-listed-segment",
    ])
    .code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with(
            "FAIL read/tapes/missing-listed-segment: the read failed as it must, but the last \
             stderr line is not `error missing_segment <file>` (stderr empty)"
        ),
        "{out}"
    );
}

#[test]
fn empty_input_is_a_writer_case_only() {
    let a = kit(&["--writer", &good_writer(), "--filter", "cases/empty-input"]).success();
    assert_eq!(
        stdout(&a),
        "ok write/cases/empty-input\n1 passed, 0 failed, 0 skipped\n"
    );
    // No read or index id exists for it: a reader-only filter matches nothing.
    let a = kit(&["--reader", &good_reader(), "--filter", "cases/empty-input"]).code(2);
    assert!(
        stderr(&a).contains("no case id of the corpus at"),
        "{}",
        stderr(&a)
    );
}
