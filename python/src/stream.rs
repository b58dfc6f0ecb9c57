//! `ArrowStream`: record batches behind the Arrow PyCapsule interface
//! (`__arrow_c_stream__`), consumed once by pyarrow, polars, DuckDB or any
//! other Arrow consumer.
//!
//! Two sources: batches already decoded (a whole-table read), or a tape
//! read that has not started. The latter runs on a background thread when
//! the stream is consumed: the thread owns the opened tape, decodes with
//! `floxlog_arrow::read_batches` and hands each batch over a channel of two
//! slots, so at most a few batches are in memory however long the tape. If
//! the consumer stops (drops the stream), the thread's next send fails and
//! the read ends.

use crate::errors::to_pyerr;
use crate::read::Job;
// Defined beside the read that fills it; named here too, where the stream
// reports it.
pub use crate::read::Outcome;
use arrow_array::ffi::FFI_ArrowSchema;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_pyarrow::ToPyArrow;
use arrow_schema::{ArrowError, SchemaRef};
use floxlog::tape::TapeError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};

/// Batches in flight between the reading thread and the consumer.
const CHANNEL_SLOTS: usize = 2;

/// Where a stream's batches come from.
pub enum Source {
    /// Decoded already.
    Batches(Vec<RecordBatch>),
    /// A read to run on a thread when the stream is consumed.
    Tape(Box<Job>),
}

/// An Arrow C stream of record batches, consumable once.
#[pyclass(module = "floxlog._floxlog", name = "ArrowStream", frozen)]
pub struct ArrowStream {
    schema: SchemaRef,
    source: Mutex<Option<Source>>,
    outcome: Arc<Mutex<Outcome>>,
}

impl ArrowStream {
    /// A stream over `source`, whose batches have `schema`.
    pub fn new(schema: SchemaRef, source: Source, outcome: Outcome) -> ArrowStream {
        ArrowStream {
            schema,
            source: Mutex::new(Some(source)),
            outcome: Arc::new(Mutex::new(outcome)),
        }
    }

    fn take_reader(&self, py: Python<'_>) -> PyResult<Box<dyn RecordBatchReader + Send>> {
        let src = self
            .source
            .lock()
            .map_err(|_| to_pyerr(py, TapeError::usage("the stream's lock is poisoned")))?
            .take()
            .ok_or_else(|| {
                to_pyerr(
                    py,
                    TapeError::usage(
                        "this stream was already consumed: an Arrow stream can be read once; \
                         call Tape.batches() again for another",
                    ),
                )
            })?;
        Ok(match src {
            Source::Batches(v) => Box::new(RecordBatchIterator::new(
                v.into_iter().map(Ok),
                self.schema.clone(),
            )),
            Source::Tape(job) => {
                let (tx, rx) = sync_channel(CHANNEL_SLOTS);
                let outcome = self.outcome.clone();
                std::thread::Builder::new()
                    .name("floxlog-read".into())
                    .spawn(move || job.run_to_channel(tx, outcome))
                    .map_err(|e| {
                        to_pyerr(
                            py,
                            TapeError::io(
                                std::path::Path::new("<thread>"),
                                "starting the reading thread",
                                e,
                            ),
                        )
                    })?;
                Box::new(ChannelReader {
                    schema: self.schema.clone(),
                    rx,
                    outcome: self.outcome.clone(),
                    ended: false,
                })
            }
        })
    }
}

#[pymethods]
impl ArrowStream {
    /// Exports the stream as an `ArrowArrayStream` PyCapsule (the Arrow
    /// PyCapsule interface). `requested_schema` is ignored: the batches
    /// come in the record type's schema. A second call raises.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = self.take_reader(py)?;
        let stream = FFI_ArrowArrayStream::new(reader);
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Exports the schema as an `ArrowSchema` PyCapsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let s = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| to_pyerr(py, TapeError::input(None, e.to_string())))?;
        PyCapsule::new_with_value(py, s, c"arrow_schema")
    }

    /// The schema as a `pyarrow.Schema`.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.schema.as_ref().to_pyarrow(py)
    }

    /// Whether the stream was handed to a consumer.
    #[getter]
    fn consumed(&self) -> bool {
        self.source.lock().map(|s| s.is_none()).unwrap_or(true)
    }

    /// Whether the read has finished (every batch sent, or failed).
    #[getter]
    fn done(&self) -> bool {
        self.outcome.lock().map(|o| o.done).unwrap_or(true)
    }

    /// Warnings of the read so far (complete once `done`).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.outcome
            .lock()
            .map(|o| o.warnings.clone())
            .unwrap_or_default()
    }

    /// Errors of the read, as `FloxlogError` objects (complete once `done`).
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let errs = self
            .outcome
            .lock()
            .map(|o| o.errors.clone())
            .unwrap_or_default();
        errs.iter()
            .map(|e| crate::errors::error_object(py, e))
            .collect()
    }
}

/// The consumer's end of the channel.
struct ChannelReader {
    schema: SchemaRef,
    rx: Receiver<Result<RecordBatch, ArrowError>>,
    outcome: Arc<Mutex<Outcome>>,
    ended: bool,
}

impl Iterator for ChannelReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        match self.rx.recv() {
            Ok(item) => Some(item),
            Err(_) => {
                // The sender hangs up after its last batch (or error),
                // having marked the outcome done; a thread that died
                // without doing so (a panic) must not look like the end of
                // the tape.
                self.ended = true;
                let done = self.outcome.lock().map(|o| o.done).unwrap_or(false);
                (!done).then(|| {
                    Err(ArrowError::ExternalError(
                        "floxlog: the reading thread stopped before the end of the read".into(),
                    ))
                })
            }
        }
    }
}

impl RecordBatchReader for ChannelReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
