//! Full integrity check of a tape: every segment scanned (CRCs, frames,
//! blocks, index), header counts and time range against the frames, the
//! Sorted claim against the timestamps, and the manifests against the files.

use crate::tape::check::scan::{scan_segment, RangeScan, Scanner, SegmentScan};
use crate::tape::dir::discover::{Tape, TapeSegment};
use crate::tape::error::TapeError;
use crate::tape::hint::{Hint, Remedy};
use crate::tape::read::parallel::run_parallel_each;
use crate::tape::read::ranges::Split;
use crate::tape::read::source::SegmentFile;
use crate::tape::report::{Finding, FindingKind, Severity};
use floxlog_core::segment_header::flags;
use floxlog_core::{ReadOptions, SegmentHeader};
use serde::Serialize;
use std::path::PathBuf;

/// Ranges of a segment verified on separate threads are at least this
/// large (smaller ones cost more in set-up than they share out).
const MIN_RANGE_BYTES: u64 = 8 << 20;

/// Per-segment summary in a verify report.
#[derive(Clone, Debug, Serialize)]
pub struct SegmentSummary {
    /// Path.
    pub path: PathBuf,
    /// Series.
    pub series: String,
    /// File size.
    pub bytes: u64,
    /// Events read.
    pub events: u64,
    /// Whether the segment passed without errors.
    pub ok: bool,
}

/// The outcome of [`verify_tape`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct VerifyReport {
    /// Segments checked.
    pub segments: Vec<SegmentSummary>,
    /// Everything found, in order.
    pub findings: Vec<Finding>,
    /// Events read over all segments.
    pub events: u64,
    /// Bytes of all segment files.
    pub bytes: u64,
}

impl VerifyReport {
    /// Number of findings of `sev`.
    pub fn count(&self, sev: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == sev).count()
    }

    /// Whether the tape passes: no errors (and no warnings when `strict`).
    pub fn passed(&self, strict: bool) -> bool {
        self.count(Severity::Error) == 0 && (!strict || self.count(Severity::Warning) == 0)
    }

    /// The finding that fails the check (`None` if it passes): the first
    /// error, or (`strict`, no error) the first warning.
    pub fn worst(&self, strict: bool) -> Option<&Finding> {
        if self.passed(strict) {
            return None;
        }
        let first = |sev| self.findings.iter().find(|f| f.severity == sev);
        first(Severity::Error).or_else(|| first(Severity::Warning))
    }
}

/// Checks every segment of `tape` on one thread; `progress(bytes_done)` is
/// called as it goes. [`verify_tape_with`] uses more.
pub fn verify_tape(tape: &Tape, opts: ReadOptions, progress: &mut dyn FnMut(u64)) -> VerifyReport {
    verify_tape_with(tape, opts, 1, progress)
}

/// Checks every segment of `tape` on `threads` threads (0: one per core):
/// segments, and ranges of large segments (at LZ4 block or proven frame
/// boundaries), are read in parallel and folded in file order, so the
/// report is exactly the one-thread report. `progress(bytes_done)` is
/// called as it goes.
pub fn verify_tape_with(
    tape: &Tape,
    opts: ReadOptions,
    threads: usize,
    progress: &mut dyn FnMut(u64),
) -> VerifyReport {
    let mut rep = VerifyReport {
        findings: tape.findings.clone(),
        ..VerifyReport::default()
    };
    if crate::par::threads(threads) <= 1 {
        let mut done = 0u64;
        for seg in &tape.segments {
            let scanned = seg.open().map(|file| {
                let base = done;
                let scan = scan_segment(file.bytes(), opts, &mut |o| progress(base + o));
                done += file.len();
                blame_shrinking(&file, scan)
            });
            add_segment(&mut rep, seg, scanned);
        }
    } else {
        verify_parallel(tape, opts, threads, progress, &mut rep);
    }
    for d in &tape.dirs {
        if let Some(fm) = &d.flox_manifest {
            let fpath = d
                .path
                .join(crate::tape::dir::flox_manifest::FLOX_MANIFEST_FILE);
            for e in &fm.segments {
                let p = d.path.join(&e.filename);
                let actual = rep.segments.iter().find(|s| s.path == p);
                let stale = match actual {
                    None => Some(format!(
                        "lists {} but no such segment was found",
                        e.filename
                    )),
                    Some(s) if s.bytes != e.file_size || s.events != e.event_count => {
                        Some(format!(
                            "says {} has {} events in {} bytes, the file has {} in {}",
                            e.filename, e.event_count, e.file_size, s.events, s.bytes
                        ))
                    }
                    _ => None,
                };
                if let Some(msg) = stale {
                    rep.findings.push(
                        Finding::new(
                            Severity::Warning,
                            FindingKind::FloxManifestStale,
                            Some(&fpath),
                            msg,
                        )
                        .hint(Hint::new(
                            "flox rebuilds a stale .manifest; so does {}",
                            &[Remedy::RebuildFloxManifest],
                        )),
                    );
                }
            }
        }
    }
    rep
}

/// The segments read on the engine's ranges ([`Split`], [`run_parallel_each`]),
/// each folded and checked in file order.
fn verify_parallel(
    tape: &Tape,
    opts: ReadOptions,
    threads: usize,
    progress: &mut dyn FnMut(u64),
    rep: &mut VerifyReport,
) {
    let files: Vec<Result<SegmentFile, TapeError>> =
        tape.segments.iter().map(|s| s.open()).collect();
    let scanners: Vec<Option<Scanner<'_>>> = files
        .iter()
        .map(|f| f.as_ref().ok().map(|f| Scanner::new(f.bytes(), opts)))
        .collect();
    // Segments whose header fails have no range: their scan is the
    // header's error, reported in turn by the fold.
    let mapped = files.iter().enumerate();
    let mapped = mapped.filter_map(|(i, f)| f.as_ref().ok().map(|f| (i, f)));
    let split = Split::of_files(mapped, opts, threads, MIN_RANGE_BYTES);
    let mut fold = Fold {
        tape,
        files: &files,
        scanners: &scanners,
        next: 0,
        parts: Vec::new(),
        done: 0,
        progress,
        rep,
    };
    let run = run_parallel_each(
        split.len(),
        threads,
        &|i| {
            let range = split.segment(i).zip(split.bounds(i));
            let part = range.and_then(|(k, (start, end))| {
                let sc = scanners[k].as_ref()?;
                Some(sc.scan_range(start, end, &mut |_| {}))
            });
            Ok(part.unwrap_or_default())
        },
        &mut |i, part| {
            fold.add(split.segment(i).unwrap_or(usize::MAX), part);
            Ok(())
        },
    );
    match run {
        Ok(()) => fold.report_until(files.len()),
        Err(e) => {
            // A worker panicked: say so rather than pass a tape unread.
            let f = Finding::new(Severity::Error, FindingKind::Internal, None, e.message);
            fold.rep.findings.push(f);
        }
    }
}

/// Ranges' scans arriving in file order, folded into segment scans and
/// reported as each segment completes.
struct Fold<'x, 'a> {
    tape: &'x Tape,
    files: &'x [Result<SegmentFile, TapeError>],
    scanners: &'x [Option<Scanner<'a>>],
    /// The next segment to report.
    next: usize,
    /// Its ranges delivered so far.
    parts: Vec<RangeScan>,
    /// Bytes of the segments reported.
    done: u64,
    progress: &'x mut dyn FnMut(u64),
    rep: &'x mut VerifyReport,
}

impl Fold<'_, '_> {
    /// A range of segment `k`: the segments before it are complete.
    fn add(&mut self, k: usize, part: RangeScan) {
        self.report_until(k);
        (self.progress)(self.done + part.end());
        self.parts.push(part);
    }

    /// Reports the segments before `k`, and those after with nothing to
    /// read (files that could not be opened).
    fn report_until(&mut self, k: usize) {
        while self.next < self.files.len() && (self.next < k || self.files[self.next].is_err()) {
            let i = self.next;
            let scanned = match (&self.files[i], &self.scanners[i]) {
                (Err(e), _) => Err(e.clone()),
                (Ok(f), sc) => {
                    let scan = sc
                        .as_ref()
                        .map(|sc| sc.finish(std::mem::take(&mut self.parts)))
                        .unwrap_or_default();
                    self.done += f.len();
                    (self.progress)(self.done);
                    Ok(blame_shrinking(f, scan))
                }
            };
            add_segment(self.rep, &self.tape.segments[i], scanned);
            self.next += 1;
        }
    }
}

/// A file that shrank under the scan: the scan's stream error says so
/// (what it found past the new end was zeros, not the writer's bytes).
fn blame_shrinking(f: &SegmentFile, mut scan: SegmentScan) -> SegmentScan {
    if let Some(e) = f.shrink_error(scan.stream_error.as_ref()) {
        scan.stream_error = Some(e);
    }
    scan
}

/// The checks of one scanned segment.
pub fn check_segment(path: &std::path::Path, s: &SegmentScan, out: &mut Vec<Finding>) {
    if let Some(e) = &s.header_error {
        out.push(Finding::from_error(Severity::Error, path, e));
        return;
    }
    let Some(h) = s.header else { return };
    if let Some(e) = &s.stream_error {
        if s.unfinished && crate::tape::read::source::is_zero_tail(e) {
            // An unfinished journal segment's pre-allocated tail: the end
            // of its data, not damage.
            out.push(
                Finding::new(
                    Severity::Warning,
                    FindingKind::ZeroTail,
                    Some(path),
                    format!(
                        "the segment is unfinished and its frames end in zeros to the end of the file after {} events: a journal writer is still running or died",
                        s.events
                    ),
                )
                .at(e.offset)
                .hint(Hint::new(
                    "if no writer is running, {} cuts the zeros off and writes the final header and index",
                    &[Remedy::Recover],
                )),
            );
            return;
        }
        let mut f = Finding::from_error(Severity::Error, path, e);
        f.message = format!("{} (after {} good events)", f.message, s.events);
        out.push(f);
    }
    index_findings(path, s, out);
    // Counts cannot be compared with a partial read.
    if s.stream_error.is_none() {
        header_findings(path, s, &h, out);
    }
    ordering_findings(path, s, &h, out);
}

/// The findings about a scanned segment's index, LZ4 blocks and trailing
/// bytes.
fn index_findings(path: &std::path::Path, s: &SegmentScan, out: &mut Vec<Finding>) {
    // reindex needs a segment that reads to its end; past damage, recover
    // (which rebuilds the index too) is the command that works.
    let index_hint = if s.stream_error.is_some() {
        Hint::new(
            "the frames are damaged too: {} keeps the events before the damage and rebuilds the index",
            &[Remedy::Recover],
        )
    } else {
        Hint::new(
            "the events are intact; {} rebuilds the index",
            &[Remedy::Reindex],
        )
    };
    if let Some(e) = &s.index.error {
        out.push(Finding::from_error(Severity::Error, path, e).hint(index_hint.clone()));
    }
    for (off, msg) in &s.index.problems {
        out.push(
            Finding::new(
                Severity::Error,
                FindingKind::BadIndex,
                Some(path),
                msg.clone(),
            )
            .at(*off)
            .hint(index_hint.clone()),
        );
    }
    if let Some(off) = s.block_flags_nonzero {
        out.push(
            Finding::new(
                Severity::Warning,
                FindingKind::BlockFlagsNonzero,
                Some(path),
                "a block's reserved flags are not zero",
            )
            .at(off),
        );
    }
    if s.trailing_bytes > 0 {
        out.push(
            Finding::new(
                Severity::Warning,
                FindingKind::TrailingBytes,
                Some(path),
                format!("{} bytes after the index trailer", s.trailing_bytes),
            )
            .at(s.file_size - s.trailing_bytes),
        );
    }
}

/// The finding of timestamps that go back: an error where the header
/// claims Sorted, a warning otherwise.
fn ordering_findings(
    path: &std::path::Path,
    s: &SegmentScan,
    h: &SegmentHeader,
    out: &mut Vec<Finding>,
) {
    if s.inversions > 0 {
        let sorted = h.has(flags::SORTED);
        let sev = if sorted {
            Severity::Error
        } else {
            Severity::Warning
        };
        let kind = if sorted {
            FindingKind::SortedViolation
        } else {
            FindingKind::TimestampsBackwards
        };
        let msg = if sorted {
            format!(
                "header flags Sorted, but timestamps go backwards {} times",
                s.inversions
            )
        } else {
            format!(
                "timestamps go backwards {} times (the segment is not flagged Sorted)",
                s.inversions
            )
        };
        out.push(Finding::new(sev, kind, Some(path), msg).at(s.first_inversion.unwrap_or(0)));
    }
}

/// The header's counts, time range and symbol count against the frames of
/// a segment read to its end.
fn header_findings(
    path: &std::path::Path,
    s: &SegmentScan,
    h: &SegmentHeader,
    out: &mut Vec<Finding>,
) {
    let count_ok = h.event_count as u64 == s.events;
    if s.unfinished && !count_ok {
        out.push(
            Finding::new(
                Severity::Warning,
                FindingKind::StaleHeader,
                Some(path),
                format!(
                    "the header is a writer's placeholder ({} events claimed, {} complete events in the file): its writer is still running or died",
                    h.event_count, s.events
                ),
            )
            .at(0)
            .hint(Hint::new("if no writer is running, {} writes the final header and index", &[Remedy::Recover])),
        );
    } else if !count_ok {
        out.push(
            Finding::new(
                Severity::Error,
                FindingKind::HeaderEventCount,
                Some(path),
                format!(
                    "header says {} events, the frames hold {}",
                    h.event_count, s.events
                ),
            )
            .at(0)
            .hint(Hint::new(
                "{} rewrites the header from the frames",
                &[Remedy::Recover],
            )),
        );
    } else if s.events > 0 && !(s.unfinished && h.event_count == 0) {
        let (min, max) = (s.min_ts.unwrap_or(0), s.max_ts.unwrap_or(0));
        let ok = if h.has(flags::COMPRESSED) {
            // Arrival order inside a block is lost to the writer's sort.
            let inside = |t: i64| (t >= min && t <= max) || t == 0;
            inside(h.first_event_ns) && inside(h.last_event_ns)
        } else {
            let reference = h.first_event_ns == s.first_nonzero_ts.unwrap_or(0)
                && Some(h.last_event_ns) == s.last_ts;
            let spec = h.first_event_ns == min && h.last_event_ns == max;
            reference || spec
        };
        if !ok {
            out.push(
                Finding::new(
                    Severity::Error,
                    FindingKind::HeaderTimeRange,
                    Some(path),
                    format!(
                        "header time range [{}, {}] does not match the frames (earliest {min}, latest {max})",
                        h.first_event_ns, h.last_event_ns
                    ),
                )
                .at(0),
            );
        }
    }
    if h.symbol_count != 0 && h.symbol_count as usize != s.symbols.len() {
        out.push(
            Finding::new(
                Severity::Error,
                FindingKind::HeaderSymbolCount,
                Some(path),
                format!(
                    "header says {} symbols, the frames hold {}",
                    h.symbol_count,
                    s.symbols.len()
                ),
            )
            .at(0),
        );
    }
}

/// Adds a segment's scan (or why it could not be opened) to the report.
fn add_segment(rep: &mut VerifyReport, seg: &TapeSegment, scanned: Result<SegmentScan, TapeError>) {
    let scan = match scanned {
        Ok(scan) => scan,
        Err(e) => {
            rep.findings.push(Finding::new(
                Severity::Error,
                FindingKind::Io,
                Some(&seg.path),
                e.message.clone(),
            ));
            rep.segments.push(SegmentSummary {
                path: seg.path.clone(),
                series: seg.series.clone(),
                bytes: 0,
                events: 0,
                ok: false,
            });
            return;
        }
    };
    let before = rep.count(Severity::Error);
    check_segment(&seg.path, &scan, &mut rep.findings);
    if let Some(l) = &seg.listed {
        check_listed(&seg.path, l, &scan, &mut rep.findings);
    }
    rep.events += scan.events;
    rep.bytes += scan.file_size;
    rep.segments.push(SegmentSummary {
        path: seg.path.clone(),
        series: seg.series.clone(),
        bytes: scan.file_size,
        events: scan.events,
        ok: rep.count(Severity::Error) == before,
    });
}

fn check_listed(
    path: &std::path::Path,
    l: &crate::tape::dir::manifest::ManifestSegment,
    s: &SegmentScan,
    out: &mut Vec<Finding>,
) {
    if s.header.is_none() || s.stream_error.is_some() {
        return;
    }
    let mut mismatch = |message: String| {
        let f = Finding::new(
            Severity::Error,
            FindingKind::ManifestMismatch,
            Some(path),
            message,
        );
        out.push(f.hint(Hint::new(
            "{} brings manifest.json up to date",
            &[Remedy::RebuildManifest],
        )));
    };
    if l.event_count != s.events {
        mismatch(format!(
            "manifest says {} events, the segment holds {}",
            l.event_count, s.events
        ));
    }
    if s.events > 0 {
        let h = s.header.unwrap_or_default();
        let spec = Some(l.first_event_ns) == s.min_ts && Some(l.last_event_ns) == s.max_ts;
        let header = l.first_event_ns == h.first_event_ns && l.last_event_ns == h.last_event_ns;
        if !spec && !header {
            mismatch(format!(
                "manifest time range [{}, {}] does not match the segment (earliest {}, latest {})",
                l.first_event_ns,
                l.last_event_ns,
                s.min_ts.unwrap_or(0),
                s.max_ts.unwrap_or(0)
            ));
        }
    }
}
