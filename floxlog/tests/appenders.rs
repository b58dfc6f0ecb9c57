//! Issue 34: several appender threads into one tape (journal mode and the
//! default writer, rotating), `close` refused while an appender is open, a
//! dropped writer kept open by its appenders, frames appended as they come
//! encoded, and a journal process killed while several appenders append.

mod common;

use common::{read_payloads, recover_then_verify, verify_errors};
use floxlog::core::{encode_frame, Compression, ErrorKind, Event, Profile, Trade};
use floxlog::tape::{Appender, TapeErrorKind, TapeWriter, TapeWriterConfig};
use std::path::Path;

/// Appender `a`'s `i`-th trade: its symbol says whose, its trade id and
/// timestamp its place (rising in each appender, interleaved across).
fn trade(a: u32, i: u64) -> Trade {
    Trade {
        exchange_ts_ns: i as i64,
        recv_ts_ns: i as i64,
        price_raw: 100 + i as i64,
        qty_raw: 1,
        trade_id: i,
        symbol_id: a + 1,
        side: (i % 2) as u8,
        instrument: 0,
        exchange_id: 1,
    }
}

fn cfg(journal: bool, lz4: bool) -> TapeWriterConfig {
    let mut c = TapeWriterConfig {
        journal,
        max_segment_bytes: 64 << 10,
        created_ns: Some(1),
        ..TapeWriterConfig::default()
    };
    if lz4 {
        c.segment.compression = Compression::Lz4;
    }
    c
}

/// Every trade of the tape in file order.
fn read_trades(dir: &Path) -> Vec<Trade> {
    let (payloads, bad) = read_payloads(dir);
    assert!(bad.is_empty(), "{bad:?}");
    payloads
        .iter()
        .map(
            |p| match Event::decode(floxlog::core::frame_type::TRADE, p, 0).unwrap() {
                Event::Trade(t) => t,
                e => panic!("not a trade: {e:?}"),
            },
        )
        .collect()
}

/// Each appender's trades, in file order, are its first ones in its
/// order: `counts[a]` of them (at least `at_least[a]`).
fn check_orders(got: &[Trade], appenders: u32, at_least: &[u64], ctx: &str) {
    let mut next = vec![0u64; appenders as usize];
    for t in got {
        let a = (t.symbol_id - 1) as usize;
        assert!(a < next.len(), "{ctx}: symbol {}", t.symbol_id);
        assert_eq!(
            *t,
            trade(a as u32, next[a]),
            "{ctx}: appender {a} out of order"
        );
        next[a] += 1;
    }
    for (a, (n, min)) in next.iter().zip(at_least).enumerate() {
        assert!(
            n >= min,
            "{ctx}: appender {a}: {n} read, {min} acknowledged"
        );
    }
}

/// Four appender threads and the writer's own appends, rotating every
/// 64 KiB, one event or a batch at a time: every event is in the tape
/// once, each appender's in its order, and the tape verifies (counts,
/// time range, index, Sorted flag).
#[test]
fn appenders_append_at_once_and_keep_their_order_across_rolls() {
    const N: u64 = 6_000;
    for (journal, lz4) in [(true, false), (false, false), (false, true)] {
        let ctx = format!("journal {journal} lz4 {lz4}");
        let t = tempfile::tempdir().unwrap();
        let mut w = TapeWriter::create(t.path(), cfg(journal, lz4)).unwrap();
        let threads: Vec<_> = (0..4u32)
            .map(|a| {
                let mut ap: Appender = w.appender().unwrap();
                std::thread::spawn(move || {
                    let mut i = 0;
                    while i < N {
                        if a % 2 == 0 && i % 100 == 0 {
                            let batch: Vec<Trade> = (i..i + 100).map(|k| trade(a, k)).collect();
                            let (n, r) = ap.append_trades(&batch);
                            r.unwrap();
                            assert_eq!(n, 100);
                            i += 100;
                        } else {
                            ap.append(&Event::Trade(trade(a, i))).unwrap();
                            i += 1;
                        }
                    }
                })
            })
            .collect();
        for i in 0..N {
            w.append(&Event::Trade(trade(4, i))).unwrap();
        }
        assert!(w.appenders() > 0 || threads.iter().all(|h| h.is_finished()));
        for h in threads {
            h.join().unwrap();
        }
        assert_eq!(w.appenders(), 0, "{ctx}: appenders dropped");
        assert_eq!(w.stats().events, 5 * N, "{ctx}");
        let segs = w.close().unwrap();
        assert!(segs.len() > 3, "{ctx}: {} segments: no rolls", segs.len());
        let got = read_trades(t.path());
        assert_eq!(got.len() as u64, 5 * N, "{ctx}");
        check_orders(&got, 5, &[N; 5], &ctx);
        let errors = verify_errors(t.path());
        assert!(errors.is_empty(), "{ctx}: {errors:?}");
    }
}

/// `close` with an appender open is refused and changes nothing: the
/// appender goes on, and dropping it (the last) closes the tape as a
/// dropped writer; a writer dropped with appenders open likewise.
#[test]
fn close_waits_for_the_appenders_and_the_last_one_closes() {
    for journal in [true, false] {
        for close_first in [true, false] {
            let ctx = format!("journal {journal} close {close_first}");
            let t = tempfile::tempdir().unwrap();
            let mut w = TapeWriter::create(t.path(), cfg(journal, false)).unwrap();
            w.append(&Event::Trade(trade(0, 0))).unwrap();
            let mut ap = w.appender().unwrap();
            assert_eq!(w.appenders(), 1);
            let counts = w.counts();
            if close_first {
                let e = w.close().unwrap_err();
                assert_eq!(e.kind, TapeErrorKind::Usage, "{ctx}: {e}");
                assert!(e.message.contains("appender"), "{ctx}: {e}");
            } else {
                drop(w);
            }
            // Still open: the lock is held, appends go on.
            assert!(
                TapeWriter::create(t.path(), cfg(journal, false)).is_err(),
                "{ctx}"
            );
            ap.append(&Event::Trade(trade(1, 0))).unwrap();
            assert!(!t.path().join("manifest.json").exists(), "{ctx}");
            drop(ap);
            assert_eq!(counts.stats().events, 2, "{ctx}");
            assert_eq!(counts.progress().0, 2, "{ctx}");
            assert!(t.path().join("manifest.json").exists(), "{ctx}");
            assert_eq!(read_trades(t.path()).len(), 2, "{ctx}");
            assert!(verify_errors(t.path()).is_empty(), "{ctx}");
        }
    }
}

/// A closed (abandoned) tape refuses new appenders, and an open
/// appender's appends after it.
#[test]
fn appenders_of_an_abandoned_writer_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let w = TapeWriter::create(t.path(), cfg(true, false)).unwrap();
    let mut ap = w.appender().unwrap();
    w.abandon();
    assert!(ap.append(&Event::Trade(trade(0, 0))).is_err());
}

fn frames(trades: &[Trade]) -> Vec<u8> {
    let mut out = Vec::new();
    for t in trades {
        let mut b = [0u8; 60];
        encode_frame(&Event::Trade(*t), Profile::Reference, &mut b).unwrap();
        out.extend_from_slice(&b);
    }
    out
}

fn segment_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".floxlog"))
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect();
    v.sort();
    v
}

/// Encoded frames appended as they are make the tape the events make
/// (byte for byte, rotating); a bad CRC in frame k is refused with its
/// offset, the k frames before it appended.
#[test]
fn frames_go_in_as_they_are_and_a_bad_one_is_refused_at_its_offset() {
    let trades: Vec<Trade> = (0..3_000)
        .map(|i| trade((i % 3) as u32, 1000 - (i as u64 % 7)))
        .collect();
    let bytes = frames(&trades);
    for journal in [true, false] {
        let ctx = format!("journal {journal}");
        let by_events = tempfile::tempdir().unwrap();
        let mut w = TapeWriter::create(by_events.path(), cfg(journal, false)).unwrap();
        for t in &trades {
            w.append(&Event::Trade(*t)).unwrap();
        }
        w.close().unwrap();
        let by_frames = tempfile::tempdir().unwrap();
        let mut w = TapeWriter::create(by_frames.path(), cfg(journal, false)).unwrap();
        let mut ap = w.appender().unwrap();
        let (n, r) = ap.append_frames(&bytes[..bytes.len() / 2]);
        r.unwrap();
        assert_eq!(n, trades.len() / 2, "{ctx}");
        drop(ap);
        let (n, r) = w.append_frames(&bytes[bytes.len() / 2..]);
        r.unwrap();
        assert_eq!(n, trades.len() - trades.len() / 2, "{ctx}");
        w.close().unwrap();
        let (a, b) = (
            segment_bytes(by_events.path()),
            segment_bytes(by_frames.path()),
        );
        assert!(a.len() > 1, "{ctx}: rotated");
        assert!(a == b, "{ctx}: the frames made other segments");

        for k in [0usize, 1, 1234] {
            let mut bad = bytes.clone();
            bad[k * 60 + 12 + 5] ^= 0x40;
            let t = tempfile::tempdir().unwrap();
            let mut w = TapeWriter::create(t.path(), cfg(journal, false)).unwrap();
            let (n, r) = w.append_frames(&bad);
            let e = r.unwrap_err();
            assert_eq!(n, k, "{ctx} k {k}");
            assert_eq!(e.kind, TapeErrorKind::Data(ErrorKind::CrcMismatch), "{ctx}");
            assert_eq!(e.offset, Some(k as u64 * 60), "{ctx}: {e}");
            // A frame cut short at the end is refused the same way.
            let (n, r) = w.append_frames(&bytes[..59]);
            assert_eq!(n, 0);
            assert_eq!(
                r.unwrap_err().kind,
                TapeErrorKind::Data(ErrorKind::Truncated)
            );
            w.close().unwrap();
            assert_eq!(read_trades(t.path()), trades[..k].to_vec(), "{ctx} k {k}");
            assert!(verify_errors(t.path()).is_empty(), "{ctx}");
        }
    }
}

#[cfg(unix)]
mod killed {
    //! A journal writer process killed while three appender threads (and
    //! the writer's own thread) append: every append that returned is read
    //! back, in each appender's order, and recover and verify pass.

    use super::*;
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::Duration;

    const CHILD: &str = "FLOXLOG_APPENDERS_KILL_CHILD";

    /// The child: appender `a` appends its trades until killed, writing
    /// the count of returned appends to `ack-<a>` (8 bytes LE) after each.
    #[test]
    fn appenders_kill_child() {
        let Ok(dir) = std::env::var(CHILD) else {
            return;
        };
        let dir = std::path::PathBuf::from(dir);
        let mut c = cfg(true, false);
        c.max_segment_bytes = 256 << 10;
        let mut w = TapeWriter::create(&dir.join("tape"), c).unwrap();
        let threads: Vec<_> = (0..3u32)
            .map(|a| {
                let mut ap = w.appender().unwrap();
                let dir = dir.clone();
                std::thread::spawn(move || run(&dir, a, &mut |e| ap.append(e).unwrap()))
            })
            .collect();
        run(&dir, 3, &mut |e| w.append(e).unwrap());
        drop(threads);
    }

    fn run(dir: &Path, a: u32, append: &mut dyn FnMut(&Event<'_>)) {
        let mut ack = std::fs::File::create(dir.join(format!("ack-{a}"))).unwrap();
        for i in 0u64.. {
            append(&Event::Trade(trade(a, i)));
            ack.write_all(&(i + 1).to_le_bytes()).unwrap();
        }
    }

    fn acked(dir: &Path, a: u32) -> u64 {
        let b = std::fs::read(dir.join(format!("ack-{a}"))).unwrap_or_default();
        let whole = b.len() / 8 * 8;
        match whole {
            0 => 0,
            _ => u64::from_le_bytes(b[whole - 8..whole].try_into().unwrap()),
        }
    }

    #[test]
    fn a_killed_process_loses_no_returned_append_of_any_appender() {
        if std::env::var(CHILD).is_ok() {
            return;
        }
        let exe = std::env::current_exe().unwrap();
        for k in 0..6u64 {
            let t = tempfile::tempdir().unwrap();
            let ctx = format!("kill {k}");
            let mut c = Command::new(&exe)
                .args([
                    "--exact",
                    "killed::appenders_kill_child",
                    "--test-threads=1",
                ])
                .env(CHILD, t.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(150 + 60 * k));
            c.kill().unwrap();
            c.wait().unwrap();
            let dir = t.path().join("tape");
            let acks: Vec<u64> = (0..4).map(|a| acked(t.path(), a)).collect();
            assert!(
                acks.iter().all(|&n| n > 0),
                "{ctx}: {acks:?}: the child did not run"
            );
            check_orders(&read_trades(&dir), 4, &acks, &ctx);
            recover_then_verify(&dir, &ctx);
            check_orders(
                &read_trades(&dir),
                4,
                &acks,
                &format!("{ctx} after recover"),
            );
        }
    }
}
