//! A writer's health (issue 35 item 4), read from another thread while
//! the writer appends: counts, segments, bytes reserved and used, the last
//! rotation, no error.

use floxlog::synth::mixed_event;
use floxlog::tape::{TapeWriter, TapeWriterConfig, TapeWriterHealth};

fn run(journal: bool) -> (TapeWriterHealth, TapeWriterHealth, u64) {
    let t = tempfile::tempdir().unwrap();
    let cfg = TapeWriterConfig {
        journal,
        max_segment_bytes: 64 << 10,
        created_ns: Some(1),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(t.path(), cfg).unwrap();
    let counts = w.counts();
    let after = w.counts();
    let n = 5000u64;
    let seen = std::thread::scope(|s| {
        let reader = s.spawn(move || {
            // Read while the writer appends: never more appended than n,
            // written never past appended, durable never past written.
            let mut last = TapeWriterHealth::default();
            while last.appended < n {
                let h = counts.health();
                assert!(h.appended >= last.appended && h.appended <= n, "{h:?}");
                assert!(h.durable <= h.written && h.written <= h.appended, "{h:?}");
                last = h;
            }
            last
        });
        for i in 0..n {
            w.append(&mixed_event(5, i).as_event()).unwrap();
        }
        reader.join().unwrap()
    });
    w.sync().unwrap();
    let live = w.health();
    w.close().unwrap();
    let closed = after.health();
    let bytes: u64 = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".floxlog"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert_eq!(seen.appended, n);
    (live, closed, bytes)
}

#[test]
fn health_reports_counts_segments_bytes_and_rotations() {
    let (live, closed, bytes) = run(true);
    assert_eq!(
        (live.appended, live.written, live.durable),
        (5000, 5000, 5000)
    );
    assert!(live.segments_closed >= 2, "{live:?}");
    assert_eq!(live.segments_open, 1, "{live:?}");
    // The live segment and the prepared ones are reserved.
    assert!(live.bytes_reserved >= 3 * (64 << 10), "{live:?}");
    assert!(
        live.bytes_used > 0 && live.bytes_used <= bytes,
        "{live:?} {bytes}"
    );
    assert!(live.last_rotation_ns > 0, "{live:?}");
    assert_eq!((live.last_error.as_deref(), live.last_error_ns), (None, 0));
    assert_eq!(live.background_queued, 0, "{live:?}");
    assert_eq!(closed.appended, 5000);
    assert_eq!(closed.bytes_used, bytes, "{closed:?}");

    let (live, closed, bytes) = run(false);
    assert_eq!((live.appended, live.written), (5000, 5000));
    assert!(live.segments_closed >= 2, "{live:?}");
    assert_eq!(closed.bytes_used, bytes, "{closed:?}");
}
