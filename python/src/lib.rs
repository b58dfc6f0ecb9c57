//! `floxlog._floxlog`: the native half of the `floxlog` Python package.
//!
//! The public API is the pure-Python `floxlog` package (python/floxlog),
//! which normalises arguments, builds pyarrow Tables and numpy arrays, and
//! raises warnings; this module does the work with the GIL released:
//! listing and reading tapes into Arrow record batches
//! (`floxlog_arrow::read_batches`), exporting them through the Arrow C
//! stream interface, writing tapes batch by batch from Python
//! (`floxlog_arrow::append_batch`), book replays, `inspect` and `verify`.
//! Long calls run on a worker thread while the caller polls for Ctrl-C
//! (`wait::interruptible`).

mod dataset;
mod errors;
mod follow;
mod read;
mod samples;
mod store;
mod stream;
mod wait;
mod words;
mod writer;

use crate::errors::{to_pyerr, ErrInfo, IntoPy};
use crate::read::{list_tape, time_ns, Job, ReadArgs, TimeArg};
use crate::stream::{ArrowStream, Outcome, Source};
use crate::wait::interruptible;
use crate::writer::NativeWriter;
use arrow_array::cast::AsArray;
use arrow_array::Array;
use arrow_pyarrow::{PyArrowType, ToPyArrow};
use arrow_schema::{DataType, Field, Schema};
use floxlog::core::{ReadOptions, UnknownTypes};
use floxlog::tape::check::verify_tape;
use floxlog::tape::check::{inspect_tape, InspectOptions};
use floxlog::tape::{Severity, TapeError};
use floxlog_arrow::RecordType;
use pyo3::prelude::*;
use std::path::PathBuf;

pub(crate) fn record_type(py: Python<'_>, name: &str) -> PyResult<RecordType> {
    RecordType::from_name(name).ok_or_else(|| {
        to_pyerr(
            py,
            TapeError::usage(format!(
                "unknown record type `{name}` (trade, book, option_quote, pool_state)"
            )),
        )
    })
}

/// A tape (a directory of either layout, or one segment file).
#[pyclass(module = "floxlog._floxlog", name = "NativeTape", frozen)]
struct NativeTape {
    path: PathBuf,
}

#[pymethods]
impl NativeTape {
    /// The path given to `open` (a `str`: `pathlib.Path` would make an
    /// `s3://` URL `s3:/`).
    #[getter]
    fn path(&self) -> std::ffi::OsString {
        self.path.clone().into_os_string()
    }

    /// Reads every event of one record type (`args`: the read's arguments
    /// by name, see [`ReadArgs`]); returns
    /// `(stream, warnings, errors)`: the batches read (also those before
    /// an error), warning texts, and `FloxlogError` objects (not raised).
    fn read<'py>(
        &self,
        py: Python<'py>,
        args: ReadArgs,
    ) -> PyResult<(ArrowStream, Vec<String>, Vec<Bound<'py, PyAny>>)> {
        let path = self.path.clone();
        let (schema, batches, outcome) = interruptible(py, "floxlog-read", move || {
            let job = Job::new(&path, args)?;
            let schema = job.schema();
            let (batches, outcome) = job.run_all();
            Ok((schema, batches, outcome))
        })?;
        let errors = errors::error_objects(py, &outcome.errors)?;
        let warnings = outcome.warnings.clone();
        let s = ArrowStream::new(schema, Source::Batches(batches), outcome);
        Ok((s, warnings, errors))
    }

    /// A stream of batches of at most `rows` rows, read on a background
    /// thread once consumed. Lists the tape and resolves the arguments now
    /// (raising for a bad path or an unknown symbol name).
    fn stream(&self, py: Python<'_>, args: ReadArgs) -> PyResult<ArrowStream> {
        let path = self.path.clone();
        let job = py.detach(move || Job::new(&path, args)).py_err(py)?;
        Ok(ArrowStream::new(
            job.schema(),
            Source::Tape(Box::new(job)),
            Outcome::default(),
        ))
    }

    /// One symbol's order book after every book event stamped at or before
    /// `at` (`floxlog book --at`): `(symbol_id, at, last_event_ts, bids,
    /// asks, warnings)`, sides best first as `(price_raw, qty_raw)` pairs,
    /// the top `depth` levels (all with `None`). Raises for damage, a
    /// negative quantity or a bad argument.
    #[pyo3(signature = (symbol, at, depth=None, strict=false))]
    #[allow(clippy::type_complexity)]
    fn book_at(
        &self,
        py: Python<'_>,
        symbol: String,
        at: TimeArg,
        depth: Option<usize>,
        strict: bool,
    ) -> PyResult<(
        u32,
        i64,
        Option<i64>,
        Vec<(i64, i64)>,
        Vec<(i64, i64)>,
        Vec<String>,
    )> {
        let path = self.path.clone();
        interruptible(py, "floxlog-book", move || {
            let at = time_ns(Some(at), "at")?.unwrap_or(0);
            let tape = list_tape(&path)?;
            let sym = match tape.symbol_ids(std::slice::from_ref(&symbol))?.as_deref() {
                Some([id]) => *id,
                _ => return Err(TapeError::usage("symbol: give one symbol")),
            };
            let opts = floxlog::book_replay::ReplayOptions {
                strict,
                ..Default::default()
            };
            let (s, warnings) = floxlog::book_replay::book_at(tape, sym, at, depth, &opts)?;
            let pairs =
                |v: &[floxlog::core::Level]| v.iter().map(|l| (l.price_raw, l.qty_raw)).collect();
            Ok((
                sym,
                s.at,
                s.last_ts,
                pairs(&s.bids),
                pairs(&s.asks),
                warnings,
            ))
        })
    }

    /// One symbol's book sampled at `start`, `start + every`, ... before
    /// `end`, in one replay (`floxlog book --every`): `(batch, warnings)`,
    /// one row a sample (see `samples::Samples::batch`), levels with
    /// `prices` as a book read gives them.
    #[pyo3(signature = (symbol, every, start, end, depth=None, strict=false, prices="decimal"))]
    #[allow(clippy::too_many_arguments)]
    fn book_samples<'py>(
        &self,
        py: Python<'py>,
        symbol: String,
        every: i64,
        start: i64,
        end: i64,
        depth: Option<usize>,
        strict: bool,
        prices: &str,
    ) -> PyResult<(Bound<'py, PyAny>, Vec<String>)> {
        let path = self.path.clone();
        let c = read::conversion(prices, "ns").py_err(py)?;
        let args = samples::SampleArgs {
            symbol,
            every,
            from: start,
            to: end,
            depth,
            strict,
        };
        let (batch, warnings) = interruptible(py, "floxlog-book", move || {
            let mut s = samples::book_samples(&path, args)?;
            let warnings = std::mem::take(&mut s.warnings);
            Ok((s.batch(&c)?, warnings))
        })?;
        Ok((batch.to_pyarrow(py)?, warnings))
    }

    /// What `floxlog inspect --json` prints, as JSON text, and the errors
    /// of files that could not be opened.
    #[pyo3(signature = (quick=false))]
    fn inspect(&self, py: Python<'_>, quick: bool) -> PyResult<(String, Vec<String>)> {
        let path = self.path.clone();
        interruptible(py, "floxlog-inspect", move || {
            let tape = list_tape(&path)?;
            let insp = inspect_tape(&tape, InspectOptions { quick }, &mut |_| {});
            let errs = insp
                .open_errors
                .iter()
                .map(|e| e.localized(&words::PyWords).to_string())
                .collect();
            Ok((insp.to_json_text(), errs))
        })
    }

    /// The findings `floxlog gaps --json` prints (JSON Lines text), with
    /// shortest silence `min_gap_ns`.
    #[pyo3(signature = (min_gap_ns=floxlog::see::gaps::DEFAULT_MIN_GAP_NS))]
    fn gaps(&self, py: Python<'_>, min_gap_ns: i64) -> PyResult<String> {
        if min_gap_ns <= 0 {
            return Err(to_pyerr(py, TapeError::usage("min_gap must be positive")));
        }
        let path = self.path.clone();
        interruptible(py, "floxlog-gaps", move || {
            let tape = list_tape(&path)?;
            let opts = floxlog::see::gaps::GapOptions {
                min_gap_ns,
                ..Default::default()
            };
            let rep = floxlog::see::gaps::find_gaps(tape, &opts)?;
            let mut text = String::new();
            for g in &rep.gaps {
                text.push_str(&g.to_json().to_string());
                text.push('\n');
            }
            Ok::<_, TapeError>(text)
        })
    }

    /// A small HTML card of the tape (summary and timeline, as in
    /// `floxlog report`), for notebooks.
    fn card(&self, py: Python<'_>) -> PyResult<String> {
        let path = self.path.clone();
        interruptible(py, "floxlog-card", move || {
            let tape = list_tape(&path)?;
            let seen = floxlog::see::report::see(tape, &Default::default())?;
            Ok::<_, TapeError>(seen.card())
        })
    }

    /// The report `floxlog verify --json` prints, as JSON text, and the
    /// first finding that fails the check (`None` if it passes).
    #[pyo3(signature = (strict=false, skip_unknown=false))]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        strict: bool,
        skip_unknown: bool,
    ) -> PyResult<(String, Option<Bound<'py, PyAny>>)> {
        let path = self.path.clone();
        let (text, failed) = interruptible(py, "floxlog-verify", move || {
            let tape = list_tape(&path)?;
            let opts = ReadOptions {
                verify_crc: true,
                unknown_types: if skip_unknown {
                    UnknownTypes::Skip
                } else {
                    UnknownTypes::Reject
                },
                ..ReadOptions::default()
            };
            let rep = verify_tape(&tape, opts, &mut |_| {});
            let passed = rep.passed(strict);
            let v = serde_json::json!({
                "ok": passed,
                "strict": strict,
                "errors": rep.count(Severity::Error),
                "warnings": rep.count(Severity::Warning),
                "events": rep.events,
                "bytes": rep.bytes,
                "segments": rep.segments,
                "findings": rep
                    .findings
                    .iter()
                    .map(|f| f.localized(&words::PyWords))
                    .collect::<Vec<_>>(),
            });
            let failed = rep.worst(strict).map(ErrInfo::from);
            let text = serde_json::to_string_pretty(&v).unwrap_or_default();
            Ok::<_, TapeError>((text, failed))
        })?;
        let err = failed.map(|e| errors::error_object(py, &e)).transpose()?;
        Ok((text, err))
    }
}

/// Lists the tape at `path` (a tape directory of either layout, or a
/// segment file); raises `FloxlogError` if it is not one.
#[pyfunction]
fn open(py: Python<'_>, path: PathBuf) -> PyResult<NativeTape> {
    let p = path.clone();
    py.detach(move || {
        let segment_name = p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(floxlog::tape::dir::segment_series)
            .is_some();
        if p.is_file() && !segment_name {
            check_magic(&p)?;
        }
        list_tape(&p)
    })
    .py_err(py)?;
    Ok(NativeTape { path })
}

/// A file not named as a segment (`*.floxlog`, `<series>-NNNNNN.bin`) must
/// start with the segment magic to be one. A file named as a segment opens
/// whatever it holds: it is a damaged segment, and its reads report the
/// damage as `floxlog cat` does.
fn check_magic(p: &std::path::Path) -> Result<(), TapeError> {
    use std::io::Read;
    let mut head = [0u8; 4];
    let mut f = std::fs::File::open(p).map_err(|e| TapeError::io(p, "opening", e))?;
    let n = f
        .read(&mut head)
        .map_err(|e| TapeError::io(p, "reading the segment magic", e))?;
    if n == 4 && u32::from_le_bytes(head) == floxlog::core::MAGIC_SEGMENT {
        return Ok(());
    }
    let e = floxlog::core::Error::new(
        floxlog::core::ErrorKind::BadMagic,
        0,
        "not a .floxlog segment: it does not start with the segment magic FLOX",
    );
    Err(TapeError::data(p, e)
        .with_hint("floxlog.open takes a tape directory or a segment file (*.floxlog)"))
}

/// Nanoseconds of a time given as text (ISO 8601; UTC unless it has an
/// offset); `what` names the argument in the error.
#[pyfunction]
fn parse_time(py: Python<'_>, text: String, what: &str) -> PyResult<i64> {
    Ok(time_ns(Some(TimeArg::Text(text)), what)
        .py_err(py)?
        .unwrap_or_default())
}

/// The Arrow schema of a record type, as a `pyarrow.Schema`: as stored
/// (raw book levels), or with `prices` as a read converts it.
#[pyfunction]
#[pyo3(signature = (rtype, prices=None, timestamps="ns"))]
fn schema<'py>(
    py: Python<'py>,
    rtype: &str,
    prices: Option<&str>,
    timestamps: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let s = record_type(py, rtype)?.schema();
    let s = match prices {
        None => s,
        Some(p) => read::conversion(p, timestamps).py_err(py)?.schema(&s),
    };
    s.as_ref().to_pyarrow(py)
}

/// `raw / 1e8` rounded once of every value of an int64 array (a
/// `pyarrow.Array`), as float64: the twin a read with `prices="float"`
/// makes, which the writer compares a given float column with.
#[pyfunction]
fn float_prices<'py>(
    py: Python<'py>,
    raw: PyArrowType<arrow_data::ArrayData>,
) -> PyResult<Bound<'py, PyAny>> {
    let raw = arrow_array::make_array(raw.0);
    let raw = raw
        .as_primitive_opt::<arrow_array::types::Int64Type>()
        .ok_or_else(|| to_pyerr(py, TapeError::usage("float_prices takes an int64 array")))?;
    let out: arrow_array::Float64Array = raw.unary(floxlog_arrow::convert::raw_to_f64);
    out.to_data().to_pyarrow(py)
}

/// The raw fields of a record type whose definition says 0 means unknown
/// (the Python writer defaults them to 0).
#[pyfunction]
fn optional_fields(py: Python<'_>, rtype: &str) -> PyResult<Vec<&'static str>> {
    Ok(record_type(py, rtype)?.optional_fields())
}

/// The canonical name of a record type given by any of its names
/// (`trades`, `book_delta`, ...).
#[pyfunction]
fn record_type_name(py: Python<'_>, rtype: &str) -> PyResult<&'static str> {
    Ok(record_type(py, rtype)?.name())
}

/// The record type whose raw columns these column names carry, if exactly
/// one matches.
#[pyfunction]
fn record_type_of(columns: Vec<String>) -> Option<&'static str> {
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| Field::new(c, DataType::Null, true))
        .collect();
    RecordType::of_schema(&Schema::new(fields)).map(RecordType::name)
}

/// The native module.
#[pymodule]
fn _floxlog(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeTape>()?;
    m.add_class::<ArrowStream>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time, m)?)?;
    m.add_function(wrap_pyfunction!(record_type_name, m)?)?;
    m.add_function(wrap_pyfunction!(optional_fields, m)?)?;
    m.add_function(wrap_pyfunction!(float_prices, m)?)?;
    m.add_function(wrap_pyfunction!(record_type_of, m)?)?;
    m.add_function(wrap_pyfunction!(store::configure_store, m)?)?;
    m.add_function(wrap_pyfunction!(store::list_url, m)?)?;
    m.add_function(wrap_pyfunction!(store::store_stats, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::dataset_pieces, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::read_dataset_piece, m)?)?;
    m.add_class::<NativeWriter>()?;
    m.add_class::<follow::NativeFollow>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
