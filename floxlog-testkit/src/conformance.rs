//! Runs a conformance corpus through this implementation: the writer's bytes
//! against the reference segments, the reader's events against
//! `expected.jsonl`, and each damaged segment's outcome.

use crate::corpus::{read_jsonl, Case, Corpus, CorruptCase, Expect};
use floxlog::json::{event_from_value, event_to_value, PriceStyle};
use floxlog::read::{block_scratch, for_each_item};
use floxlog::segment::encode_segments;
use floxlog_core::{BlockHeader, Index, ReadOptions, Segment, SegmentHeader, WriterConfig};
use serde_json::Value;

/// Outcome of a run.
#[derive(Debug, Default)]
pub struct Report {
    /// Names of the checks that passed.
    pub passed: Vec<String>,
    /// (check, why) of the checks that failed.
    pub failed: Vec<(String, String)>,
}

impl Report {
    fn record(&mut self, name: String, r: Result<(), String>) {
        match r {
            Ok(()) => self.passed.push(name),
            Err(why) => self.failed.push((name, why)),
        }
    }

    /// `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed.len(), self.failed.len())
    }
}

/// Runs every check of the corpus.
pub fn run(corpus: &Corpus) -> Report {
    let mut rep = Report::default();
    for case in &corpus.cases {
        if case.writer.is_some() && case.events_path.is_some() {
            rep.record(format!("write/{}", case.name), check_write(case));
        }
        rep.record(format!("read/{}", case.name), check_read(case));
    }
    for case in &corpus.real {
        rep.record(format!("read/real/{}", case.name), check_read(case));
    }
    for c in &corpus.corrupt {
        rep.record(format!("corrupt/{}", c.name), check_corrupt(c));
    }
    rep
}

fn read_file(p: &std::path::Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// Writes the case's input events with its settings and compares segments.
pub fn check_write(case: &Case) -> Result<(), String> {
    let w = case.writer.as_ref().ok_or("case has no writer settings")?;
    let path = case
        .events_path
        .as_ref()
        .ok_or("case has no events.jsonl")?;
    let events = read_jsonl(path)?
        .iter()
        .map(event_from_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let cfg = WriterConfig {
        compression: w.compression,
        create_index: w.create_index,
        index_interval: w.index_interval,
        exchange_id: w.exchange_id,
        ..WriterConfig::default()
    };
    let created: Vec<i64> = case
        .segments
        .iter()
        .map(|s| s.created_ns.unwrap_or(0))
        .collect();
    let ours = encode_segments(
        cfg,
        events.iter().map(|e| e.as_event()),
        w.max_segment_bytes,
        |i| created.get(i).copied().unwrap_or(0),
    )
    .map_err(|e| format!("writer failed: {e}"))?;
    if ours.len() != case.segments.len() {
        return Err(format!(
            "wrote {} segments, the reference {}",
            ours.len(),
            case.segments.len()
        ));
    }
    for (i, (mine, seg)) in ours.iter().zip(&case.segments).enumerate() {
        let theirs = read_file(&seg.path)?;
        let r = if case.byte_exact {
            compare_exact(mine, &theirs)
        } else {
            compare_lz4(mine, &theirs)
        };
        r.map_err(|e| format!("segment {i} ({}): {e}", seg.path.display()))?;
    }
    Ok(())
}

fn compare_exact(mine: &[u8], theirs: &[u8]) -> Result<(), String> {
    if mine == theirs {
        return Ok(());
    }
    let at = mine
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(mine.len().min(theirs.len()));
    Err(format!(
        "bytes differ at offset {at} (ours {} bytes, reference {} bytes)",
        mine.len(),
        theirs.len()
    ))
}

struct BlockInfo {
    offset: u64,
    header: BlockHeader,
    bytes: Vec<u8>,
}

fn blocks(data: &[u8]) -> Result<Vec<BlockInfo>, String> {
    let seg = Segment::parse(data).map_err(|e| e.to_string())?;
    let mut scratch = block_scratch(&seg);
    let mut v = Vec::new();
    for b in seg.blocks() {
        let b = b.map_err(|e| e.to_string())?;
        let bytes = b.decompress(&mut scratch).map_err(|e| e.to_string())?;
        v.push(BlockInfo {
            offset: b.offset,
            header: b.header,
            bytes: bytes.to_vec(),
        });
    }
    Ok(v)
}

/// The corpus's rule for LZ4 segments: everything but the compressed bytes
/// (and offsets that follow from them) must match.
pub fn compare_lz4(mine: &[u8], theirs: &[u8]) -> Result<(), String> {
    let hm = SegmentHeader::parse(mine).map_err(|e| format!("ours: {e}"))?;
    let ht = SegmentHeader::parse(theirs).map_err(|e| format!("reference: {e}"))?;
    let strip = |h: SegmentHeader| SegmentHeader {
        index_offset: 0,
        ..h
    };
    if strip(hm) != strip(ht) {
        return Err(format!("headers differ: ours {hm:?}, reference {ht:?}"));
    }
    let bm = blocks(mine).map_err(|e| format!("ours: {e}"))?;
    let bt = blocks(theirs).map_err(|e| format!("reference: {e}"))?;
    if bm.len() != bt.len() {
        return Err(format!("{} blocks, reference {}", bm.len(), bt.len()));
    }
    for (i, (a, b)) in bm.iter().zip(&bt).enumerate() {
        let (x, y) = (a.header, b.header);
        if (x.original_size, x.event_count, x.flags) != (y.original_size, y.event_count, y.flags) {
            return Err(format!(
                "block {i} header differs: ours {x:?}, reference {y:?}"
            ));
        }
        if a.bytes != b.bytes {
            return Err(format!("block {i} decompressed bytes differ"));
        }
    }
    let im = Index::parse(mine, &hm).map_err(|e| format!("ours: {e}"))?;
    let it = Index::parse(theirs, &ht).map_err(|e| format!("reference: {e}"))?;
    match (im, it) {
        (None, None) => Ok(()),
        (Some(a), Some(b)) => {
            let (x, y) = (a.header(), b.header());
            let strip =
                |h: &floxlog_core::IndexHeader| floxlog_core::IndexHeader { crc32: 0, ..*h };
            if strip(x) != strip(y) {
                return Err(format!("index headers differ: ours {x:?}, reference {y:?}"));
            }
            for (i, (ea, eb)) in a.iter().zip(b.iter()).enumerate() {
                if ea.timestamp_ns != eb.timestamp_ns {
                    return Err(format!("index entry {i} timestamp differs"));
                }
                if !bm.iter().any(|blk| blk.offset == ea.file_offset) {
                    return Err(format!("index entry {i} does not point at a block header"));
                }
            }
            Ok(())
        }
        _ => Err("one segment has an index and the other not".into()),
    }
}

/// Reads a case's segments in order and compares with `expected.jsonl`.
pub fn check_read(case: &Case) -> Result<(), String> {
    let expected = read_jsonl(&case.expected_path)?;
    let mut got: Vec<Value> = Vec::with_capacity(expected.len());
    for seg in &case.segments {
        let data = read_file(&seg.path)?;
        for_each_item(&data, ReadOptions::default(), |it| {
            got.push(event_to_value(&it.event, PriceStyle::Raw))
        })
        .map_err(|(n, e)| format!("{}: after {n} events: {e}", seg.path.display()))?;
    }
    compare_events(&got, &expected)
}

/// Compares event lists line by line.
pub fn compare_events(got: &[Value], expected: &[Value]) -> Result<(), String> {
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        if g != e {
            return Err(format!(
                "event {i} differs:\n  ours     {g}\n  expected {e}"
            ));
        }
    }
    if got.len() != expected.len() {
        return Err(format!(
            "read {} events, expected {}",
            got.len(),
            expected.len()
        ));
    }
    Ok(())
}

/// Checks a damaged segment's outcome under a strict reader.
pub fn check_corrupt(c: &CorruptCase) -> Result<(), String> {
    let data = read_file(&c.segment)?;
    let outcome = for_each_item(&data, ReadOptions::default(), |_| {});
    match (&c.expect, outcome) {
        (
            Expect::Error {
                events,
                kind,
                offset,
            },
            Err((n, e)),
        ) => {
            if n != *events || e.kind != *kind || e.offset != *offset {
                return Err(format!(
                    "expected {events} events then {kind} at {offset}; got {n} events then {e}"
                ));
            }
            Ok(())
        }
        (Expect::Error { kind, .. }, Ok(n)) => {
            Err(format!("expected {kind}, read {n} events without error"))
        }
        (Expect::IndexError { events, kind }, Ok(n)) => {
            if n != *events {
                return Err(format!("expected {events} events, read {n}"));
            }
            let seg = Segment::parse(&data).map_err(|e| e.to_string())?;
            match seg.index() {
                Err(e) if e.kind == *kind => Ok(()),
                Err(e) => Err(format!("expected index error {kind}, got {e}")),
                Ok(_) => Err(format!("expected index error {kind}, index is fine")),
            }
        }
        (Expect::IndexError { .. }, Err((n, e))) => {
            Err(format!("sequential read failed after {n} events: {e}"))
        }
    }
}

/// Decodes an event list back to owned events (helper for tests).
pub fn events_of(values: &[Value]) -> Result<Vec<floxlog::OwnedEvent>, String> {
    values
        .iter()
        .map(|v| event_from_value(v).map_err(|e| e.to_string()))
        .collect()
}
