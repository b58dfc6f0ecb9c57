//! Tapes through the library: writer rotation and durability, crash and
//! recovery, merged reading with filters and index seeks.

use floxlog::core::{Compression, Event, ReadOptions, Trade, WriterConfig};
use floxlog::tape::check::verify_tape;
use floxlog::tape::check::{recover_file, RecoverOptions};
use floxlog::tape::read::{Filter, Order};
use floxlog::tape::read::{Request, Session};
use floxlog::tape::{
    Durability, Layout, OpenOptions, Severity, Tape, TapeWriter, TapeWriterConfig,
};
use std::path::Path;

fn trade(ts: i64, sym: u32, id: u64) -> Trade {
    Trade {
        exchange_ts_ns: ts,
        recv_ts_ns: ts + 1,
        price_raw: 100 + id as i64,
        qty_raw: 7,
        trade_id: id,
        symbol_id: sym,
        side: (id % 2) as u8,
        instrument: 1,
        exchange_id: 3,
    }
}

fn read_all(dir: &Path, cfg: &Request) -> (Vec<(i64, u64)>, usize) {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let mut o = Session::open(tape, cfg.clone());
    let mut r = o.cursor();
    let mut v = Vec::new();
    while let Some(it) = r.next_event().unwrap() {
        let Event::Trade(t) = it.event else {
            panic!("not a trade")
        };
        v.push((t.exchange_ts_ns, t.trade_id));
    }
    (v, r.problems().len())
}

fn segment_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "floxlog"))
        .collect();
    v.sort();
    v
}

#[test]
fn rotation_by_size_and_time_and_merged_reading() {
    let t = tempfile::tempdir().unwrap();
    for (i, comp) in [Compression::None, Compression::Lz4]
        .into_iter()
        .enumerate()
    {
        let dir = t.path().join(format!("size{i}"));
        let cfg = TapeWriterConfig {
            segment: WriterConfig {
                compression: comp,
                index_interval: 10,
                ..WriterConfig::default()
            },
            max_segment_bytes: 4096,
            created_ns: Some(1_000),
            ..TapeWriterConfig::default()
        };
        let mut w = TapeWriter::create(&dir, cfg).unwrap();
        for k in 0..500u64 {
            w.append(&Event::Trade(trade(k as i64 * 10, (k % 3) as u32, k)))
                .unwrap();
        }
        let segs = w.close().unwrap();
        assert!(segs.len() > 3, "{comp:?}: {} segments", segs.len());
        assert_eq!(segs.iter().map(|s| s.event_count).sum::<u64>(), 500);
        let files = segment_files(&dir);
        assert_eq!(files.len(), segs.len());
        if comp == Compression::None {
            // The reference rule: no segment passes the bound.
            assert!(files
                .iter()
                .all(|f| std::fs::metadata(f).unwrap().len() <= 4096 + 32 + 16 * 60));
        }
        let rep = verify_tape(
            &Tape::open(std::slice::from_ref(&dir), OpenOptions::default()).unwrap(),
            ReadOptions::default(),
            &mut |_| {},
        );
        assert!(rep.passed(true), "{:?}", rep.findings);
        let (v, problems) = read_all(&dir, &Request::default());
        assert_eq!(problems, 0);
        assert_eq!(
            v,
            (0..500u64).map(|k| (k as i64 * 10, k)).collect::<Vec<_>>()
        );
        // Time range: [from, to), with the index used on Sorted (LZ4) segments.
        let cfg = Request {
            filter: Filter {
                from: Some(1000),
                to: Some(2005),
                ..Filter::default()
            },
            ..Request::default()
        };
        let (v, _) = read_all(&dir, &cfg);
        assert_eq!(v.first(), Some(&(1000, 100)));
        assert_eq!(v.last(), Some(&(2000, 200)));
        assert_eq!(v.len(), 101);
    }
    // Time rotation: one segment per 1000 ns span.
    let dir = t.path().join("time");
    let cfg = TapeWriterConfig {
        rotate_every_ns: Some(1000),
        created_ns: Some(5),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    for k in 0..50u64 {
        w.append(&Event::Trade(trade(k as i64 * 100, 1, k)))
            .unwrap();
    }
    let segs = w.close().unwrap();
    assert_eq!(segs.len(), 5);
    assert!(segs
        .iter()
        .all(|s| s.event_count == 10 && s.first_event_ns % 1000 == 0));
    assert_eq!(segs[0].name, "5.floxlog");
}

#[test]
fn seek_keeps_events_equal_to_from_before_the_chosen_index_entry() {
    // Sorted (spec profile) uncompressed segment, index every 2 events:
    // timestamps 4, 5, 5, 6: the entry at event 2 has ts 5, but event 1 also has 5.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let cfg = TapeWriterConfig {
        segment: WriterConfig {
            index_interval: 2,
            profile: floxlog::core::Profile::Spec,
            ..WriterConfig::default()
        },
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    for (k, ts) in [4i64, 5, 5, 6].into_iter().enumerate() {
        w.append(&Event::Trade(trade(ts, 1, k as u64))).unwrap();
    }
    w.close().unwrap();
    let cfg = Request {
        filter: Filter {
            from: Some(5),
            ..Filter::default()
        },
        ..Request::default()
    };
    let (v, _) = read_all(&dir, &cfg);
    assert_eq!(v, vec![(5, 1), (5, 2), (6, 3)]);
}

#[test]
fn time_order_is_exact_for_far_displaced_events() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let mut w = TapeWriter::create(&dir, TapeWriterConfig::default()).unwrap();
    // Locally shuffled (displacement 1), and one event far out of place.
    let ts = [2i64, 1, 4, 3, 6, 5, 8, 7, 0];
    for (k, t) in ts.into_iter().enumerate() {
        w.append(&Event::Trade(trade(t, 1, k as u64))).unwrap();
    }
    w.close().unwrap();
    let (v, _) = read_all(&dir, &Request::default());
    let got: Vec<i64> = v.iter().map(|x| x.0).collect();
    assert_eq!(got, vec![0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let cfg = Request {
        order: Order::File,
        ..Request::default()
    };
    let (v, _) = read_all(&dir, &cfg);
    assert_eq!(v.iter().map(|x| x.0).collect::<Vec<_>>(), ts.to_vec());
}

#[test]
fn crashed_writer_leaves_readable_segments_that_recover_restores() {
    let t = tempfile::tempdir().unwrap();
    for (i, (comp, dur)) in [
        (Compression::None, Durability::Flush),
        (Compression::Lz4, Durability::SyncEveryBlock),
        (Compression::None, Durability::SyncEveryN(10)),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = t.path().join(format!("crash{i}"));
        let cfg = TapeWriterConfig {
            layout: Layout::Flox,
            segment: WriterConfig {
                compression: comp,
                index_interval: 16,
                ..WriterConfig::default()
            },
            durability: dur,
            ..TapeWriterConfig::default()
        };
        let mut w = TapeWriter::create(&dir, cfg).unwrap();
        for k in 0..105u64 {
            w.append(&Event::Trade(trade(k as i64, 1, k))).unwrap();
        }
        let files = w.open_paths();
        w.abandon();
        // What reached the file: every event (Flush), whole blocks (LZ4), multiples of 10 (every:10).
        let on_disk = match dur {
            Durability::Flush => 105,
            Durability::SyncEveryBlock => 96,
            _ => 100,
        };
        assert_eq!(files.len(), 1);
        let (v, problems) = read_all(&dir, &Request::default());
        assert_eq!(v.len(), on_disk, "{comp:?} {dur:?}");
        assert_eq!(problems, 0);
        let rep = verify_tape(
            &Tape::open(std::slice::from_ref(&dir), OpenOptions::default()).unwrap(),
            ReadOptions::default(),
            &mut |_| {},
        );
        assert!(rep.passed(false), "{:?}", rep.findings);
        if comp == Compression::None {
            assert!(rep
                .findings
                .iter()
                .any(|f| f.kind.as_str() == "stale_header" && f.severity == Severity::Warning));
        }
        // Tear the last frame, as a crash mid-write would.
        let f = &files[0];
        let len = std::fs::metadata(f).unwrap().len();
        let file = std::fs::OpenOptions::new().write(true).open(f).unwrap();
        file.set_len(len - 5).unwrap();
        drop(file);
        let (v, problems) = read_all(&dir, &Request::default());
        let kept = if comp == Compression::Lz4 {
            on_disk - 16
        } else {
            on_disk - 1
        };
        assert_eq!(v.len(), kept);
        assert_eq!(problems, 1);
        let rep = recover_file(f, &RecoverOptions::default()).unwrap();
        assert_eq!(rep.action, "rewritten");
        assert_eq!(rep.events_kept as usize, kept);
        assert!(rep.dropped_bytes > 0);
        let rep = verify_tape(
            &Tape::open(std::slice::from_ref(&dir), OpenOptions::default()).unwrap(),
            ReadOptions::default(),
            &mut |_| {},
        );
        let errors: Vec<_> = rep
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        let (v, problems) = read_all(&dir, &Request::default());
        assert_eq!((v.len(), problems), (kept, 0));
        assert_eq!(
            v,
            (0..kept as u64).map(|k| (k as i64, k)).collect::<Vec<_>>()
        );
    }
}
