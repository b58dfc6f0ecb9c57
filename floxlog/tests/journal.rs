//! Journal mode of the tape writer (issue 22 item 1): once closed, its
//! tape is byte for byte the default writer's; while live, a segment is
//! the placeholder header, the published frames and zeros.

use floxlog::core::{Compression, Profile, SegmentHeader, WriterConfig};
use floxlog::owned::OwnedEvent;
use floxlog::synth::mixed_event;
use floxlog::tape::{Durability, Layout, TapeWriter, TapeWriterConfig};
use std::path::Path;

/// Every file of `dir` but the lock, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| !n.contains("lock"))
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect();
    v.sort();
    v
}

fn events(n: u64) -> Vec<OwnedEvent> {
    (0..n).map(|i| mixed_event(7, i)).collect()
}

fn write(dir: &Path, cfg: TapeWriterConfig, evs: &[OwnedEvent]) {
    let mut w = TapeWriter::create(dir, cfg).unwrap();
    for e in evs {
        w.append(&e.as_event()).unwrap();
    }
    if cfg.journal {
        // Every appended frame is in the page cache.
        assert_eq!(w.written_events(), evs.len() as u64);
    }
    w.close().unwrap();
}

/// Both layouts, both profiles, rotation by size and by time, several
/// durabilities: the journal's files equal the default writer's.
#[test]
fn closed_journal_segments_are_the_default_writers_bytes() {
    let evs = events(6000);
    for layout in [Layout::Flox, Layout::Spec] {
        for profile in [Profile::Reference, Profile::Spec] {
            for (max, every) in [(20_000u64, None), (1 << 20, Some(700_000i64))] {
                for durability in [
                    Durability::None,
                    Durability::SyncOnClose,
                    Durability::SyncEveryN(100),
                ] {
                    let cfg = TapeWriterConfig {
                        layout,
                        segment: WriterConfig {
                            profile,
                            index_interval: 50,
                            ..WriterConfig::default()
                        },
                        max_segment_bytes: max,
                        rotate_every_ns: every,
                        durability,
                        created_ns: Some(1_000),
                        ..TapeWriterConfig::default()
                    };
                    let ctx = format!("{layout:?} {profile:?} {max} {every:?} {durability:?}");
                    let t = tempfile::tempdir().unwrap();
                    let (a, b) = (t.path().join("default"), t.path().join("journal"));
                    write(&a, cfg, &evs);
                    write(
                        &b,
                        TapeWriterConfig {
                            journal: true,
                            ..cfg
                        },
                        &evs,
                    );
                    let (want, got) = (files(&a), files(&b));
                    assert!(want.len() > 4, "{ctx}: rotated into {}", want.len());
                    let names =
                        |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
                    assert_eq!(names(&got), names(&want), "{ctx}");
                    for ((n, g), (_, w)) in got.iter().zip(&want) {
                        assert!(
                            g == w,
                            "{ctx}: {n} differs ({} vs {} bytes)",
                            g.len(),
                            w.len()
                        );
                    }
                }
            }
        }
    }
}

/// LZ4 is refused up front, naming the reason.
#[test]
fn journal_mode_refuses_lz4() {
    let t = tempfile::tempdir().unwrap();
    let cfg = TapeWriterConfig {
        segment: WriterConfig {
            compression: Compression::Lz4,
            ..WriterConfig::default()
        },
        journal: true,
        ..TapeWriterConfig::default()
    };
    let Err(e) = TapeWriter::create(t.path(), cfg) else {
        panic!("LZ4 accepted");
    };
    assert!(
        e.message.contains("journal mode") && e.message.contains("uncompressed"),
        "{e}"
    );
}

/// While the writer lives, its segment file holds the placeholder header,
/// every appended frame (published) and zeros to the pre-allocated size;
/// the first frame's size field is set.
#[test]
fn a_live_segment_is_header_frames_and_zeros() {
    let t = tempfile::tempdir().unwrap();
    let cfg = TapeWriterConfig {
        created_ns: Some(5),
        max_segment_bytes: 1 << 20,
        journal: true,
        ..TapeWriterConfig::default()
    };
    let evs = events(500);
    let mut w = TapeWriter::create(t.path(), cfg).unwrap();
    for e in &evs {
        w.append(&e.as_event()).unwrap();
    }
    let path = w.open_paths()[0].clone();
    let live = std::fs::read(&path).unwrap();
    // The default writer's bytes of the same events, for comparison.
    let d = t.path().join("d");
    write(
        &d,
        TapeWriterConfig {
            journal: false,
            ..cfg
        },
        &evs,
    );
    let done = std::fs::read(d.join("5.floxlog")).unwrap();
    let h = SegmentHeader::parse(&done[..64]).unwrap();
    let frames_end = h.index_offset as usize;
    assert!(live.len() >= 1 << 20, "pre-allocated: {}", live.len());
    assert_eq!(live[64..frames_end], done[64..frames_end]);
    assert!(live[frames_end..].iter().all(|&b| b == 0));
    let ph = SegmentHeader::parse(&live[..64]).unwrap();
    assert_eq!((ph.event_count, ph.index_offset, ph.created_ns), (0, 0, 5));
    w.close().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), done);
}

/// Every event of the tape at `dir` in file order, as frame payload bytes,
/// and the problems the read met.
fn read_all(dir: &Path) -> (Vec<Vec<u8>>, Vec<floxlog::tape::read::Problem>) {
    use floxlog::tape::read::engine::OpenedTape;
    use floxlog::tape::read::{Order, Request};
    use floxlog::tape::{OpenOptions, Tape};
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(tape);
    let cfg = Request {
        order: Order::File,
        ..Default::default()
    };
    let mut r = o.reader(&cfg);
    let mut v = Vec::new();
    while let Some(it) = r.next_item().unwrap() {
        v.push(it.frame.payload.to_vec());
    }
    (v, r.problems().to_vec())
}

fn verify(dir: &Path) -> floxlog::tape::check::VerifyReport {
    use floxlog::tape::{OpenOptions, Tape};
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    floxlog::tape::check::verify_tape(&tape, Default::default(), &mut |_| {})
}

/// A journal writer that stops as if killed leaves segments that every
/// reader reads to their last event (the zeros are a torn tail: tolerated,
/// not damage), that verify passes with warnings only, and that recover
/// finalises: then the tape is what a closed writer leaves, and verify
/// finds nothing. Zeros followed by other bytes stay damage.
#[test]
fn a_killed_journal_leaves_zero_tails_that_readers_accept_and_recover_cuts() {
    for layout in [Layout::Flox, Layout::Spec] {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("t");
        let evs = events(3000);
        let cfg = TapeWriterConfig {
            layout,
            created_ns: Some(1),
            // Rotates in the spec layout only; the flox one keeps a long
            // zero tail to put a stray byte in.
            max_segment_bytes: 200_000,
            journal: true,
            ..TapeWriterConfig::default()
        };
        let mut w = TapeWriter::create(&dir, cfg).unwrap();
        for e in &evs {
            w.append(&e.as_event()).unwrap();
        }
        w.abandon();
        let want: Vec<Vec<u8>> = evs
            .iter()
            .map(|e| {
                let ev = e.as_event();
                let mut b = vec![0u8; 12 + ev.payload_len()];
                floxlog::core::encode_frame(&ev, Profile::Reference, &mut b).unwrap();
                b.split_off(12)
            })
            .collect();
        let (got, problems) = read_all(&dir);
        assert!(
            !problems.is_empty() && problems.iter().all(|p| p.tolerated),
            "{layout:?}: {problems:?}"
        );
        let sorted = |mut v: Vec<Vec<u8>>| {
            v.sort();
            v
        };
        assert_eq!(
            sorted(got),
            sorted(want.clone()),
            "{layout:?}: every event read"
        );
        let rep = verify(&dir);
        assert!(rep.passed(false), "{layout:?}: {:?}", rep.findings);
        assert!(
            rep.findings.iter().any(|f| f.kind.as_str() == "zero_tail"),
            "{layout:?}"
        );

        // A non-zero byte past the zeros (more than a frame left
        // unpublished could span) is damage again.
        let live = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                let b = std::fs::read(p).unwrap();
                let unfinished = b.len() > 64
                    && SegmentHeader::parse(&b[..64]).is_ok_and(|h| h.index_offset == 0);
                unfinished && b[64..].iter().any(|&x| x != 0)
            })
            .unwrap();
        let keep = std::fs::read(&live).unwrap();
        let mut bad = keep.clone();
        let n = bad.len();
        bad[n - 1] ^= 0xa5;
        std::fs::write(&live, &bad).unwrap();
        let rep = verify(&dir);
        assert!(
            !rep.passed(false),
            "{layout:?}: non-zero after the zeros in {live:?}: {:?}",
            rep.findings
        );
        std::fs::write(&live, &keep).unwrap();

        let sum = floxlog::tape::check::recover_tape(
            std::slice::from_ref(&dir),
            &Default::default(),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(sum.failed, 0, "{layout:?}");
        assert!(sum.rewritten > 0, "{layout:?}");
        let rep = verify(&dir);
        let left: Vec<_> = rep
            .findings
            .iter()
            .filter(|f| f.kind.as_str() != "timestamps_backwards")
            .collect();
        assert!(rep.passed(false) && left.is_empty(), "{layout:?}: {left:?}");
        let (got, problems) = read_all(&dir);
        assert!(problems.is_empty(), "{layout:?}: {problems:?}");
        assert_eq!(
            sorted(got),
            sorted(want),
            "{layout:?}: every event after recover"
        );
        // No backup of bytes that were only zeros.
        assert!(std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().contains("damaged")));
    }
}

/// The flox layout's first segment file is made (reserved, its first
/// window pre-faulted) by `create`, under a hidden name, so the first
/// append only names it; a reserved file never used is removed with the
/// writer. The spec layout prepares a series at its first event: nothing
/// is reserved for the series a tape may never hold.
#[test]
fn the_first_segment_is_reserved_at_create_and_named_by_the_first_append() {
    for layout in [Layout::Flox, Layout::Spec] {
        let t = tempfile::tempdir().unwrap();
        let cfg = TapeWriterConfig {
            layout,
            created_ns: Some(9),
            max_segment_bytes: 1 << 20,
            journal: true,
            ..TapeWriterConfig::default()
        };
        // Names only: the background thread may rename a file between the
        // listing and a read of its bytes.
        let hidden = |dir: &Path| -> Vec<String> {
            std::fs::read_dir(dir)
                .unwrap()
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(".journal-first-"))
                .collect()
        };
        let mut w = TapeWriter::create(t.path(), cfg).unwrap();
        let reserved = hidden(t.path());
        let want = usize::from(layout == Layout::Flox);
        assert_eq!(reserved.len(), want, "{layout:?}: {reserved:?}");
        assert!(w.open_paths().is_empty());
        w.append(&events(1)[0].as_event()).unwrap();
        assert_eq!(w.open_paths().len(), 1);
        assert!(hidden(t.path()).is_empty(), "{layout:?}");
        w.close().unwrap();
        assert!(hidden(t.path()).is_empty(), "{layout:?}: left behind");

        // A writer closed with no event removes what it reserved.
        let t = tempfile::tempdir().unwrap();
        TapeWriter::create(t.path(), cfg).unwrap().close().unwrap();
        assert!(hidden(t.path()).is_empty(), "{layout:?}: left behind");
    }
}

/// The hidden files of `dir` (but the lock), by name.
fn hidden(dir: &Path) -> Vec<String> {
    files(dir)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with('.'))
        .collect()
}

/// A killed writer leaves hidden temporary files: a flox-layout journal
/// with no event its reserved first segment (a spec-layout journal
/// reserves none), a default writer its spare segment file, either a
/// half-written manifest.
/// `recover` removes them (reporting each) and no other file; a dry run
/// removes nothing.
#[test]
fn recover_removes_the_temporary_files_a_killed_writer_left() {
    use floxlog::tape::check::{recover_tape, RecoverEvent, RecoverOptions};
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("t");
    let cfg = TapeWriterConfig {
        layout: Layout::Spec,
        created_ns: Some(1),
        max_segment_bytes: 100_000,
        journal: true,
        ..TapeWriterConfig::default()
    };
    // Trades only: one series of four.
    let trades: Vec<OwnedEvent> = events(20_000)
        .into_iter()
        .filter(|e| e.as_event().frame_type() == 1)
        .take(3000)
        .collect();
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    for e in &trades {
        w.append(&e.as_event()).unwrap();
    }
    // What the directory holds hidden while the writer lives, its
    // background thread idle (so that no file is being renamed); a SIGKILL
    // leaves it so (abandon, in-process, removes the reserved files).
    w.sync().unwrap();
    let left: Vec<(String, Vec<u8>)> = files(&dir)
        .into_iter()
        .filter(|(n, _)| n.starts_with('.'))
        .collect();
    assert!(
        !left.iter().any(|(n, _)| n.starts_with(".journal-first-")),
        "{left:?}"
    );
    w.abandon();
    std::fs::write(dir.join(".journal-first-0.tmp"), vec![0u8; 8192]).unwrap();
    for (n, b) in &left {
        std::fs::write(dir.join(n), b).unwrap();
    }
    std::fs::write(dir.join(".next-segment-4.tmp"), b"").unwrap();
    std::fs::write(dir.join(".manifest.json.tmp"), b"{\"trunc").unwrap();
    // Not a writer's: kept.
    std::fs::write(dir.join(".notes.tmp"), b"mine").unwrap();
    let temps: Vec<String> = hidden(&dir)
        .into_iter()
        .filter(|n| n != ".notes.tmp")
        .collect();

    let run = |dry_run: bool| {
        let mut removed = Vec::new();
        let opts = RecoverOptions {
            dry_run,
            ..RecoverOptions::default()
        };
        let sum = recover_tape(std::slice::from_ref(&dir), &opts, &mut |e| {
            if let RecoverEvent::RemovedTemp(p) = e {
                removed.push(p.file_name().unwrap().to_string_lossy().into_owned());
            }
        })
        .unwrap();
        (sum, removed)
    };
    let (sum, removed) = run(true);
    assert_eq!((sum.temps_removed, removed.len()), (0, 0));
    assert_eq!(
        hidden(&dir).len(),
        temps.len() + 1,
        "a dry run removed files"
    );

    let (sum, removed) = run(false);
    assert_eq!(sum.exit_code, 0);
    assert_eq!(removed, temps);
    assert_eq!(sum.temps_removed, temps.len());
    assert_eq!(hidden(&dir), vec![".notes.tmp".to_string()]);
    let rep = verify(&dir);
    assert!(rep.passed(false), "{:?}", rep.findings);
    let (got, problems) = read_all(&dir);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(got.len(), trades.len());
}
