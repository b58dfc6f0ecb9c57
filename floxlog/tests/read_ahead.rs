//! A session's frames decoded ahead (`Session::frames_ahead`, convert's
//! decode on several threads) are what a file-order `TapeReader` gives: the same frames, and each problem at the
//! same point among them, on intact and damaged tapes.

use floxlog::core::Compression;
use floxlog::tape::read::engine::{Ahead, OpenedTape};
use floxlog::tape::read::{Order, Request, Session};
use floxlog::tape::{OpenOptions, Tape};
use std::path::Path;

mod common;
use common::mixed_segment;

fn problem_line(p: &floxlog::tape::read::Problem) -> String {
    format!(
        "P {} {:?} {} {}",
        p.segment, p.error, p.events_before, p.tolerated
    )
}

fn sequential(dir: &Path) -> Vec<String> {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(tape);
    let cfg = Request {
        order: Order::File,
        ..Default::default()
    };
    let mut r = o.reader(&cfg);
    let mut log = Vec::new();
    let mut seen = 0;
    loop {
        let it = r.next_item().unwrap();
        let item = it.map(|it| format!("F {} {:?}", it.frame.header.frame_type, it.frame.payload));
        // Recorded while fetching the item, so before it.
        for p in &r.problems()[seen..] {
            log.push(problem_line(p));
        }
        seen = r.problems().len();
        match item {
            Some(f) => log.push(f),
            None => return log,
        }
    }
}

fn ahead(dir: &Path, threads: usize, range_bytes: u64) -> Vec<String> {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let request = Request {
        threads,
        range_bytes,
        ..Request::default()
    };
    let session = Session::open(tape, request);
    let mut log = Vec::new();
    session
        .frames_ahead(&mut |a| {
            log.push(match a {
                Ahead::Frame {
                    frame_type,
                    payload,
                } => format!("F {frame_type} {payload:?}"),
                Ahead::Problem(p) => problem_line(&p),
            });
            Ok(())
        })
        .unwrap();
    log
}

#[test]
fn read_ahead_matches_the_file_order_reader() {
    let d = tempfile::tempdir().unwrap();
    let segs = [
        mixed_segment(Compression::Lz4, true, 1, 3000),
        mixed_segment(Compression::None, true, 2, 2000),
        mixed_segment(Compression::None, false, 3, 2000),
        mixed_segment(Compression::Lz4, false, 4, 3000),
    ];
    let write = |segs: &[Vec<u8>]| {
        let dir = d.path().join("t");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        for (i, s) in segs.iter().enumerate() {
            std::fs::write(dir.join(format!("seg-{i}.floxlog")), s).unwrap();
        }
        dir
    };
    let mut cases = 0;
    for victim in 0..segs.len() {
        let len = segs[victim].len();
        for k in 0..12 {
            let mut damaged = segs.to_vec();
            let at = (len * k / 12).max(3);
            if k % 3 == 2 {
                damaged[victim].truncate(at);
            } else {
                damaged[victim][at] ^= 0x21;
            }
            let dir = write(&damaged);
            let want = sequential(&dir);
            for (threads, range) in [(2, 4096), (3, 20_000), (1, 4096)] {
                assert!(
                    ahead(&dir, threads, range) == want,
                    "segment {victim} damaged at {at} (k {k}), {threads} threads, ranges {range}"
                );
            }
            cases += 1;
        }
    }
    let dir = write(&segs);
    let want = sequential(&dir);
    assert!(want.len() > 9000);
    assert!(ahead(&dir, 2, 4096) == want);
    assert!(cases > 40);
}
