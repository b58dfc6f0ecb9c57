//! The Arrow front ends over the floxlog read engine: `read_batches`
//! (trade columns by the batch kernel), `read_table` on one
//! thread and on two (the engine's ranges, trade columns by the core's
//! column kernel) give exactly what a read session's cursor gives, events and
//! problems (error kind, offset, events before), in file and time order,
//! with filters, over long runs of trades, damaged segments and a
//! segment whose Sorted flag lies.

use floxlog::core::{Compression, Profile, ReadOptions, SegmentHeader, WriterConfig};
use floxlog::owned::OwnedEvent;
use floxlog::synth::mixed_event;
use floxlog::tape::read::{Problem, Session};
use floxlog::tape::{Filter, Layout, OpenOptions, Order, Tape, TapeWriter, TapeWriterConfig};
use floxlog_arrow::{
    for_each_event, read_batches, read_table, Limits, ReadSpec, RecordType, Symbols,
};
use std::path::{Path, PathBuf};

/// Writes `n` events, mostly trades (every 97th of another type), at
/// `ts(i)`, in segments of about `seg_bytes`.
fn write(dir: &Path, n: u64, compression: Compression, seg_bytes: u64, ts: &dyn Fn(u64) -> i64) {
    let cfg = TapeWriterConfig {
        layout: Layout::Flox,
        segment: WriterConfig {
            compression,
            index_interval: 64,
            profile: Profile::Spec,
            ..WriterConfig::default()
        },
        max_segment_bytes: seg_bytes,
        created_ns: Some(1),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(dir, cfg).unwrap();
    let mut other = 0;
    for i in 0..n {
        let mut ev = if i % 97 == 96 {
            // The next event of another type than trade.
            loop {
                other += 1;
                let e = mixed_event(3, other);
                if !matches!(e, OwnedEvent::Trade(_)) {
                    break e;
                }
            }
        } else {
            let mut t = floxlog::core::Trade {
                symbol_id: 1 + (i % 5) as u32,
                price_raw: 100 + i as i64,
                qty_raw: 7,
                trade_id: i,
                ..Default::default()
            };
            t.recv_ts_ns = i as i64;
            OwnedEvent::Trade(t)
        };
        match &mut ev {
            OwnedEvent::Trade(t) => t.exchange_ts_ns = ts(i),
            OwnedEvent::Book(b) => b.head.exchange_ts_ns = ts(i),
            OwnedEvent::OptionQuote(q) => q.exchange_ts_ns = ts(i),
            OwnedEvent::PoolState(p) => p.head.exchange_ts_ns = ts(i),
        }
        w.append(&ev.as_event()).unwrap();
    }
    w.close().unwrap();
}

fn key(p: &Problem) -> (usize, floxlog::core::Error, u64, bool) {
    (p.segment, p.error, p.events_before, p.tolerated)
}

fn keys(ps: &[Problem]) -> Vec<(usize, floxlog::core::Error, u64, bool)> {
    let mut v: Vec<_> = ps.iter().map(key).collect();
    v.sort_by_key(|k| (k.0, k.2));
    v
}

/// Events by type, in order, and problems.
type Got = (
    [Vec<OwnedEvent>; 4],
    Vec<(usize, floxlog::core::Error, u64, bool)>,
);

fn by_type(events: impl IntoIterator<Item = OwnedEvent>) -> [Vec<OwnedEvent>; 4] {
    let mut out: [Vec<OwnedEvent>; 4] = Default::default();
    for e in events {
        let rt = RecordType::of_frame_type(e.as_event().frame_type()).unwrap();
        out[rt as usize].push(e);
    }
    out
}

fn tape_reader(inputs: &[PathBuf], spec: &ReadSpec) -> Got {
    let tape = Tape::open(inputs, OpenOptions::default()).unwrap();
    let mut session = Session::open(tape, spec.request());
    let mut r = session.cursor();
    let mut out = Vec::new();
    while let Some(it) = r.next_event().unwrap() {
        out.push(OwnedEvent::from_event(&it.event));
    }
    (by_type(out), keys(r.problems()))
}

fn arrow(inputs: &[PathBuf], spec: &ReadSpec, jobs: Option<usize>) -> Got {
    let tape = Tape::open(inputs, OpenOptions::default()).unwrap();
    let symbols = Symbols::from_tape(&tape);
    let mut opened = Session::open(tape, spec.request());
    let mut batches = Vec::new();
    let summary = match jobs {
        None => read_batches(&mut opened, spec, &symbols, &mut |rt, b| {
            batches.push((rt, b));
            Ok(())
        })
        .unwrap(),
        Some(j) => {
            let (t, s) = read_table(&mut opened, spec, &symbols, j).unwrap();
            batches = t;
            s
        }
    };
    let mut out: [Vec<OwnedEvent>; 4] = Default::default();
    for (rt, b) in &batches {
        assert!(b.num_rows() <= spec.limits.rows);
        for_each_event(*rt, b, &mut |ev| {
            out[*rt as usize].push(OwnedEvent::from_event(ev));
            Ok(())
        })
        .unwrap();
    }
    for rt in RecordType::ALL {
        assert_eq!(summary.rows_of(rt), out[rt as usize].len() as u64);
    }
    (out, keys(&summary.problems))
}

/// Every front end equals the session's cursor for both orders and a few filters.
fn check(inputs: &[PathBuf], read: ReadOptions, min_chunk_bytes: u64) {
    check_filters(inputs, read, min_chunk_bytes, &default_filters());
}

fn default_filters() -> Vec<Filter> {
    vec![
        Filter::default(),
        Filter {
            types: Some(RecordType::Trade.type_mask()),
            ..Filter::default()
        },
        Filter {
            symbols: Some(vec![2, 4]),
            ..Filter::default()
        },
        Filter {
            from: Some(3_000),
            to: Some(40_000),
            ..Filter::default()
        },
        // A time filter without a seek: ranges are cut, and the read
        // relies on (so checks) the Sorted flag in file order too.
        Filter {
            to: Some(150_000),
            ..Filter::default()
        },
    ]
}

/// Every front end equals the session's cursor for both orders and `filters`.
fn check_filters(inputs: &[PathBuf], read: ReadOptions, min_chunk_bytes: u64, filters: &[Filter]) {
    for order in [Order::File, Order::Time] {
        for (fi, filter) in filters.iter().enumerate() {
            for rows in [1_000, 1 << 16] {
                let spec = ReadSpec {
                    order,
                    filter: filter.clone(),
                    limits: Limits::rows(rows),
                    read,
                    min_chunk_bytes,
                    ..ReadSpec::default()
                };
                let want = tape_reader(inputs, &spec);
                let what = format!("{order:?} filter {fi} rows {rows} chunk {min_chunk_bytes}");
                assert!(
                    want.0.iter().map(Vec::len).sum::<usize>() > 0,
                    "{what}: empty"
                );
                for (name, jobs) in [("read_batches", None), ("-j1", Some(1)), ("-j2", Some(2))] {
                    let got = arrow(inputs, &spec, jobs);
                    assert!(
                        got.0 == want.0,
                        "{what}: {name} events differ from the cursor"
                    );
                    assert_eq!(got.1, want.1, "{what}: {name} problems differ");
                }
            }
        }
    }
}

#[test]
fn long_trade_runs_damaged_segments_both_codecs() {
    let t = tempfile::tempdir().unwrap();
    let codecs = [
        ("none", Compression::None, 192 << 10),
        ("lz4", Compression::Lz4, 24 << 10),
    ];
    for (name, comp, seg_bytes) in codecs {
        let d = t.path().join(name);
        write(&d, 12_000, comp, seg_bytes, &|i| i as i64 * 10);
        let tape = Tape::open(std::slice::from_ref(&d), OpenOptions::default()).unwrap();
        assert!(
            tape.segments.len() >= 3,
            "{name}: {} segments",
            tape.segments.len()
        );
        // A flipped byte in the middle of the second segment (a CRC error
        // inside a run of trades), the last segment cut short.
        let second = &tape.segments[1].path;
        let mut bytes = std::fs::read(second).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x55;
        std::fs::write(second, bytes).unwrap();
        let last = &tape.segments.last().unwrap().path;
        let bytes = std::fs::read(last).unwrap();
        std::fs::write(last, &bytes[..bytes.len() - 30]).unwrap();
        check(std::slice::from_ref(&d), ReadOptions::default(), 8 << 10);
        let off = ReadOptions {
            verify_crc: false,
            ..ReadOptions::default()
        };
        check(&[d], off, 8 << 10);
    }
}

#[test]
fn a_sorted_flag_that_lies_stops_every_front_end_at_the_same_event() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("tape");
    // In order but for one step back at event 1_024 (an index entry, so a
    // possible cut point of the ranges); the writer does not flag it
    // Sorted, the test does.
    write(&d, 2_000, Compression::None, 1 << 30, &|i| {
        if i < 1_024 {
            i as i64 * 100
        } else {
            i as i64 * 100 - 5_000
        }
    });
    let tape = Tape::open(std::slice::from_ref(&d), OpenOptions::default()).unwrap();
    assert_eq!(tape.segments.len(), 1);
    let path = &tape.segments[0].path;
    let mut bytes = std::fs::read(path).unwrap();
    let mut h = SegmentHeader::parse(&bytes).unwrap();
    h.flags |= floxlog::core::segment_header::flags::SORTED;
    let mut out = [0u8; 64];
    h.emit(&mut out);
    bytes[..64].copy_from_slice(&out);
    std::fs::write(path, bytes).unwrap();
    // Ranges cut in many places: some at the step back, some around it.
    for chunk in (2..=40).map(|k| k << 10) {
        check(std::slice::from_ref(&d), ReadOptions::default(), chunk);
    }
}

#[test]
fn a_cut_short_segment_stopped_at_to_in_an_earlier_range_is_still_cut_short() {
    use floxlog::core::segment_header::flags;
    use floxlog::core::Segment;
    let t = tempfile::tempdir().unwrap();
    for (name, comp) in [("none", Compression::None), ("lz4", Compression::Lz4)] {
        let d = t.path().join(name);
        // ts 10 * i: the last segment's events come last in time too.
        write(&d, 12_000, comp, 192 << 10, &|i| i as i64 * 10);
        let tape = Tape::open(std::slice::from_ref(&d), OpenOptions::default()).unwrap();
        assert!(tape.segments.len() >= 2, "{name}");
        let last = tape.segments.last().unwrap();
        assert!(last.listed.is_some(), "{name}: no listing");
        let mut bytes = std::fs::read(&last.path).unwrap();
        let seg = Segment::parse(&bytes).unwrap();
        // Frame (block) boundaries and the first events' timestamp.
        let cuts: Vec<u64> = if seg.is_compressed() {
            seg.blocks().map(|b| b.unwrap().offset).collect()
        } else {
            let mut r = seg.reader(ReadOptions::default(), &mut []);
            std::iter::from_fn(|| r.next_item().unwrap().map(|it| it.position.offset)).collect()
        };
        let mut scratch = vec![0u8; seg.scratch_len()];
        let first_ts = seg
            .reader(ReadOptions::default(), &mut scratch)
            .next_item()
            .unwrap()
            .unwrap()
            .event
            .exchange_ts_ns();
        // Cut at a boundary about two thirds in (frames intact, fewer
        // than the listing and the header count), the index gone from the
        // header (so the segment is cut into ranges), flagged Sorted (so
        // the read stops at `to`).
        let cut = cuts[cuts.len() * 2 / 3] as usize;
        let mut h = *seg.header();
        bytes.truncate(cut);
        h.flags = (h.flags & !flags::HAS_INDEX) | flags::SORTED;
        h.index_offset = 0;
        let mut out = [0u8; 64];
        h.emit(&mut out);
        bytes[..64].copy_from_slice(&out);
        std::fs::write(&last.path, &bytes).unwrap();
        // `to` a few hundred events into the segment: in its first range.
        let filters = [Filter {
            to: Some(first_ts + 3_000),
            ..Filter::default()
        }];
        let spec = ReadSpec {
            filter: filters[0].clone(),
            ..ReadSpec::default()
        };
        let (_, problems) = tape_reader(std::slice::from_ref(&d), &spec);
        let seg_no = tape.segments.len() - 1;
        assert!(
            problems.iter().any(|p| p.0 == seg_no && !p.3),
            "{name}: the cursor finds no cut: {problems:?}"
        );
        check_filters(
            std::slice::from_ref(&d),
            ReadOptions::default(),
            8 << 10,
            &filters,
        );
    }
}

#[test]
fn a_whole_table_of_long_trade_runs_is_built_in_large_columns_and_sliced() {
    // Enough trades in one range for read_table's trade batches to grow
    // past the default (64 Ki, 128 Ki, 256 Ki rows: the last ones in
    // mapped columns of 2 MiB and more) before being sliced to the row
    // bound; every 97th event of another type splits the runs.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("tape");
    write(&d, 420_000, Compression::None, 1 << 30, &|i| i as i64 * 10);
    let inputs = [d];
    for order in [Order::File, Order::Time] {
        for rows in [1_000, 1 << 21] {
            let spec = ReadSpec {
                order,
                limits: Limits::rows(rows),
                min_chunk_bytes: 1 << 30,
                ..ReadSpec::default()
            };
            let want = tape_reader(&inputs, &spec);
            assert!(want.0[RecordType::Trade as usize].len() > 410_000);
            for jobs in [Some(1), Some(2)] {
                let got = arrow(&inputs, &spec, jobs);
                assert!(
                    got.0 == want.0,
                    "{order:?} rows {rows} -j{jobs:?}: events differ"
                );
                assert_eq!(got.1, want.1);
            }
        }
    }
}

/// Whether `read_table` on two threads took the ranges (and not the
/// one-pass read), with its events by type.
fn table_direct(d: &Path, min_chunk_bytes: u64) -> (bool, [Vec<OwnedEvent>; 4]) {
    let tape = Tape::open(&[d.to_path_buf()], OpenOptions::default()).unwrap();
    let symbols = Symbols::from_tape(&tape);
    let spec = ReadSpec {
        min_chunk_bytes,
        ..ReadSpec::default()
    };
    let mut opened = Session::open(tape, spec.request());
    let (t, s) = read_table(&mut opened, &spec, &symbols, 2).unwrap();
    let mut out: [Vec<OwnedEvent>; 4] = Default::default();
    for (rt, b) in &t {
        for_each_event(*rt, b, &mut |ev| {
            out[*rt as usize].push(OwnedEvent::from_event(ev));
            Ok(())
        })
        .unwrap();
    }
    (s.direct, out)
}

#[test]
fn index_entries_off_the_frame_chain_send_the_table_read_to_one_pass() {
    use floxlog::core::Segment;
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("tape");
    write(&d, 12_000, Compression::None, 1 << 30, &|i| i as i64 * 10);
    let tape = Tape::open(std::slice::from_ref(&d), OpenOptions::default()).unwrap();
    let path = tape.segments[0].path.clone();
    let honest = tape_reader(std::slice::from_ref(&d), &ReadSpec::default()).0;
    // Cut at the index entries on trust, proven by the reads: the ranges.
    let (direct, got) = table_direct(&d, 8 << 10);
    assert!(direct, "an honest index is read in ranges");
    assert!(got == honest);
    // Every entry from the second on moved one byte into its frame, the
    // index CRC made right again: structurally fine, off the chain.
    let mut seg = std::fs::read(&path).unwrap();
    let at = SegmentHeader::parse(&seg).unwrap().index_offset as usize;
    let n = Segment::parse(&seg)
        .unwrap()
        .index_unproven()
        .unwrap()
        .unwrap()
        .len();
    assert!(n > 20, "{n} entries");
    for k in 1..n {
        let e = at + 32 + k * 16 + 8;
        let moved = u64::from_le_bytes(seg[e..e + 8].try_into().unwrap()) + 1;
        seg[e..e + 8].copy_from_slice(&moved.to_le_bytes());
    }
    let crc = floxlog::core::crc32::crc32(&seg[at + 32..at + 32 + n * 16]);
    seg[at + 12..at + 16].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &seg).unwrap();
    let s = Segment::parse(&seg).unwrap();
    assert!(s.index().is_err(), "the moved entries fail the proof");
    let (direct, got) = table_direct(&d, 8 << 10);
    assert!(!direct, "cuts the reads do not prove: one pass");
    assert!(got == honest, "the same events as the honest tape");
    // Every front end as the cursor, CRCs checked or not (unchecked, a
    // range started inside a frame may decode garbage: never returned).
    check(std::slice::from_ref(&d), ReadOptions::default(), 8 << 10);
    let off = ReadOptions {
        verify_crc: false,
        ..ReadOptions::default()
    };
    check(&[d], off, 8 << 10);
}
