//! The live tailer: rotations, a writer that dies and one that comes back,
//! a journal segment's zero tail and half-published frames, start
//! positions, CRC damage, and a segment trimmed under it.

use floxlog::core::{Event, FrameHeader, SegmentHeader, Trade};
use floxlog::tape::check::{recover_file, RecoverOptions};
use floxlog::tape::dir::TapeLock;
use floxlog::tape::{
    Durability, Tail, TailNext, TailOptions, TailStart, TailTrades, TapeError, TapeWriter,
    TapeWriterConfig,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

const NOW: Option<Duration> = Some(Duration::ZERO);
/// Long enough never to elapse in a passing run; a tailer that hangs
/// fails the test instead of stalling it.
const PATIENCE: Option<Duration> = Some(Duration::from_secs(60));
/// Longer than a tailer's time between two looks at the directory and
/// the lock (2 ms): a wait this long sees what changed there.
const A_LOOK: Option<Duration> = Some(Duration::from_millis(50));

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

fn config(durability: Durability, created_ns: i64) -> TapeWriterConfig {
    TapeWriterConfig {
        max_segment_bytes: 4096,
        durability,
        created_ns: Some(created_ns),
        ..TapeWriterConfig::default()
    }
}

fn write_tape(dir: &Path, n: u64, created_ns: i64) {
    let mut w = TapeWriter::create(dir, config(Durability::None, created_ns)).unwrap();
    for i in 0..n {
        w.append(&trade(i)).unwrap();
    }
    w.close().unwrap();
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "floxlog"))
        .collect();
    v.sort();
    v
}

/// The trade id of an event (every test event is a trade).
fn id(ev: &Event<'_>) -> u64 {
    match ev {
        Event::Trade(t) => t.trade_id,
        other => panic!("not a trade: {other:?}"),
    }
}

/// Reads events until the tail says something else; their ids and what.
fn drain(t: &mut Tail, timeout: Option<Duration>) -> (Vec<u64>, String) {
    let mut ids = Vec::new();
    loop {
        match t.next(timeout).unwrap() {
            TailNext::Event(ev) => ids.push(id(&ev)),
            other => return (ids, format!("{other:?}")),
        }
    }
}

/// Reads events until an error (anything else fails the test); their ids
/// and the error.
fn until_error(t: &mut Tail) -> (Vec<u64>, TapeError) {
    let mut ids = Vec::new();
    loop {
        match t.next(NOW) {
            Ok(TailNext::Event(ev)) => ids.push(id(&ev)),
            Ok(other) => panic!("{other:?} after {ids:?}"),
            Err(e) => return (ids, e),
        }
    }
}

fn opts(start: TailStart) -> TailOptions {
    TailOptions {
        start,
        ..TailOptions::default()
    }
}

#[test]
fn follows_a_live_writer_across_rotations_then_ends_when_it_closes() {
    for durability in [Durability::Flush, Durability::None] {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("tape");
        let mut w = TapeWriter::create(&dir, config(durability, 1_000)).unwrap();
        let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
        let n = 3_000u64;
        let writer = std::thread::spawn(move || {
            for i in 0..n {
                w.append(&trade(i)).unwrap();
                if i % 100 == 0 {
                    std::thread::yield_now();
                }
            }
            w.close().unwrap();
        });
        let (ids, end) = drain(&mut t, PATIENCE);
        writer.join().unwrap();
        assert_eq!(end, "End", "{durability:?}");
        assert_eq!(ids, (0..n).collect::<Vec<_>>(), "{durability:?}");
        assert!(segments(&dir).len() > 10, "the writer rotated");
        // Still the end on a later call.
        assert_eq!(format!("{:?}", t.next(NOW).unwrap()), "End");
    }
}

#[test]
fn a_dead_writer_is_reported_and_a_restarted_one_followed() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    let mut w = TapeWriter::create(&dir, config(Durability::Flush, 1_000)).unwrap();
    for i in 0..250 {
        w.append(&trade(i)).unwrap();
    }
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    let (ids, what) = drain(&mut t, NOW);
    assert_eq!(ids, (0..250).collect::<Vec<_>>());
    assert_eq!(what, "Timeout", "the writer is alive");
    w.abandon();
    // No limit: without a writer it must not wait.
    let (ids, what) = drain(&mut t, None);
    assert!(ids.is_empty());
    assert_eq!(what, "WriterGone");
    assert_eq!(format!("{:?}", t.next(None).unwrap()), "WriterGone");

    // A writer restarted on the tape adds segments after the last.
    let other = d.path().join("other");
    let mut w = TapeWriter::create(&other, config(Durability::None, 1_000_000)).unwrap();
    for i in 250..400 {
        w.append(&trade(i)).unwrap();
    }
    w.close().unwrap();
    for s in segments(&other) {
        std::fs::rename(&s, dir.join(s.file_name().unwrap())).unwrap();
    }
    let (ids, what) = drain(&mut t, PATIENCE);
    assert_eq!(ids, (250..400).collect::<Vec<_>>());
    assert_eq!(what, "End");
}

/// The journal writer's real segments (pre-allocated, mapped, published
/// by their size field) followed live, across rotations, to the end; and
/// a journal writer that dies leaves a tail that says so.
#[test]
fn follows_a_journal_writer_across_rotations() {
    for kill in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("tape");
        let cfg = TapeWriterConfig {
            journal: true,
            max_segment_bytes: 16 << 10,
            ..config(Durability::None, 2_000)
        };
        let mut w = TapeWriter::create(&dir, cfg).unwrap();
        let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
        let n = 5_000u64;
        let writer = std::thread::spawn(move || {
            for i in 0..n {
                w.append(&trade(i)).unwrap();
                if i % 100 == 0 {
                    std::thread::yield_now();
                }
            }
            match kill {
                // Dropped without closing, as if killed: the lock is
                // released, the segment stays unfinished.
                true => w.abandon(),
                false => drop(w.close().unwrap()),
            }
        });
        let (ids, end) = drain(&mut t, PATIENCE);
        writer.join().unwrap();
        assert_eq!(ids, (0..n).collect::<Vec<_>>(), "killed: {kill}");
        assert_eq!(end, if kill { "WriterGone" } else { "End" });
        assert!(segments(&dir).len() > 10, "the writer rotated");
    }
}

/// A journal writer appending in batches (each run published with one
/// store, its first frame's size last) while a tailer follows: every
/// event, in order, once, across rotations.
#[test]
fn follows_a_journal_writer_appending_in_batches() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    let cfg = TapeWriterConfig {
        journal: true,
        max_segment_bytes: 16 << 10,
        ..config(Durability::None, 2_000)
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    let n = 6_000u64;
    let writer = std::thread::spawn(move || {
        let evs: Vec<Event<'static>> = (0..n).map(trade).collect();
        for part in evs.chunks(37) {
            let (k, r) = w.append_batch(part);
            r.unwrap();
            assert_eq!(k, part.len());
            std::thread::yield_now();
        }
        drop(w.close().unwrap());
    });
    let (ids, end) = drain(&mut t, PATIENCE);
    writer.join().unwrap();
    assert_eq!(ids, (0..n).collect::<Vec<_>>());
    assert_eq!(end, "End");
    assert!(segments(&dir).len() > 10, "the writer rotated");
}

/// Started at the end of a journal tape whose writer has prepared its
/// next segment already: the tailer starts in the segment being written,
/// not in the empty spare after it, and misses nothing appended later.
#[test]
fn starts_at_the_end_of_a_journal_tape_before_its_spare() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    let cfg = TapeWriterConfig {
        journal: true,
        max_segment_bytes: 64 << 10,
        ..config(Durability::None, 3_000)
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    for i in 0..100 {
        w.append(&trade(i)).unwrap();
    }
    // The background thread prepares the spare soon after the first
    // segment opens.
    let t0 = std::time::Instant::now();
    while segments(&dir).len() < 2 {
        assert!(t0.elapsed() < Duration::from_secs(60), "no spare prepared");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut t = Tail::open(&dir, opts(TailStart::End)).unwrap();
    assert_eq!(drain(&mut t, NOW), (vec![], "Timeout".into()));
    for i in 100..200 {
        w.append(&trade(i)).unwrap();
    }
    drop(w.close().unwrap());
    let (ids, end) = drain(&mut t, PATIENCE);
    assert_eq!(ids, (100..200).collect::<Vec<_>>());
    assert_eq!(end, "End");
}

/// A finished segment's header and frames.
fn pieces(seg: &[u8]) -> (SegmentHeader, Vec<Vec<u8>>) {
    let h = SegmentHeader::parse(seg).unwrap();
    let mut frames = Vec::new();
    let mut at = SegmentHeader::LEN;
    while (at as u64) < h.index_offset {
        let fh = FrameHeader::parse(&seg[at..], at as u64).unwrap();
        let n = FrameHeader::LEN + fh.size as usize;
        frames.push(seg[at..at + n].to_vec());
        at += n;
    }
    (h, frames)
}

/// The header a writer puts first: no counts, no index, not sorted.
fn placeholder(mut h: SegmentHeader) -> Vec<u8> {
    h.flags = 0;
    h.event_count = 0;
    h.first_event_ns = 0;
    h.last_event_ns = 0;
    h.index_offset = 0;
    h.to_bytes().to_vec()
}

/// A tape directory holding one unfinished journal-like segment: the
/// placeholder header, the first `k` frames, then zeros. Returns the
/// segment's path and every frame of a 20-event segment.
fn journal_segment(d: &Path, k: usize) -> (PathBuf, Vec<Vec<u8>>) {
    let src = d.join("src");
    write_tape(&src, 20, 5_000);
    let bytes = std::fs::read(&segments(&src)[0]).unwrap();
    let (h, frames) = pieces(&bytes);
    let dir = d.join("tape");
    std::fs::create_dir(&dir).unwrap();
    let path = dir.join("5000.floxlog");
    let mut out = placeholder(h);
    for f in &frames[..k] {
        out.extend_from_slice(f);
    }
    out.resize(8192, 0);
    std::fs::write(&path, &out).unwrap();
    (path, frames)
}

fn write_at(path: &Path, at: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, at).unwrap();
}

#[test]
fn a_zero_tail_and_a_half_published_frame_are_nothing_yet() {
    let d = tempfile::tempdir().unwrap();
    let (path, frames) = journal_segment(d.path(), 3);
    let dir = path.parent().unwrap().to_path_buf();
    let lock = TapeLock::acquire(&dir, "writing").unwrap();
    let o = TailOptions {
        writer_wait: Some(Duration::ZERO),
        ..TailOptions::default()
    };
    let mut t = Tail::open(&dir, o).unwrap();
    let (ids, what) = drain(&mut t, NOW);
    assert_eq!(ids, vec![0, 1, 2]);
    assert_eq!(what, "Timeout");

    // Frame 3 written but for its size field (stored last): not there yet.
    let at = 64 + frames[..3].iter().map(Vec::len).sum::<usize>() as u64;
    write_at(&path, at + 4, &frames[3][4..]);
    assert_eq!(drain(&mut t, NOW), (vec![], "Timeout".into()));
    // Published.
    write_at(&path, at, &frames[3][..4]);
    assert_eq!(drain(&mut t, NOW), (vec![3], "Timeout".into()));

    // A default writer's file that ends inside a frame: nothing yet either.
    let at = at + frames[3].len() as u64;
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(at + 5).unwrap();
    write_at(&path, at, &frames[4][..5]);
    assert_eq!(drain(&mut t, NOW), (vec![], "Timeout".into()));
    // (The file shrank under the map, below its zero tail: no SIGBUS.)
    let mut rest = frames[4][5..].to_vec();
    rest.extend_from_slice(&frames[5]);
    write_at(&path, at + 5, &rest);
    assert_eq!(drain(&mut t, NOW), (vec![4, 5], "Timeout".into()));

    // The writer dies; recover finishes the segment; the tail ends.
    // (The lock is looked at every few ms: a wait that long sees it.)
    drop(lock);
    assert_eq!(drain(&mut t, A_LOOK), (vec![], "WriterGone".into()));
    recover_file(&path, &RecoverOptions::default()).unwrap();
    assert_eq!(drain(&mut t, A_LOOK), (vec![], "End".into()));
}

#[test]
fn recover_trimming_the_zero_tail_under_the_tailer_loses_nothing() {
    let d = tempfile::tempdir().unwrap();
    let (path, _) = journal_segment(d.path(), 7);
    let dir = path.parent().unwrap().to_path_buf();
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    // Read some, keep the map, then recover trims the file under it.
    let mut ids = Vec::new();
    for _ in 0..4 {
        match t.next(NOW).unwrap() {
            TailNext::Event(ev) => ids.push(id(&ev)),
            other => panic!("{other:?}"),
        }
    }
    recover_file(
        &path,
        &RecoverOptions {
            no_backup: true,
            ..RecoverOptions::default()
        },
    )
    .unwrap();
    let (more, what) = drain(&mut t, NOW);
    ids.extend(more);
    assert_eq!(ids, (0..7).collect::<Vec<_>>());
    assert_eq!(what, "End");
}

#[test]
fn starts_at_the_end_or_at_a_saved_position() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    write_tape(&dir, 300, 1_000);
    assert!(segments(&dir).len() > 3);

    // The end of a closed tape: nothing, then End.
    let mut t = Tail::open(&dir, opts(TailStart::End)).unwrap();
    assert_eq!(drain(&mut t, NOW), (vec![], "End".into()));

    // A saved position resumes exactly after the last event returned.
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    for i in 0..123 {
        match t.next(NOW).unwrap() {
            TailNext::Event(ev) => assert_eq!(id(&ev), i),
            other => panic!("{other:?}"),
        }
    }
    let p = t.position();
    assert_eq!(p.series.len(), 1, "{p:?}: one series");
    let names: Vec<i64> = segments(&dir)
        .iter()
        .map(|s| {
            SegmentHeader::parse(&std::fs::read(s).unwrap())
                .unwrap()
                .created_ns
        })
        .collect();
    assert!(
        names.contains(&p.series[0].created_ns),
        "{p:?} names a segment"
    );
    let mut again = Tail::open(&dir, opts(TailStart::At(p.clone()))).unwrap();
    assert_eq!(drain(&mut again, NOW), ((123..300).collect(), "End".into()));

    // A position whose segment is gone is refused, naming it.
    let mut gone = p;
    gone.series[0].created_ns = 42;
    let e = Tail::open(&dir, opts(TailStart::At(gone))).err().unwrap();
    assert!(e.to_string().contains("created at 42"), "{e}");

    // The end of a live tape: only what comes after.
    let live = d.path().join("live");
    let mut w = TapeWriter::create(&live, config(Durability::Flush, 9_000)).unwrap();
    for i in 0..50 {
        w.append(&trade(i)).unwrap();
    }
    let mut t = Tail::open(&live, opts(TailStart::End)).unwrap();
    assert_eq!(drain(&mut t, NOW), (vec![], "Timeout".into()));
    for i in 50..60 {
        w.append(&trade(i)).unwrap();
    }
    assert_eq!(drain(&mut t, NOW), ((50..60).collect(), "Timeout".into()));
    w.close().unwrap();
    assert_eq!(drain(&mut t, NOW), (vec![], "End".into()));
}

#[test]
fn trades_come_in_batches() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    write_tape(&dir, 100, 1_000);
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    let mut out = Vec::new();
    let mut batch = [Trade::default(); 32];
    loop {
        match t.next_trades(&mut batch[..], NOW).unwrap() {
            TailTrades::Trades(n) => {
                assert!(n > 0 && n <= 32);
                out.extend_from_slice(&batch[..n]);
            }
            TailTrades::End => break,
            other => panic!("{other:?}"),
        }
    }
    let ids: Vec<u64> = out.iter().map(|t| t.trade_id).collect();
    assert_eq!(ids, (0..100).collect::<Vec<_>>());
}

#[test]
fn a_damaged_frame_is_an_error_naming_file_and_offset_unless_crcs_are_off() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    write_tape(&dir, 30, 1_000);
    let first = segments(&dir)[0].clone();
    let bytes = std::fs::read(&first).unwrap();
    let (_, frames) = pieces(&bytes);
    let at = 64 + frames[..5].iter().map(Vec::len).sum::<usize>();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(&first)
        .unwrap();
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(at as u64 + 20)).unwrap();
    f.write_all(&[bytes[at + 20] ^ 0xff]).unwrap();
    drop(f);

    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    let (ids, e) = until_error(&mut t);
    assert_eq!(ids, (0..5).collect::<Vec<_>>());
    assert_eq!(e.offset, Some(at as u64));
    assert_eq!(e.path.as_deref(), Some(first.as_path()));
    assert!(e.to_string().contains("crc"), "{e}");

    let mut t = Tail::open(
        &dir,
        TailOptions {
            skip_crc: true,
            ..TailOptions::default()
        },
    )
    .unwrap();
    assert_eq!(drain(&mut t, NOW).0.len(), 30);
}

/// Frames of a type 1.0 does not define among the events one poll
/// checks (they are handed out from where they lie): skipped when asked,
/// each event once and in order, and a position saved between them
/// resumes after the last event handed out; refused otherwise, after the
/// events before them, naming the file and the frame's offset.
#[test]
fn unknown_frames_among_the_checked_events_are_skipped_or_refused() {
    let d = tempfile::tempdir().unwrap();
    let (path, frames) = journal_segment(d.path(), 0);
    let dir = path.parent().unwrap().to_path_buf();
    let _lock = TapeLock::acquire(&dir, "writing").unwrap();
    let payload = [7u8; 20];
    let h = FrameHeader {
        size: payload.len() as u32,
        crc32: floxlog::core::crc32::crc32(&payload),
        frame_type: 200,
        rec_version: 1,
        flags: 0,
    };
    let mut unknown = [0u8; FrameHeader::LEN].to_vec();
    h.emit((&mut unknown[..]).try_into().unwrap());
    unknown.extend_from_slice(&payload);
    // Trades 0..5, an unknown frame, trades 5..10, two unknown frames.
    let mut body = Vec::new();
    for (i, f) in frames[..10].iter().enumerate() {
        if i == 5 {
            body.extend_from_slice(&unknown);
        }
        body.extend_from_slice(f);
    }
    let first_unknown = 64 + frames[..5].iter().map(Vec::len).sum::<usize>() as u64;
    body.extend_from_slice(&unknown);
    body.extend_from_slice(&unknown);
    write_at(&path, 64, &body);

    let skip = TailOptions {
        skip_unknown: true,
        writer_wait: Some(Duration::ZERO),
        ..TailOptions::default()
    };
    let mut t = Tail::open(&dir, skip.clone()).unwrap();
    for want in 0..7 {
        match t.next(NOW).unwrap() {
            TailNext::Event(ev) => assert_eq!(id(&ev), want),
            other => panic!("{other:?} at {want}"),
        }
    }
    let p = t.position();
    assert_eq!(drain(&mut t, NOW), ((7..10).collect(), "Timeout".into()));
    let mut again = Tail::open(
        &dir,
        TailOptions {
            start: TailStart::At(p),
            ..skip
        },
    )
    .unwrap();
    assert_eq!(
        drain(&mut again, NOW),
        ((7..10).collect(), "Timeout".into())
    );

    let mut strict = Tail::open(&dir, TailOptions::default()).unwrap();
    let (ids, e) = until_error(&mut strict);
    assert_eq!(ids, (0..5).collect::<Vec<_>>());
    assert_eq!(e.offset, Some(first_unknown));
    assert_eq!(e.path.as_deref(), Some(path.as_path()));
}

#[test]
fn lz4_tapes_are_followed_and_resumed_inside_a_block() {
    use floxlog::core::{Compression, WriterConfig};
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    let cfg = TapeWriterConfig {
        segment: WriterConfig {
            compression: Compression::Lz4,
            index_interval: 64,
            ..WriterConfig::default()
        },
        max_segment_bytes: 16 * 1024,
        durability: Durability::Flush,
        created_ns: Some(1_000),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    let mut ids = Vec::new();
    for i in 0..3_000 {
        w.append(&trade(i)).unwrap();
        if i % 500 == 0 {
            ids.extend(drain(&mut t, NOW).0);
        }
    }
    w.close().unwrap();
    let (more, what) = drain(&mut t, NOW);
    ids.extend(more);
    assert_eq!(what, "End");
    assert_eq!(ids, (0..3_000).collect::<Vec<_>>());
    assert!(segments(&dir).len() > 2, "the writer rotated");

    // 100 events in: inside the second 64-event block.
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    for _ in 0..100 {
        assert!(matches!(t.next(NOW).unwrap(), TailNext::Event(_)));
    }
    let p = t.position();
    let mut again = Tail::open(&dir, opts(TailStart::At(p))).unwrap();
    assert_eq!(
        drain(&mut again, NOW),
        ((100..3_000).collect(), "End".into())
    );
}

#[test]
fn a_writer_killed_between_segments_is_gone_not_ended() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    write_tape(&dir, 100, 1_000);
    // Every segment finished, but the lock still names its holder: what a
    // writer killed between closing a segment and opening the next leaves.
    std::fs::write(dir.join(".floxlog.lock"), "4242").unwrap();
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    assert_eq!(
        drain(&mut t, None),
        ((0..100).collect(), "WriterGone".into())
    );
    // Once the lock is let go properly (a restarted writer closed), the end.
    std::fs::write(dir.join(".floxlog.lock"), "").unwrap();
    assert_eq!(drain(&mut t, None), (vec![], "End".into()));
}

#[test]
fn a_spec_layout_tape_is_followed_series_by_series() {
    use floxlog::owned::OwnedEvent;
    use floxlog::synth::mixed_event;
    use floxlog::tape::dir::series_of;
    use floxlog::tape::Layout;
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    let cfg = TapeWriterConfig {
        layout: Layout::Spec,
        ..config(Durability::Flush, 1_000)
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    let n = 2_000u64;
    let writer = std::thread::spawn(move || {
        for i in 0..n {
            w.append(&mixed_event(7, i).as_event()).unwrap();
        }
        w.close().unwrap();
    });
    let mut got = Vec::new();
    let end = loop {
        match t.next(PATIENCE).unwrap() {
            TailNext::Event(ev) => got.push(OwnedEvent::from_event(&ev)),
            other => break format!("{other:?}"),
        }
    };
    writer.join().unwrap();
    assert_eq!(end, "End");
    assert_eq!(got.len() as u64, n);
    // Each series in the order written (series interleave as they arrive).
    for s in ["trades", "book", "options", "pools"] {
        let of = |e: &OwnedEvent| series_of(e.as_event().frame_type()) == s;
        let want: Vec<OwnedEvent> = (0..n).map(|i| mixed_event(7, i)).filter(of).collect();
        let have: Vec<OwnedEvent> = got.iter().filter(|e| of(e)).cloned().collect();
        assert_eq!(have.len(), want.len(), "{s}");
        assert!(have == want, "{s}: order differs");
    }
}

/// A saved position on a spec-layout tape of one series (trades only,
/// uncompressed and LZ4 written in the background, rotating) resumes
/// exactly after the last event returned, inside a segment and inside an
/// LZ4 block.
#[test]
fn a_saved_position_on_a_spec_layout_tape() {
    use floxlog::core::{Compression, WriterConfig};
    use floxlog::tape::Layout;
    let d = tempfile::tempdir().unwrap();
    for lz4 in [false, true] {
        let dir = d.path().join(format!("trades-{lz4}"));
        let cfg = TapeWriterConfig {
            layout: Layout::Spec,
            segment: WriterConfig {
                compression: if lz4 {
                    Compression::Lz4
                } else {
                    Compression::None
                },
                index_interval: 16,
                ..WriterConfig::default()
            },
            ..config(Durability::None, 1_000)
        };
        let mut w = TapeWriter::create(&dir, cfg).unwrap();
        for i in 0..1_500 {
            w.append(&trade(i)).unwrap();
        }
        w.close().unwrap();
        let segs = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("trades-")
            })
            .count();
        assert!(segs > 3, "rotated: {segs}");
        for stop in [1u64, 123, 777, 1_499] {
            let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
            for i in 0..stop {
                match t.next(NOW).unwrap() {
                    TailNext::Event(ev) => assert_eq!(id(&ev), i),
                    other => panic!("{other:?}"),
                }
            }
            let p = t.position();
            let mut again = Tail::open(&dir, opts(TailStart::At(p.clone()))).unwrap();
            let (ids, end) = drain(&mut again, NOW);
            assert_eq!(end, "End", "lz4 {lz4} stop {stop}");
            assert!(
                ids == (stop..1_500).collect::<Vec<_>>(),
                "lz4 {lz4} stop {stop}: {p:?}"
            );
        }
    }
}
