//! `read_batches` returns exactly what the general tape reader returns,
//! type by type, for every order, filter and kind of tape, and
//! `read_table` on two threads (the engine's ranges) exactly what
//! `read_batches` returns (concatenating its ranges in time order where
//! they do not overlap); the conformance corpus read as batches equals
//! `expected.jsonl`.

use arrow_array::RecordBatch;
use floxlog::core::{Compression, Event, Profile, ReadOptions, WriterConfig};
use floxlog::owned::OwnedEvent;
use floxlog::synth::mixed_event;
use floxlog::tape::read::{Problem, Request, Session};
use floxlog::tape::{Filter, Layout, OpenOptions, Order, Tape, TapeWriter, TapeWriterConfig};
use floxlog_arrow::{
    for_each_event, read_batches, read_table, Limits, ReadSpec, RecordType, Symbols,
};
use floxlog_testkit::conformance::events_of;
use floxlog_testkit::corpus::{read_jsonl, Corpus};
use std::path::{Path, PathBuf};

const STEP: i64 = 1_000;

fn set_ts(ev: &mut OwnedEvent, ts: i64) {
    match ev {
        OwnedEvent::Trade(t) => t.exchange_ts_ns = ts,
        OwnedEvent::Book(b) => b.head.exchange_ts_ns = ts,
        OwnedEvent::OptionQuote(q) => q.exchange_ts_ns = ts,
        OwnedEvent::PoolState(p) => p.head.exchange_ts_ns = ts,
    }
}

/// Writes events `ids` (mixed types) to a new tape; `jitter` keeps the
/// generator's out-of-order timestamps, otherwise event `i` is at
/// `i * STEP`.
fn write_tape(
    dir: &Path,
    ids: impl Iterator<Item = u64>,
    compression: Compression,
    profile: Profile,
    jitter: bool,
    max_segment_bytes: u64,
) {
    let cfg = TapeWriterConfig {
        layout: Layout::Flox,
        segment: WriterConfig {
            compression,
            index_interval: 64,
            profile,
            ..WriterConfig::default()
        },
        max_segment_bytes,
        created_ns: Some(1),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(dir, cfg).unwrap();
    for i in ids {
        let mut ev = mixed_event(7, i);
        if !jitter {
            set_ts(&mut ev, 1_000_000 + i as i64 * STEP);
        }
        w.append(&ev.as_event()).unwrap();
    }
    w.close().unwrap();
}

fn type_of(ev: &Event<'_>) -> RecordType {
    RecordType::of_frame_type(ev.frame_type()).unwrap()
}

/// What the general reader returns: events and problems.
fn general(inputs: &[PathBuf], request: &Request) -> (Vec<OwnedEvent>, Vec<Problem>) {
    let tape = Tape::open(inputs, OpenOptions::default()).unwrap();
    let mut session = Session::open(tape, request.clone());
    let mut r = session.cursor();
    let mut out = Vec::new();
    while let Some(it) = r.next_event().unwrap() {
        out.push(OwnedEvent::from_event(&it.event));
    }
    (out, r.problems().to_vec())
}

/// What `read_batches` returns, events per type in row order (checked
/// equal to `read_table` on two threads), and whether `read_table`
/// concatenated its ranges.
fn batches(
    inputs: &[PathBuf],
    spec: &ReadSpec,
) -> ([Vec<OwnedEvent>; 4], floxlog_arrow::ReadSummary, bool) {
    let tape = Tape::open(inputs, OpenOptions::default()).unwrap();
    let symbols = Symbols::from_tape(&tape);
    let mut opened = Session::open(tape, spec.request());
    let mut got: [Vec<OwnedEvent>; 4] = Default::default();
    let summary = read_batches(&mut opened, spec, &symbols, &mut |rt, b: RecordBatch| {
        assert!(b.num_rows() <= spec.limits.rows, "batch over the row bound");
        assert!(b.num_rows() > 0, "empty batch");
        assert_eq!(b.schema(), rt.schema());
        for_each_event(rt, &b, &mut |ev| {
            assert_eq!(type_of(ev), rt);
            got[rt as usize].push(OwnedEvent::from_event(ev));
            Ok(())
        })?;
        Ok(())
    })
    .unwrap();
    // The whole-table read (segments on two threads) has the same rows.
    let tape = Tape::open(inputs, OpenOptions::default()).unwrap();
    // Ranges of about 2 KiB: most segments are split at index entries.
    let split = ReadSpec {
        min_chunk_bytes: 2 << 10,
        ..spec.clone()
    };
    let mut opened = Session::open(tape, split.request());
    let (table, tsum) = read_table(&mut opened, &split, &symbols, 2).unwrap();
    let mut again: [Vec<OwnedEvent>; 4] = Default::default();
    for (rt, b) in &table {
        for_each_event(*rt, b, &mut |ev| {
            again[*rt as usize].push(OwnedEvent::from_event(ev));
            Ok(())
        })
        .unwrap();
    }
    assert!(again == got, "read_table differs from read_batches");
    assert_eq!(tsum.rows, summary.rows);
    same_problems(&tsum.problems, &summary.problems);
    (got, summary, tsum.direct)
}

fn same_problems(a: &[Problem], b: &[Problem]) {
    let key = |p: &Problem| (p.segment, p.error, p.events_before, p.tolerated);
    let mut a: Vec<_> = a.iter().map(key).collect();
    let mut b: Vec<_> = b.iter().map(key).collect();
    a.sort_by_key(|k| (k.0, k.2));
    b.sort_by_key(|k| (k.0, k.2));
    assert_eq!(a, b, "problems differ");
}

/// Compares both readers over every order and a set of filters; returns
/// whether `read_table` concatenated its ranges for the unfiltered
/// time-order read (rather than reading again on one thread).
fn check_equal(inputs: &[PathBuf], rows: usize) -> bool {
    let filters = [
        Filter::default(),
        Filter {
            from: Some(1_000_000 + 300 * STEP),
            to: Some(1_000_000 + 1_700 * STEP),
            ..Filter::default()
        },
        Filter {
            symbols: Some(vec![2, 3]),
            types: Some(RecordType::Trade.type_mask()),
            ..Filter::default()
        },
        Filter {
            types: Some(RecordType::Book.type_mask()),
            from: Some(1_000_000 + 1_000 * STEP),
            ..Filter::default()
        },
    ];
    let mut direct = false;
    for order in [Order::Time, Order::File] {
        for (fi, filter) in filters.iter().enumerate() {
            let cfg = Request {
                order,
                filter: filter.clone(),
                ..Request::default()
            };
            let (want, want_problems) = general(inputs, &cfg);
            let spec = ReadSpec {
                order,
                filter: filter.clone(),
                limits: Limits::rows(rows),
                ..ReadSpec::default()
            };
            let (got, summary, concatenated) = batches(inputs, &spec);
            for rt in RecordType::ALL {
                let want_rt: Vec<_> = want
                    .iter()
                    .filter(|e| type_of(&e.as_event()) == rt)
                    .cloned()
                    .collect();
                assert_eq!(
                    got[rt as usize].len(),
                    want_rt.len(),
                    "{order:?} filter {fi}: {} count",
                    rt.name()
                );
                assert!(
                    got[rt as usize] == want_rt,
                    "{order:?} filter {fi}: {} rows differ",
                    rt.name()
                );
                assert_eq!(summary.rows_of(rt), want_rt.len() as u64);
            }
            same_problems(&summary.problems, &want_problems);
            if order == Order::Time && fi == 0 {
                direct = concatenated;
            }
        }
    }
    direct
}

#[test]
fn in_order_uncompressed_reference_tape_is_read_in_concatenated_ranges() {
    // The reference never sets Sorted on uncompressed segments: the
    // timestamps-only pass proves them in order. Rotation gives several.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("tape");
    write_tape(
        &d,
        0..2_000,
        Compression::None,
        Profile::Reference,
        false,
        32 << 10,
    );
    assert!(
        Tape::open(std::slice::from_ref(&d), OpenOptions::default())
            .unwrap()
            .segments
            .len()
            > 3
    );
    assert!(check_equal(&[d], 100), "expected the ranges concatenated");
}

#[test]
fn out_of_order_uncompressed_tape_is_read_again_in_time_order() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("tape");
    write_tape(
        &d,
        0..2_000,
        Compression::None,
        Profile::Reference,
        true,
        1 << 30,
    );
    assert!(
        !check_equal(&[d], 333),
        "jittered timestamps need the reorder buffer"
    );
}

#[test]
fn overlapping_sorted_lz4_tapes_are_merged() {
    // Two tapes interleaved in time: even and odd events.
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    let b = t.path().join("b");
    write_tape(
        &a,
        (0..2_000).step_by(2),
        Compression::Lz4,
        Profile::Reference,
        false,
        1 << 30,
    );
    write_tape(
        &b,
        (1..2_000).step_by(2),
        Compression::Lz4,
        Profile::Spec,
        false,
        8 << 10,
    );
    assert!(
        !check_equal(&[a, b], 64),
        "interleaved tapes cannot be concatenated in time order"
    );
}

#[test]
fn jittered_lz4_blocks_and_uncompressed_mixed() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    let b = t.path().join("b");
    write_tape(
        &a,
        0..1_500,
        Compression::Lz4,
        Profile::Reference,
        true,
        1 << 30,
    );
    write_tape(
        &b,
        500..2_000,
        Compression::None,
        Profile::Spec,
        false,
        16 << 10,
    );
    check_equal(&[a, b], 1_000);
}

#[test]
fn damaged_and_torn_segments_report_the_same_problems() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("tape");
    write_tape(
        &d,
        0..2_000,
        Compression::None,
        Profile::Spec,
        false,
        16 << 10,
    );
    let tape = Tape::open(std::slice::from_ref(&d), OpenOptions::default()).unwrap();
    // Flip a byte in the middle of the second segment (a CRC error there),
    // and cut the last segment short.
    let second = &tape.segments[1].path;
    let mut bytes = std::fs::read(second).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(second, bytes).unwrap();
    let last = &tape.segments.last().unwrap().path;
    let bytes = std::fs::read(last).unwrap();
    std::fs::write(last, &bytes[..bytes.len() - 30]).unwrap();
    check_equal(std::slice::from_ref(&d), 77);
    let (_, summary, _) = batches(&[d], &ReadSpec::default());
    assert!(summary.error(false).is_some(), "the CRC error is an error");
}

#[test]
fn symbol_names_come_from_the_metadata() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("tape");
    let mut w = TapeWriter::create(&d, TapeWriterConfig::default()).unwrap();
    w.set_metadata(serde_json::json!({"symbols": [{"symbol_id": 1, "name": "BTCUSDT"}]}));
    for i in 0..50 {
        w.append(&mixed_event(3, i).as_event()).unwrap();
    }
    w.close().unwrap();
    let tape = Tape::open(&[d], OpenOptions::default()).unwrap();
    let symbols = Symbols::from_tape(&tape);
    assert_eq!(symbols.name(1), Some("BTCUSDT"), "metadata not read");
    let mut opened = Session::open(tape, ReadSpec::default().request());
    let mut named = 0;
    read_batches(&mut opened, &ReadSpec::default(), &symbols, &mut |_, b| {
        let ids = b.column_by_name("symbol_id").unwrap();
        let ids = ids
            .as_any()
            .downcast_ref::<arrow_array::UInt32Array>()
            .unwrap();
        let sym = b.column_by_name("symbol").unwrap();
        for i in 0..b.num_rows() {
            assert_eq!(
                arrow_array::Array::is_valid(sym.as_ref(), i),
                ids.value(i) == 1
            );
            named += usize::from(ids.value(i) == 1);
        }
        Ok(())
    })
    .unwrap();
    assert!(named > 0);
}

#[test]
fn conformance_corpus_as_batches_equals_expected() {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance");
    let root = Corpus::root_from_env(&default);
    let corpus = Corpus::load(&root).unwrap();
    assert!(
        !corpus.cases.is_empty(),
        "no cases under {}",
        root.display()
    );
    for case in corpus.cases.iter().chain(&corpus.real) {
        let expected = events_of(&read_jsonl(&case.expected_path).unwrap()).unwrap();
        let inputs: Vec<PathBuf> = case.segments.iter().map(|s| s.path.clone()).collect();
        let spec = ReadSpec {
            order: Order::File,
            read: ReadOptions::default(),
            ..ReadSpec::default()
        };
        let (got, summary, _) = batches(&inputs, &spec);
        assert!(
            summary.problems.is_empty(),
            "{}: {:?}",
            case.name,
            summary.problems
        );
        for rt in RecordType::ALL {
            let want: Vec<_> = expected
                .iter()
                .filter(|e| type_of(&e.as_event()) == rt)
                .cloned()
                .collect();
            assert!(
                got[rt as usize] == want,
                "{}: {} rows differ from expected.jsonl",
                case.name,
                rt.name()
            );
        }
        // And merged in time order, as the general reader merges.
        check_time_order_against_general(&inputs, &case.name);
    }
}

fn check_time_order_against_general(inputs: &[PathBuf], name: &str) {
    let (want, _) = general(inputs, &Request::default());
    let (got, _, _) = batches(inputs, &ReadSpec::default());
    for rt in RecordType::ALL {
        let want_rt: Vec<_> = want
            .iter()
            .filter(|e| type_of(&e.as_event()) == rt)
            .cloned()
            .collect();
        assert!(
            got[rt as usize] == want_rt,
            "{name}: time order, {}",
            rt.name()
        );
    }
}

#[test]
fn read_table_splits_a_segment_at_its_index() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("tape");
    write_tape(
        &d,
        0..4_000,
        Compression::Lz4,
        Profile::Reference,
        false,
        1 << 30,
    );
    let inputs = [d];
    let tape = Tape::open(&inputs, OpenOptions::default()).unwrap();
    assert_eq!(tape.segments.len(), 1);
    let symbols = Symbols::from_tape(&tape);
    let spec = ReadSpec {
        limits: Limits::rows(1 << 20),
        min_chunk_bytes: 4 << 10,
        filter: Filter {
            types: Some(RecordType::Trade.type_mask()),
            ..Filter::default()
        },
        ..ReadSpec::default()
    };
    let mut opened = Session::open(tape, spec.request());
    let (table, summary) = read_table(&mut opened, &spec, &symbols, 2).unwrap();
    assert!(summary.direct);
    assert!(table.len() > 3, "one batch per range: {}", table.len());
    // And the rows are those of the general reader, in order.
    let (got, _, _) = batches(&inputs, &spec);
    let mut again = Vec::new();
    for (rt, b) in &table {
        for_each_event(*rt, b, &mut |ev| {
            again.push(OwnedEvent::from_event(ev));
            Ok(())
        })
        .unwrap();
    }
    assert!(again == got[RecordType::Trade as usize]);
}
