//! The tools on a live tape (issue 35 item 5): `inspect` of a tape a
//! journal writer is writing exits 0, shows the writer live with its pid,
//! counts the segments that hold events (its prepared ones apart) and
//! reads each open segment to its last published event.

mod common;

use common::bin;
use floxlog::synth::mixed_event;
use floxlog::tape::{Durability, TapeWriter, TapeWriterConfig};

fn live_writer(dir: &std::path::Path, events: u64) -> TapeWriter {
    let cfg = TapeWriterConfig {
        journal: true,
        durability: Durability::None,
        max_segment_bytes: 1 << 20,
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(dir, cfg).unwrap();
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
