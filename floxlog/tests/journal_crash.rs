//! Issue 22 item 3, in Rust: a journal writer killed with SIGKILL at random
//! points (rotating every 1 MiB) loses nothing whose `append` returned:
//! the tape reader returns every acknowledged event, `recover` finalises
//! the tape and `verify` then passes.
//!
//! The test re-runs its own binary as the writer (the child role, chosen
//! by an environment variable), which reports each acknowledged append on
//! a pipe.

#![cfg(unix)]

mod common;

use common::{read_payloads, recover_then_verify};
use floxlog::core::{encode_frame, Profile};
use floxlog::synth::mixed_event;
use floxlog::tape::{Durability, Layout, TapeWriter, TapeWriterConfig};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD: &str = "FLOXLOG_JOURNAL_CRASH_CHILD";
const SEED: u64 = 11;

fn payload(i: u64) -> Vec<u8> {
    let e = mixed_event(SEED, i);
    let ev = e.as_event();
    let mut b = vec![0u8; 12 + ev.payload_len()];
    encode_frame(&ev, Profile::Reference, &mut b).unwrap();
    b.split_off(12)
}

/// The child: appends `mixed_event(SEED, i)` for i = 0, 1, ... until
/// killed, writing the count of returned appends (8 bytes LE) to stdout
/// after each.
fn child(dir: &Path, layout: Layout, durability: Durability) {
    let cfg = TapeWriterConfig {
        layout,
        max_segment_bytes: 1 << 20,
        durability,
        created_ns: Some(1),
        journal: true,
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(dir, cfg).unwrap();
    let mut out = std::io::stdout().lock();
    for i in 0u64.. {
        w.append(&mixed_event(SEED, i).as_event()).unwrap();
        out.write_all(&(i + 1).to_le_bytes()).unwrap();
        out.flush().unwrap();
    }
}

/// Runs the child role when this process is one.
#[test]
fn journal_crash_child() {
    let Ok(dir) = std::env::var(CHILD) else {
        return;
    };
    let layout = match std::env::var("LAYOUT").as_deref() {
        Ok("spec") => Layout::Spec,
        _ => Layout::Flox,
    };
    let durability = std::env::var("DURABILITY")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(Durability::None);
    child(Path::new(&dir), layout, durability);
}

/// Whether `got` holds each of the first `acked` events (and nothing but
/// events that were appended, at most one of them unacknowledged per
/// series), compared as multisets.
fn check_events(got: &[Vec<u8>], acked: u64, ctx: &str) {
    let mut got = got.to_vec();
    got.sort();
    let mut want: Vec<Vec<u8>> = (0..acked).map(payload).collect();
    want.sort();
    let mut extra = 0;
    let mut gi = got.iter().peekable();
    for w in &want {
        loop {
            match gi.next() {
                Some(g) if g == w => break,
                Some(_) => extra += 1,
                None => panic!(
                    "{ctx}: an acknowledged event is missing ({} read, {acked} acked)",
                    got.len()
                ),
            }
        }
    }
    extra += gi.count();
    assert!(
        extra <= 4,
        "{ctx}: {extra} events read that were not acknowledged"
    );
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn a_killed_journal_writer_loses_no_acknowledged_event() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let t = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let kills = 24;
    let mut rotated = 0;
    for k in 0..kills {
        let layout = if k % 3 == 2 { "spec" } else { "flox" };
        let durability = ["none", "every:500", "close"][k % 3];
        let dir: PathBuf = t.path().join(format!("t{k}"));
        let ctx = format!("kill {k} ({layout}, {durability})");
        let mut c = Command::new(&exe)
            .args([
                "--exact",
                "journal_crash_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, &dir)
            .env("LAYOUT", layout)
            .env("DURABILITY", durability)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut pipe = c.stdout.take().unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = seen.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                into.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        // The delay runs from the child's first acknowledged append (a
        // child slow to start on a loaded machine is not killed before it
        // wrote anything).
        while last_count(&seen.lock().unwrap()) == 0 {
            assert!(!reader.is_finished(), "{ctx}: the child ended");
            std::thread::sleep(Duration::from_millis(1));
        }
        // Killed somewhere between its first rotations and a few dozen
        // segments in (the child writes ~1 MiB segments quickly).
        let delay = Duration::from_millis(30 + rng.below(400));
        let start = Instant::now();
        while start.elapsed() < delay {
            std::thread::sleep(Duration::from_millis(5));
        }
        c.kill().unwrap();
        c.wait().unwrap();
        reader.join().unwrap();
        let acked = last_count(&seen.lock().unwrap());
        let segments = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        rotated += usize::from(segments > 3);
        let (got, bad) = read_payloads(&dir);
        assert!(bad.is_empty(), "{ctx}: {bad:?}");
        check_events(&got, acked, &ctx);
        recover_then_verify(&dir, &ctx);
        let (again, bad) = read_payloads(&dir);
        assert!(bad.is_empty(), "{ctx} after recover: {bad:?}");
        check_events(&again, acked, &format!("{ctx} after recover"));
        assert_eq!(
            again.len(),
            got.len(),
            "{ctx}: recover kept every event read"
        );
    }
    assert!(rotated >= kills / 2, "only {rotated} runs rotated");
}

/// The count the child reported last: its stdout is the harness's text
/// (ending in a newline before the test runs) then 8-byte counts.
fn last_count(out: &[u8]) -> u64 {
    // Counts are 1, 2, 3...: find the offset where they start by looking
    // for the LE encoding of 1.
    let one = 1u64.to_le_bytes();
    let Some(start) = out.windows(8).position(|w| w == one) else {
        return 0;
    };
    let counts = &out[start..];
    let whole = counts.len() / 8 * 8;
    if whole == 0 {
        return 0;
    }
    u64::from_le_bytes(counts[whole - 8..whole].try_into().unwrap())
}
