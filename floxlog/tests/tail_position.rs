//! Saved tail positions on tapes of several series (the spec layout): a
//! tailer stopped anywhere — inside a segment, inside an LZ4 block, right
//! after a series' segment rolled — and resumed from the saved bytes hands
//! out every later event of every series, once each, in its series' order.

use floxlog::core::{Compression, Event, WriterConfig};
use floxlog::owned::OwnedEvent;
use floxlog::synth::mixed_event;
use floxlog::tape::dir::series_of;
use floxlog::tape::{
    Durability, Layout, SeriesPosition, Tail, TailNext, TailOptions, TailPosition, TailStart,
    TapeWriter, TapeWriterConfig,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const NOW: Option<Duration> = Some(Duration::ZERO);
/// Long enough never to elapse in a passing run.
const PATIENCE: Option<Duration> = Some(Duration::from_secs(60));

fn spec(lz4: bool, journal: bool) -> TapeWriterConfig {
    TapeWriterConfig {
        layout: Layout::Spec,
        journal,
        segment: WriterConfig {
            compression: if lz4 {
                Compression::Lz4
            } else {
                Compression::None
            },
            index_interval: 8,
            ..WriterConfig::default()
        },
        // LZ4 segments hold more events: smaller, so that every series rolls.
        max_segment_bytes: if lz4 { 2048 } else { 4096 },
        durability: Durability::None,
        created_ns: Some(1_000),
        ..TapeWriterConfig::default()
    }
}

fn at(p: TailPosition) -> TailOptions {
    TailOptions {
        start: TailStart::At(p),
        ..TailOptions::default()
    }
}

/// Events per series, in the order handed out.
type BySeries = BTreeMap<&'static str, Vec<OwnedEvent>>;

fn put(by: &mut BySeries, ev: &Event<'_>) {
    by.entry(series_of(ev.frame_type()))
        .or_default()
        .push(OwnedEvent::from_event(ev));
}

/// Takes up to `n` events (fewer if the tail goes quiet).
fn take(t: &mut Tail, n: usize, by: &mut BySeries) -> usize {
    for k in 0..n {
        match t.next(NOW).unwrap() {
            TailNext::Event(ev) => put(by, &ev),
            _ => return k,
        }
    }
    n
}

/// Every event until the tail says something else, and what it said.
fn drain(t: &mut Tail, timeout: Option<Duration>, by: &mut BySeries) -> String {
    loop {
        match t.next(timeout).unwrap() {
            TailNext::Event(ev) => put(by, &ev),
            other => return format!("{other:?}"),
        }
    }
}

/// The position through its saved bytes, as a caller would store it.
fn saved(t: &Tail) -> TailPosition {
    let bytes = t.position().to_bytes().unwrap();
    TailPosition::from_bytes(&bytes).unwrap()
}

fn write(dir: &Path, cfg: TapeWriterConfig, n: u64) {
    let mut w = TapeWriter::create(dir, cfg).unwrap();
    for i in 0..n {
        w.append(&mixed_event(11, i).as_event()).unwrap();
    }
    w.close().unwrap();
}

/// Stopped after every number of events of a closed four-series tape
/// (uncompressed and LZ4, rotating every few events), saved and resumed:
/// each series gets exactly the events a tail from the beginning gets.
/// Among the stops are ones right after a series' segment's last event
/// (a roll), which the test checks it met.
#[test]
fn resumes_a_tape_of_several_series_from_any_event() {
    let d = tempfile::tempdir().unwrap();
    for lz4 in [false, true] {
        let dir = d.path().join(format!("spec-{lz4}"));
        let n = 500u64;
        write(&dir, spec(lz4, false), n);

        // The reference, and each segment's event count (the largest
        // `events` a position names in it).
        let mut want = BySeries::new();
        let mut per_segment: BTreeMap<(String, i64), u64> = BTreeMap::new();
        let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
        loop {
            match t.next(NOW).unwrap() {
                TailNext::Event(ev) => put(&mut want, &ev),
                other => {
                    assert_eq!(format!("{other:?}"), "End");
                    break;
                }
            }
            for s in t.position().series {
                let e = per_segment.entry((s.series, s.created_ns)).or_default();
                *e = (*e).max(s.events);
            }
        }
        assert_eq!(want.values().map(Vec::len).sum::<usize>() as u64, n);
        assert_eq!(want.len(), 4, "four series");
        let segments_of = |s: &str| per_segment.keys().filter(|k| k.0 == s).count();
        assert!(
            want.keys().all(|s| segments_of(s) > 1),
            "each series rotated: {per_segment:?}"
        );

        let mut rolls = 0;
        for stop in 0..=n as usize {
            let mut got = BySeries::new();
            let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
            assert_eq!(take(&mut t, stop, &mut got), stop);
            let p = saved(&t);
            // A series whose segment's last event was just handed out,
            // with a later segment to roll to.
            rolls += p
                .series
                .iter()
                .filter(|s| {
                    per_segment.get(&(s.series.clone(), s.created_ns)) == Some(&s.events)
                        && per_segment
                            .keys()
                            .any(|k| k.0 == s.series && k.1 > s.created_ns)
                })
                .count();
            drop(t);
            let mut again = Tail::open(&dir, at(p.clone())).unwrap();
            assert_eq!(drain(&mut again, NOW, &mut got), "End");
            assert!(got == want, "lz4 {lz4}, stopped after {stop}: {p:?}");
        }
        assert!(rolls > 10, "lz4 {lz4}: only {rolls} stops at a roll");
    }
}

/// A live journal writer: a tailer reads what is there, saves its
/// position and goes; the writer adds events of series that did not exist
/// at the save and rotates; a tailer resumed from the saved bytes gets
/// the rest of every series, each once, in order.
#[test]
fn resumes_a_live_journal_tape_whose_series_grow() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    let mut w = TapeWriter::create(&dir, spec(false, true)).unwrap();
    let trades: Vec<OwnedEvent> = (0..4_000u64)
        .map(|i| mixed_event(5, i))
        .filter(|e| series_of(e.as_event().frame_type()) == "trades")
        .take(200)
        .collect();
    let mut want = BySeries::new();
    for e in &trades[..100] {
        w.append(&e.as_event()).unwrap();
        put(&mut want, &e.as_event());
    }
    let mut got = BySeries::new();
    let mut t = Tail::open(&dir, TailOptions::default()).unwrap();
    assert_eq!(take(&mut t, 60, &mut got), 60);
    let p = saved(&t);
    assert_eq!(p.series.len(), 1, "{p:?}");
    assert_eq!(p.series[0].series, "trades");
    drop(t);

    for e in &trades[100..] {
        w.append(&e.as_event()).unwrap();
        put(&mut want, &e.as_event());
    }
    for i in 0..600 {
        let e = mixed_event(9, i);
        w.append(&e.as_event()).unwrap();
        put(&mut want, &e.as_event());
    }
    let mut again = Tail::open(&dir, at(p)).unwrap();
    // Part now, the rest after a second save and resume.
    take(&mut again, 150, &mut got);
    let q = saved(&again);
    drop(again);
    for i in 600..900 {
        let e = mixed_event(9, i);
        w.append(&e.as_event()).unwrap();
        put(&mut want, &e.as_event());
    }
    drop(w.close().unwrap());
    let mut last = Tail::open(&dir, at(q)).unwrap();
    assert_eq!(drain(&mut last, PATIENCE, &mut got), "End");
    assert_eq!(got.len(), 4);
    for (s, v) in &want {
        assert!(
            got.get(s) == Some(v),
            "{s}: {} of {}",
            got.get(s).map_or(0, Vec::len),
            v.len()
        );
    }
}

/// A position naming a series or a segment the tape does not hold is
/// refused, naming what is missing, rather than replaying from the start.
#[test]
fn a_position_the_tape_does_not_hold_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    write(&dir, spec(false, false), 100);
    let wrong = |series: &str, created_ns: i64| TailPosition {
        series: vec![SeriesPosition {
            series: series.into(),
            created_ns,
            offset: 64,
            events: 0,
        }],
    };
    let e = Tail::open(&dir, at(wrong("quotes", 1_000))).err().unwrap();
    assert!(e.to_string().contains("series quotes"), "{e}");
    let e = Tail::open(&dir, at(wrong("trades", 77))).err().unwrap();
    assert!(e.to_string().contains("trades segment"), "{e}");
    assert!(e.to_string().contains("created at 77"), "{e}");
}
