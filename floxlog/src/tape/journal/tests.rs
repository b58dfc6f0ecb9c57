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
