//! Resuming a tape (`TapeWriterConfig::resume`): a writer restarted on the
//! directory of an earlier one, say after a crash, continues its tape after
//! its last segment instead of refusing it.
//!
//! The segment files are listed (the manifest is not trusted for which
//! files exist); each the manifest lists with its size and a final header
//! that agrees is taken as it is listed (the writer lists a segment only
//! once it is finished); any other
//! (the segments a killed writer left open) is recovered first, as
//! `floxlog recover` would: every complete event kept, the torn tail
//! dropped (the original kept as `<name>.damaged` when bytes are dropped),
//! header and index rewritten. A segment that cannot be recovered (its
//! header itself is invalid) makes the writer refuse the tape, naming the
//! file and offset. New segments then follow the last one: flox-layout
//! names stay increasing, spec-layout numbers go on.

use super::super::dir::{segment_series, Layout, OpenOptions, Tape, MIXED, SERIES};
use super::super::hint::{Hint, Remedy};
use crate::tape::check::recover::{recover_file, RecoverOptions};
use crate::tape::check::scan::scan_segment;
use crate::tape::dir::manifest::{Manifest, ManifestSegment};
use crate::tape::error::TapeError;
use floxlog_core::ReadOptions;
use std::path::Path;

/// What a resumed writer starts from.
pub(super) struct Resumed {
    /// The tape's segments, in order, as the manifest lists them.
    pub closed: Vec<(u64, ManifestSegment)>,
    /// The largest flox-layout segment name (created_ns); `i64::MIN` if none.
    pub last_created: i64,
    /// The next spec-layout number of each series, in [`SERIES`] order.
    pub numbers: [u32; 4],
    /// The tape's `created_ns` (its manifest's, else its first segment's).
    pub tape_created: Option<i64>,
}

/// Lists (and recovers) the tape in `dir` for a writer of `layout`;
/// `None` when it holds no segment.
pub(super) fn resume(dir: &Path, layout: Layout) -> Result<Option<Resumed>, TapeError> {
    // A manifest that does not parse is rebuilt from the files.
    let old = Manifest::load(dir).ok().flatten();
    let any_segment = std::fs::read_dir(dir)
        .map_err(|e| TapeError::io(dir, "listing the tape directory", e))?
        .flatten()
        .any(|e| segment_series(&e.file_name().to_string_lossy()).is_some());
    if !any_segment {
        return Ok(old.map(|m| Resumed {
            closed: Vec::new(),
            last_created: i64::MIN,
            numbers: [0; 4],
            tape_created: Some(m.created_ns),
        }));
    }
    let tape = Tape::open(
        &[dir.to_path_buf()],
        OpenOptions {
            ignore_manifest: true,
        },
    )?;
    let mut out = Resumed {
        closed: Vec::new(),
        last_created: i64::MIN,
        numbers: [0; 4],
        tape_created: old.as_ref().map(|m| m.created_ns),
    };
    for (seq, s) in tape.segments.iter().enumerate() {
        check_layout(&s.name, &s.series, layout, &s.path)?;
        let len = std::fs::symlink_metadata(&s.path)
            .map_err(|e| TapeError::io(&s.path, "reading the segment to resume", e))?
            .len();
        // Listed with its size and a final header that agrees: finished.
        let listed = old
            .as_ref()
            .and_then(|m| m.segments.iter().find(|e| e.name == s.name))
            .filter(|e| e.size_bytes == len && e.kind == s.series)
            .filter(|e| header_is_final(&s.path, e.event_count));
        let entry = match listed {
            Some(e) => e.clone(),
            None => recovered_entry(&s.path, &s.name, &s.series)?,
        };
        match layout {
            Layout::Flox => {
                let n = s.name.strip_suffix(".floxlog").and_then(|n| n.parse().ok());
                out.last_created = out.last_created.max(n.unwrap_or(i64::MIN));
                if out.tape_created.is_none() {
                    out.tape_created = n;
                }
            }
            Layout::Spec => {
                let num = s
                    .name
                    .rsplit_once('-')
                    .and_then(|(_, n)| n.strip_suffix(".bin").and_then(|n| n.parse::<u32>().ok()));
                if let (Some(i), Some(n)) = (SERIES.iter().position(|x| *x == s.series), num) {
                    out.numbers[i] = out.numbers[i].max(n.saturating_add(1));
                }
            }
        }
        out.closed.push((seq as u64, entry));
    }
    Ok(Some(out))
}

/// Whether the segment at `path` starts with a valid final header counting
/// `events` (one 64-byte read).
fn header_is_final(path: &Path, events: u64) -> bool {
    use std::io::Read;
    let mut head = [0u8; 64];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head));
    read.is_ok()
        && floxlog_core::SegmentHeader::parse(&head).is_ok_and(|h| {
            !crate::tape::read::source::header_is_unfinished(&h)
                && u64::from(h.event_count) == events
        })
}

/// Refuses a segment of the other layout (or of an unknown series).
fn check_layout(name: &str, series: &str, layout: Layout, path: &Path) -> Result<(), TapeError> {
    let fits = match layout {
        Layout::Flox => series == MIXED,
        Layout::Spec => SERIES.contains(&series),
    };
    if fits {
        return Ok(());
    }
    Err(TapeError::input(
        Some(path),
        format!(
            "cannot resume the tape: segment {name} is not of the writer's layout ({layout:?})"
        ),
    )
    .with_hint("resume with the layout the tape was written in, or write to a new directory"))
}

/// Recovers a segment a writer left open and returns its manifest entry.
fn recovered_entry(path: &Path, name: &str, series: &str) -> Result<ManifestSegment, TapeError> {
    recover_file(path, &RecoverOptions::default()).map_err(|e| {
        let mut e = e;
        e.message = format!(
            "cannot resume the tape: its segment cannot be recovered: {}",
            e.message
        );
        e.with_hint(Hint::new(
            "move the segment out of the tape directory (its events are then lost) and resume, or {}",
            &[Remedy::Recover],
        ))
    })?;
    let f = crate::tape::read::source::SegmentFile::open(path)?;
    let scan = scan_segment(f.bytes(), ReadOptions::default(), &mut |_| {});
    if let Some(e) = scan.header_error.or(scan.stream_error) {
        return Err(TapeError::data(path, e)
            .with_hint("the recovered segment does not read back; nothing more was changed"));
    }
    Ok(ManifestSegment {
        name: name.to_string(),
        kind: series.to_string(),
        size_bytes: f.len(),
        first_event_ns: scan.min_ts.unwrap_or(0),
        last_event_ns: scan.max_ts.unwrap_or(0),
        event_count: scan.events,
    })
}
