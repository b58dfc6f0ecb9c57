//! `NativeFollow`: the events of one record type of a live tape as Arrow
//! record batches, as the writer appends them (`floxlog::tape::Tail`,
//! columns from `floxlog_arrow::Columns`). A batch is handed out when it is
//! full or when nothing more has arrived; waiting releases the GIL and
//! looks for Ctrl-C every few milliseconds.

use crate::errors::{to_pyerr, IntoPy};
use arrow_pyarrow::ToPyArrow;
use floxlog::tape::{
    OpenOptions, Tail, TailNext, TailOptions, TailPosition, TailStart, Tape, TapeError,
};
use floxlog_arrow::{Columns, Limits, RecordType, Symbols, WithLevels};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest wait with the GIL released before looking for a signal.
const SLICE: Duration = Duration::from_millis(20);

struct State {
    tail: Tail,
    cols: Columns,
    rtype: RecordType,
    symbols: Symbols,
    convert: WithLevels,
}

/// A live tape followed (see `floxlog.follow`).
#[pyclass(module = "floxlog._floxlog", name = "NativeFollow")]
pub struct NativeFollow {
    state: Mutex<State>,
}

/// What one wait found, before the batch is made.
enum Got {
    /// Rows are held (the batch is full, or nothing more has arrived).
    Rows,
    Timeout,
    End,
    WriterGone,
}

impl State {
    /// Reads events into the columns until a batch is full, nothing more
    /// arrives (with rows held), or `wait` passes without an event.
    fn fill(&mut self, wait: Duration) -> Result<Got, TapeError> {
        let mut held = self.cols.len(self.rtype) > 0;
        loop {
            let t = if held { Duration::ZERO } else { wait };
            match self.tail.next(Some(t))? {
                TailNext::Event(ev) => {
                    if RecordType::of_frame_type(ev.frame_type()) != Some(self.rtype) {
                        continue;
                    }
                    held = true;
                    let full = self
                        .cols
                        .push(&ev)
                        .map_err(|e| TapeError::input(None, e.to_string()))?;
                    if full.is_some() {
                        return Ok(Got::Rows);
                    }
                }
                _ if held => return Ok(Got::Rows),
                TailNext::Timeout => return Ok(Got::Timeout),
                TailNext::End => return Ok(Got::End),
                TailNext::WriterGone => return Ok(Got::WriterGone),
            }
        }
    }
}

#[pymethods]
impl NativeFollow {
    /// Opens a follower. `start`: `"beginning"`, `"end"`, or `"position"`
    /// with `position` the bytes `position()` returned; `wait`:
    /// `"blocking"`, `"spin_yield"` or `"busy_spin"`; `prices` as a read
    /// converts them.
    #[new]
    #[pyo3(signature = (path, rtype, *, start="beginning", position=None, verify_crc=true, wait="blocking", rows=65536, prices="decimal"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        rtype: &str,
        start: &str,
        position: Option<Vec<u8>>,
        verify_crc: bool,
        wait: &str,
        rows: usize,
        prices: &str,
    ) -> PyResult<NativeFollow> {
        let rtype = crate::record_type(py, rtype)?;
        let convert = crate::read::conversion(prices, "ns").py_err(py)?;
        let start =
            match (start, position) {
                ("beginning", None) => TailStart::Beginning,
                ("end", None) => TailStart::End,
                ("position", Some(bytes)) => {
                    TailStart::At(TailPosition::from_bytes(&bytes).map_err(|e| to_pyerr(py, e))?)
                }
                _ => return Err(to_pyerr(
                    py,
                    TapeError::usage(
                        "start must be \"beginning\", \"end\" or a position from Follow.position",
                    ),
                )),
            };
        let wait = match wait {
            "blocking" => floxlog::tape::WaitStrategy::Blocking,
            "spin_yield" => floxlog::tape::WaitStrategy::SpinThenYield,
            "busy_spin" => floxlog::tape::WaitStrategy::BusySpin,
            _ => {
                return Err(to_pyerr(
                    py,
                    TapeError::usage("wait must be \"blocking\", \"spin_yield\" or \"busy_spin\""),
                ))
            }
        };
        let opts = TailOptions {
            start,
            skip_crc: !verify_crc,
            skip_unknown: false,
            wait,
            ..TailOptions::default()
        };
        let state = py
            .detach(move || {
                let tail = Tail::open(&path, opts)?;
                // Symbol names from the tape's metadata, if it has any yet.
                let symbols = Tape::open(std::slice::from_ref(&path), OpenOptions::default())
                    .map(|t| Symbols::from_tape(&t))
                    .unwrap_or_else(|_| Symbols::none());
                Ok::<_, TapeError>(State {
                    tail,
                    cols: Columns::new(Limits::rows(rows.max(1))),
                    rtype,
                    symbols,
                    convert,
                })
            })
            .py_err(py)?;
        Ok(NativeFollow {
            state: Mutex::new(state),
        })
    }

    /// The next batch: `("batch", RecordBatch)`, or `(status, None)` with
    /// status `"timeout"` (nothing within `timeout` seconds; `None`: no
    /// limit), `"end"` (the writer closed the tape) or `"writer_gone"`.
    #[pyo3(signature = (timeout=None))]
    fn next_batch<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<f64>,
    ) -> PyResult<(&'static str, Option<Bound<'py, PyAny>>)> {
        let deadline = match timeout {
            Some(t) if t.is_finite() && t >= 0.0 => {
                Some(Instant::now() + Duration::from_secs_f64(t.min(1e9)))
            }
            Some(_) => {
                return Err(to_pyerr(
                    py,
                    TapeError::usage("timeout must be a number of seconds >= 0, or None"),
                ))
            }
            None => None,
        };
        let mut st = self
            .state
            .lock()
            .map_err(|_| to_pyerr(py, TapeError::usage("the follower's lock is poisoned")))?;
        loop {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let slice = left.map_or(SLICE, |l| l.min(SLICE));
            let s: &mut State = &mut st;
            let got = py.detach(|| s.fill(slice)).py_err(py)?;
            match got {
                Got::Rows => {
                    let State {
                        cols,
                        rtype,
                        symbols,
                        convert,
                        ..
                    } = &mut *st;
                    let b = cols
                        .finish(*rtype, symbols)
                        .map_err(|e| to_pyerr(py, TapeError::input(None, e.to_string())))?;
                    return match b {
                        Some(b) => {
                            let b = crate::read::convert(convert, &b).py_err(py)?;
                            Ok(("batch", Some(b.to_pyarrow(py)?)))
                        }
                        None => Ok(("timeout", None)),
                    };
                }
                Got::End => return Ok(("end", None)),
                Got::WriterGone => return Ok(("writer_gone", None)),
                Got::Timeout if left.is_some_and(|l| l <= slice) => return Ok(("timeout", None)),
                Got::Timeout => py.check_signals()?,
            }
        }
    }

    /// Where the follower stands, as saved bytes: in each series, after
    /// the last event read (every batch returned so far holds every event
    /// read of its type).
    fn position<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let st = self
            .state
            .lock()
            .map_err(|_| to_pyerr(py, TapeError::usage("the follower's lock is poisoned")))?;
        let bytes = st.tail.position().to_bytes().map_err(|e| to_pyerr(py, e))?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }
}
