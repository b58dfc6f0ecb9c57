//! Replays `fuzz/regressions/`: hand-made adversarial segments and any
//! input a fuzzer ever crashed on. Each file name states the outcome a strict
//! reader must give (see `fuzz/regressions/make.py`); every file is also read
//! twice into a dirty scratch and leniently, and must never panic.

mod common;
use common::*;
use floxlog_core::*;
use std::path::Path;

#[derive(Debug, PartialEq)]
enum Outcome {
    Error(usize, ErrorKind, u64),
    Index(usize, ErrorKind),
}

fn expected(name: &str) -> Option<Outcome> {
    let spec = name.split("--").next()?;
    let (events, rest) = spec.split_once('-')?;
    let events: usize = events.parse().ok()?;
    if let Some(kind) = rest.strip_prefix("index-") {
        return Some(Outcome::Index(events, ErrorKind::from_name(kind)?));
    }
    let (kind, off) = rest.split_once('@')?;
    Some(Outcome::Error(
        events,
        ErrorKind::from_name(kind)?,
        off.parse().ok()?,
    ))
}

#[test]
fn regression_inputs_give_their_stated_outcome() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".floxlog") {
            continue;
        }
        let data = std::fs::read(&p).unwrap();
        let (got, err) = read_all(&data, ReadOptions::default());
        let (again, err2) = read_all(&data, ReadOptions::default());
        assert_eq!((&got, err), (&again, err2), "{name}: second read differs");
        let lax = ReadOptions {
            verify_crc: false,
            unknown_types: UnknownTypes::Skip,
            ..ReadOptions::default()
        };
        let _ = read_all(&data, lax);
        let want = expected(&name).unwrap_or_else(|| panic!("{name}: name states no outcome"));
        let compressed = SegmentHeader::parse(&data).is_ok_and(|h| h.codec() == Compression::Lz4);
        let outcome = match err {
            Some(e) => Outcome::Error(got.len(), e.kind, e.offset),
            None => {
                let e = Segment::parse(&data).unwrap().index().expect_err(&name);
                Outcome::Index(got.len(), e.kind)
            }
        };
        // Without LZ4, an outcome that needs decompression becomes
        // lz4_unsupported at the first block; structural checks still apply.
        let no_lz4 = Outcome::Error(0, ErrorKind::Lz4Unsupported, 64);
        if compressed && !LZ4_SUPPORTED && outcome == no_lz4 {
            checked += 1;
            continue;
        }
        assert_eq!(outcome, want, "{name}");
        checked += 1;
    }
    assert!(
        checked >= 15,
        "only {checked} regression inputs in {}",
        dir.display()
    );
}
