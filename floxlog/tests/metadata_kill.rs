//! Symbol names on a live tape (issue 35 item 5): `metadata.json` is
//! written when the names are set and rewritten crash-atomically when they
//! change, so a monitor of the live tape sees them, and they survive the
//! writer being killed with SIGKILL (no close ever writes them).
//!
//! The test re-runs its own binary as the writer (the child role, chosen
//! by an environment variable), which says on stdout when the names are set.

#![cfg(unix)]

use floxlog::synth::mixed_event;
use floxlog::tape::{Durability, OpenOptions, Tape, TapeWriter, TapeWriterConfig};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

const CHILD: &str = "FLOXLOG_METADATA_KILL_CHILD";

fn names(n: u32) -> serde_json::Value {
    let symbols: Vec<_> = (1..=n)
        .map(|i| serde_json::json!({"symbol_id": i, "name": format!("SYM{i}")}))
        .collect();
    serde_json::json!({ "symbols": symbols })
}

/// The child: sets one name, appends, sets two, says so after each, then
/// appends until killed.
fn child(dir: &Path, journal: bool) {
    let cfg = TapeWriterConfig {
        journal,
        durability: Durability::None,
        created_ns: Some(1),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(dir, cfg).unwrap();
    let mut out = std::io::stdout().lock();
    for n in [1, 2] {
        w.set_metadata(names(n));
        w.append(&mixed_event(1, u64::from(n)).as_event()).unwrap();
        w.flush().unwrap();
        writeln!(out, "names {n}").unwrap();
        out.flush().unwrap();
        // Waits for the parent to look before changing them.
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).unwrap();
    }
    loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn metadata_kill_child() {
    let Ok(dir) = std::env::var(CHILD) else {
        return;
    };
    child(
        Path::new(&dir),
        std::env::var("JOURNAL").is_ok_and(|j| j == "1"),
    );
}

/// The names a reader of the tape at `dir` sees now.
fn seen(dir: &Path) -> Vec<(u32, String)> {
    Tape::open(&[dir.to_path_buf()], OpenOptions::default())
        .unwrap()
        .symbol_names()
}

#[test]
fn names_are_seen_live_and_survive_a_killed_writer() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    for journal in ["1", "0"] {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("tape");
        let mut c = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "metadata_kill_child", "--nocapture"])
            .env(CHILD, &dir)
            .env("JOURNAL", journal)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(c.stdout.take().unwrap()).lines();
        let mut stdin = c.stdin.take().unwrap();
        for n in [1u32, 2] {
            let want = format!("names {n}");
            // The test harness prints its own lines first.
            while lines.next().expect("the child ended").unwrap() != want {}
            let want: Vec<(u32, String)> = (1..=n).map(|i| (i, format!("SYM{i}"))).collect();
            assert_eq!(seen(&dir), want, "journal={journal}: live, {n} names");
            writeln!(stdin, "go").unwrap();
        }
        c.kill().unwrap();
        c.wait().unwrap();
        let want = vec![(1, "SYM1".to_string()), (2, "SYM2".to_string())];
        assert_eq!(seen(&dir), want, "journal={journal}: after SIGKILL");
        // Nothing half-written is left beside it.
        let tmp = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("metadata.json."))
            .count();
        assert_eq!(tmp, 0, "journal={journal}");
    }
}
