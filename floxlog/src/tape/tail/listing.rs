//! The segments a tailer can follow: the tape directory's segment files,
//! listed again whenever the tailer runs out of data (a writer adds one at
//! each rotation, and a restarted writer adds them after the last). The
//! directory is the truth here: `manifest.json` lags behind a live writer.

use super::super::error::TapeError;
use crate::tape::dir::discover::{file_order, segment_series};
use std::path::{Path, PathBuf};

/// One segment file of the listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Listed {
    pub path: PathBuf,
    pub name: String,
    /// `mixed` (flox layout) or the spec layout's series.
    pub series: String,
}

/// The segment files of `dir`, in file order (regular files only: a link
/// or a FIFO named like a segment is never opened by a tailer).
pub(crate) fn list(dir: &Path) -> Result<Vec<Listed>, TapeError> {
    let rd = std::fs::read_dir(dir).map_err(|e| TapeError::io(dir, "listing the tape", e))?;
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| TapeError::io(dir, "listing the tape", e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(series) = segment_series(&name) else {
            continue;
        };
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        out.push(Listed {
            path: entry.path(),
            name,
            series,
        });
    }
    out.sort_by(|a, b| file_order(&a.name).cmp(&file_order(&b.name)));
    Ok(out)
}
