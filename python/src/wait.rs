//! Native work that a Ctrl-C interrupts: the work runs on its own thread
//! while the calling thread waits with the GIL released, checking for a
//! pending signal every few milliseconds. On a `KeyboardInterrupt` (or any
//! error a signal handler raises) the error is returned as it is and the
//! work's result, when it comes, is dropped.

use crate::errors::to_pyerr;
use floxlog::tape::TapeError;
use pyo3::prelude::*;
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::time::Duration;

/// How often a waiting call looks for a pending signal.
const POLL: Duration = Duration::from_millis(10);

/// Runs `work` on a new thread; returns its result, or the error of a
/// signal handler (a `KeyboardInterrupt`) raised while waiting.
pub fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    name: &str,
    work: impl FnOnce() -> Result<T, TapeError> + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = sync_channel(1);
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| {
            to_pyerr(
                py,
                TapeError::io(std::path::Path::new("<thread>"), "starting a thread", e),
            )
        })?;
    let mut rx = rx;
    loop {
        // The receiver is Send but not Sync: it moves into the detached
        // closure and back.
        let (got, back) = py.detach(move || (rx.recv_timeout(POLL), rx));
        rx = back;
        match got {
            Ok(r) => return r.map_err(|e| to_pyerr(py, e)),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(to_pyerr(
                    py,
                    TapeError::input(None, "internal error: the worker thread stopped"),
                ))
            }
        }
    }
}
