//! `TapeWriterConfig::resume`: a writer restarted on the directory of an
//! earlier one continues its tape after the last segment (recovering the
//! segments a killed writer left open), or refuses a tape it cannot
//! recover with an error naming the file and offset.

use floxlog::core::{Event, Trade};
use floxlog::tape::check::verify_tape;
use floxlog::tape::read::Order;
use floxlog::tape::read::{Request, Session};
use floxlog::tape::{
    Durability, Layout, Manifest, OpenOptions, Tape, TapeErrorKind, TapeWriter, TapeWriterConfig,
};
use std::path::{Path, PathBuf};

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

fn cfg(layout: Layout, durability: Durability, resume: bool) -> TapeWriterConfig {
    TapeWriterConfig {
        layout,
        durability,
        max_segment_bytes: 20_000,
        created_ns: Some(1_000),
        resume,
        ..TapeWriterConfig::default()
    }
}

/// Trade ids of the tape in file order, and whether the read met problems.
fn ids(dir: &Path) -> (Vec<u64>, usize) {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let request = Request {
        order: Order::File,
        ..Request::default()
    };
    let mut o = Session::open(tape, request);
    let mut r = o.cursor();
    let mut v = Vec::new();
    while let Some(it) = r.next_event().unwrap() {
        let Event::Trade(t) = it.event else {
            panic!("not a trade")
        };
        v.push(t.trade_id);
    }
    (v, r.problems().len())
}

fn verify_passes(dir: &Path) -> bool {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let rep = verify_tape(&tape, Default::default(), &mut |_| {});
    rep.passed(false)
}

fn segment_names(dir: &Path) -> Vec<String> {
    let tape = Tape::open(
        &[dir.to_path_buf()],
        OpenOptions {
            ignore_manifest: true,
        },
    )
    .unwrap();
    tape.segments.iter().map(|s| s.name.clone()).collect()
}

/// A writer killed mid-tape (several segments closed, one open with a
/// placeholder header), then a resumed one: one tape, every event of both
/// runs in order, the manifest listing every segment, verify passing.
#[test]
fn a_resumed_writer_continues_a_crashed_tape() {
    for layout in [Layout::Flox, Layout::Spec] {
        for dur in [Durability::SyncOnClose, Durability::None, Durability::Flush] {
            let t = tempfile::tempdir().unwrap();
            let dir = t.path().join("tape");
            let ctx = format!("{layout:?} {dur:?}");
            let mut w = TapeWriter::create(&dir, cfg(layout, dur, false)).unwrap();
            for i in 0..3_000 {
                w.append(&trade(i)).unwrap();
            }
            w.flush().unwrap();
            assert_eq!(w.written_events(), 3_000, "{ctx}");
            let before = segment_names(&dir);
            assert!(before.len() >= 3, "{ctx}: rotated");
            // Killed: the last segment keeps its placeholder header, and a
            // frame half written (torn) follows its last whole one.
            w.abandon();
            let last = dir.join(before.last().unwrap());
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&last)
                .unwrap();
            std::io::Write::write_all(&mut f, &[0xAB; 10]).unwrap();
            drop(f);
            let e = TapeWriter::create(&dir, cfg(layout, dur, false))
                .err()
                .expect("refused without resume");
            assert!(e.message.contains("already holds a tape"), "{ctx}: {e}");

            let mut w = TapeWriter::create(&dir, cfg(layout, dur, true)).unwrap();
            // Before anything is appended the manifest lists the
            // recovered tape.
            let m = Manifest::load(&dir).unwrap().expect("manifest");
            assert_eq!(
                m.segments.iter().map(|s| s.event_count).sum::<u64>(),
                3_000,
                "{ctx}"
            );
            assert_eq!(m.created_ns, 1_000, "{ctx}: the tape's created_ns kept");
            for i in 3_000..5_000 {
                w.append(&trade(i)).unwrap();
            }
            assert_eq!(w.stats().events, 2_000, "{ctx}: this writer's count");
            w.close().unwrap();

            let after = segment_names(&dir);
            assert_eq!(
                after[..before.len()],
                before[..],
                "{ctx}: old segments kept"
            );
            assert!(after.len() > before.len(), "{ctx}: new segments follow");
            let (got, problems) = ids(&dir);
            assert_eq!(problems, 0, "{ctx}");
            assert_eq!(got, (0..5_000).collect::<Vec<_>>(), "{ctx}");
            assert!(verify_passes(&dir), "{ctx}");
            let backup = last.with_file_name(format!("{}.damaged", before.last().unwrap()));
            assert!(backup.exists(), "{ctx}: the torn original is kept");
            let m = Manifest::load(&dir).unwrap().expect("manifest");
            let listed: Vec<_> = m.segments.iter().map(|s| s.name.clone()).collect();
            let mut sorted_after = after.clone();
            sorted_after.sort();
            let mut sorted_listed = listed.clone();
            sorted_listed.sort();
            assert_eq!(sorted_listed, sorted_after, "{ctx}: manifest lists all");
            assert_eq!(
                m.segments.iter().map(|s| s.event_count).sum::<u64>(),
                5_000,
                "{ctx}"
            );
        }
    }
}

/// Resuming a cleanly closed tape appends new segments after it; resuming
/// a missing directory starts a tape.
#[test]
fn resume_continues_a_closed_tape_and_starts_a_missing_one() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let c = cfg(Layout::Flox, Durability::SyncOnClose, true);
    let mut w = TapeWriter::create(&dir, c).unwrap();
    for i in 0..1_000 {
        w.append(&trade(i)).unwrap();
    }
    w.close().unwrap();
    let first = segment_names(&dir);
    for run in 1..3u64 {
        let mut w = TapeWriter::create(&dir, c).unwrap();
        for i in run * 1_000..(run + 1) * 1_000 {
            w.append(&trade(i)).unwrap();
        }
        w.close().unwrap();
    }
    let all = segment_names(&dir);
    assert_eq!(all[..first.len()], first[..]);
    let (got, problems) = ids(&dir);
    assert_eq!(problems, 0);
    assert_eq!(got, (0..3_000).collect::<Vec<_>>());
    assert!(verify_passes(&dir));
    // No segment was rewritten: nothing to recover, no backup.
    let damaged = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().contains(".damaged"));
    assert!(!damaged);
}

/// A tape whose segment cannot be recovered (its header is not a segment
/// header) is refused, naming the file and the offset; nothing changes.
#[test]
fn resume_refuses_a_tape_it_cannot_recover() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tape");
    let mut w = TapeWriter::create(&dir, cfg(Layout::Flox, Durability::None, false)).unwrap();
    for i in 0..3_000 {
        w.append(&trade(i)).unwrap();
    }
    w.flush().unwrap();
    w.abandon();
    let names = segment_names(&dir);
    let last: PathBuf = dir.join(names.last().unwrap());
    let mut bytes = std::fs::read(&last).unwrap();
    bytes[..4].copy_from_slice(b"JUNK");
    std::fs::write(&last, &bytes).unwrap();
    let e = TapeWriter::create(&dir, cfg(Layout::Flox, Durability::None, true))
        .err()
        .expect("refused");
    assert!(matches!(e.kind, TapeErrorKind::Data(_)), "{e}");
    assert_eq!(e.path.as_deref(), Some(last.as_path()), "{e}");
    assert_eq!(e.offset, Some(0), "{e}");
    assert!(e.message.starts_with("cannot resume the tape"), "{e}");
    assert!(e.hint.is_some(), "{e}");
    assert_eq!(std::fs::read(&last).unwrap(), bytes, "left as it was");
    assert_eq!(segment_names(&dir), names);

    // A tape of the other layout is refused too.
    let e = TapeWriter::create(&dir, cfg(Layout::Spec, Durability::None, true))
        .err()
        .expect("refused");
    assert!(e.message.contains("not of the writer's layout"), "{e}");

    // A closed tape whose manifest lists a segment the header of which was
    // damaged since: the header is checked, not the listing trusted.
    let dir = t.path().join("closed");
    let mut w = TapeWriter::create(&dir, cfg(Layout::Flox, Durability::None, false)).unwrap();
    for i in 0..3_000 {
        w.append(&trade(i)).unwrap();
    }
    w.close().unwrap();
    let first = dir.join(&segment_names(&dir)[0]);
    let mut bytes = std::fs::read(&first).unwrap();
    bytes[..4].copy_from_slice(b"JUNK");
    std::fs::write(&first, &bytes).unwrap();
    let e = TapeWriter::create(&dir, cfg(Layout::Flox, Durability::None, true))
        .err()
        .expect("refused");
    assert_eq!(e.path.as_deref(), Some(first.as_path()), "{e}");
    assert_eq!(e.offset, Some(0), "{e}");
}

/// Journal mode resumes too: a journal writer killed mid-tape (its live
/// segment unfinished, the next one prepared and empty) is continued by a
/// resumed journal writer; the closed tape then by the default writer and
/// by the journal again. One tape: every event in order, the old segments
/// kept and the new ones after them, the manifest listing every file,
/// verify passing.
#[test]
fn a_journal_writer_resumes_a_killed_journal_tape() {
    for layout in [Layout::Flox, Layout::Spec] {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("tape");
        let ctx = format!("{layout:?}");
        let journal = |resume| TapeWriterConfig {
            journal: true,
            ..cfg(layout, Durability::None, resume)
        };
        let mut w = TapeWriter::create(&dir, journal(false)).unwrap();
        for i in 0..3_000 {
            w.append(&trade(i)).unwrap();
        }
        let before = segment_names(&dir);
        assert!(before.len() >= 3, "{ctx}: rotated");
        w.abandon();

        let runs = [
            (journal(true), 5_000),
            (cfg(layout, Durability::None, true), 6_000),
        ];
        let mut from = 3_000;
        for (c, to) in runs.into_iter().chain([(journal(true), 7_000)]) {
            let mut w = TapeWriter::create(&dir, c).unwrap();
            for i in from..to {
                w.append(&trade(i)).unwrap();
            }
            assert_eq!(w.stats().events, to - from, "{ctx}: this writer's count");
            w.close().unwrap();
            from = to;
        }

        let after = segment_names(&dir);
        assert_eq!(
            after[..before.len()],
            before[..],
            "{ctx}: old segments kept"
        );
        assert!(after.len() > before.len() + 2, "{ctx}: new segments follow");
        let (got, problems) = ids(&dir);
        assert_eq!(problems, 0, "{ctx}");
        assert_eq!(got, (0..7_000).collect::<Vec<_>>(), "{ctx}");
        assert!(verify_passes(&dir), "{ctx}");
        let m = Manifest::load(&dir).unwrap().expect("manifest");
        let mut listed: Vec<_> = m.segments.iter().map(|s| s.name.clone()).collect();
        listed.sort();
        let mut files = after.clone();
        files.sort();
        assert_eq!(listed, files, "{ctx}: the manifest lists every segment");
        assert_eq!(
            m.segments.iter().map(|s| s.event_count).sum::<u64>(),
            7_000,
            "{ctx}"
        );
    }
}
