//! The tape layer over an arbitrary segment file: listing, the merged and
//! file-order readers (with a small reorder budget), the scan behind
//! `inspect`/`verify`, and `recover --salvage`. Nothing may panic; what
//! salvage writes must read to its end, hold every event a strict read
//! returns (as a multiset: rewriting LZ4 re-sorts each block by time), and
//! be left alone by a second recover. Then the files change under readers:
//! the segment is cut (at a point the input picks) while a reader is in it,
//! and a follower polls it as it grows to its full size and shrinks again.
//! No signal, no panic; a cut read returns a prefix of the events or says
//! the file shrank. And the splitter's ranges (what parallel reads use),
//! read one after another, return exactly what one read from the start
//! returns, up to its first error.
#![no_main]

use floxlog::core::ReadOptions;
use floxlog::tape::check::{recover_file, RecoverOptions};
use floxlog::tape::check::scan_segment;
use floxlog::tape::check::verify_tape;
use floxlog::tape::read::engine::OpenedTape;
use floxlog::tape::read::{Order, Request};
use floxlog::tape::{OpenOptions, Tape};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

/// Reads `path` in `order` (a small reorder budget); with `cut` =
/// (after, len), cuts the file to `len` bytes once `after` events are read.
/// The events, the reader's and the problems' error texts, and whether no
/// problem was recorded.
fn read(path: &PathBuf, order: Order, cut: Option<(usize, u64)>) -> (Vec<String>, String, bool) {
    let Ok(tape) = Tape::open(std::slice::from_ref(path), OpenOptions::default()) else {
        return (Vec::new(), String::new(), false);
    };
    let mut opened = OpenedTape::open(tape);
    let cfg = Request {
        order,
        reorder_bytes: 1 << 20,
        ..Request::default()
    };
    let mut r = opened.reader(&cfg);
    let mut v = Vec::new();
    let mut error = String::new();
    loop {
        if let Some((_, len)) = cut.filter(|&(after, _)| v.len() == after) {
            let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            f.set_len(len).unwrap();
        }
        match r.next_item() {
            Ok(Some(it)) => v.push(format!("{:?}", it.event)),
            Ok(None) => break,
            Err(e) => {
                error = e.to_string();
                break;
            }
        }
    }
    for p in r.problems() {
        error.push_str(&p.to_error().to_string());
    }
    let clean = r.problems().is_empty();
    (v, error, clean)
}

fn events(path: &PathBuf, order: Order) -> (Vec<String>, bool) {
    let (v, _, clean) = read(path, order, None);
    (v, clean)
}

/// Reads `path` in `order`, cutting the file to `cut` bytes after `after`
/// events: a prefix of the uncut read, or an error saying it shrank.
fn cut_read(path: &PathBuf, order: Order, after: usize, cut: u64, uncut: &[String]) {
    let (v, error, _) = read(path, order, Some((after, cut)));
    let prefix = v.len() <= uncut.len() && v[..] == uncut[..v.len()];
    assert!(prefix || error.contains("shrank"), "{order:?}: {error}");
}

/// The events of a core read from `at` (not past `end`): texts, and
/// whether it ended without an error.
fn read_range(seg: &floxlog::core::Segment<'_>, at: u64, end: u64, scratch: &mut [u8]) -> (Vec<String>, bool) {
    let Ok(mut r) = seg.reader_at(at, ReadOptions::default(), scratch) else {
        return (Vec::new(), false);
    };
    let mut v = Vec::new();
    loop {
        match r.next_item() {
            Ok(Some(it)) if it.position.offset < end => v.push(format!("{:?}", it.event)),
            Ok(_) => return (v, true),
            Err(_) => return (v, false),
        }
    }
}

fn ranges_agree(data: &[u8]) {
    let Ok(seg) = floxlog::core::Segment::parse(data) else {
        return;
    };
    if seg.scratch_len() > 64 << 20 {
        return;
    }
    let mut scratch = vec![0u8; seg.scratch_len()];
    let (whole, _) = read_range(&seg, 64, u64::MAX, &mut scratch);
    let starts = floxlog::tape::check::range_starts(&seg, ReadOptions::default(), 64);
    let mut parts = Vec::new();
    for (a, b) in floxlog::tape::check::split_ranges(&starts) {
        let (v, clean) = read_range(&seg, a, b, &mut scratch);
        parts.extend(v);
        if !clean {
            break;
        }
    }
    assert!(parts == whole, "ranges {starts:?}: {} events, whole read {}", parts.len(), whole.len());
}

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("floxlog-fuzz-tape-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let seg = dir.join("1.floxlog");
    std::fs::write(&seg, data).unwrap();

    ranges_agree(data);
    let (file_order, _) = events(&seg, Order::File);
    let _ = events(&seg, Order::Time);
    let _ = scan_segment(data, ReadOptions::default(), &mut |_| {});
    if let Ok(tape) = Tape::open(std::slice::from_ref(&dir), OpenOptions::default()) {
        let _ = verify_tape(&tape, ReadOptions::default(), &mut |_| {});
    }

    // Files changing under readers (the last 3 input bytes pick the cut).
    if data.len() > 3 {
        let n = data.len();
        let cut = u64::from(u16::from_le_bytes([data[n - 1], data[n - 2]])) % n as u64;
        let after = usize::from(data[n - 3] % 8);
        cut_read(&seg, Order::File, after, cut, &file_order);
        std::fs::write(&seg, data).unwrap();
        let (time_order, _) = events(&seg, Order::Time);
        cut_read(&seg, Order::Time, after, cut, &time_order);
        // A tailer over the file growing to its size, then cut.
        std::fs::write(&seg, &data[..cut as usize]).unwrap();
        let opts = floxlog::tape::TailOptions {
            writer_wait: Some(std::time::Duration::ZERO),
            ..Default::default()
        };
        if let Ok(mut t) = floxlog::tape::Tail::open(&seg, opts) {
            for len in [cut as usize, n, cut as usize / 2, n] {
                std::fs::write(&seg, &data[..len]).unwrap();
                // Bounded: each event is one of the input's frames.
                for _ in 0..=n {
                    match t.next(Some(std::time::Duration::ZERO)) {
                        Ok(floxlog::tape::TailNext::Event(_)) => {}
                        _ => break,
                    }
                }
            }
        }
        std::fs::write(&seg, data).unwrap();
    }

    let out = dir.join("2.floxlog");
    let opts = RecoverOptions {
        output: Some(out.clone()),
        salvage: true,
        force: true,
        ..RecoverOptions::default()
    };
    if recover_file(&seg, &opts).is_ok() && out.exists() {
        let (salvaged, clean) = events(&out, Order::File);
        assert!(clean, "a salvaged segment reads to its end");
        let mut have = std::collections::HashMap::<&str, i64>::new();
        for e in &salvaged {
            *have.entry(e).or_default() += 1;
        }
        for e in &file_order {
            let n = have.entry(e).or_default();
            *n -= 1;
            assert!(*n >= 0, "salvage keeps every event a strict read returns: {e}");
        }
        let again = recover_file(&out, &RecoverOptions { dry_run: true, ..RecoverOptions::default() });
        assert_eq!(again.map(|r| r.action).ok().as_deref(), Some("already_valid"));
    }
});
