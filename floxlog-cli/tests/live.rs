//! The tools on a live tape (issue 35 item 5): `inspect` of a tape a
//! journal writer is writing exits 0, shows the writer live with its pid,
//! counts the segments that hold events (its prepared ones apart) and
//! reads each open segment to its last published event; `cat --follow`
//! waits for the tape and its first event, writes each line as it comes,
//! starts at the end with `--from-end`, and waits `--writer-wait` for a
//! dead writer's restart.

mod common;

use common::{bin, bin_path};
use floxlog::synth::mixed_event;
use floxlog::tape::{Durability, TapeWriter, TapeWriterConfig};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

fn config(resume: bool) -> TapeWriterConfig {
    TapeWriterConfig {
        journal: true,
        durability: Durability::None,
        max_segment_bytes: 1 << 20,
        resume,
        ..TapeWriterConfig::default()
    }
}

fn live_writer(dir: &std::path::Path, events: u64) -> TapeWriter {
    let mut w = TapeWriter::create(dir, config(false)).unwrap();
    for i in 0..events {
        w.append(&mixed_event(1, i).as_event()).unwrap();
    }
    w.sync().unwrap();
    w
}

#[test]
fn inspect_shows_a_live_tape_as_it_is() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    // Two closed segments, a live one and two prepared.
    let n = 30_000;
    let w = live_writer(&dir, n);
    let d = dir.to_str().unwrap();
    let o = bin().args(["inspect", d]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let pid = std::process::id();
    assert!(
        out.contains(&format!("writer: live (pid {pid} holds the tape lock)")),
        "{out}"
    );
    assert!(!out.contains("ERROR"), "{out}");
    assert!(out.contains("total: 3 segments"), "{out}");
    assert!(out.contains("prepared (no event yet): 2"), "{out}");
    assert!(out.contains(&format!("events: {n} (")), "{out}");
    assert!(out.contains("open: published frames end at byte"), "{out}");

    for quick in [false, true] {
        let mut args = vec!["inspect", "--json", d];
        if quick {
            args.push("--quick");
        }
        let o = bin().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(0));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["dirs"][0]["writer"]["state"], "live");
        assert_eq!(v["dirs"][0]["writer"]["pid"], pid);
        assert_eq!(v["total"]["segments"], 3);
        let h = &v["health"];
        assert_eq!(h["writer_live"], true);
        assert_eq!(h["segments_closed"], 2);
        assert_eq!(h["segments_open"], 1);
        assert_eq!(h["segments_prepared"], 2);
        let health = w.health();
        assert!(h["bytes_reserved"].as_u64().unwrap() >= health.bytes_reserved);
        if quick {
            assert!(h["events_written"].is_null() && h["bytes_used"].is_null());
        } else {
            assert_eq!(h["events_written"], n);
            assert_eq!(h["bytes_used"], health.bytes_used);
        }
    }
    w.close().unwrap();
    let o = bin().args(["inspect", "--json", d]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["dirs"][0]["writer"]["state"], "none");
    assert_eq!(v["total"]["segments"], 3);
    assert_eq!(v["health"]["segments_prepared"], 0);
}

/// A writer killed holding the tape (its pid left in the lock file, as
/// SIGKILL leaves it): `inspect` shows it died, reads its open segment to
/// the zero tail (not damage: exit 0) and counts its prepared segments
/// apart.
#[test]
fn inspect_shows_a_killed_writers_tape() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let w = live_writer(&dir, 1_000);
    w.abandon();
    std::fs::write(dir.join(".floxlog.lock"), "4194303").unwrap();
    let o = bin()
        .args(["inspect", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("writer: died (pid 4194303 held the tape lock"),
        "{out}"
    );
    assert!(out.contains("open: published frames end at byte"), "{out}");
    assert!(out.contains("total: 1 segments"), "{out}");
    assert!(out.contains("prepared (no event yet): 2"), "{out}");
    assert!(out.contains("events: 1000 ("), "{out}");
    assert!(!out.contains("ERROR"), "{out}");
}

/// `floxlog cat --follow ARGS DIR` running, its stdout lines and stderr
/// lines each on a channel.
struct Follower {
    child: Child,
    lines: mpsc::Receiver<String>,
    errs: mpsc::Receiver<String>,
}

impl Follower {
    fn start(dir: &std::path::Path, args: &[&str]) -> Follower {
        let mut child = Command::new(bin_path())
            .args(["cat", "--follow"])
            .args(args)
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = pipe(child.stdout.take().unwrap());
        let errs = pipe(child.stderr.take().unwrap());
        Follower { child, lines, errs }
    }

    /// The next line printed (the test fails if the command ends first).
    fn line(&self) -> serde_json::Value {
        let l = self.lines.recv().expect("cat --follow ended early");
        serde_json::from_str(&l).unwrap()
    }

    /// Waits for a stderr line containing `what`.
    fn said(&self, what: &str) {
        loop {
            let l = self.errs.recv().expect("cat --follow ended early");
            if l.contains(what) {
                return;
            }
        }
    }

    /// The exit code, the lines not read yet, and the rest of stderr.
    fn end(mut self) -> (Option<i32>, Vec<String>, String) {
        let code = self.child.wait().unwrap().code();
        let rest = self.lines.iter().collect();
        let err: Vec<String> = self.errs.iter().collect();
        (code, rest, err.join("\n"))
    }
}

fn pipe(r: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(r).lines() {
            let Ok(l) = l else { return };
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    rx
}

fn trade_id(v: &serde_json::Value) -> u64 {
    v["trade_id"].as_u64().unwrap()
}

/// The trade ids of JSON lines.
fn ids(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .map(|l| trade_id(&serde_json::from_str(l).unwrap()))
        .collect()
}

fn trade(i: u64) -> floxlog::core::Event<'static> {
    floxlog::core::Event::Trade(floxlog::core::Trade {
        exchange_ts_ns: 1_000 + i as i64,
        trade_id: i,
        ..Default::default()
    })
}

/// Started before the tape exists, `cat --follow` waits for it and its
/// first event, then prints each event while the writer is still there:
/// the writer appends the next one only once the line of the last one was
/// read (nothing is held back for a quiet gap or a full buffer); it
/// exits 0 when the writer closes the tape.
#[test]
fn follow_waits_for_the_tape_and_writes_each_line_as_it_comes() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let f = Follower::start(&dir, &[]);
    f.said("waiting for the tape's first event");
    let mut w = TapeWriter::create(&dir, config(false)).unwrap();
    for i in 0..20 {
        w.append(&trade(i)).unwrap();
        assert_eq!(trade_id(&f.line()), i);
    }
    w.close().unwrap();
    let (code, rest, err) = f.end();
    assert_eq!(code, Some(0), "{err}");
    assert!(rest.is_empty(), "{rest:?}");
}

/// `--from-end` prints only the events appended after it started.
#[test]
fn follow_from_end_prints_only_new_events() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let mut w = TapeWriter::create(&dir, config(false)).unwrap();
    for i in 0..100 {
        w.append(&trade(i)).unwrap();
    }
    let f = Follower::start(&dir, &["--from-end"]);
    f.said("following");
    for i in 100..110 {
        w.append(&trade(i)).unwrap();
    }
    w.close().unwrap();
    let (code, rest, err) = f.end();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(ids(&rest), (100..110).collect::<Vec<_>>());
}

/// A writer that dies: `cat --follow` waits `--writer-wait` for it to
/// come back; a writer resumed within it is followed on to its close
/// (exit 0, every event once); with none, it exits 1 naming the option.
#[test]
fn follow_waits_writer_wait_for_a_dead_writer_to_restart() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let mut w = TapeWriter::create(&dir, config(false)).unwrap();
    for i in 0..50 {
        w.append(&trade(i)).unwrap();
    }
    let f = Follower::start(&dir, &["--writer-wait", "60s"]);
    assert_eq!(trade_id(&f.line()), 0);
    w.abandon();
    let mut w = TapeWriter::create(&dir, config(true)).unwrap();
    for i in 50..80 {
        w.append(&trade(i)).unwrap();
    }
    w.close().unwrap();
    let (code, rest, err) = f.end();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(ids(&rest), (1..80).collect::<Vec<_>>());

    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let mut w = TapeWriter::create(&dir, config(false)).unwrap();
    w.append(&trade(0)).unwrap();
    w.abandon();
    let f = Follower::start(&dir, &["--writer-wait", "200ms"]);
    let (code, rest, err) = f.end();
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(rest.len(), 1);
    assert!(
        err.contains("is gone") && err.contains("--writer-wait"),
        "{err}"
    );
}
