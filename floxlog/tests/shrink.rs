//! A segment truncated by another program while it is read: the reader
//! gets an error naming the shrinking, the file and an offset, after the
//! events before it, all genuine; never `SIGBUS` (which would end this
//! test process), never an event that was not written.

mod common;
use common::mixed_segment;
use floxlog::core::{Compression, ReadOptions};
use floxlog::tape::read::engine::OpenedTape;
use floxlog::tape::read::{Order, Request};
use floxlog::tape::{OpenOptions, Tape};

/// What a read returned: event texts, then the errors (reader and
/// problems).
fn read_truncating(
    path: &std::path::Path,
    cfg: &Request,
    cut: u64,
) -> (Vec<(i64, String)>, Vec<String>) {
    let t = Tape::open(&[path.to_path_buf()], OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(t);
    let mut r = o.reader(cfg);
    let mut got = Vec::new();
    let mut errors = Vec::new();
    loop {
        match r.next_item() {
            Ok(Some(it)) => got.push((it.event.exchange_ts_ns(), format!("{:?}", it.event))),
            Ok(None) => break,
            Err(e) => {
                errors.push(e.to_string());
                break;
            }
        }
        if got.len() == 100 {
            // Another program cuts the file: here, this process, through
            // its own handle (the map is not told).
            let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            f.set_len(cut).unwrap();
        }
    }
    errors.extend(
        r.problems()
            .iter()
            .map(|p| format!("{} (tolerated: {})", p.to_error(), p.tolerated)),
    );
    (got, errors)
}

/// Every event of a segment, in file order (read from memory).
fn all_events(bytes: &[u8]) -> Vec<(i64, String)> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("copy.floxlog");
    std::fs::write(&p, bytes).unwrap();
    let t = Tape::open(&[p], OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(t);
    let mut r = o.reader(&Request {
        order: Order::File,
        ..Request::default()
    });
    let mut v = Vec::new();
    while let Some(it) = r.next_item().unwrap() {
        v.push((it.event.exchange_ts_ns(), format!("{:?}", it.event)));
    }
    assert!(r.problems().is_empty());
    v
}

#[test]
fn a_segment_truncated_under_the_reader_is_an_error_after_genuine_events() {
    let d = tempfile::tempdir().unwrap();
    for z in [Compression::None, Compression::Lz4] {
        let bytes = mixed_segment(z, true, 11, 40_000);
        let file = all_events(&bytes);
        let mut time = file.clone();
        time.sort_by_key(|e| e.0);
        for order in [Order::File, Order::Time] {
            let all = if order == Order::File { &file } else { &time };
            for crc in [true, false] {
                for cut in [0, 64, bytes.len() as u64 / 3, bytes.len() as u64 - 5_000] {
                    let ctx = format!("{z:?} {order:?} crc {crc} cut at {cut}");
                    let p = d.path().join("seg.floxlog");
                    std::fs::write(&p, &bytes).unwrap();
                    let cfg = Request {
                        order,
                        read: ReadOptions {
                            verify_crc: crc,
                            ..ReadOptions::default()
                        },
                        ..Request::default()
                    };
                    let (got, errors) = read_truncating(&p, &cfg, cut);
                    assert!(
                        got.len() >= 100 && got.len() <= all.len(),
                        "{ctx}: {} events",
                        got.len()
                    );
                    assert_eq!(errors.len(), 1, "{ctx}: {errors:?}");
                    let e = &errors[0];
                    assert!(
                        e.contains("shrank")
                            && e.contains("seg.floxlog")
                            && !e.contains("tolerated: true"),
                        "{ctx}: {e}"
                    );
                    if crc {
                        // Checked events are genuine: a prefix of the events
                        // in the order asked for.
                        assert!(
                            got[..] == all[..got.len()],
                            "{ctx}: an event that was not written"
                        );
                    }
                }
            }
        }
    }
}

/// A segment of the first `n` events of the mixed stream `seed`, put in
/// time order: a time-order read finds it in order and reads it ahead, a
/// chunk (LZ4: a block) at a time.
fn in_order_segment(z: Compression, seed: u64, n: u64) -> Vec<u8> {
    use floxlog::segment::{finish_to_vec, vec_writer};
    let mut events: Vec<_> = (0..n)
        .map(|i| floxlog::synth::mixed_event(seed, i))
        .collect();
    events.sort_by_key(|e| e.as_event().exchange_ts_ns());
    let mut w = vec_writer(floxlog::core::WriterConfig {
        compression: z,
        created_ns: 1,
        ..Default::default()
    })
    .unwrap();
    for e in &events {
        w.append(&e.as_event()).unwrap();
    }
    finish_to_vec(w).unwrap()
}

/// Two segments over the same hour, merged in time order, each read
/// ahead; one is cut under the reader. The events it had read ahead (and
/// checked) are handed out, then its shrinking is the one error, naming it;
/// the other segment is read to its end, and every event is genuine.
#[test]
fn a_segment_truncated_under_a_merge_of_segments_read_ahead_is_an_error_after_genuine_events() {
    let d = tempfile::tempdir().unwrap();
    let (pa, pb) = (d.path().join("a.floxlog"), d.path().join("b.floxlog"));
    for z in [Compression::None, Compression::Lz4] {
        let (a, b) = (in_order_segment(z, 3, 6_000), in_order_segment(z, 4, 6_000));
        let (all_a, all_b) = (all_events(&a), all_events(&b));
        for crc in [true, false] {
            for cut in [0, 64, a.len() as u64 / 3, a.len() as u64 - 5_000] {
                let ctx = format!("{z:?} crc {crc} cut at {cut}");
                std::fs::write(&pa, &a).unwrap();
                std::fs::write(&pb, &b).unwrap();
                let t = Tape::open(&[pa.clone(), pb.clone()], OpenOptions::default()).unwrap();
                let mut o = OpenedTape::open(t);
                let mut r = o.reader(&Request {
                    order: Order::Time,
                    read: ReadOptions {
                        verify_crc: crc,
                        ..ReadOptions::default()
                    },
                    ..Request::default()
                });
                let (mut got_a, mut got_b, mut last) = (Vec::new(), Vec::new(), i64::MIN);
                while let Some(it) = r.next_item().unwrap() {
                    let ts = it.event.exchange_ts_ns();
                    assert!(ts >= last, "{ctx}: out of time order");
                    last = ts;
                    let e = (ts, format!("{:?}", it.event));
                    [&mut got_a, &mut got_b][it.segment].push(e);
                    if got_a.len() + got_b.len() == 100 {
                        let f = std::fs::OpenOptions::new().write(true).open(&pa).unwrap();
                        f.set_len(cut).unwrap();
                    }
                }
                let errors: Vec<String> = r
                    .problems()
                    .iter()
                    .map(|p| format!("{} (tolerated: {})", p.to_error(), p.tolerated))
                    .collect();
                assert_eq!(errors.len(), 1, "{ctx}: {errors:?}");
                let e = &errors[0];
                assert!(
                    e.contains("shrank")
                        && e.contains("a.floxlog")
                        && !e.contains("tolerated: true"),
                    "{ctx}: {e}"
                );
                // Read ahead before the cut: more than the merge had taken.
                assert!(
                    got_a.len() > 50 && got_a.len() < all_a.len(),
                    "{ctx}: {}",
                    got_a.len()
                );
                assert!(got_b == all_b, "{ctx}: the other segment");
                if crc {
                    assert!(
                        got_a[..] == all_a[..got_a.len()],
                        "{ctx}: an event that was not written"
                    );
                }
            }
        }
    }
}

/// A live journal segment (placeholder header, frames, zero tail) and the
/// same segment finished (final header, frames, trailer), as the journal
/// writer leaves them; and the frames' end.
fn journal_segment(n: u64) -> (Vec<u8>, Vec<u8>, u64) {
    use floxlog::tape::{TapeWriter, TapeWriterConfig};
    let t = tempfile::tempdir().unwrap();
    let cfg = TapeWriterConfig {
        created_ns: Some(3),
        max_segment_bytes: 1 << 20,
        journal: true,
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(t.path(), cfg).unwrap();
    for i in 0..n {
        w.append(&floxlog::synth::mixed_event(5, i).as_event())
            .unwrap();
    }
    let path = w.open_paths()[0].clone();
    let live = std::fs::read(&path).unwrap();
    w.close().unwrap();
    let done = std::fs::read(&path).unwrap();
    let h = floxlog::core::SegmentHeader::parse(&done[..64]).unwrap();
    assert!(live.len() > done.len() + 100_000, "a zero tail");
    (live, done, h.index_offset)
}

/// What another process does to the file under the reader's map.
#[derive(Clone, Copy, Debug)]
enum Change {
    /// The journal's background thread finishing the segment: the trailer
    /// after the frames, the zero tail cut off, then (`header`) the final
    /// header.
    Finish { header: bool },
    /// The file cut at this offset (`recover` trims at the frames' end).
    Cut(u64),
}

fn apply(path: &std::path::Path, done: &[u8], frames_end: u64, c: Change) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    match c {
        Change::Finish { header } => {
            f.write_all_at(&done[frames_end as usize..], frames_end)
                .unwrap();
            f.set_len(done.len() as u64).unwrap();
            if header {
                f.write_all_at(&done[..64], 0).unwrap();
            }
        }
        Change::Cut(at) => f.set_len(at).unwrap(),
    }
}

/// How a test reads: the sequential reader, or the range engine
/// (`Session::frames_ahead`, one thread, small ranges).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Via {
    Reader(Order),
    Ahead,
}

/// Reads the tape at `path` (mapped first), calling `change` after
/// `after` events (`None`: after mapping, before the read starts): the
/// events (timestamp and text; frame payloads through `frames_ahead`) and
/// the errors, each with whether it was tolerated.
fn read_changing(
    path: &std::path::Path,
    via: Via,
    crc: bool,
    change: impl Fn(),
    after: Option<usize>,
) -> (Vec<String>, Vec<(String, bool)>) {
    let t = Tape::open(&[path.to_path_buf()], OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(t);
    if after.is_none() {
        change();
    }
    let read = ReadOptions {
        verify_crc: crc,
        ..ReadOptions::default()
    };
    let mut got = Vec::new();
    let mut errors = Vec::new();
    let Via::Reader(order) = via else {
        use floxlog::tape::read::engine::Ahead;
        use floxlog::tape::read::Session;
        let request = Request {
            read,
            threads: 1,
            range_bytes: 64 << 10,
            ..Request::default()
        };
        let session = Session::from_opened(o, request);
        let r = session.frames_ahead(&mut |a| {
            match a {
                Ahead::Frame { payload, .. } => got.push(format!("{payload:?}")),
                Ahead::Problem(p) => errors.push((p.to_error().to_string(), p.tolerated)),
            }
            if Some(got.len()) == after {
                change();
            }
            Ok(())
        });
        if let Err(e) = r {
            errors.push((e.to_string(), false));
        }
        return (got, errors);
    };
    let cfg = Request {
        order,
        read,
        ..Request::default()
    };
    let mut r = o.reader(&cfg);
    loop {
        match r.next_item() {
            Ok(Some(it)) => got.push(format!("{} {:?}", it.event.exchange_ts_ns(), it.event)),
            Ok(None) => break,
            Err(e) => {
                errors.push((e.to_string(), false));
                break;
            }
        }
        if Some(got.len()) == after {
            change();
        }
    }
    errors.extend(
        r.problems()
            .iter()
            .map(|p| (p.to_error().to_string(), p.tolerated)),
    );
    (got, errors)
}

/// What [`read_changing`] returns for the intact `bytes`.
fn want(bytes: &[u8], via: Via) -> Vec<String> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("copy.floxlog");
    std::fs::write(&p, bytes).unwrap();
    let (got, errors) = read_changing(&p, via, true, || {}, None);
    assert!(errors.is_empty(), "{errors:?}");
    got
}

/// The race of a live journal read: the background thread finishes the
/// segment (cuts its zero tail off) while a reader holds it mapped with
/// the tail. Every byte the read relies on (the frames, the trailer) is
/// still in the file: the read returns every event and no shrinking. A
/// cut at the frames' end (`recover`) is the torn tail it was; a cut into
/// the frames is still the shrinking it is.
#[test]
fn a_journal_segment_finished_under_the_reader_is_no_shrinking() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("3.floxlog");
    let (live, done, frames_end) = journal_segment(4000);
    for via in [
        Via::Reader(Order::File),
        Via::Reader(Order::Time),
        Via::Ahead,
    ] {
        let all = want(&done, via);
        assert_eq!(all.len(), 4000);
        for crc in [true, false] {
            let changes = [
                Change::Finish { header: true },
                Change::Finish { header: false },
                Change::Cut(frames_end),
                Change::Cut(frames_end - 1000),
            ];
            for c in changes {
                for after in [None, Some(100)] {
                    let ctx = format!("{via:?} crc {crc} {c:?} after {after:?}");
                    std::fs::write(&p, &live).unwrap();
                    let change = || apply(&p, &done, frames_end, c);
                    let (got, errors) = read_changing(&p, via, crc, change, after);
                    if let Change::Cut(at) = c {
                        if at < frames_end {
                            assert!(
                                errors.len() == 1 && errors[0].0.contains("shrank") && !errors[0].1,
                                "{ctx}: {errors:?}"
                            );
                            continue;
                        }
                    }
                    assert!(
                        errors
                            .iter()
                            .all(|(e, tolerated)| *tolerated && !e.contains("shrank")),
                        "{ctx}: {errors:?}"
                    );
                    assert!(got == all, "{ctx}: {} events", got.len());
                }
            }
        }
    }
}
