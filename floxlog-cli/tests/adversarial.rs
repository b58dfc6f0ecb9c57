//! The adversarial pass of issue 23 over `floxlog conformance`: hostile
//! adapters and corpora. Each test is named after the defect it guards
//! against; none asserts a duration.

use assert_cmd::assert::Assert;
use std::path::{Path, PathBuf};
mod common;
use common::{adapter, bin, bin_path, corpus, script};

/// A corpus holding a copy of `cases/trades-7` only.
fn small_corpus(dir: &Path) -> PathBuf {
    let root = dir.join("corpus");
    let case = root.join("cases/trades-7");
    std::fs::create_dir_all(case.join("segments")).unwrap();
    let src = corpus().join("cases/trades-7");
    for f in ["case.json", "expected.jsonl", "events.jsonl"] {
        std::fs::copy(src.join(f), case.join(f)).unwrap();
    }
    std::fs::copy(
        src.join("segments/segment-000.floxlog"),
        case.join("segments/segment-000.floxlog"),
    )
    .unwrap();
    root
}

fn kit(root: &Path, args: &[&str]) -> Assert {
    bin()
        .env("FLOXLOG", bin_path())
        .env_remove("FLOXLOG_CONFORMANCE_DIR")
        .arg("conformance")
        .arg("--corpus")
        .arg(root)
        .args(args)
        .assert()
}

fn good_reader() -> String {
    format!("'{}' {{segment}}", adapter("read.sh").display())
}

fn stdout(a: &Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

#[cfg(unix)]
fn mkfifo(p: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success());
}

/// The kit's report (exit 1) over a small corpus whose file `rel` is
/// replaced by a FIFO.
#[cfg(unix)]
fn kit_with_fifo(rel: &str) -> String {
    let t = tempfile::tempdir().unwrap();
    let root = small_corpus(t.path());
    let f = root.join(rel);
    std::fs::remove_file(&f).unwrap();
    mkfifo(&f);
    let a = kit(&root, &["--reader", &good_reader(), "--timeout", "5"]).code(1);
    stdout(&a)
}

/// A FIFO as `case.json` blocked the corpus load for ever.
#[cfg(unix)]
#[test]
fn a_fifo_as_case_json_is_a_broken_case_not_a_hang() {
    let out = kit_with_fifo("cases/trades-7/case.json");
    assert!(
        out.contains("FAIL read/cases/trades-7") && out.contains("FIFO"),
        "{out}"
    );
}

/// A FIFO as `expected.jsonl` blocked the read check for ever (past
/// `--timeout`: the kit itself read it).
#[cfg(unix)]
#[test]
fn a_fifo_as_expected_jsonl_fails_its_case() {
    let out = kit_with_fifo("cases/trades-7/expected.jsonl");
    assert!(
        out.contains("FAIL read/cases/trades-7") && out.contains("FIFO"),
        "{out}"
    );
}

/// A FIFO in place of a segment was reported as "missing".
#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_a_segment_is_named_as_such() {
    let out = kit_with_fifo("cases/trades-7/segments/segment-000.floxlog");
    assert!(out.contains("is a FIFO"), "{out}");
    assert!(!out.contains("missing"), "{out}");
}

/// A `case.json` of gigabytes (sparse) was read whole into memory.
#[test]
fn a_huge_case_json_is_refused_by_its_size() {
    let t = tempfile::tempdir().unwrap();
    let root = small_corpus(t.path());
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(root.join("cases/trades-7/case.json"))
        .unwrap();
    f.set_len(64 << 30).unwrap();
    let a = kit(&root, &["--reader", &good_reader()]).code(1);
    let out = stdout(&a);
    assert!(out.contains("more than the 16 MiB"), "{out}");
}

/// Symbolic links in a corpus that lead outside it (a case folder, the
/// segments folder, a segment) had the kit hand files outside the corpus
/// to adapters and read them itself.
#[cfg(unix)]
#[test]
fn links_out_of_the_corpus_are_refused() {
    use std::os::unix::fs::symlink;
    let real = corpus().join("cases/trades-7");
    // a case folder
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("c1");
    std::fs::create_dir_all(root.join("cases")).unwrap();
    symlink(&real, root.join("cases/t7")).unwrap();
    // the segments folder
    let root2 = small_corpus(&t.path().join("c2"));
    let segs = root2.join("cases/trades-7/segments");
    std::fs::remove_dir_all(&segs).unwrap();
    symlink(real.join("segments"), &segs).unwrap();
    // one segment
    let root3 = small_corpus(&t.path().join("c3"));
    let seg = root3.join("cases/trades-7/segments/segment-000.floxlog");
    std::fs::remove_file(&seg).unwrap();
    symlink("/etc/passwd", &seg).unwrap();
    for r in [&root, &root2, &root3] {
        let a = kit(r, &["--reader", &good_reader()]).code(1);
        let out = stdout(&a);
        assert!(out.contains("leads outside the corpus"), "{out}");
        assert!(!out.contains("\nok ") && !out.starts_with("ok "), "{out}");
    }
    // A link that stays inside the corpus is fine.
    let root4 = small_corpus(&t.path().join("c4"));
    let segdir = root4.join("cases/trades-7/segments");
    std::fs::rename(
        segdir.join("segment-000.floxlog"),
        root4.join("cases/trades-7/real.floxlog"),
    )
    .unwrap();
    symlink("../real.floxlog", segdir.join("segment-000.floxlog")).unwrap();
    kit(&root4, &["--reader", &good_reader()]).code(0);
}

/// An adapter's last line went whole into the report (and the JUnit
/// file): one line of 200 KB.
#[test]
fn a_gigantic_adapter_line_is_cut_in_the_report() {
    let t = tempfile::tempdir().unwrap();
    let root = small_corpus(t.path());
    let line = "x".repeat(300_000);
    let s = script(
        t.path(),
        "big.sh",
        &format!("#!/bin/sh\necho {line}\necho {line} >&2\nexit 1\n"),
    );
    let a = kit(
        &root,
        &["--reader", &format!("'{}' {{segment}}", s.display())],
    )
    .code(1);
    let out = stdout(&a);
    assert!(out.contains("FAIL index/cases/trades-7"), "{out}");
    for l in out.lines() {
        assert!(l.len() < 2000, "report line of {} bytes", l.len());
    }
    assert!(out.contains("(300000 bytes)"), "{out}");
}

/// An adapter that exited 0 while a process it started kept the pipes
/// open was reported as a plain time-out, blaming the adapter's own run.
#[cfg(unix)]
#[test]
fn a_grandchild_holding_the_pipes_is_named() {
    let t = tempfile::tempdir().unwrap();
    let root = small_corpus(t.path());
    let s = script(
        t.path(),
        "gc.sh",
        &format!(
            "#!/bin/sh\n(sleep 60) &\nexec '{}' \"$@\"\n",
            adapter("read.sh").display()
        ),
    );
    let a = kit(
        &root,
        &[
            "--reader",
            &format!("'{}' {{segment}}", s.display()),
            "--timeout",
            "1",
            "--filter",
            "read/",
        ],
    )
    .code(1);
    let out = stdout(&a);
    assert!(
        out.contains("the adapter exited (exit status 0) but a process it started kept its stdout or stderr open"),
        "{out}"
    );
}

/// A writer adapter could make the kit read a file outside its scratch
/// (a link in its output folder) or allocate by an output's size (a sparse
/// file of terabytes).
#[cfg(unix)]
#[test]
fn writer_outputs_are_mapped_and_links_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let root = small_corpus(t.path());
    let w = script(
        t.path(),
        "w.sh",
        "#!/bin/sh\nln -s /etc/passwd \"$2/a.floxlog\"\ntruncate -s 1T \"$2/b.floxlog\"\n",
    );
    let a = kit(
        &root,
        &[
            "--writer",
            &format!("'{}' {{events}} {{out_dir}} {{settings}}", w.display()),
        ],
    )
    .code(1);
    let out = stdout(&a);
    // Only the sparse file counts (the link is not an output), and it is
    // compared, not read into memory.
    assert!(out.contains("FAIL write/cases/trades-7"), "{out}");
    assert!(
        !out.contains("expected 1 segments, the writer wrote 2"),
        "{out}"
    );
}
