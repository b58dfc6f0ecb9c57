//! `verify -j` and `convert -j`: the same output on any number of threads,
//! on the conformance corpus (`FLOXLOG_CONFORMANCE_DIR`) and on tapes large
//! enough to be cut into ranges, intact and damaged.

use std::path::{Path, PathBuf};
mod common;
use common::{bin, corpus};

/// The corpus's tapes (segment directories) and damaged segments, and one
/// tape of every damaged segment between good ones (in `tmp`).
fn corpus_tapes(tmp: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for kind in ["cases", "real", "corrupt"] {
        for e in std::fs::read_dir(corpus().join(kind)).unwrap() {
            let d = e.unwrap().path();
            for p in [d.join("segments"), d.join("segment.floxlog")] {
                if p.exists() {
                    v.push(p);
                }
            }
        }
    }
    v.sort();
    assert!(v.len() > 20, "corpus not found");
    let all = tmp.join("all-damage");
    std::fs::create_dir(&all).unwrap();
    let good = corpus().join("cases/trades-10k/segments");
    let good: Vec<PathBuf> = std::fs::read_dir(good)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    for (i, p) in v.iter().filter(|p| p.is_file()).enumerate() {
        std::fs::copy(p, all.join(format!("{:04}.floxlog", 2 * i))).unwrap();
        std::fs::copy(&good[0], all.join(format!("{:04}.floxlog", 2 * i + 1))).unwrap();
    }
    v.push(all);
    v
}

/// `verify` output with the timing (the only thing allowed to differ) cut.
fn verify(tape: &Path, jobs: &str, json: bool) -> (Option<i32>, String) {
    let mut c = bin();
    c.args(["verify", "-j", jobs]).arg(tape);
    if json {
        c.arg("--json");
    }
    let out = c.output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let text = text
        .lines()
        .map(|l| match l.find(" checked in ") {
            Some(i) if !json => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    (out.status.code(), text)
}

fn convert(tape: &Path, out: &Path, jobs: &str, extra: &[&str]) -> (Option<i32>, String) {
    let o = bin()
        .args(["convert", "--created-ns", "1700000000000000000", "-j", jobs])
        .arg(tape)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8(o.stderr).unwrap())
}

/// Every file under `dir`, by relative path, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                v.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    v.sort();
    v
}

fn demo(dir: &Path, compression: &str, max: &str, trades: &str) {
    bin()
        .args(["demo", "--trades", trades, "--book-deltas", "20000"])
        .args(["--compression", compression, "--max-segment-bytes", max])
        .arg(dir)
        .assert()
        .success();
}

/// A tape with several segments of each codec, one large enough to split.
fn mixed_tape(root: &Path) -> PathBuf {
    let a = root.join("a");
    let b = root.join("b");
    demo(&a, "none", "6M", "300000");
    demo(&b, "lz4", "64M", "300000");
    let tape = root.join("tape");
    std::fs::create_dir(&tape).unwrap();
    let mut i = 0;
    for d in [&a, &b] {
        let mut segs: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "floxlog"))
            .collect();
        segs.sort();
        for s in segs {
            // Names in order of creation: uncompressed first.
            std::fs::copy(&s, tape.join(format!("{}.floxlog", 1_000 + i))).unwrap();
            i += 1;
        }
    }
    tape
}

#[test]
fn verify_reports_the_same_on_any_number_of_threads() {
    let d = tempfile::tempdir().unwrap();
    for tape in corpus_tapes(d.path()) {
        for json in [false, true] {
            let one = verify(&tape, "1", json);
            assert_eq!(verify(&tape, "2", json), one, "{}", tape.display());
            assert_eq!(verify(&tape, "3", json), one, "{}", tape.display());
        }
    }
}

#[test]
fn convert_writes_the_same_bytes_and_errors_on_any_number_of_threads() {
    let d = tempfile::tempdir().unwrap();
    let tape = mixed_tape(d.path());
    let (c1, _) = convert(
        &tape,
        &d.path().join("o1"),
        "1",
        &["--max-segment-bytes", "4M"],
    );
    let (c2, _) = convert(
        &tape,
        &d.path().join("o2"),
        "2",
        &["--max-segment-bytes", "4M"],
    );
    assert_eq!((c1, c2), (Some(0), Some(0)));
    let (f1, f2) = (files(&d.path().join("o1")), files(&d.path().join("o2")));
    assert!(f1.len() > 3);
    assert!(f1 == f2, "outputs differ");
    // Recompressed, into one segment file.
    let (c1, _) = convert(
        &tape,
        &d.path().join("s1"),
        "1",
        &["--compression", "lz4", "--segment"],
    );
    let (c2, _) = convert(
        &tape,
        &d.path().join("s2"),
        "2",
        &["--compression", "lz4", "--segment"],
    );
    assert_eq!((c1, c2), (Some(0), Some(0)));
    assert!(
        std::fs::read(d.path().join("s1")).unwrap() == std::fs::read(d.path().join("s2")).unwrap()
    );

    // Damage in the large LZ4 segment and in an uncompressed one: the same
    // error (file, offset, hint) and no output.
    let mut segs: Vec<PathBuf> = std::fs::read_dir(&tape)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    segs.sort();
    let lz4 = segs.last().unwrap().clone();
    let plain = segs[1].clone();
    for (seg, at) in [(&lz4, 3usize), (&lz4, 2), (&plain, 2)] {
        let mut bytes = std::fs::read(seg).unwrap();
        let off = bytes.len() * at / 4;
        bytes[off] ^= 0x40;
        std::fs::write(seg, &bytes).unwrap();
        let v1 = verify(&tape, "1", true);
        assert_eq!(v1.0, Some(1));
        assert_eq!(verify(&tape, "2", true), v1);
        assert_eq!(verify(&tape, "2", false), verify(&tape, "1", false));
        let e1 = convert(&tape, &d.path().join("x1"), "1", &[]);
        let e2 = convert(&tape, &d.path().join("x2"), "2", &[]);
        assert_eq!(e1.0, Some(1), "{}", e1.1);
        assert_eq!(e2, e1);
        assert!(!d.path().join("x2").exists());
        bytes[off] ^= 0x40;
        std::fs::write(seg, &bytes).unwrap();
    }
}

#[test]
fn convert_of_damaged_corpus_segments_fails_the_same_on_any_number_of_threads() {
    let d = tempfile::tempdir().unwrap();
    for (i, tape) in corpus_tapes(d.path()).iter().enumerate() {
        let one = convert(tape, &d.path().join(format!("{i}-1")), "1", &[]);
        let two = convert(tape, &d.path().join(format!("{i}-2")), "2", &[]);
        let norm = |s: &str| {
            s.replace(&format!("{i}-1"), "OUT")
                .replace(&format!("{i}-2"), "OUT")
        };
        assert_eq!(
            (one.0, norm(&one.1)),
            (two.0, norm(&two.1)),
            "{}",
            tape.display()
        );
        if one.0 == Some(0) {
            assert!(
                files(&d.path().join(format!("{i}-1"))) == files(&d.path().join(format!("{i}-2")))
            );
        }
    }
}
