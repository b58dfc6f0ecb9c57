//! `floxlog._floxlog`: the native half of the `floxlog` Python package.
//!
//! The public API is the pure-Python `floxlog` package (python/floxlog),
//! which normalises arguments, builds pyarrow Tables and numpy arrays, and
//! raises warnings; this module does the work with the GIL released:
//! listing and reading tapes into Arrow record batches
//! (`floxlog_arrow::read_batches`), exporting them through the Arrow C
//! stream interface, writing tapes from Arrow streams
//! (`floxlog_arrow::append_batch`), `inspect` and `verify`.

mod errors;
mod read;
mod stream;
mod writer;

use crate::errors::{to_pyerr, ErrInfo, IntoPy};
use crate::read::{list_tape, time_ns, Job, ReadArgs, TimeArg};
use crate::stream::{ArrowStream, Outcome, Source};
use crate::writer::{write_tape, WriteArgs};
use arrow_array::ffi_stream::RecordBatchStreamReader;
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use arrow_schema::{DataType, Field, Schema};
use floxlog::core::{ReadOptions, UnknownTypes};
use floxlog::tape::inspect::{inspect_tape, InspectOptions};
use floxlog::tape::verify::verify_tape;
use floxlog::tape::{Severity, TapeError};
use floxlog_arrow::RecordType;
use pyo3::prelude::*;
use std::path::PathBuf;

fn record_type(py: Python<'_>, name: &str) -> PyResult<RecordType> {
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
    /// The path given to `open`.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Reads every event of one record type; returns
    /// `(stream, warnings, errors)`: the batches read (also those before
    /// an error), warning texts, and `FloxlogError` objects (not raised).
    #[pyo3(signature = (rtype, start=None, end=None, symbols=Vec::new(), order="time", strict=false, rows=65536))]
    #[allow(clippy::too_many_arguments)]
    fn read<'py>(
        &self,
        py: Python<'py>,
        rtype: String,
        start: Option<TimeArg>,
        end: Option<TimeArg>,
        symbols: Vec<String>,
        order: &str,
        strict: bool,
        rows: usize,
    ) -> PyResult<(ArrowStream, Vec<String>, Vec<Bound<'py, PyAny>>)> {
        let args = ReadArgs {
            rtype,
            start,
            end,
            symbols,
            order: order.to_string(),
            strict,
            rows,
        };
        let path = self.path.clone();
        let (rt, batches, outcome) = py
            .detach(move || {
                let job = Job::new(&path, args)?;
                let rt = job.record_type();
                let (batches, outcome) = job.run_all();
                Ok((rt, batches, outcome))
            })
            .py_err(py)?;
        let errors = outcome
            .errors
            .iter()
            .map(|e| errors::error_object(py, e))
            .collect::<PyResult<Vec<_>>>()?;
        let warnings = outcome.warnings.clone();
        let s = ArrowStream::new(rt.schema(), Source::Batches(batches), outcome);
        Ok((s, warnings, errors))
    }

    /// A stream of batches of at most `rows` rows, read on a background
    /// thread once consumed. Lists the tape and resolves the arguments now
    /// (raising for a bad path or an unknown symbol name).
    #[pyo3(signature = (rtype, start=None, end=None, symbols=Vec::new(), order="time", strict=false, rows=65536))]
    #[allow(clippy::too_many_arguments)]
    fn stream(
        &self,
        py: Python<'_>,
        rtype: String,
        start: Option<TimeArg>,
        end: Option<TimeArg>,
        symbols: Vec<String>,
        order: &str,
        strict: bool,
        rows: usize,
    ) -> PyResult<ArrowStream> {
        let args = ReadArgs {
            rtype,
            start,
            end,
            symbols,
            order: order.to_string(),
            strict,
            rows,
        };
        let path = self.path.clone();
        let job = py.detach(move || Job::new(&path, args)).py_err(py)?;
        Ok(ArrowStream::new(
            job.record_type().schema(),
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
        py.detach(move || {
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
        .py_err(py)
    }

    /// What `floxlog inspect --json` prints, as JSON text, and the errors
    /// of files that could not be opened.
    #[pyo3(signature = (quick=false))]
    fn inspect(&self, py: Python<'_>, quick: bool) -> PyResult<(String, Vec<String>)> {
        let path = self.path.clone();
        py.detach(move || {
            let tape = list_tape(&path)?;
            let insp = inspect_tape(&tape, InspectOptions { quick }, &mut |_| {});
            let errs = insp.open_errors.iter().map(|e| e.to_string()).collect();
            Ok((insp.to_json_text(), errs))
        })
        .py_err(py)
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
        let (text, failed) = py
            .detach(move || {
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
                    "findings": rep.findings,
                });
                let failed = (!passed)
                    .then(|| {
                        rep.findings
                            .iter()
                            .find(|f| f.severity == Severity::Error)
                            .or_else(|| {
                                rep.findings
                                    .iter()
                                    .find(|f| f.severity == Severity::Warning)
                            })
                            .map(ErrInfo::from)
                    })
                    .flatten();
                let text = serde_json::to_string_pretty(&v).unwrap_or_default();
                Ok::<_, TapeError>((text, failed))
            })
            .py_err(py)?;
        let err = failed.map(|e| errors::error_object(py, &e)).transpose()?;
        Ok((text, err))
    }
}

/// Lists the tape at `path` (a tape directory of either layout, or a
/// segment file); raises `FloxlogError` if it is not one.
#[pyfunction]
fn open(py: Python<'_>, path: PathBuf) -> PyResult<NativeTape> {
    let p = path.clone();
    py.detach(move || list_tape(&p)).py_err(py)?;
    Ok(NativeTape { path })
}

/// The Arrow schema of a record type, as a `pyarrow.Schema`.
#[pyfunction]
fn schema<'py>(py: Python<'py>, rtype: &str) -> PyResult<Bound<'py, PyAny>> {
    record_type(py, rtype)?.schema().as_ref().to_pyarrow(py)
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

/// Writes a new tape at `path` from `parts`, a list of (record type,
/// Arrow stream source) pairs; returns (events, segments, bytes).
#[pyfunction]
#[pyo3(signature = (path, parts, *, compression="lz4", layout="flox", profile="reference",
    index_interval=None, no_index=false, max_segment_bytes=None, rotate_every_ns=None,
    exchange_id=0, created_ns=None, durability="close", metadata=None))]
#[allow(clippy::too_many_arguments)]
fn write(
    py: Python<'_>,
    path: PathBuf,
    parts: Vec<(String, Bound<'_, PyAny>)>,
    compression: &str,
    layout: &str,
    profile: &str,
    index_interval: Option<u16>,
    no_index: bool,
    max_segment_bytes: Option<u64>,
    rotate_every_ns: Option<i64>,
    exchange_id: u8,
    created_ns: Option<i64>,
    durability: &str,
    metadata: Option<String>,
) -> PyResult<(u64, u64, u64)> {
    let args = WriteArgs {
        compression: compression.into(),
        layout: layout.into(),
        profile: profile.into(),
        index_interval,
        no_index,
        max_segment_bytes,
        rotate_every_ns,
        exchange_id,
        created_ns,
        durability: durability.into(),
        metadata,
    };
    let (cfg, md) = args.config().py_err(py)?;
    let mut readers = Vec::with_capacity(parts.len());
    for (name, obj) in &parts {
        let rt = record_type(py, name)?;
        readers.push((rt, RecordBatchStreamReader::from_pyarrow_bound(obj)?));
    }
    let w = py
        .detach(move || write_tape(&path, cfg, md, readers))
        .py_err(py)?;
    Ok((w.events, w.segments, w.bytes))
}

/// The native module.
#[pymodule]
fn _floxlog(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeTape>()?;
    m.add_class::<ArrowStream>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(record_type_name, m)?)?;
    m.add_function(wrap_pyfunction!(record_type_of, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
