//! `floxlog.FloxlogError`: the Python exception every failure of a tape
//! operation becomes, with the kind, file, byte offset and hint the CLI
//! prints.
//!
//! The class is defined in Python (`floxlog/_errors.py`, so it pickles and
//! documents like any Python exception); this module builds instances.

use crate::words::PyWords;
use floxlog::tape::{Finding, TapeError, TapeErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// What a `FloxlogError` carries.
#[derive(Clone, Debug)]
pub struct ErrInfo {
    /// `str(e)`: the full text, its hint in the Python API's words.
    pub message: String,
    /// A corpus error kind (`crc_mismatch`...), a finding kind
    /// (`missing_segment`...), or `io`, `manifest`, `input`, `usage`.
    pub kind: String,
    /// The file concerned.
    pub path: Option<String>,
    /// Byte offset in that file.
    pub offset: Option<u64>,
    /// What to do about it.
    pub hint: Option<String>,
}

/// The `kind` of a tape error.
pub fn kind_name(k: TapeErrorKind) -> String {
    match k {
        TapeErrorKind::Io(_) => "io".into(),
        TapeErrorKind::Data(k) => k.as_str().into(),
        TapeErrorKind::Manifest => "manifest".into(),
        TapeErrorKind::Input => "input".into(),
        TapeErrorKind::Usage => "usage".into(),
    }
}

impl From<&TapeError> for ErrInfo {
    fn from(e: &TapeError) -> ErrInfo {
        let e = &e.localized(&PyWords);
        ErrInfo {
            message: e.to_string(),
            kind: kind_name(e.kind),
            path: e.path.as_ref().map(|p| p.display().to_string()),
            offset: e.offset,
            hint: e.hint.as_ref().map(|h| h.to_string()),
        }
    }
}

impl From<TapeError> for ErrInfo {
    fn from(e: TapeError) -> ErrInfo {
        ErrInfo::from(&e)
    }
}

impl From<&Finding> for ErrInfo {
    fn from(f: &Finding) -> ErrInfo {
        let f = &f.localized(&PyWords);
        ErrInfo {
            message: f.line(),
            kind: f.kind.to_string(),
            path: f.path.as_ref().map(|p| p.display().to_string()),
            offset: f.offset,
            hint: f.hint.as_ref().map(|h| h.to_string()),
        }
    }
}

impl ErrInfo {
    /// As a [`TapeError`] (for an Arrow stream's error text).
    pub fn to_tape_error(&self) -> TapeError {
        // `message` is already the full text; the other fields stay with
        // the Python exception.
        TapeError {
            kind: TapeErrorKind::Input,
            path: None,
            offset: None,
            message: self.message.clone(),
            hint: None,
        }
    }
}

/// `FloxlogError`, or for a usage error its subclass `UsageError` (also
/// a `ValueError`).
fn error_class<'py>(py: Python<'py>, kind: &str) -> PyResult<&'py Bound<'py, PyType>> {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static USAGE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    if kind == "usage" {
        USAGE.import(py, "floxlog._errors", "UsageError")
    } else {
        CLASS.import(py, "floxlog._errors", "FloxlogError")
    }
}

/// A `FloxlogError` instance (not raised).
pub fn error_object<'py>(py: Python<'py>, e: &ErrInfo) -> PyResult<Bound<'py, PyAny>> {
    let kw = PyDict::new(py);
    kw.set_item("kind", &e.kind)?;
    kw.set_item("path", &e.path)?;
    kw.set_item("offset", e.offset)?;
    kw.set_item("hint", &e.hint)?;
    error_class(py, &e.kind)?.call((&e.message,), Some(&kw))
}

/// `FloxlogError` objects of `errs`, in order (not raised).
pub fn error_objects<'py>(py: Python<'py>, errs: &[ErrInfo]) -> PyResult<Vec<Bound<'py, PyAny>>> {
    errs.iter().map(|e| error_object(py, e)).collect()
}

/// A `FloxlogError` to raise.
pub fn to_pyerr(py: Python<'_>, e: impl Into<ErrInfo>) -> PyErr {
    match error_object(py, &e.into()) {
        Ok(v) => PyErr::from_value(v),
        Err(e) => e,
    }
}

/// `Result<T, TapeError>` to `PyResult<T>`.
pub trait IntoPy<T> {
    /// Raises a `FloxlogError` for the error.
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, TapeError> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_pyerr(py, e))
    }
}
