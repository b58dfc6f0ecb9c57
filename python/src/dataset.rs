//! The pieces of a dataset of tapes (`floxlog.dataset`): the read
//! session's fragments ([`Session::fragments`], [`Session::read_fragment`]: how a tape is
//! cut and how a fragment's read is judged are the session's), listed in
//! one process and read one by one in any process that sees the files;
//! here only the Python arguments and results.

use crate::errors::{error_objects, ErrInfo};
use crate::read::{convert, list_tape, ReadArgs};
use crate::stream::{ArrowStream, Outcome, Source};
use crate::wait::interruptible;
use arrow_array::RecordBatch;
use floxlog::tape::read::Session;
use floxlog::tape::{ReadOutcome, Tape, TapeError};
use floxlog_arrow::{read_piece, ReadSpec, RecordType, Symbols};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};

/// The record type and read settings of `a` on `tape` (symbol names from
/// the tape's own `metadata.json`), cut at `range_bytes`.
fn spec_of(
    tape: &Tape,
    a: &ReadArgs,
    range_bytes: u64,
) -> Result<(RecordType, ReadSpec), TapeError> {
    if range_bytes == 0 {
        return Err(TapeError::usage("fragment_bytes must be at least 1"));
    }
    let (rt, req) = a.request(tape)?;
    Ok((rt, a.spec(&req)?))
}

/// One piece as listed: segment file, first byte (`None`: the segment's
/// start), end byte (`None`: the segment's end), and what the segment's
/// finished header claims: first and last event time, and (a whole
/// segment only) its event count of every type.
/// (Paths as `str`, not `pathlib.Path`, which would make `s3://` `s3:/`.)
type PieceRow = (
    std::ffi::OsString,
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
fn list_pieces(path: &PathBuf, a: &ReadArgs, range_bytes: u64) -> Result<Listing, TapeError> {
    let tape = list_tape(path)?;
    // Resolves the filters now: an unknown symbol name raises here.
    let (_, spec) = spec_of(&tape, a, range_bytes)?;
    let Outcome {
        warnings, errors, ..
    } = Outcome::listing(&tape.findings);
    // Objects on object storage: their headers and index trailers only.
    let session = Session::open_fragments(tape, spec.request());
    let rows = session
        .fragments(range_bytes)
        .into_iter()
        .map(|f| {
            let path = session.tape().segments[f.segment]
                .path
                .clone()
                .into_os_string();
            (path, f.start, f.end, f.first_ns, f.last_ns, f.events)
        })
        .collect();
    Ok((rows, warnings, errors))
}

/// How the errors of a piece rank among a tape's, as a `Tape` read lists
/// them: files that did not open, then segments by segment.
const RANK_OPEN: u8 = 1;
const RANK_READ: u8 = 2;

/// What reading a piece gave.
struct PieceOut {
    schema: arrow_schema::SchemaRef,
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
fn read_one(
    path: &PathBuf,
    seg: &Path,
    at: Option<u64>,
    until: Option<u64>,
    a: &ReadArgs,
    range_bytes: u64,
) -> Result<PieceOut, TapeError> {
    let c = &a.conversion()?;
    let mut tape = list_tape(path)?;
    let (rt, spec) = spec_of(&tape, a, range_bytes)?;
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
    // An object on object storage: its header and index trailer, then the
    // fragment's frames fetched part by part as they are read.
    let session = Session::open_fragments(tape, spec.request());
    let mut outcome = Outcome::default();
    let mut piece = PieceOut {
        schema: c.schema(&rt.schema()),
        batches: Vec::new(),
        outcome: Outcome::default(),
        ends_segment: true,
        rank: RANK_OPEN,
    };
    if !session.open_errors().is_empty() {
        outcome
            .errors
            .extend(session.open_errors().iter().map(ErrInfo::from));
        outcome.done = true;
        piece.outcome = outcome;
        return Ok(piece);
    }
    piece.rank = RANK_READ;
    let f = session.read_fragment(range_bytes, at, until, &mut |p| {
        let mut bs = Vec::new();
        read_piece(p, &spec, &symbols, &mut |_, b| {
            bs.push(convert(c, &b)?);
            Ok(())
        })?;
        Ok(bs)
    })?;
    piece.batches = f.kept.into_iter().flatten().collect();
    outcome.judge(ReadOutcome::new(&f.problems, a.strict));
    if let Some(e) = f.fatal {
        outcome.errors.push(ErrInfo::from(e));
    }
    outcome.done = true;
    piece.outcome = outcome;
    piece.ends_segment = f.ends_segment;
    Ok(piece)
}

/// The pieces of the tape at `path` read with `args` (see [`ReadArgs`];
/// file order), cut at about `range_bytes`: `(pieces, warnings, errors)`,
/// each piece `(segment path, first byte or None, end byte or None,
/// first_ts, last_ts, events)` (the last three what a finished header
/// claims, else `None`), the listing's warning texts and `FloxlogError`
/// objects (not raised). Raises for a path that is not a tape or a filter
/// that cannot work.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn dataset_pieces<'py>(
    py: Python<'py>,
    path: PathBuf,
    args: ReadArgs,
    range_bytes: u64,
) -> PyResult<(Vec<PieceRow>, Vec<String>, Vec<Bound<'py, PyAny>>)> {
    let (rows, warnings, errors) = interruptible(py, "floxlog-list", move || {
        list_pieces(&path, &args, range_bytes)
    })?;
    Ok((rows, warnings, error_objects(py, &errors)?))
}

/// Reads one piece listed by `dataset_pieces` (the same `args` but for
/// `rows`, `prices` and `timestamps`, and the same `range_bytes`):
/// `(stream, warnings, errors, ends_segment, rank)`: its batches (those
/// before an error too), warning texts, `FloxlogError` objects (not
/// raised), whether a sequential read of the segment stops in it, and how
/// its errors rank among the tape's (1: the file did not open; 2: read).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn read_dataset_piece<'py>(
    py: Python<'py>,
    path: PathBuf,
    segment: PathBuf,
    at: Option<u64>,
    until: Option<u64>,
    args: ReadArgs,
    range_bytes: u64,
) -> PyResult<(ArrowStream, Vec<String>, Vec<Bound<'py, PyAny>>, bool, u8)> {
    let p = interruptible(py, "floxlog-read", move || {
        read_one(&path, &segment, at, until, &args, range_bytes)
    })?;
    let errors = error_objects(py, &p.outcome.errors)?;
    let warnings = p.outcome.warnings.clone();
    let stream = ArrowStream::new(p.schema, Source::Batches(p.batches), p.outcome);
    Ok((stream, warnings, errors, p.ends_segment, p.rank))
}
