//! Runs a conformance corpus through this implementation: the writer's bytes
//! against the reference segments, the reader's events against
//! `expected.jsonl`, and each damaged segment's outcome.

use crate::corpus::{read_jsonl, Case, Corpus, CorruptCase, Expect};
use floxlog::conformance::segments::{compare_exact, compare_lz4};
use floxlog::json::{event_from_value, event_to_value, PriceStyle};
use floxlog::read::for_each_item;
use floxlog::segment::encode_segments;
use floxlog_core::{Profile, ReadOptions, Segment, WriterConfig};
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
    for b in &corpus.broken {
        rep.record(
            format!("{}/{}", b.group.as_str(), b.name),
            Err(b.error.clone()),
        );
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
        index_interval: u16::try_from(w.index_interval)
            .map_err(|_| format!("index_interval {} is past u16", w.index_interval))?,
        exchange_id: u8::try_from(w.exchange_id)
            .map_err(|_| format!("exchange_id {} is past u8", w.exchange_id))?,
        profile: match w.profile.as_str() {
            "spec" => Profile::Spec,
            _ => Profile::Reference,
        },
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
            if n != *events || e.kind.as_str() != kind || e.offset != *offset {
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
                Err(e) if e.kind.as_str() == kind => Ok(()),
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
