//! Rebuilding a tape directory's manifests from its segment files:
//! `manifest.json` (spec schema) and, on request, flox's binary `.manifest`.

use crate::tape::check::scan::scan_segment;
use crate::tape::dir::discover::Tape;
use crate::tape::dir::flox_manifest::{FloxManifest, FloxManifestEntry};
use crate::tape::dir::manifest::{Manifest, ManifestSegment};
use crate::tape::error::TapeError;
use crate::tape::report::{Finding, Severity};
use floxlog_core::segment_header::flags;
use floxlog_core::ReadOptions;
use std::collections::BTreeSet;

/// Both manifests of directory `dir_index` of `tape`, from a full read of
/// every segment; findings for segments that could not be read to the end.
pub fn build_manifests(
    tape: &Tape,
    dir_index: usize,
    progress: &mut dyn FnMut(u64),
) -> Result<(Manifest, FloxManifest, Vec<Finding>), TapeError> {
    let dir = &tape.dirs[dir_index];
    let mut findings = Vec::new();
    let mut segs = Vec::new();
    let mut fman = FloxManifest::default();
    let mut symbols = BTreeSet::new();
    let mut exchange = None;
    let mut created = dir.manifest.as_ref().map(|m| m.created_ns);
    let mut done = 0u64;
    for s in tape.segments.iter().filter(|s| s.dir == Some(dir_index)) {
        let f = s.open()?;
        let base = done;
        let scan = scan_segment(f.bytes(), ReadOptions::default(), &mut |o| {
            progress(base + o)
        });
        done += f.len();
        if let Some(e) = scan.header_error.or(scan.stream_error) {
            findings.push(Finding::from_error(Severity::Error, &s.path, &e).hint(
                crate::tape::hint::Hint::new(
                    "listed with its readable events only; {} first gives a valid segment",
                    &[crate::tape::hint::Remedy::Recover],
                ),
            ));
        }
        if let Some(h) = scan.header {
            exchange.get_or_insert(h.exchange_id);
            created = Some(created.map_or(h.created_ns, |c: i64| c.min(h.created_ns)));
        }
        let (first, last) = (scan.min_ts.unwrap_or(0), scan.max_ts.unwrap_or(0));
        segs.push(ManifestSegment {
            name: s.name.clone(),
            kind: s.series.clone(),
            size_bytes: f.len(),
            first_event_ns: first,
            last_event_ns: last,
            event_count: scan.events,
        });
        let has_index =
            scan.header.is_some_and(|h| h.has(flags::HAS_INDEX)) && scan.index.error.is_none();
        fman.segments.push(FloxManifestEntry {
            filename: s.name.clone(),
            first_event_ns: first,
            last_event_ns: last,
            event_count: scan.events,
            file_size: f.len(),
            flags: u32::from(has_index),
        });
        symbols.extend(scan.symbols.iter().copied());
    }
    let mut m = Manifest::new(exchange.unwrap_or(0), created.unwrap_or(0));
    if let Some(old) = &dir.manifest {
        m.exchange_id = old.exchange_id;
    }
    m.segments = segs;
    fman.segments.sort_by_key(|e| e.first_event_ns);
    fman.total_events = fman.segments.iter().map(|e| e.event_count).sum();
    fman.total_bytes = fman.segments.iter().map(|e| e.file_size).sum();
    fman.first_timestamp_ns = fman
        .segments
        .iter()
        .map(|e| e.first_event_ns)
        .filter(|&t| t != 0)
        .min()
        .unwrap_or(0);
    fman.last_timestamp_ns = fman
        .segments
        .iter()
        .map(|e| e.last_event_ns)
        .max()
        .unwrap_or(0);
    fman.symbols = symbols.into_iter().collect();
    Ok((m, fman, findings))
}
