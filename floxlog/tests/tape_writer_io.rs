//! The tape writer's clock hook, its background I/O (flush, sync, counts)
//! and the created_ns of its segments and manifest.

use floxlog::core::{Compression, Event, SegmentHeader, Trade, WriterConfig};
use floxlog::synth::mixed_event;
use floxlog::tape::read::{Request, Session};
use floxlog::tape::{
    Durability, Layout, Manifest, OpenOptions, Tape, TapeWriter, TapeWriterConfig,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn trade(i: u64) -> Event<'static> {
    Event::Trade(Trade {
        exchange_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000,
        recv_ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000 + 7,
        price_raw: 6_500_000_000_000 + (i % 977) as i64,
        qty_raw: 1 + (i % 13) as i64,
        trade_id: i,
        symbol_id: (i % 5) as u32,
        side: (i % 2) as u8,
        instrument: 1,
        exchange_id: 3,
    })
}

/// A clock returning `values` in turn (then panicking), and its call count.
fn scripted(values: Vec<i64>) -> (floxlog::tape::writer::Clock, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&calls);
    let clock = Box::new(move || {
        let i = c.fetch_add(1, Ordering::SeqCst);
        *values
            .get(i)
            .unwrap_or_else(|| panic!("clock called {} times", i + 1))
    });
    (clock, calls)
}

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

fn header_of(p: &Path) -> SegmentHeader {
    let bytes = std::fs::read(p).unwrap();
    SegmentHeader::parse(&bytes).unwrap()
}

/// Events readable from the tape in `dir` now (open segments included).
fn readable(dir: &Path) -> u64 {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let mut o = Session::open(tape, Request::default());
    let mut r = o.cursor();
    let mut n = 0;
    while r.next_event().unwrap().is_some() {
        n += 1;
    }
    n
}

fn corpus_dir() -> PathBuf {
    std::env::var_os("FLOXLOG_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance"))
}

/// The corpus's rotation case written through the tape writer with a clock
/// that returns the case's created_ns values: one call per segment, files
/// named after those values, headers stamped with them, and the very bytes
/// of the reference segments.
#[test]
fn clock_names_and_stamps_each_segment_of_the_corpus_rotation_case() {
    let case = corpus_dir().join("cases/rotation");
    let text = std::fs::read_to_string(case.join("case.json"))
        .unwrap_or_else(|e| panic!("the corpus's rotation case at {}: {e}", case.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let w = &v["writer"];
    assert_eq!(w["compression"], "none");
    let cfg = TapeWriterConfig {
        layout: Layout::Flox,
        segment: WriterConfig {
            compression: Compression::None,
            create_index: w["create_index"].as_bool().unwrap(),
            index_interval: w["index_interval"].as_u64().unwrap() as u16,
            exchange_id: w["exchange_id"].as_u64().unwrap() as u8,
            ..WriterConfig::default()
        },
        max_segment_bytes: w["max_segment_bytes"].as_u64().unwrap(),
        // Ignored with a clock.
        created_ns: Some(5),
        ..TapeWriterConfig::default()
    };
    let segs = v["segments"].as_array().unwrap();
    let created: Vec<i64> = segs
        .iter()
        .map(|s| s["created_ns"].as_i64().unwrap())
        .collect();
    assert!(created.len() > 3);
    let events: Vec<_> = std::fs::read_to_string(case.join("events.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| floxlog::json::event_from_line(l).unwrap())
        .collect();

    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let mut tw = TapeWriter::create(&dir, cfg).unwrap();
    let (clock, calls) = scripted(created.clone());
    tw.set_clock(clock);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "not called before an event"
    );
    for (i, e) in events.iter().enumerate() {
        tw.append(&e.as_event()).unwrap();
        // One call per segment opened, when its first event arrives.
        let opened = tw.stats().segments as usize + tw.open_paths().len();
        assert_eq!(calls.load(Ordering::SeqCst), opened, "after event {i}");
    }
    let closed = tw.close().unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), created.len());
    assert_eq!(closed.len(), created.len());

    let files = files_with(&dir, "floxlog");
    assert_eq!(files.len(), created.len());
    for (i, (&c, s)) in created.iter().zip(segs).enumerate() {
        let p = dir.join(format!("{c}.floxlog"));
        assert_eq!(closed[i].name, format!("{c}.floxlog"));
        assert_eq!(header_of(&p).created_ns, c);
        let want = std::fs::read(case.join("segments").join(s["file"].as_str().unwrap())).unwrap();
        assert!(
            std::fs::read(&p).unwrap() == want,
            "{} differs",
            p.display()
        );
    }
    // The tape's created_ns is its first segment's (the clock is not
    // called for it).
    let m = Manifest::load(&dir).unwrap().unwrap();
    assert_eq!(m.created_ns, created[0]);
}

/// Scripted values that go backwards or repeat are raised past the
/// previous segment's; a taken flox name is skipped; still one call per
/// segment, in both layouts (several spec-layout series open at once).
#[test]
fn clock_is_called_once_per_segment_and_kept_increasing() {
    let t = tempfile::tempdir().unwrap();
    // Flox: rotate every ~40 trades.
    let dir = t.path().join("flox");
    let cfg = TapeWriterConfig {
        max_segment_bytes: 64 + 40 * 60,
        durability: Durability::None,
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    // Another file already has the name the fifth value gives.
    std::fs::write(dir.join("9000.floxlog"), b"x").unwrap();
    let (clock, calls) = scripted(vec![1_000, 3_000, 2_000, 3_000, 9_000, 9_000]);
    w.set_clock(clock);
    for i in 0..200 {
        w.append(&trade(i)).unwrap();
    }
    let segs = w.close().unwrap();
    let names: Vec<_> = segs.iter().map(|s| s.name.clone()).collect();
    assert_eq!(calls.load(Ordering::SeqCst), segs.len());
    assert_eq!(
        names,
        [1_000, 3_000, 3_001, 3_002, 9_001]
            .iter()
            .map(|c| format!("{c}.floxlog"))
            .collect::<Vec<_>>()
    );
    for s in &segs {
        let want: i64 = s.name.trim_end_matches(".floxlog").parse().unwrap();
        assert_eq!(header_of(&dir.join(&s.name)).created_ns, want);
    }
    assert_eq!(Manifest::load(&dir).unwrap().unwrap().created_ns, 1_000);

    // Spec layout: a segment per series, several open together.
    let dir = t.path().join("spec");
    let cfg = TapeWriterConfig {
        layout: Layout::Spec,
        max_segment_bytes: 8 << 10,
        durability: Durability::SyncEveryN(5),
        created_ns: Some(1),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    let (clock, calls) = scripted((0..1000).map(|i| 50_000 + i * 10).collect());
    w.set_clock(clock);
    for i in 0..600 {
        w.append(&mixed_event(11, i).as_event()).unwrap();
        let opened = w.stats().segments as usize + w.open_paths().len();
        assert_eq!(calls.load(Ordering::SeqCst), opened);
    }
    assert!(w.open_paths().len() > 1, "several series open");
    let segs = w.close().unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), segs.len());
    let mut stamps: Vec<i64> = segs
        .iter()
        .map(|s| header_of(&dir.join(&s.name)).created_ns)
        .collect();
    stamps.sort();
    let want: Vec<i64> = (0..segs.len() as i64).map(|i| 50_000 + i * 10).collect();
    assert_eq!(stamps, want);
    assert_eq!(Manifest::load(&dir).unwrap().unwrap().created_ns, 50_000);

    // No event, no call; the manifest keeps create's created_ns.
    let dir = t.path().join("empty");
    let cfg = TapeWriterConfig {
        created_ns: Some(77),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    let (clock, calls) = scripted(vec![]);
    w.set_clock(clock);
    w.flush().unwrap();
    w.sync().unwrap();
    assert!(w.close().unwrap().is_empty());
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(Manifest::load(&dir).unwrap().unwrap().created_ns, 77);
}

/// `flush` brings written_events up to every event appended (but the LZ4
/// events of an unfinished block), and they are in the files; `sync` makes
/// every written event durable, closed segments included.
#[test]
fn flush_writes_and_sync_makes_durable_under_every_policy() {
    let t = tempfile::tempdir().unwrap();
    let policies = [
        Durability::None,
        Durability::Flush,
        Durability::SyncOnClose,
        Durability::SyncEveryBlock,
        Durability::SyncEveryN(1000),
    ];
    for lz4 in [false, true] {
        for (pi, dur) in policies.into_iter().enumerate() {
            let dir = t.path().join(format!("{lz4}-{pi}"));
            let interval = 64u16;
            let cfg = TapeWriterConfig {
                segment: WriterConfig {
                    compression: if lz4 {
                        Compression::Lz4
                    } else {
                        Compression::None
                    },
                    index_interval: interval,
                    ..WriterConfig::default()
                },
                // Two segments, and 1 MiB chunks within them.
                max_segment_bytes: 2 << 20,
                durability: dur,
                created_ns: Some(1),
                ..TapeWriterConfig::default()
            };
            let ctx = format!("lz4 {lz4} {dur:?}");
            let mut w = TapeWriter::create(&dir, cfg).unwrap();
            let mut n = 0u64;
            for round in 0..3 {
                let more = [20_000u64, 30_003, 5][round];
                for _ in 0..more {
                    w.append(&trade(n)).unwrap();
                    n += 1;
                }
                assert!(w.durable_events() <= w.written_events(), "{ctx}");
                w.flush().unwrap();
                let staged = if lz4 { n % interval as u64 } else { 0 };
                assert_eq!(w.written_events(), n - staged, "{ctx} round {round}");
                assert!(readable(&dir) >= n - staged, "{ctx} round {round}");
                w.sync().unwrap();
                assert_eq!(w.written_events(), n - staged, "{ctx} round {round}");
                assert_eq!(w.durable_events(), n - staged, "{ctx} round {round}");
            }
            if !lz4 {
                assert!(w.stats().segments >= 1, "{ctx}: rotated");
            }
            let segs = w.close().unwrap();
            assert_eq!(segs.iter().map(|s| s.event_count).sum::<u64>(), n);
            assert_eq!(readable(&dir), n, "{ctx}");
        }
    }
}

/// Without flush, the background writes still show in written_events as
/// the writer goes on, durable never passes written, and after close every
/// event is there.
#[test]
fn background_writes_show_in_the_counts() {
    let t = tempfile::tempdir().unwrap();
    for dur in [
        Durability::None,
        Durability::SyncEveryN(100),
        Durability::SyncEveryBlock,
    ] {
        let dir = t.path().join(format!("{dur:?}"));
        let cfg = TapeWriterConfig {
            durability: dur,
            created_ns: Some(1),
            ..TapeWriterConfig::default()
        };
        let mut w = TapeWriter::create(&dir, cfg).unwrap();
        let mut last = (0, 0);
        let mut n = 0;
        while n < 2_000_000
            && (w.written_events() == 0 || (dur != Durability::None && w.durable_events() == 0))
        {
            w.append(&trade(n)).unwrap();
            n += 1;
            let now = (w.written_events(), w.durable_events());
            assert!(
                now.0 >= last.0 && now.1 >= last.1,
                "{dur:?}: went backwards"
            );
            assert!(
                now.1 <= now.0,
                "{dur:?}: durable {} > written {}",
                now.1,
                now.0
            );
            assert!(now.0 <= n);
            last = now;
        }
        assert!(
            w.written_events() > 0,
            "{dur:?}: nothing written after {n} events"
        );
        w.close().unwrap();
        assert_eq!(readable(&dir), n);
    }
}
