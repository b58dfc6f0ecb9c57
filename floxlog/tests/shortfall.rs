//! Issue 23 item 2 through the library: a listed (closed) segment cut
//! short is damage in every reader (time order, file order, read-ahead)
//! when no live writer holds the tape, and a tolerated torn tail only
//! while one does.

use floxlog::core::Compression;
use floxlog::tape::dir::TapeLock;
use floxlog::tape::read::engine::Ahead;
use floxlog::tape::read::{Order, Problem, Request, Session};
use floxlog::tape::{OpenOptions, Tape, TapeWriter, TapeWriterConfig};
use std::path::{Path, PathBuf};

/// A tape of 3000 mixed events in several segments, with manifest.json.
fn tape(dir: &Path, compression: Compression) -> (PathBuf, Vec<PathBuf>) {
    let p = dir.join("t");
    let mut w = TapeWriter::create(
        &p,
        TapeWriterConfig {
            created_ns: Some(1),
            max_segment_bytes: 8192,
            segment: floxlog::core::WriterConfig {
                compression,
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .unwrap();
    for i in 0..3000 {
        w.append(&floxlog::synth::mixed_event(1, i).as_event())
            .unwrap();
    }
    w.close().unwrap();
    let tape = Tape::open(std::slice::from_ref(&p), OpenOptions::default()).unwrap();
    let segs: Vec<PathBuf> = tape.segments.iter().map(|s| s.path.clone()).collect();
    assert!(segs.len() >= 3 && tape.segments.iter().all(|s| s.listed.is_some()));
    (p, segs)
}

/// Every problem of a full read in `order`, and of a read-ahead.
fn problems(dir: &Path, order: Order) -> (Vec<Problem>, Vec<Problem>) {
    let open = || Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let request = Request {
        order,
        ..Request::default()
    };
    let mut o = Session::open(open(), request);
    let mut r = o.cursor();
    while r.next_event().unwrap().is_some() {}
    let seq = r.problems().to_vec();
    let request = Request {
        threads: 2,
        ..Request::default()
    };
    let session = Session::open(open(), request);
    let mut ahead = Vec::new();
    session
        .frames_ahead(&mut |a| {
            if let Ahead::Problem(p) = a {
                ahead.push(p);
            }
            Ok(())
        })
        .unwrap();
    (seq, ahead)
}

#[test]
fn a_listed_segment_cut_short_is_damage_unless_a_writer_is_live() {
    for compression in [Compression::None, Compression::Lz4] {
        for len in [0u64, 64] {
            let d = tempfile::tempdir().unwrap();
            let (dir, segs) = tape(d.path(), compression);
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&segs[1])
                .unwrap();
            f.set_len(len).unwrap();
            for order in [Order::Time, Order::File] {
                let (seq, ahead) = problems(&dir, order);
                for ps in [&seq, &ahead] {
                    let [p] = &ps[..] else {
                        panic!("{compression:?} {len} {order:?}: {ps:?}")
                    };
                    assert_eq!((p.segment, p.tolerated, p.writer_live), (1, false, false));
                    assert!(p.short.is_some(), "{p:?}");
                    let e = p.to_error();
                    assert_eq!(e.offset, Some(len));
                    assert_eq!(e.exit_code(), 1);
                    assert!(e.message.contains("cut short"), "{e}");
                    assert!(!e.to_string().contains("still running"), "{e}");
                }
            }
            let live = TapeLock::acquire(&dir, "writing").unwrap();
            let (seq, ahead) = problems(&dir, Order::Time);
            for ps in [&seq, &ahead] {
                assert!(ps.iter().all(|p| p.tolerated && p.writer_live), "{ps:?}");
                assert!(ps
                    .iter()
                    .all(|p| p.torn_why() == "its writer is still running"));
            }
            drop(live);
        }
    }
}
