//! The segments a tailer can follow: the tape directory's segment files,
//! listed again at the tailer's looks (a segment finished, the wake page
//! says the tape changed, or every few ms: a writer adds one at each
//! rotation, and a restarted writer adds them after the last). The
//! directory is the truth here: `manifest.json` lags behind a live writer.

//!
//! Also what the tailer asks of a listing: its series, whether a segment
//! holds an event yet (one small read), and the segment a saved position
//! names.
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

/// The series of a listing, in order of first appearance, each with its
/// segments in file order (never empty).
pub(crate) fn series_groups(listed: &[Listed]) -> Vec<(String, Vec<&Listed>)> {
    let mut v: Vec<(String, Vec<&Listed>)> = Vec::new();
    for l in listed {
        match v.iter_mut().find(|(s, _)| *s == l.series) {
            Some((_, of)) => of.push(l),
            None => v.push((l.series.clone(), vec![l])),
        }
    }
    v
}

/// Whether a segment holds an event (its first frame's size word, or LZ4
/// block magic, is set) or is finished. Read with one small read, not
/// mapped: a journal writer's prepared spares are asked at every look.
pub(crate) fn has_events(l: &Listed) -> bool {
    use std::io::Read;
    let Ok(mut f) = crate::tape::dir::files::open_regular(&l.path, false) else {
        return false;
    };
    let mut b = [0u8; floxlog_core::SegmentHeader::LEN + 4];
    let mut got = 0;
    while got < b.len() {
        match f.read(&mut b[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    let Ok(h) = floxlog_core::SegmentHeader::parse(&b[..got]) else {
        return false;
    };
    !crate::tape::read::source::header_is_unfinished(&h)
        || (got == b.len() && b[floxlog_core::SegmentHeader::LEN..] != [0; 4])
}

/// The segment of `series` whose header says `created_ns`.
pub(crate) fn find_created(
    of: &[&Listed],
    series: &str,
    created_ns: i64,
) -> Result<Listed, TapeError> {
    for l in of {
        let Ok(f) = crate::tape::read::source::SegmentFile::open_with(&l.path, false) else {
            continue;
        };
        if floxlog_core::SegmentHeader::parse(f.bytes()).is_ok_and(|h| h.created_ns == created_ns) {
            return Ok((*l).clone());
        }
    }
    Err(TapeError::input(
        of.first().map(|l| l.path.as_path()),
        format!("no {series} segment of the tape was created at {created_ns} (the saved position's segment): removed or rewritten?"),
    )
    .with_hint("tail it from the beginning or the end"))
}
