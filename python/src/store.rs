//! Object storage from Python: a bucket's options (`storage_options`) and
//! the names under a prefix (globs over `s3://` URLs).

use crate::errors::IntoPy;
use pyo3::prelude::*;
use std::path::PathBuf;

/// Sets the options of the store of `url`'s bucket in this process (see
/// `floxlog::tape::remote::configure`): the names and values Python's
/// `storage_options` map to, as strings.
#[pyfunction]
pub fn configure_store(
    py: Python<'_>,
    url: PathBuf,
    options: Vec<(String, String)>,
) -> PyResult<()> {
    py.detach(move || floxlog::tape::remote::configure(&url, options))
        .py_err(py)
}

/// `(name, is_prefix)` of everything directly under prefix `url`.
#[pyfunction]
pub fn list_url(py: Python<'_>, url: PathBuf) -> PyResult<Vec<(String, bool)>> {
    py.detach(move || floxlog::tape::remote::names(&url))
        .py_err(py)
}

/// `(requests, bytes)` this process has sent to object stores and
/// received from them.
#[pyfunction]
pub fn store_stats() -> (u64, u64) {
    floxlog::tape::remote::stats()
}
