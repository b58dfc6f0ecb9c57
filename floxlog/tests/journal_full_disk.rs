//! Recording through a full disk (issue 35 item 3), on a real one: a 6 MiB
//! tmpfs mounted in a user and mount namespace (`unshare -Urm`) where the
//! machine lets the test make one. The test runs itself again inside the
//! namespace; where it cannot (no `unshare`, namespaces refused) it says
//! why and checks nothing here: the unit test
//! `a_full_disk_is_recorded_through_until_nothing_is_reserved` (in
//! `tape/journal/tests.rs`) makes the reservations fail without a mount.

use floxlog::core::{Event, Trade};
use floxlog::tape::{Durability, TapeWriter, TapeWriterConfig};
use std::path::Path;
use std::process::Command;

/// Set (to the mounted tmpfs) in the run inside the namespace.
const INNER: &str = "FLOXLOG_TEST_FULL_DISK";
/// Printed by the namespace's shell once the tmpfs is mounted.
const MOUNTED: &str = "floxlog-test: tmpfs mounted";
const SEGMENT: u64 = 1 << 20;
/// Trades a segment holds (60-byte frames after the 64-byte header).
const PER_SEGMENT: u64 = (SEGMENT - 64) / 60;

fn trade(i: u64) -> Event<'static> {
    Event::Trade(Trade {
        exchange_ts_ns: 1_000 + i as i64,
        trade_id: i,
        ..Default::default()
    })
}

fn config(resume: bool) -> TapeWriterConfig {
    TapeWriterConfig {
        journal: true,
        max_segment_bytes: SEGMENT,
        durability: Durability::None,
        created_ns: Some(1),
        resume,
        ..TapeWriterConfig::default()
    }
}

/// Appends trades from `from` until an append fails; returns how many
/// were acknowledged and the acknowledged count when `low_space` was
/// first reported (if it was).
fn append_until_full(w: &mut TapeWriter, from: u64) -> (u64, Option<u64>, String) {
    let mut n = 0;
    let mut low_at = None;
    loop {
        if let Err(e) = w.append(&trade(from + n)) {
            return (n, low_at, e.to_string());
        }
        n += 1;
        if low_at.is_none() && w.health().low_space {
            low_at = Some(n);
        }
        assert!(n < 1 << 20, "a 6 MiB file system never filled");
    }
}

fn events_read_back(dir: &Path) -> u64 {
    use floxlog::tape::{OpenOptions, Tape};
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let rep = floxlog::tape::check::verify_tape(&tape, Default::default(), &mut |_| {});
    assert!(rep.passed(false), "{:?}", rep.findings);
    rep.events
}

/// Inside the namespace, on the 6 MiB tmpfs at `fs`.
fn on_a_small_file_system(fs: &Path) {
    // 1.5 MiB taken by something else, freed later.
    let filler = fs.join("filler");
    std::fs::write(&filler, vec![1u8; 3 << 19]).unwrap();
    let dir = fs.join("tape");
    let mut w = TapeWriter::create(&dir, config(false)).unwrap();
    let (acked, low_at, err) = append_until_full(&mut w, 0);
    let h = w.health();
    w.close().unwrap();
    eprintln!("acknowledged {acked}, low_space from {low_at:?}: {err}");
    // The first failed reservation ahead did not stop the recording: the
    // appends went on into the segments reserved already.
    let low_at = low_at.expect("low_space was never reported");
    assert!(acked >= low_at + PER_SEGMENT, "{low_at} then {acked}");
    assert!(h.reservation_failures >= 1 && h.last_reservation_error.is_some());
    assert!(h.last_error.is_none(), "{:?}", h.last_error);
    assert!(err.contains("no room for the next segment"), "{err}");
    // 4.5 MiB were free: three segments at least (the last reservation
    // may not fit beside the manifest and the trailers).
    assert!(acked >= 3 * PER_SEGMENT, "only {acked} trades recorded");
    assert_eq!(events_read_back(&dir), acked);

    // Resumed with room for one segment (not three): it records one.
    std::fs::remove_file(&filler).unwrap();
    let mut w = TapeWriter::create(&dir, config(true)).unwrap();
    let (more, _, err) = append_until_full(&mut w, acked);
    w.close().unwrap();
    eprintln!("resumed: acknowledged {more}: {err}");
    assert!(more >= PER_SEGMENT, "the resumed writer recorded {more}");
    assert_eq!(events_read_back(&dir), acked + more);
}

#[test]
fn a_full_disk_is_recorded_through() {
    if let Ok(fs) = std::env::var(INNER) {
        on_a_small_file_system(Path::new(&fs));
        return;
    }
    let mount = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        r#"mount -t tmpfs -o size=6m floxlog-test "$1" || exit 1; echo "{MOUNTED}"; exec "$2" --exact a_full_disk_is_recorded_through --nocapture --test-threads=1"#
    );
    let out = Command::new("unshare")
        .args(["-Urm", "sh", "-c", &script, "sh"])
        .arg(mount.path())
        .arg(&exe)
        .env(INNER, mount.path())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "SKIPPED (the unit test covers it): cannot run unshare to mount a small tmpfs: {e}"
            );
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stdout.contains(MOUNTED) {
        eprintln!(
            "SKIPPED (the unit test covers it): this machine does not let the test mount a tmpfs in a user namespace: {}",
            stderr.trim()
        );
        return;
    }
    assert!(out.status.success(), "{stdout}\n{stderr}");
    eprintln!("{stderr}");
}
