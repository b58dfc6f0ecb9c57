//! The pieces of a dataset of tapes (`floxlog.dataset`): a tape's byte
//! ranges as the read engine's one splitter cuts them ([`Split`]), listed
//! in one process and read one by one in any process that sees the files.
//!
//! A piece is named by its segment file and byte bounds. Reading it lists
//! the tape again, cuts only that segment with the same settings (the cut
//! points depend on nothing else) and reads the range whose bounds match:
//! every range starts at a cut point proven there and then, never at an
//! offset taken on trust from a pickle. The outcome is judged as
//! [`Split::settle_next`] judges a sequential read of the segment; when
//! that judgement depends on the ranges before the piece (its read ended
//! early, the Sorted flag is checked across the cut, the file is cut
//! short), those ranges are read first, counting only.

use crate::errors::{error_objects, ErrInfo};
use crate::read::{judge, list_tape, read_spec, time_ns, type_filter, TimeArg};
use crate::stream::{ArrowStream, Outcome, Source};
use crate::wait::interruptible;
use arrow_array::RecordBatch;
use floxlog::core::Event;
use floxlog::tape::read::header_is_unfinished;
use floxlog::tape::read::{RangeEnd, Settle, Split};
use floxlog::tape::{OpenedTape, Order, Tape, TapeError};
use floxlog_arrow::{read_range, ReadSpec, ReadSummary, RecordType, Symbols};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};

/// What every piece of a dataset is read with: a `Tape` read's filters,
/// in file order, and the range size the tape is cut at.
#[derive(Clone, Debug)]
struct PieceArgs {
    rtype: String,
    start: Option<TimeArg>,
    end: Option<TimeArg>,
    symbols: Option<Vec<String>>,
    strict: bool,
    range_bytes: u64,
}

/// The record type and read settings of `a` on `tape` (symbol names from
/// the tape's own `metadata.json`).
fn spec_of(tape: &Tape, a: &PieceArgs, rows: usize) -> Result<(RecordType, ReadSpec), TapeError> {
    let (rt, types) = type_filter(&a.rtype)?;
    if a.range_bytes == 0 {
        return Err(TapeError::usage("fragment_bytes must be at least 1"));
    }
    if rows == 0 {
        return Err(TapeError::usage("rows must be at least 1"));
    }
    let window = (
        time_ns(a.start.clone(), "start")?,
        time_ns(a.end.clone(), "end")?,
    );
    let spec = read_spec(tape, types, window, a.symbols.as_deref(), Order::File, rows)?;
    Ok((rt, spec))
}

/// One piece as listed: segment file, first byte (`None`: the segment's
/// start), end byte (`None`: the segment's end), and what the segment's
/// finished header claims: first and last event time, and (a whole
/// segment only) its event count of every type.
type PieceRow = (
    PathBuf,
    Option<u64>,
    Option<u64>,
    Option<i64>,
    Option<i64>,
    Option<u64>,
);

/// A tape's pieces, and its listing's warnings and errors.
type Listing = (Vec<PieceRow>, Vec<String>, Vec<ErrInfo>);

/// The pieces of the tape at `path`, and the listing's warnings and
/// errors (as a `Tape` read reports them).
fn list_pieces(path: &PathBuf, a: &PieceArgs) -> Result<Listing, TapeError> {
    let tape = list_tape(path)?;
    // Resolves the filters now: an unknown symbol name raises here.
    let (_, spec) = spec_of(&tape, a, 1)?;
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    for f in &tape.findings {
        if f.kind.is_unread() {
            errors.push(ErrInfo::from(f));
        } else {
            warnings.push(f.localized(&crate::words::PyWords).line());
        }
    }
    let paths: Vec<PathBuf> = tape.segments.iter().map(|s| s.path.clone()).collect();
    let opened = OpenedTape::open(tape);
    let split = Split::with_range_bytes(&opened, &spec.config(), a.range_bytes);
    let mut rows = Vec::new();
    let mut k = 0;
    for (seg, p) in paths.iter().enumerate() {
        if split.segment(k) != Some(seg) {
            // No range: the file did not open or its header failed. The
            // piece is the whole segment, and its read says why.
            rows.push((p.clone(), None, None, None, None, None));
            continue;
        }
        while split.segment(k) == Some(seg) {
            let (Some((start, end)), Some(h)) = (split.cut(k), split.header(k)) else {
                break;
            };
            let finished = !header_is_unfinished(h);
            let whole = start.is_none() && end == u64::MAX;
            rows.push((
                p.clone(),
                start,
                (end != u64::MAX).then_some(end),
                finished.then_some(h.first_event_ns),
                finished.then_some(h.last_event_ns),
                (finished && whole).then_some(u64::from(h.event_count)),
            ));
            k += 1;
        }
    }
    Ok((rows, warnings, errors))
}

/// How the errors of a piece rank among a tape's, as a `Tape` read lists
/// them: files that did not open, then segments by segment.
const RANK_OPEN: u8 = 1;
const RANK_READ: u8 = 2;

/// What reading a piece gave.
struct PieceRead {
    rt: RecordType,
    batches: Vec<RecordBatch>,
    outcome: Outcome,
    /// A sequential read of the segment reads nothing after this piece
    /// (it ended on an error or at the filter's end, or was never reached).
    ends_segment: bool,
    rank: u8,
}

/// The error of a piece whose segment is no longer in the tape.
fn gone(tape: &Path, seg: &Path) -> TapeError {
    match std::fs::metadata(seg) {
        Err(e) => TapeError::io(seg, "opening a fragment's segment", e),
        Ok(_) => TapeError::input(
            Some(seg),
            format!(
                "the file is no longer a segment of the tape {}: list the dataset again",
                tape.display()
            ),
        ),
    }
}

/// Reads the piece `[at, until)` of segment `seg` of the tape at `path`.
fn read_piece(
    path: &PathBuf,
    seg: &Path,
    at: Option<u64>,
    until: Option<u64>,
    a: &PieceArgs,
    rows: usize,
) -> Result<PieceRead, TapeError> {
    let mut tape = list_tape(path)?;
    let (rt, spec) = spec_of(&tape, a, rows)?;
    let symbols = Symbols::from_tape(&tape);
    let i = tape
        .segments
        .iter()
        .position(|s| s.path == seg)
        .ok_or_else(|| gone(path, seg))?;
    // Only this segment: its listing (for the cut-short check), its
    // directory (the writer lock), nothing else opened.
    tape.segments = vec![tape.segments.swap_remove(i)];
    tape.findings.clear();
    let opened = OpenedTape::open(tape);
    let mut outcome = Outcome::default();
    let mut piece = PieceRead {
        rt,
        batches: Vec::new(),
        outcome: Outcome::default(),
        ends_segment: true,
        rank: RANK_OPEN,
    };
    if !opened.open_errors.is_empty() {
        outcome
            .errors
            .extend(opened.open_errors.iter().map(ErrInfo::from));
        outcome.done = true;
        piece.outcome = outcome;
        return Ok(piece);
    }
    piece.rank = RANK_READ;
    let split = Split::with_range_bytes(&opened, &spec.config(), a.range_bytes);
    let mut summary = ReadSummary {
        problems: split.header_problems().to_vec(),
        ..ReadSummary::default()
    };
    let end = until.unwrap_or(u64::MAX);
    let wanted: Vec<usize> = (0..split.len())
        .filter(|&k| (at, until) == (None, None) || split.cut(k) == Some((at, end)))
        .collect();
    if wanted.is_empty() && summary.problems.is_empty() {
        return Err(TapeError::input(
            Some(seg),
            format!(
                "no range of the segment ends at byte {} any more: the segment changed since the \
                 dataset listed its fragments; list the dataset again",
                until.map_or("(end)".to_string(), |e| e.to_string())
            ),
        )
        .at(at.unwrap_or(0)));
    }
    let mut fatal = None;
    let mut reads = Vec::new();
    for &k in &wanted {
        let mut bs = Vec::new();
        match read_range(&split, k, spec.limits, &symbols, &mut |_, b| {
            bs.push(b);
            Ok(())
        }) {
            Ok((r, _)) => reads.push((k, r, bs)),
            Err(e) => {
                fatal = Some(e);
                break;
            }
        }
    }
    // Judged as a sequential read of the segment judges it, when the
    // piece's judgement depends on the ranges before it: an end that is a
    // problem counts the segment's events before it (from its first
    // range); the Sorted flag checked across the cut needs the range just
    // before (where earlier ones ended early, a truthful flag leaves this
    // one empty anyway).
    let first = wanted.first().copied().unwrap_or(0);
    let short = opened.checks.first().is_some_and(|c| c.short.is_some());
    let counts = reads.iter().any(|(k, r, _)| {
        !matches!(r.end, RangeEnd::Done | RangeEnd::Stopped) || (short && *k + 1 == split.len())
    });
    let sorted = reads.iter().any(|(k, _, _)| split.checks_sorted(*k));
    let replay_from = if counts {
        0
    } else if sorted {
        first.saturating_sub(1)
    } else {
        first
    };
    let mut st = Settle::default();
    if first > 0 {
        for k in replay_from..first {
            let r = split.read(k, &mut |_: &Event<'_>, _: u64| Ok(()))?;
            let _ = split.settle_next(&mut st, k, &r);
        }
    }
    let mut ends = false;
    for (k, r, bs) in reads {
        let (kept, failed, short) = split.settle_next(&mut st, k, &r);
        summary.problems.extend(failed);
        summary.problems.extend(short);
        if kept {
            piece.batches.extend(bs);
        }
        ends = !kept || !matches!(r.end, RangeEnd::Done);
    }
    judge(&summary, a.strict, &mut outcome);
    if let Some(e) = fatal {
        outcome.errors.push(ErrInfo::from(e));
        ends = true;
    }
    outcome.done = true;
    piece.outcome = outcome;
    piece.ends_segment = ends || !summary.problems.is_empty();
    Ok(piece)
}

/// The pieces of the tape at `path` read with these filters, cut at about
/// `range_bytes`: `(pieces, warnings, errors)`, each piece `(segment path,
/// first byte or None, end byte or None, first_ts, last_ts, events)` (the
/// last three what a finished header claims, else `None`), the listing's
/// warning texts and `FloxlogError` objects (not raised). Raises for a
/// path that is not a tape or a filter that cannot work.
#[pyfunction]
#[pyo3(signature = (path, rtype, start=None, end=None, symbols=None, strict=false, range_bytes=64 << 20))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn dataset_pieces<'py>(
    py: Python<'py>,
    path: PathBuf,
    rtype: String,
    start: Option<TimeArg>,
    end: Option<TimeArg>,
    symbols: Option<Vec<String>>,
    strict: bool,
    range_bytes: u64,
) -> PyResult<(Vec<PieceRow>, Vec<String>, Vec<Bound<'py, PyAny>>)> {
    let a = PieceArgs {
        rtype,
        start,
        end,
        symbols,
        strict,
        range_bytes,
    };
    let (rows, warnings, errors) =
        interruptible(py, "floxlog-list", move || list_pieces(&path, &a))?;
    Ok((rows, warnings, error_objects(py, &errors)?))
}

/// Reads one piece listed by `dataset_pieces` (the same filters and
/// `range_bytes`): `(stream, warnings, errors, ends_segment, rank)`: its
/// batches (of at most `rows` rows; those before an error too), warning
/// texts, `FloxlogError` objects (not raised), whether a sequential read
/// of the segment stops in it, and how its errors rank among the tape's (1:
/// the file did not open; 2: read).
#[pyfunction]
#[pyo3(signature = (path, segment, at, until, rtype, start=None, end=None, symbols=None, strict=false, range_bytes=64 << 20, rows=65536))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn read_dataset_piece<'py>(
    py: Python<'py>,
    path: PathBuf,
    segment: PathBuf,
    at: Option<u64>,
    until: Option<u64>,
    rtype: String,
    start: Option<TimeArg>,
    end: Option<TimeArg>,
    symbols: Option<Vec<String>>,
    strict: bool,
    range_bytes: u64,
    rows: usize,
) -> PyResult<(ArrowStream, Vec<String>, Vec<Bound<'py, PyAny>>, bool, u8)> {
    let a = PieceArgs {
        rtype,
        start,
        end,
        symbols,
        strict,
        range_bytes,
    };
    let p = interruptible(py, "floxlog-read", move || {
        read_piece(&path, &segment, at, until, &a, rows)
    })?;
    let errors = error_objects(py, &p.outcome.errors)?;
    let warnings = p.outcome.warnings.clone();
    let stream = ArrowStream::new(p.rt.schema(), Source::Batches(p.batches), p.outcome);
    Ok((stream, warnings, errors, p.ends_segment, p.rank))
}
