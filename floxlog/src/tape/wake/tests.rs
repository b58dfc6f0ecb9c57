use super::*;
use std::sync::atomic::Ordering;

/// With nobody waiting, a notify is one load: `seq` does not move (no
/// wake is sent).
#[test]
fn a_notify_with_no_sleeper_sends_no_wake() {
    let d = tempfile::tempdir().unwrap();
    let p = Page::create(d.path()).unwrap();
    let s = p.tailers();
    let before = s.seq.load(Ordering::Relaxed);
    for _ in 0..1000 {
        s.notify();
    }
    assert_eq!(s.seq.load(Ordering::Relaxed), before);
    // A sleeper's flag makes the next notify wake, and is cleared by it.
    s.prepare();
    s.notify();
    assert_eq!(s.seq.load(Ordering::Relaxed), before.wrapping_add(1));
    assert_eq!(s.waiting.load(Ordering::Relaxed), 0);
}

/// A sleeper on another mapping of the page (as another process has) is
/// woken by the waker's notify, not by its time running out (a minute).
#[cfg(target_os = "linux")]
#[test]
fn a_sleeper_is_woken_by_a_notify_on_another_mapping() {
    let d = tempfile::tempdir().unwrap();
    let waker = Page::create(d.path()).unwrap();
    let dir = d.path().to_path_buf();
    let h = std::thread::spawn(move || {
        let p = Page::open(&dir).expect("the page");
        let seen = p.tailers().prepare();
        p.tailers().sleep(seen, Duration::from_secs(60))
    });
    while waker.tailers().waiting.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    waker.tailers().notify();
    assert_eq!(h.join().unwrap(), Woke::Woken);
}

/// Only a made page opens; it is armed while its maker lives, and the
/// maker's drop disarms it and says the tape changed.
#[test]
fn the_page_is_armed_while_its_writer_lives() {
    let d = tempfile::tempdir().unwrap();
    assert!(Page::open(d.path()).is_none());
    std::fs::write(d.path().join(WAKE_FILE), vec![1u8; PAGE]).unwrap();
    assert!(Page::open(d.path()).is_none(), "not a page");
    let w = Page::create(d.path()).unwrap();
    let r = Page::open(d.path()).unwrap();
    assert!(r.tailers().armed());
    let g = r.tailers().gen();
    drop(w);
    assert!(!r.tailers().armed());
    assert_ne!(r.tailers().gen(), g);
    assert!(!d.path().join(WAKE_FILE).exists(), "removed by its maker");
    drop(r);
    // A page a killed writer left is taken over as it is.
    let left = Page::create(d.path()).unwrap();
    std::mem::forget(left);
    let again = Page::create(d.path()).unwrap();
    assert!(again.tailers().armed());
}

/// A journal tape in a temporary folder, and a sleeper's own mapping of
/// its wake page (as a tailer in another process has it).
fn journal_tape() -> (tempfile::TempDir, crate::tape::TapeWriter, Page) {
    let d = tempfile::tempdir().unwrap();
    let cfg = crate::tape::TapeWriterConfig {
        journal: true,
        durability: crate::tape::Durability::None,
        ..Default::default()
    };
    let w = crate::tape::TapeWriter::create(d.path(), cfg).unwrap();
    let p = Page::open(d.path()).expect("a journal writer makes the page");
    (d, w, p)
}

fn trade(i: u64) -> floxlog_core::Trade {
    floxlog_core::Trade {
        exchange_ts_ns: 1_000 + i as i64,
        trade_id: i,
        ..Default::default()
    }
}

/// Calls one append path of a writer or an appender with event `i`.
macro_rules! append_by {
    ($path:expr, $w:expr, $i:expr) => {{
        use floxlog_core::{Event, Profile};
        let t = trade($i);
        match $path {
            "append" => $w.append(&Event::Trade(t)).unwrap(),
            "append_raw" => {
                let mut b = [0u8; 60];
                floxlog_core::encode_frame(&Event::Trade(t), Profile::Reference, &mut b).unwrap();
                let h = floxlog_core::FrameHeader::parse(&b, 0).unwrap();
                $w.append_raw(h.frame_type, &b[floxlog_core::FrameHeader::LEN..])
                    .unwrap()
            }
            "append_batch" => $w.append_batch(&[Event::Trade(t)]).1.unwrap(),
            "append_trades" => $w.append_trades(&[t]).1.unwrap(),
            "append_frames" => {
                let mut b = [0u8; 60];
                floxlog_core::encode_frame(&Event::Trade(t), Profile::Reference, &mut b).unwrap();
                $w.append_frames(&b).1.unwrap()
            }
            other => unreachable!("{other}"),
        }
    }};
}

const PATHS: [&str; 5] = [
    "append",
    "append_raw",
    "append_batch",
    "append_trades",
    "append_frames",
];

/// Every append path of the journal writer, and of an appender, wakes a
/// sleeper whose flag it sees: exactly one wake (`seq` moves by one), and
/// the flag is cleared; with no flag set, no wake. (Fails if any path
/// loses its wake call: the sleeper would then wait out its bound.)
#[test]
fn every_append_path_wakes_a_sleeper_whose_flag_it_sees() {
    let (_d, mut w, p) = journal_tape();
    let s = p.tailers();
    let mut ap = w.appender().unwrap();
    let mut i = 0;
    for by_appender in [false, true] {
        for path in PATHS {
            let ctx = format!("{path} (appender: {by_appender})");
            let mut call = |i: u64| {
                if by_appender {
                    append_by!(path, ap, i)
                } else {
                    append_by!(path, w, i)
                }
            };
            let seen = s.prepare();
            call(i);
            let woken = s.seq.load(Ordering::SeqCst);
            assert_eq!(woken, seen.wrapping_add(1), "{ctx}: one wake");
            assert_eq!(s.waiting.load(Ordering::SeqCst), 0, "{ctx}: flag cleared");
            // Nobody waits now: the next append sends none.
            call(i + 1);
            i += 2;
            let after = s.seq.load(Ordering::SeqCst);
            assert_eq!(after, seen.wrapping_add(1), "{ctx}: no wake unasked");
        }
    }
    drop(ap);
    w.close().unwrap();
}

/// A sleeper on its own mapping is woken by appender threads, not by its
/// time running out (20 s): each round, whichever thread appends
/// first wakes it.
#[cfg(target_os = "linux")]
#[test]
fn a_sleeper_is_woken_by_appender_threads() {
    let (_d, w, p) = journal_tape();
    let s = p.tailers();
    for round in 0..3u64 {
        let seen = s.prepare();
        let threads: Vec<_> = (0..2u64)
            .map(|k| {
                let mut ap = w.appender().unwrap();
                std::thread::spawn(move || {
                    ap.append(&floxlog_core::Event::Trade(trade(round * 2 + k)))
                        .unwrap()
                })
            })
            .collect();
        assert_eq!(
            s.sleep(seen, Duration::from_secs(20)),
            Woke::Woken,
            "round {round}"
        );
        for t in threads {
            t.join().unwrap();
        }
    }
    w.close().unwrap();
}
