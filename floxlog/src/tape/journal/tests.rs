//! Unit tests of the journal writer.

use super::*;
use floxlog_core::Trade;

fn trade(i: u64) -> Event<'static> {
    Event::Trade(Trade {
        exchange_ts_ns: 1_000 + i as i64,
        trade_id: i,
        ..Default::default()
    })
}

/// Segment files of `dir`, by name.
fn segments(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".floxlog"))
        .collect();
    v.sort();
    v
}

/// The background keeps AHEAD segments prepared after the live one, from
/// the first append and after every rotation, named in order; close
/// removes the unused ones.
#[test]
fn segments_are_prepared_ahead_and_removed_unused_at_close() {
    let t = tempfile::tempdir().unwrap();
    let cfg = TapeWriterConfig {
        journal: true,
        max_segment_bytes: 64 + 60 * 10,
        created_ns: Some(100),
        durability: Durability::None,
        ..TapeWriterConfig::default()
    };
    let mut j = Journal::create(t.path(), cfg, 100, Start::default()).unwrap();
    let mut appended = 0;
    for want_live in [1u64, 3, 4] {
        while j.seq < want_live {
            j.append(&trade(appended)).unwrap();
            appended += 1;
        }
        j.bg.wait_idle().unwrap();
        let ready = background::lock(&j.bg.shared).ready[0].len();
        assert_eq!(ready, background::AHEAD, "after segment {want_live}");
        // Closed, live, then the prepared ones: consecutive names.
        let want: Vec<String> = (0..want_live + background::AHEAD as u64)
            .map(|i| format!("{}.floxlog", 100 + i))
            .collect();
        assert_eq!(segments(t.path()), want, "after segment {want_live}");
    }
    j.close_all().unwrap();
    let want: Vec<String> = (0..4).map(|i| format!("{}.floxlog", 100 + i)).collect();
    assert_eq!(segments(t.path()), want);
}

/// Only a window of pages ahead of the append position is made ready at
/// first, and the background thread moves it as the appender goes on
/// (rung at each step): after more than three windows of appends into one
/// segment the ready pages reach past the append position, but stay a
/// bounded way ahead of it, and every event reads back.
#[test]
fn the_window_of_ready_pages_follows_the_appender() {
    let t = tempfile::tempdir().unwrap();
    let cfg = TapeWriterConfig {
        journal: true,
        max_segment_bytes: 64 << 20,
        created_ns: Some(100),
        durability: Durability::None,
        ..TapeWriterConfig::default()
    };
    let mut j = Journal::create(t.path(), cfg, 100, Start::default()).unwrap();
    j.append(&trade(0)).unwrap();
    let shared = j.open[0].as_ref().unwrap().shared.clone();
    assert_eq!(shared.window.ready(), window::WINDOW);
    let n = (3 * window::WINDOW + window::STEP) / 60;
    for i in 1..n {
        j.append(&trade(i)).unwrap();
    }
    let end = j.open[0].as_ref().unwrap().w.segment_bytes();
    // The last ring is served (wait_idle rings the thread).
    j.bg.wait_idle().unwrap();
    while shared.window.due() {
        std::thread::yield_now();
    }
    let ready = shared.window.ready();
    assert!(ready > end, "ready {ready} behind the appender at {end}");
    assert!(
        ready <= end + window::WINDOW,
        "ready {ready} more than a window past {end}"
    );
    j.close_all().unwrap();
    let tape = crate::tape::Tape::open(&[t.path().to_path_buf()], Default::default()).unwrap();
    let rep = crate::tape::check::verify_tape(&tape, Default::default(), &mut |_| {});
    assert!(rep.passed(true), "{:?}", rep.findings);
    assert_eq!(rep.events, n);
}

/// A full disk: the reservation of a segment ahead fails, and the writer
/// goes on into the segments reserved already (reporting `low_space`);
/// only the append with nowhere to go fails, with the reservation's
/// error; once space is found the next append goes in, and every
/// acknowledged event reads back.
#[test]
fn a_full_disk_is_recorded_through_until_nothing_is_reserved() {
    let t = tempfile::tempdir().unwrap();
    let per = 100u64;
    let cfg = TapeWriterConfig {
        journal: true,
        max_segment_bytes: 64 + 60 * per,
        created_ns: Some(100),
        durability: Durability::None,
        ..TapeWriterConfig::default()
    };
    let mut j = Journal::create(t.path(), cfg, 100, Start::default()).unwrap();
    let health = |j: &Journal| {
        let mut h = TapeWriterHealth::default();
        j.add_health(&mut h);
        h
    };
    j.append(&trade(0)).unwrap();
    j.bg.wait_idle().unwrap();
    assert!(!health(&j).low_space);
    prepare::full::set(t.path(), true);
    let mut acked = 1u64;
    let mut low_at = None;
    let err = loop {
        match j.append(&trade(acked)) {
            Ok(()) => acked += 1,
            Err(e) => break e,
        }
        if acked == per + 1 {
            // The first rotation asked for a segment ahead: its
            // reservation is tried (and fails) before the appends go on.
            j.bg.wait_idle().unwrap();
        }
        let h = health(&j);
        if h.low_space && low_at.is_none() {
            low_at = Some(acked);
            assert!(h.reservation_failures >= 1);
            let last = h.last_reservation_error.unwrap_or_default();
            assert!(last.contains("reserving the segment"), "{last}");
        }
    };
    // The live segment and the two reserved ahead were filled.
    assert_eq!(acked, 3 * per);
    // Reported from the first failed reservation on, with the
    // appends going on after it.
    assert_eq!(low_at, Some(per + 1));
    assert!(
        err.message.contains("no room for the next segment"),
        "{err}"
    );
    assert_eq!(
        err.kind,
        crate::tape::error::TapeErrorKind::Io(std::io::ErrorKind::StorageFull)
    );
    // Still no room: the same error again, not a dead writer.
    assert!(j.append(&trade(acked)).is_err());
    prepare::full::set(t.path(), false);
    for _ in 0..2 * per {
        j.append(&trade(acked)).unwrap();
        acked += 1;
    }
    j.bg.wait_idle().unwrap();
    let h = health(&j);
    assert!(!h.low_space);
    assert!(h.last_error.is_none(), "{:?}", h.last_error);
    j.close_all().unwrap();
    let tape = crate::tape::Tape::open(&[t.path().to_path_buf()], Default::default()).unwrap();
    let rep = crate::tape::check::verify_tape(&tape, Default::default(), &mut |_| {});
    assert!(rep.passed(true), "{:?}", rep.findings);
    assert_eq!(rep.events, acked);
}

/// A manifest.json that cannot be rewritten at a rotation (here its
/// temporary file's name is taken by a directory; a full disk does the
/// same) is not a failure of the writer: it is counted in the health and
/// written again at the next rotation and at close; every event reads
/// back.
#[test]
fn a_manifest_not_rewritten_at_a_rotation_does_not_stop_the_writer() {
    let t = tempfile::tempdir().unwrap();
    let per = 100u64;
    let cfg = TapeWriterConfig {
        journal: true,
        max_segment_bytes: 64 + 60 * per,
        created_ns: Some(100),
        durability: Durability::None,
        ..TapeWriterConfig::default()
    };
    let mut j = Journal::create(t.path(), cfg, 100, Start::default()).unwrap();
    let blocker = t.path().join(".manifest.json.tmp");
    std::fs::create_dir(&blocker).unwrap();
    let n = 4 * per;
    for i in 0..n {
        j.append(&trade(i)).unwrap();
    }
    j.bg.wait_idle().unwrap();
    let mut h = TapeWriterHealth::default();
    j.add_health(&mut h);
    assert!(h.last_error.is_none(), "{:?}", h.last_error);
    assert!(h.reservation_failures >= 3, "{}", h.reservation_failures);
    let last = h.last_reservation_error.unwrap_or_default();
    assert!(last.contains(".manifest.json.tmp"), "{last}");
    std::fs::remove_dir(&blocker).unwrap();
    j.close_all().unwrap();
    let m = Manifest::load(t.path()).unwrap().unwrap();
    assert_eq!(m.segments.len(), 4);
    let tape = crate::tape::Tape::open(&[t.path().to_path_buf()], Default::default()).unwrap();
    let rep = crate::tape::check::verify_tape(&tape, Default::default(), &mut |_| {});
    assert!(rep.passed(true), "{:?}", rep.findings);
    assert_eq!(rep.events, n);
}
