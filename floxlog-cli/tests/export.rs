//! `floxlog export`: counts printed and checked, exit codes, CSV output.

use std::path::Path;
mod common;
use common::bin;

fn demo_tape(dir: &Path) {
    bin()
        .args([
            "demo",
            "--trades",
            "3000",
            "--book-deltas",
            "2000",
            "--compression",
            "none",
        ])
        .args(["--max-segment-bytes", "64K"])
        .arg(dir)
        .assert()
        .success();
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn export_prints_checked_counts_and_refuses_to_overwrite() {
    let t = tempfile::tempdir().unwrap();
    let tape = t.path().join("tape");
    demo_tape(&tape);
    let out = t.path().join("ds");
    let o = bin()
        .arg("export")
        .arg(&tape)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("type=trade: 3000 read, 3000 written"), "{err}");
    assert!(
        err.contains("type=book_delta: 2000 read, 2000 written"),
        "{err}"
    );
    assert!(out.join("type=trade").is_dir());
    // A second run without --overwrite is a usage error (exit 2).
    let o = bin()
        .arg("export")
        .arg(&tape)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--overwrite"));
    let o = bin()
        .arg("export")
        .arg(&tape)
        .args(["--overwrite", "--type", "trade", "--format", "csv", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!out.join("type=book_delta").exists());
    // CSV rows: one per trade, with the header `cat --format csv` prints.
    let mut rows = 0;
    for day in std::fs::read_dir(out.join("type=trade")).unwrap() {
        for f in std::fs::read_dir(day.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            let mut lines = text.lines();
            assert!(lines.next().unwrap().starts_with("type,exchange_ts_ns"));
            rows += lines.count();
        }
    }
    assert_eq!(rows, 3000);
}

#[test]
fn a_damaged_segment_exits_1_and_keeps_the_rows_before_it() {
    let t = tempfile::tempdir().unwrap();
    let tape = t.path().join("tape");
    demo_tape(&tape);
    let mut segs: Vec<_> = std::fs::read_dir(&tape)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "floxlog"))
        .collect();
    segs.sort();
    let victim = &segs[0];
    let mut b = std::fs::read(victim).unwrap();
    let at = b.len() / 2;
    b[at] ^= 0xff;
    std::fs::write(victim, b).unwrap();
    let out = t.path().join("ds");
    let o = bin()
        .arg("export")
        .arg(&tape)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("exported the"), "{err}");
    assert!(err.contains(&victim.display().to_string()), "{err}");
    assert!(
        out.join("type=trade").is_dir(),
        "the rows read are published"
    );
}
