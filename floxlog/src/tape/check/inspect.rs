//! The summary of a tape that `floxlog inspect` prints: per segment its
//! header, counts, time range, symbols, index and compression; per tape
//! directory its manifests; totals over every segment; and whether anything
//! could not be read.
//!
//! A live tape (a writer holds its lock) is summarised as it is now: the
//! writer shown live with its pid; an unfinished segment's frames end
//! where its published ones do (its zero tail is not damage; only its
//! first frame size past the end is read); a journal writer's prepared
//! segments (no event yet) are counted apart, not as segments.
//!
//! [`inspect_tape`] computes it once; [`Inspection::to_json`] is the JSON
//! `inspect --json` prints, and the typed fields are what the text form
//! (and the C API) are built from.

use crate::tape::check::live::{holds_no_event, DirWriter, WriterState};
use crate::tape::check::scan::{scan_segment, IndexScan, SegmentScan};
use crate::tape::dir::discover::{Tape, TapeDir};
use crate::tape::error::TapeError;
use crate::tape::read::source::{header_is_unfinished, is_zero_tail};
use crate::tape::report::Finding;
use floxlog_core::segment_header::flags;
use floxlog_core::{frame_type, Error, ReadOptions, Segment, SegmentHeader};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Options of [`inspect_tape`].
#[derive(Clone, Copy, Debug, Default)]
pub struct InspectOptions {
    /// Headers and manifests only: do not read the frames (the counts, time
    /// ranges, symbols and index of the summary are left out).
    pub quick: bool,
}

/// The summary of one segment.
#[derive(Clone, Debug)]
pub struct SegmentSummary {
    /// Path of the file.
    pub path: PathBuf,
    /// Series (`mixed` for interleaved segments).
    pub series: String,
    /// File size.
    pub size_bytes: u64,
    /// The header, if valid.
    pub header: Option<SegmentHeader>,
    /// The header is a writer's placeholder (the segment was never closed).
    pub placeholder: bool,
    /// Why the segment could not be read to its end: the header's error, or
    /// else the frames' (kind, byte offset, what failed).
    pub error: Option<Error>,
    /// An unfinished segment whose frames end in zeros (a journal
    /// writer's live segment, or one a killed writer left): the byte
    /// offset where its published frames end (not read with `quick`).
    pub live_end: Option<u64>,
    /// Events read (`None` with [`InspectOptions::quick`]).
    pub events: Option<u64>,
    /// Events per frame type, index 1..=5 (`None` when quick).
    pub by_type: Option<[u64; 6]>,
    /// Earliest timestamp read.
    pub min_ts: Option<i64>,
    /// Latest timestamp read.
    pub max_ts: Option<i64>,
    /// Distinct symbol ids, ascending (`None` when quick).
    pub symbols: Option<Vec<u32>>,
    /// The index trailer as found (`None` when quick).
    pub index: Option<IndexScan>,
    /// LZ4 blocks read.
    pub blocks: u64,
    /// LZ4 compression ratio (frame bytes / stored block bytes), if compressed.
    pub compression_ratio: Option<f64>,
    /// A manifest lists the segment.
    pub listed_in_manifest: bool,
}

/// Totals over every segment of an [`Inspection`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InspectTotals {
    /// Segments of the tape that hold events (those that could not be
    /// opened included; prepared ones not).
    pub segments: u64,
    /// Of those, unfinished ones (a writer's live segments, or those a
    /// killed writer left).
    pub segments_open: u64,
    /// A journal writer's prepared segments: no event yet, not counted
    /// in `segments`.
    pub segments_prepared: u64,
    /// Bytes of the segments read (prepared ones not).
    pub bytes: u64,
    /// Bytes reserved by the prepared segments.
    pub bytes_prepared: u64,
    /// Events read (`None` with [`InspectOptions::quick`]).
    pub events: Option<u64>,
    /// Events per frame type, index 1..=5 (all zero when quick).
    pub by_type: [u64; 6],
    /// Earliest timestamp.
    pub min_ts: Option<i64>,
    /// Latest timestamp.
    pub max_ts: Option<i64>,
    /// Distinct symbol ids, ascending (empty when quick).
    pub symbols: Vec<u32>,
    /// LZ4 compression ratio over every block (frame bytes / stored block
    /// bytes), if any segment is compressed.
    pub compression_ratio: Option<f64>,
}

/// What [`inspect_tape`] found.
#[derive(Clone, Debug)]
pub struct Inspection {
    /// Made with [`InspectOptions::quick`]: frames not read.
    pub quick: bool,
    /// The segments that could be opened, in tape order.
    pub segments: Vec<SegmentSummary>,
    /// The tape directories with their side files (manifests, metadata).
    pub dirs: Vec<TapeDir>,
    /// The writer of each of `dirs` (who holds its lock).
    pub writers: Vec<DirWriter>,
    /// A journal writer's prepared segments (no event yet), not summarised.
    pub prepared: Vec<PathBuf>,
    /// The listing's findings (missing or unlisted segments...).
    pub findings: Vec<Finding>,
    /// Symbol names from every `metadata.json`.
    pub symbol_names: Vec<(u32, String)>,
    /// Totals.
    pub total: InspectTotals,
    /// Segments that could not be opened (they have no summary).
    pub open_errors: Vec<TapeError>,
    /// The summary lacks data or found damage: a listed segment was not
    /// read, a segment could not be opened, or a header or frame is bad.
    /// (`floxlog inspect` exits 1 on it.)
    pub failed: bool,
}

/// The names of header flags: `HasIndex|Compressed|...`, `unknown` for
/// bits 1.0 does not define, `none` for no flag.
pub fn flag_names(f: u8) -> String {
    let mut v = Vec::new();
    for (bit, name) in [
        (flags::HAS_INDEX, "HasIndex"),
        (flags::COMPRESSED, "Compressed"),
        (flags::ENCRYPTED, "Encrypted"),
        (flags::SORTED, "Sorted"),
    ] {
        if f & bit != 0 {
            v.push(name);
        }
    }
    if f & !flags::KNOWN != 0 {
        v.push("unknown");
    }
    if v.is_empty() {
        "none".into()
    } else {
        v.join("|")
    }
}

/// Non-zero counts of frame types 1..=5 by type name.
fn by_type_map(by_type: &[u64; 6]) -> BTreeMap<&'static str, u64> {
    (1..6)
        .map(|i| (frame_type::name(i as u8).unwrap_or_default(), by_type[i]))
        .filter(|x| x.1 > 0)
        .collect()
}

/// Summarises every segment of `tape` (see [`Inspection`]); `progress` gets
/// the bytes of the tape read so far now and then.
// Long but kept whole: one pass over the segments adding to the totals
// kept in its locals.
pub fn inspect_tape(
    tape: &Tape,
    opts: InspectOptions,
    progress: &mut dyn FnMut(u64),
) -> Inspection {
    let mut done = 0u64;
    let mut segs = Vec::new();
    let mut open_errors = Vec::new();
    let mut all_symbols = BTreeSet::new();
    let (mut events, mut bytes, mut by_type) = (0u64, 0u64, [0u64; 6]);
    let (mut tmin, mut tmax): (Option<i64>, Option<i64>) = (None, None);
    let (mut orig, mut comp) = (0u64, 0u64);
    // Listed segments that could not be read: the summary lacks their data.
    let mut failed = tape.unread().next().is_some();
    let writers: Vec<DirWriter> = tape.dirs.iter().map(|d| DirWriter::of(&d.path)).collect();
    let (mut prepared, mut bytes_prepared, mut open) = (Vec::new(), 0u64, 0u64);
    for s in &tape.segments {
        let f = match s.open() {
            Ok(f) => f,
            Err(e) => {
                open_errors.push(e);
                failed = true;
                continue;
            }
        };
        let unfinished = SegmentHeader::parse(f.bytes()).is_ok_and(|h| header_is_unfinished(&h));
        if unfinished && holds_no_event(f.bytes()) {
            prepared.push(s.path.clone());
            bytes_prepared += f.len();
            done += f.len();
            progress(done);
            continue;
        }
        open += u64::from(unfinished);
        // While its writer lives, an unfinished segment ends at its first
        // zero frame size (the zeros past it are not read).
        let live = s
            .dir
            .and_then(|d| writers.get(d))
            .is_some_and(|w| w.state == WriterState::Live);
        let ropts = ReadOptions {
            tail: live && unfinished,
            ..ReadOptions::default()
        };
        let scan: SegmentScan = if opts.quick {
            let mut sc = SegmentScan {
                file_size: f.len(),
                ..SegmentScan::default()
            };
            match Segment::parse(f.bytes()) {
                Ok(seg) => {
                    sc.header = Some(*seg.header());
                    sc.unfinished = header_is_unfinished(seg.header());
                }
                Err(e) => sc.header_error = Some(e),
            }
            sc
        } else {
            let base = done;
            scan_segment(f.bytes(), ropts, &mut |o| progress(base + o))
        };
        done += f.len();
        progress(done);
        bytes += f.len();
        events += scan.events;
        for (t, n) in by_type.iter_mut().zip(scan.by_type) {
            *t += n;
        }
        if let Some(m) = scan.min_ts {
            tmin = Some(tmin.map_or(m, |t| t.min(m)));
        }
        if let Some(m) = scan.max_ts {
            tmax = Some(tmax.map_or(m, |t| t.max(m)));
        }
        orig += scan.block_original;
        comp += scan.block_compressed;
        all_symbols.extend(scan.symbols.iter().copied());
        let mut error = scan.header_error.or(scan.stream_error);
        // An unfinished segment's zero tail is the end of its data.
        let live_end = match error {
            Some(e) if scan.unfinished && is_zero_tail(&e) => Some(e.offset),
            // Read as its writer's live segment: it ends where the read stopped.
            None if ropts.tail && !opts.quick => Some(scan.stream_end),
            _ => None,
        };
        if live_end.is_some() {
            error = None;
        }
        if error.is_some() {
            failed = true;
        }
        let full = !opts.quick;
        segs.push(SegmentSummary {
            path: s.path.clone(),
            series: s.series.clone(),
            size_bytes: f.len(),
            header: scan.header,
            placeholder: scan.unfinished,
            error,
            live_end,
            events: full.then_some(scan.events),
            by_type: full.then_some(scan.by_type),
            min_ts: scan.min_ts,
            max_ts: scan.max_ts,
            symbols: full.then(|| scan.symbols.iter().copied().collect()),
            compression_ratio: scan.compression_ratio(),
            blocks: scan.blocks,
            index: full.then_some(scan.index),
            listed_in_manifest: s.listed.is_some(),
        });
    }
    // Prepared segments are not listed in a manifest: no finding of it.
    let findings = tape
        .findings
        .iter()
        .filter(|f| f.path.as_ref().is_none_or(|p| !prepared.contains(p)))
        .cloned()
        .collect();
    Inspection {
        quick: opts.quick,
        segments: segs,
        dirs: tape.dirs.clone(),
        writers,
        findings,
        symbol_names: tape.symbol_names(),
        total: InspectTotals {
            segments: tape.segments.len() as u64 - prepared.len() as u64,
            segments_open: open,
            segments_prepared: prepared.len() as u64,
            bytes,
            bytes_prepared,
            events: (!opts.quick).then_some(events),
            by_type,
            min_ts: tmin,
            max_ts: tmax,
            symbols: all_symbols.into_iter().collect(),
            compression_ratio: (comp > 0).then(|| orig as f64 / comp as f64),
        },
        prepared,
        open_errors,
        failed,
    }
}

impl SegmentSummary {
    /// The segment's entry in `inspect --json`'s `segments`.
    pub fn to_json(&self) -> Value {
        json!({
            "path": self.path,
            "series": self.series,
            "size_bytes": self.size_bytes,
            "header": self.header.map(|h| json!({
                "flags": flag_names(h.flags),
                "exchange_id": h.exchange_id,
                "created_ns": h.created_ns,
                "first_event_ns": h.first_event_ns,
                "last_event_ns": h.last_event_ns,
                "event_count": h.event_count,
                "symbol_count": h.symbol_count,
                "index_offset": h.index_offset,
                "compression": if h.flags & flags::COMPRESSED != 0 { "lz4" } else { "none" },
                "placeholder": self.placeholder,
            })),
            "error": self.error.map(|e| json!({"kind": e.kind.as_str(), "offset": e.offset, "what": e.what})),
            "live_end": self.live_end,
            "events": self.events,
            "by_type": self.by_type.as_ref().map(by_type_map),
            "min_ts": self.min_ts,
            "max_ts": self.max_ts,
            "symbols": self.symbols,
            "index": self.index.as_ref().map(|ix| json!({
                "entries": ix.entries,
                "interval": ix.interval,
                "offset": ix.offset,
                "error": ix.error.map(|e| e.kind.as_str()),
            })),
            "blocks": self.blocks,
            "compression_ratio": self.compression_ratio,
            "listed_in_manifest": self.listed_in_manifest,
        })
    }
}

/// A tape directory's entry in `inspect --json`'s `dirs`.
fn dir_json(d: &TapeDir, w: Option<&DirWriter>) -> Value {
    json!({
        "path": d.path,
        "writer": w.map(DirWriter::to_json),
        "manifest": d.manifest.as_ref().map(|m| json!({
            "schema_version": m.schema_version, "format_version": m.format_version,
            "exchange_id": m.exchange_id, "created_ns": m.created_ns,
            "segments": m.segments.len(),
            "events": m.segments.iter().map(|s| s.event_count).sum::<u64>(),
        })),
        "flox_manifest": d.flox_manifest.as_ref().map(|m| json!({
            "segments": m.segments.len(), "total_events": m.total_events,
            "first_timestamp_ns": m.first_timestamp_ns, "last_timestamp_ns": m.last_timestamp_ns,
            "total_bytes": m.total_bytes, "symbols": m.symbols,
        })),
        "metadata": d.metadata.as_ref().map(|m| m.0.clone()),
    })
}

impl Inspection {
    /// The JSON `floxlog inspect --json` prints: `segments`, `dirs`,
    /// `findings` and `total`.
    pub fn to_json(&self) -> Value {
        let t = &self.total;
        json!({
            "segments": self.segments.iter().map(SegmentSummary::to_json).collect::<Vec<_>>(),
            "dirs": self.dirs.iter().enumerate().map(|(i, d)| dir_json(d, self.writers.get(i))).collect::<Vec<_>>(),
            "findings": self.findings,
            "prepared_segments": self.prepared,
            "health": self.health_json(),
            "total": {
                "segments": t.segments, "segments_open": t.segments_open,
                "segments_prepared": t.segments_prepared,
                "bytes": t.bytes, "bytes_prepared": t.bytes_prepared, "events": t.events,
                "by_type": by_type_map(&t.by_type),
                "min_ts": t.min_ts, "max_ts": t.max_ts, "symbols": t.symbols,
                "compression_ratio": t.compression_ratio,
            },
        })
    }

    /// What the tape's files tell of a writer's health
    /// (`TapeWriterHealth`'s figures where they can): events written
    /// (`null` with `quick`), segments closed, open and prepared, bytes
    /// reserved (the unfinished segments' files) and used (the closed
    /// segments and the live frames; `null` with `quick` while a segment
    /// is open), and the newest closed segment's
    /// `created_ns`.
    fn health_json(&self) -> Value {
        let closed = self.segments.iter().filter(|s| !s.placeholder);
        let unfinished = self.segments.iter().filter(|s| s.placeholder);
        // Unknown (`null`) where a live segment's end was not read.
        let used: Option<u64> = unfinished
            .clone()
            .map(|s| s.live_end)
            .sum::<Option<u64>>()
            .map(|live| live + closed.clone().map(|s| s.size_bytes).sum::<u64>());
        let reserved =
            self.total.bytes_prepared + unfinished.clone().map(|s| s.size_bytes).sum::<u64>();
        let live = self.writers.iter().any(|w| w.state == WriterState::Live);
        json!({
            "writer_live": live,
            "events_written": self.total.events,
            "segments_closed": closed.clone().count(),
            "segments_open": self.total.segments_open,
            "segments_prepared": self.total.segments_prepared,
            "bytes_reserved": reserved,
            "bytes_used": used,
            "last_segment_created_ns": closed.filter_map(|s| s.header.map(|h| h.created_ns)).max(),
        })
    }

    /// Exactly the text `floxlog inspect --json` prints on stdout, without
    /// the final newline: [`Inspection::to_json`], pretty-printed.
    pub fn to_json_text(&self) -> String {
        serde_json::to_string_pretty(&self.to_json()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::{OpenOptions, TapeWriter, TapeWriterConfig};
    use crate::OwnedEvent;
    use floxlog_core::{Compression, WriterConfig};

    /// A tape of `n` events from the synthetic mixed stream, rotated small.
    fn write_tape(dir: &std::path::Path, n: u64, compression: Compression) -> Vec<OwnedEvent> {
        let cfg = TapeWriterConfig {
            segment: WriterConfig {
                compression,
                ..WriterConfig::default()
            },
            max_segment_bytes: 16 << 10,
            created_ns: Some(1_000),
            ..TapeWriterConfig::default()
        };
        let mut w = TapeWriter::create(dir, cfg).unwrap();
        let evs: Vec<OwnedEvent> = (0..n).map(|i| crate::synth::mixed_event(3, i)).collect();
        for e in &evs {
            w.append(&e.as_event()).unwrap();
        }
        w.close().unwrap();
        evs
    }

    fn expected_totals(evs: &[OwnedEvent]) -> ([u64; 6], i64, i64, Vec<u32>) {
        let mut by_type = [0u64; 6];
        let mut syms = BTreeSet::new();
        for e in evs {
            let ev = e.as_event();
            by_type[ev.frame_type() as usize] += 1;
            syms.insert(ev.symbol_id());
        }
        let ts = evs.iter().map(|e| e.exchange_ts_ns());
        let (lo, hi) = (ts.clone().min().unwrap(), ts.max().unwrap());
        (by_type, lo, hi, syms.into_iter().collect())
    }

    #[test]
    fn inspect_tape_totals_match_what_was_written() {
        for compression in [Compression::None, Compression::Lz4] {
            let d = tempfile::tempdir().unwrap();
            let p = d.path().join("t");
            let evs = write_tape(&p, 3_000, compression);
            let tape = Tape::open(std::slice::from_ref(&p), OpenOptions::default()).unwrap();
            assert!(tape.segments.len() > 1, "rotated into several segments");
            let mut last = 0;
            let insp = inspect_tape(&tape, InspectOptions::default(), &mut |o| {
                assert!(o >= last);
                last = o;
            });
            let (by_type, lo, hi, syms) = expected_totals(&evs);
            let t = &insp.total;
            assert_eq!(t.segments, tape.segments.len() as u64);
            assert_eq!(t.bytes, tape.file_bytes());
            assert_eq!(last, t.bytes);
            assert_eq!(t.events, Some(evs.len() as u64));
            assert_eq!(t.by_type, by_type);
            assert_eq!((t.min_ts, t.max_ts), (Some(lo), Some(hi)));
            assert_eq!(t.symbols, syms);
            assert_eq!(
                t.compression_ratio.is_some(),
                compression == Compression::Lz4
            );
            assert!(!insp.failed && insp.open_errors.is_empty());
            assert_eq!(insp.segments.len(), tape.segments.len());
            let sum: u64 = insp.segments.iter().map(|s| s.events.unwrap()).sum();
            assert_eq!(sum, evs.len() as u64);
            assert!(insp.segments.iter().all(|s| s.listed_in_manifest
                && s.error.is_none()
                && s.header.is_some()
                && !s.placeholder));

            let v = insp.to_json();
            assert_eq!(v["total"]["events"], evs.len() as u64);
            assert_eq!(v["total"]["segments"], tape.segments.len());
            assert_eq!(v["segments"][0]["listed_in_manifest"], true);
            assert_eq!(v["dirs"][0]["manifest"]["events"], evs.len() as u64);
            let text = insp.to_json_text();
            assert!(!text.ends_with('\n'));
            assert_eq!(text, serde_json::to_string_pretty(&v).unwrap());
            let mut back: Value = serde_json::from_str(&text).unwrap();
            // serde_json's default float parser may land one ulp off the
            // shortest representation it printed: compare the ratio apart.
            let mut want = v["total"].clone();
            let ratio = |t: &mut Value| t["compression_ratio"].take().as_f64();
            match (ratio(&mut back["total"]), ratio(&mut want)) {
                (Some(a), Some(b)) => assert!((a - b).abs() <= b * 1e-15, "{a} vs {b}"),
                (a, b) => assert_eq!(a, b),
            }
            assert_eq!(back["total"], want);
        }
    }

    #[test]
    fn quick_inspection_reads_headers_only() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        write_tape(&p, 1_000, Compression::Lz4);
        let tape = Tape::open(&[p], OpenOptions::default()).unwrap();
        let insp = inspect_tape(&tape, InspectOptions { quick: true }, &mut |_| {});
        assert!(insp.quick && !insp.failed);
        assert_eq!(insp.total.events, None);
        assert_eq!(insp.total.by_type, [0; 6]);
        assert_eq!(insp.total.bytes, tape.file_bytes());
        assert!(insp
            .segments
            .iter()
            .all(|s| s.header.is_some() && s.events.is_none() && s.index.is_none()));
        let v = insp.to_json();
        assert!(v["total"]["events"].is_null());
        assert!(v["segments"][0]["by_type"].is_null());
        assert_eq!(v["segments"][0]["header"]["compression"], "lz4");
    }

    #[test]
    fn damage_and_missing_segments_fail_the_inspection() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        write_tape(&p, 3_000, Compression::None);
        let tape = Tape::open(std::slice::from_ref(&p), OpenOptions::default()).unwrap();
        // Cut the last segment inside a frame.
        let last = tape.segments.last().unwrap().path.clone();
        let len = std::fs::metadata(&last).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(&last).unwrap();
        f.set_len(len / 2).unwrap();
        drop(f);
        let tape = Tape::open(std::slice::from_ref(&p), OpenOptions::default()).unwrap();
        let insp = inspect_tape(&tape, InspectOptions::default(), &mut |_| {});
        assert!(insp.failed);
        let seg = insp.segments.last().unwrap();
        assert!(seg.error.is_some());
        assert_eq!(
            insp.to_json()["segments"][insp.segments.len() - 1]["error"]["kind"],
            seg.error.unwrap().kind.as_str()
        );
        // A listed segment that is gone.
        std::fs::remove_file(&tape.segments[0].path).unwrap();
        let tape = Tape::open(&[p], OpenOptions::default()).unwrap();
        let insp = inspect_tape(&tape, InspectOptions { quick: true }, &mut |_| {});
        assert!(insp.failed);
        assert!(insp
            .findings
            .iter()
            .any(|f| f.kind == crate::tape::report::FindingKind::MissingSegment));
    }

    #[test]
    fn flag_names_list_every_flag() {
        assert_eq!(flag_names(0), "none");
        assert_eq!(
            flag_names(flags::HAS_INDEX | flags::SORTED),
            "HasIndex|Sorted"
        );
        assert!(flag_names(0x80).contains("unknown"));
    }
}
