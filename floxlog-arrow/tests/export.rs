//! Export: every event of the tape lands in its partition, nothing else;
//! Parquet and Arrow IPC files read back to the same events; the output
//! appears only when complete.

#![cfg(feature = "export")]

use arrow_array::RecordBatch;
use floxlog::owned::OwnedEvent;
use floxlog::synth::mixed_event;
use floxlog::tape::read::{Request, Session};
use floxlog::tape::{OpenOptions, Tape, TapeWriter, TapeWriterConfig};
use floxlog_arrow::export::{export, Codec, ExportSpec, Format, PARTITION_TYPES};
use floxlog_arrow::{for_each_event, RecordType};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn write_tape(dir: &Path, n: u64) {
    let cfg = TapeWriterConfig {
        max_segment_bytes: 16 << 10,
        created_ns: Some(1),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(dir, cfg).unwrap();
    w.set_metadata(serde_json::json!({"symbols": [
        {"symbol_id": 1, "name": "BTCUSDT"}, {"symbol_id": 2, "name": "ETH/USDT"}]}));
    for i in 0..n {
        let mut ev = mixed_event(11, i);
        // Spread the events over three UTC days.
        let day = 86_400_000_000_000i64 * (i % 3) as i64;
        match &mut ev {
            OwnedEvent::Trade(t) => t.exchange_ts_ns += day,
            OwnedEvent::Book(b) => b.head.exchange_ts_ns += day,
            OwnedEvent::OptionQuote(q) => q.exchange_ts_ns += day,
            OwnedEvent::PoolState(p) => p.head.exchange_ts_ns += day,
        }
        w.append(&ev.as_event()).unwrap();
    }
    w.close().unwrap();
}

fn partition_of(ev: &OwnedEvent) -> &'static str {
    PARTITION_TYPES[ev.as_event().frame_type() as usize - 1]
}

/// Every event of the tape, as sorted debug strings per partition type.
fn tape_events(dir: &Path) -> BTreeMap<&'static str, Vec<String>> {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let mut session = Session::open(tape, Request::default());
    let mut r = session.cursor();
    let mut m: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    while let Some(it) = r.next_event().unwrap() {
        let ev = OwnedEvent::from_event(&it.event);
        m.entry(partition_of(&ev))
            .or_default()
            .push(format!("{ev:?}"));
    }
    m.values_mut().for_each(|v| v.sort());
    m
}

fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn batches_of(path: &Path, format: Format) -> Vec<RecordBatch> {
    let f = std::fs::File::open(path).unwrap();
    match format {
        Format::Parquet => {
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
                .unwrap()
                .build()
                .unwrap()
                .map(|b| b.unwrap())
                .collect()
        }
        Format::Arrow => arrow_ipc::reader::FileReader::try_new(f, None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect(),
        Format::Csv => unreachable!(),
    }
}

/// The events of an exported dataset, checked against their partition
/// directories.
fn dataset_events(
    root: &Path,
    format: Format,
    by_symbol: bool,
) -> BTreeMap<&'static str, Vec<String>> {
    let mut m: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for p in files(root) {
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let parts: Vec<&str> = rel.split('/').collect();
        assert_eq!(parts.len(), if by_symbol { 4 } else { 3 }, "{rel}");
        let ptype = parts[0].strip_prefix("type=").unwrap();
        let ptype = PARTITION_TYPES.iter().find(|t| **t == ptype).unwrap();
        let date = parts[1].strip_prefix("date=").unwrap().to_string();
        let rt = RecordType::from_name(ptype).unwrap();
        for b in batches_of(&p, format) {
            assert_eq!(b.schema().fields(), rt.schema().fields(), "{rel}");
            for_each_event(rt, &b, &mut |ev| {
                let day = ev.exchange_ts_ns().div_euclid(86_400_000_000_000);
                let want = floxlog::time::format_ns(day * 86_400_000_000_000);
                assert_eq!(&want[..10], date, "{rel}: row in the wrong date partition");
                if by_symbol {
                    let s = match ev.symbol_id() {
                        1 => "symbol=BTCUSDT".to_string(),
                        id => format!("symbol={id}"),
                    };
                    assert_eq!(parts[2], s, "{rel}");
                }
                let owned = OwnedEvent::from_event(ev);
                assert_eq!(partition_of(&owned), *ptype, "{rel}");
                m.entry(*ptype).or_default().push(format!("{owned:?}"));
                Ok(())
            })
            .unwrap();
        }
    }
    m.values_mut().for_each(|v| v.sort());
    m
}

#[test]
fn parquet_and_arrow_datasets_hold_every_event_in_its_partition() {
    let t = tempfile::tempdir().unwrap();
    let tape = t.path().join("tape");
    write_tape(&tape, 3_000);
    let want = tape_events(&tape);
    assert_eq!(want.len(), 5, "all five partition types present");
    let listing = Tape::open(std::slice::from_ref(&tape), OpenOptions::default()).unwrap();
    assert!(
        listing.segments.len() > 3,
        "several segments, exported in parallel"
    );
    for (format, by_symbol, codec, min_chunk_bytes) in [
        (Format::Parquet, false, Codec::Zstd(1), 4 << 20),
        (Format::Parquet, true, Codec::None, 2 << 10),
        (Format::Arrow, false, Codec::Zstd(3), 2 << 10),
    ] {
        let out = t.path().join(format!("out-{format:?}-{by_symbol}"));
        let spec = ExportSpec {
            format,
            codec,
            by_symbol,
            rows: 100,
            jobs: 2,
            min_chunk_bytes,
            ..ExportSpec::default()
        };
        let progressed = std::sync::atomic::AtomicU64::new(0);
        let s = export(&listing, &out, &spec, &|n| {
            progressed.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
        assert!(s.problems.is_empty());
        // Each segment's bytes, shared out over its ranges (rounded down).
        let p = progressed.into_inner();
        assert!(
            p <= listing.file_bytes() && p * 10 >= listing.file_bytes() * 9,
            "{p}"
        );
        for (k, name) in PARTITION_TYPES.iter().enumerate() {
            assert_eq!(s.rows[k], want[name].len() as u64, "{name}");
            assert_eq!(s.read_rows[k], s.rows[k]);
        }
        assert_eq!(dataset_events(&out, format, by_symbol), want, "{format:?}");
        // No temporary or lock left behind.
        let leftovers: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        assert!(!files(&out).iter().any(|p| p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with('.')));
    }
}

#[test]
fn an_existing_output_is_kept_unless_overwrite() {
    let t = tempfile::tempdir().unwrap();
    let tape = t.path().join("tape");
    write_tape(&tape, 200);
    let listing = Tape::open(std::slice::from_ref(&tape), OpenOptions::default()).unwrap();
    let out = t.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep"), b"x").unwrap();
    let e = export(&listing, &out, &ExportSpec::default(), &|_| {}).unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");
    assert!(out.join("keep").exists());
    let spec = ExportSpec {
        overwrite: true,
        ..ExportSpec::default()
    };
    let s = export(&listing, &out, &spec, &|_| {}).unwrap();
    assert_eq!(s.total_rows(), 200);
    assert!(!out.join("keep").exists());
}

#[test]
fn a_damaged_segment_is_exported_up_to_the_damage_and_reported() {
    let t = tempfile::tempdir().unwrap();
    let tape = t.path().join("tape");
    write_tape(&tape, 2_000);
    let listing = Tape::open(std::slice::from_ref(&tape), OpenOptions::default()).unwrap();
    let victim = &listing.segments[1].path;
    let mut bytes = std::fs::read(victim).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(victim, bytes).unwrap();
    // Everything the general reader returns before the error is exported,
    // nothing after it, whether the damaged segment is one range or many.
    let mut session = Session::open(listing.clone(), Request::default());
    let mut r = session.cursor();
    let mut want: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    while let Some(it) = r.next_event().unwrap() {
        let ev = OwnedEvent::from_event(&it.event);
        want.entry(partition_of(&ev))
            .or_default()
            .push(format!("{ev:?}"));
    }
    want.values_mut().for_each(|v| v.sort());
    let want_problem = r.problems()[0].clone();
    for (k, min_chunk_bytes) in [4u64 << 20, 1 << 10].into_iter().enumerate() {
        let out = t.path().join(format!("out{k}"));
        let spec = ExportSpec {
            min_chunk_bytes,
            jobs: 2,
            ..ExportSpec::default()
        };
        let s = export(&listing, &out, &spec, &|_| {}).unwrap();
        assert_eq!(s.problems.len(), 1);
        let p = &s.problems[0];
        assert!(!p.tolerated);
        assert!(p.events_before > 0);
        assert_eq!(
            (p.segment, p.error, p.events_before),
            (
                want_problem.segment,
                want_problem.error,
                want_problem.events_before
            )
        );
        assert_eq!(dataset_events(&out, Format::Parquet, false), want);
        assert_eq!(
            s.total_rows(),
            want.values().map(|v| v.len() as u64).sum::<u64>()
        );
    }
}
