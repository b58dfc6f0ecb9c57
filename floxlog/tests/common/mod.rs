//! Helpers shared by the test files (each file is its own crate and uses
//! some of them).
#![allow(dead_code)]

use floxlog::core::{Compression, WriterConfig};
use floxlog::segment::{finish_to_vec, vec_writer};
use floxlog::synth::mixed_event;

/// A segment of the first `n` events of the mixed stream `seed` (every
/// record type), index entries every 64 events when `index`.
pub fn mixed_segment(compression: Compression, index: bool, seed: u64, n: u64) -> Vec<u8> {
    let mut w = vec_writer(WriterConfig {
        compression,
        create_index: index,
        index_interval: 64,
        created_ns: 1,
        ..Default::default()
    })
    .unwrap();
    for i in 0..n {
        w.append(&mixed_event(seed, i).as_event()).unwrap();
    }
    finish_to_vec(w).unwrap()
}

/// Every frame's payload of the tape in `dir`, read in file order, and
/// the problems of the read that are not tolerated torn tails.
pub fn read_payloads(dir: &std::path::Path) -> (Vec<Vec<u8>>, Vec<String>) {
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
    let bad = r
        .problems()
        .iter()
        .filter(|p| !p.tolerated)
        .map(|p| p.to_error().to_string())
        .collect();
    (v, bad)
}

/// The errors `verify` finds in the tape in `dir`.
pub fn verify_errors(dir: &std::path::Path) -> Vec<String> {
    use floxlog::tape::{OpenOptions, Tape};
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let rep = floxlog::tape::check::verify_tape(&tape, Default::default(), &mut |_| {});
    rep.findings
        .iter()
        .filter(|f| f.severity == floxlog::tape::Severity::Error)
        .map(|f| format!("{f:?}"))
        .collect()
}

/// `recover` on the tape in `dir` (a killed writer's), which must repair
/// every segment, then `verify`, which must find no error.
pub fn recover_then_verify(dir: &std::path::Path, ctx: &str) {
    let sum = floxlog::tape::check::recover_tape(
        std::slice::from_ref(&dir.to_path_buf()),
        &Default::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(sum.failed, 0, "{ctx}");
    let errors = verify_errors(dir);
    assert!(errors.is_empty(), "{ctx}: {errors:?}");
}

/// A `kB` field of `/proc/self/status`, in bytes (Linux).
pub fn status(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
        * 1024
}
