//! How a tailer waits: an idle poll that does not look at the directory,
//! a writer that starts after the tailer (or never), and a blocking
//! tailer woken by the journal writer.

use floxlog::core::{Event, Trade};
use floxlog::tape::{Durability, Tail, TailNext, TailOptions, TapeWriter, TapeWriterConfig};
use std::path::Path;
use std::time::{Duration, Instant};

const NOW: Option<Duration> = Some(Duration::ZERO);
/// Long enough never to elapse in a passing run.
const PATIENCE: Option<Duration> = Some(Duration::from_secs(60));

fn trade(i: u64) -> Event<'static> {
    Event::Trade(Trade {
        exchange_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000,
        recv_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000,
        price_raw: 6_500_000_000_000,
        qty_raw: 1,
        trade_id: i,
        symbol_id: 1,
        side: 0,
        instrument: 1,
        exchange_id: 3,
    })
}

fn journal(dir: &Path) -> TapeWriter {
    let cfg = TapeWriterConfig {
        journal: true,
        durability: Durability::None,
        max_segment_bytes: 1 << 20,
        created_ns: Some(1_000),
        ..TapeWriterConfig::default()
    };
    TapeWriter::create(dir, cfg).unwrap()
}

fn what(n: TailNext<'_>) -> String {
    match n {
        TailNext::Event(Event::Trade(t)) => format!("trade {}", t.trade_id),
        other => format!("{other:?}"),
    }
}

/// Idle polls with `timeout 0`, as a caller's event loop makes them, list
/// the tape at most once per look interval (2 ms) whatever their number:
/// the old tailer listed it on every call.
#[test]
fn an_idle_poll_does_not_list_the_directory() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    let mut w = journal(&dir);
    w.append(&trade(0)).unwrap();
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    assert_eq!(what(t.next(NOW).unwrap()), "trade 0");
    let calls = 100_000u64;
    let start = Instant::now();
    let before = t.counts().listings;
    for _ in 0..calls {
        assert_eq!(what(t.next(NOW).unwrap()), "Timeout");
    }
    let looks_due = start.elapsed().as_millis() as u64 / 2 + 1;
    let listed = t.counts().listings - before;
    // A look lists the tape at most twice.
    assert!(
        listed <= 2 * looks_due,
        "{listed} listings in {calls} idle polls ({looks_due} looks due)"
    );
    w.append(&trade(1)).unwrap();
    assert_eq!(what(t.next(NOW).unwrap()), "trade 1");
}

/// A tailer opened on a tape no writer has started yet waits for one
/// (`Timeout`, not `WriterGone`) and follows it once it starts.
#[test]
fn a_tailer_started_before_its_writer_follows_it() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    std::fs::create_dir(&dir).unwrap();
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    assert_eq!(what(t.next(NOW).unwrap()), "Timeout");
    assert_eq!(
        what(t.next(Some(Duration::from_millis(20))).unwrap()),
        "Timeout"
    );
    let mut w = journal(&dir);
    w.append(&trade(7)).unwrap();
    assert_eq!(what(t.next(PATIENCE).unwrap()), "trade 7");
    w.close().unwrap();
    assert_eq!(what(t.next(PATIENCE).unwrap()), "End");
}

/// A writer that never comes: `WriterGone` once the writer wait is over,
/// even with no call timeout; a call timeout shorter than the writer wait
/// ends first with `Timeout`.
#[test]
fn a_writer_that_never_comes_is_gone_after_the_writer_wait() {
    let d = tempfile::tempdir().unwrap();
    let mut t = Tail::open(
        d.path(),
        TailOptions {
            writer_wait: Some(Duration::from_millis(30)),
            ..TailOptions::default()
        },
    )
    .unwrap();
    assert_eq!(what(t.next(NOW).unwrap()), "Timeout");
    assert_eq!(what(t.next(None).unwrap()), "WriterGone");
    assert_eq!(what(t.next(NOW).unwrap()), "WriterGone", "said again");

    let mut t = Tail::open(
        d.path(),
        TailOptions {
            writer_wait: None,
            ..TailOptions::default()
        },
    )
    .unwrap();
    for _ in 0..3 {
        assert_eq!(
            what(t.next(Some(Duration::from_millis(10))).unwrap()),
            "Timeout"
        );
    }
}

/// A blocking tailer asleep on the tape's wake page is woken by the
/// journal writer's append (the first frame of a segment, then a later
/// one), not by its sleep running out: counted, not timed.
#[cfg(target_os = "linux")]
#[test]
fn a_blocked_tailer_is_woken_by_the_journal_writer() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    let mut w = journal(&dir);
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    let page = dir.join(".floxlog.wake");
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(what(t.next(PATIENCE).unwrap()));
            tx.send(()).unwrap();
        }
        (got, t.counts())
    });
    for i in 0..3u64 {
        // Wait until the tailer sleeps (its flag in the page is set).
        while !sleeping(&page) {
            std::thread::yield_now();
        }
        w.append(&trade(i)).unwrap();
        rx.recv().unwrap();
    }
    let (got, counts) = reader.join().unwrap();
    assert_eq!(got, ["trade 0", "trade 1", "trade 2"]);
    // A sleep is bounded (the tailer looks at the directory every few ms):
    // on a loaded machine this thread can be descheduled past it between
    // seeing the flag and appending, so one of the three may time out.
    // With no wake from the writer, all three would.
    assert!(counts.woken >= 1, "{counts:?}");
}

/// Whether the tailers' slot of the wake page says one sleeps (its
/// `waiting` word, at byte 68).
fn sleeping(page: &Path) -> bool {
    std::fs::read(page).is_ok_and(|b| b.len() >= 72 && b[68..72] != [0; 4])
}
