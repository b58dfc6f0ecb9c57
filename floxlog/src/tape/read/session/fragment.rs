//! A dataset's fragments: a tape's pieces as the one splitter cuts them,
//! listed in one process and read one by one in any process that sees the
//! files.
//!
//! A fragment is named by its segment and byte bounds. Reading it cuts
//! only that segment with the same settings (the cut points depend on
//! nothing else) and reads the piece whose bounds match: every piece
//! starts at a cut point proven there and then, never at an offset taken
//! on trust from a caller. The outcome is judged as a sequential read of
//! the segment judges it; when that judgement depends on the pieces before
//! the fragment (its read ended early, the Sorted flag is checked across
//! the cut, the file is cut short), those pieces are read first, counting
//! only.

use super::pieces::Piece;
use super::Session;
use crate::tape::error::TapeError;
use crate::tape::read::problem::Problem;
use crate::tape::read::ranges::{RangeEnd, Settle, Split};
use crate::tape::read::source::header_is_unfinished;
use floxlog_core::Event;

/// One fragment as listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fragment {
    /// The segment (index in the tape).
    pub segment: usize,
    /// First byte (`None`: the segment's first frame).
    pub start: Option<u64>,
    /// End byte (`None`: the end of the frame area).
    pub end: Option<u64>,
    /// A finished header's first and last event time.
    pub first_ns: Option<i64>,
    /// See `first_ns`.
    pub last_ns: Option<i64>,
    /// A finished header's event count (a whole segment only).
    pub events: Option<u64>,
}

impl Session {
    /// The tape's fragments, cut at about `range_bytes`: every segment's,
    /// in tape order; a segment with no piece (its file did not open or its
    /// header failed) is one whole fragment, whose read says why.
    pub fn fragments(&self, range_bytes: u64) -> Vec<Fragment> {
        let (opened, cfg) = (&self.opened, &self.request.clone());
        let split = Split::with_range_bytes(opened, cfg, range_bytes);
        let mut rows = Vec::new();
        let mut k = 0;
        for seg in 0..opened.tape.segments.len() {
            let whole = Fragment {
                segment: seg,
                start: None,
                end: None,
                first_ns: None,
                last_ns: None,
                events: None,
            };
            if split.segment(k) != Some(seg) {
                rows.push(whole);
                continue;
            }
            while split.segment(k) == Some(seg) {
                let (Some((start, end)), Some(h)) = (split.cut(k), split.header(k)) else {
                    break;
                };
                let finished = !header_is_unfinished(h);
                let is_whole = start.is_none() && end == u64::MAX;
                rows.push(Fragment {
                    start,
                    end: (end != u64::MAX).then_some(end),
                    first_ns: finished.then_some(h.first_event_ns),
                    last_ns: finished.then_some(h.last_event_ns),
                    events: (finished && is_whole).then_some(u64::from(h.event_count)),
                    ..whole
                });
                k += 1;
            }
        }
        rows
    }
}

/// What [`Session::read_fragment`] read.
pub struct FragmentRead<T> {
    /// What the work made of the pieces a sequential read keeps.
    pub kept: Vec<T>,
    /// The problems a sequential read of the segment reports in it.
    pub problems: Vec<Problem>,
    /// An error of the work (or of a piece's read), which ended the read.
    pub fatal: Option<TapeError>,
    /// A sequential read of the segment reads nothing after this fragment
    /// (it ended on an error or at the filter's end, or was never reached).
    pub ends_segment: bool,
}

impl Session {
    /// Reads the fragment `[at, until)` of a tape of one segment (cut at
    /// about `range_bytes`, as [`Session::fragments`] listed it), `work`
    /// reading each of its pieces.
    pub fn read_fragment<T>(
        &self,
        range_bytes: u64,
        at: Option<u64>,
        until: Option<u64>,
        work: &mut dyn FnMut(&Piece<'_>) -> Result<T, TapeError>,
    ) -> Result<FragmentRead<T>, TapeError> {
        let (opened, cfg) = (&self.opened, &self.request.clone());
        let split = Split::with_range_bytes(opened, cfg, range_bytes);
        let mut problems = split.header_problems().to_vec();
        let end = until.unwrap_or(u64::MAX);
        let wanted: Vec<usize> = (0..split.len())
            .filter(|&k| (at, until) == (None, None) || split.cut(k) == Some((at, end)))
            .collect();
        if wanted.is_empty() && problems.is_empty() {
            let seg = opened.tape.segments.first().map(|s| s.path.as_path());
            return Err(TapeError::input(
                seg,
                format!(
                "no range of the segment ends at byte {} any more: the segment changed since the \
                 dataset listed its fragments; list the dataset again",
                until.map_or("(end)".to_string(), |e| e.to_string())
            ),
            )
            .at(at.unwrap_or(0)));
        }
        let mut fatal = None;
        let mut reads = Vec::new();
        for &k in &wanted {
            let piece = Piece::new(&split, k);
            // A cut taken on trust that the read did not prove fails the
            // read itself (`Split::unproven`, checked as each part is read).
            match work(&piece) {
                Ok(t) => reads.push((k, piece.read.get(), t)),
                Err(e) => {
                    fatal = Some(e);
                    break;
                }
            }
        }
        // Judged as a sequential read of the segment judges it, when the
        // fragment's judgement depends on the pieces before it: an end that is
        // a problem counts the segment's events before it (from its first
        // piece); the Sorted flag checked across the cut needs the piece just
        // before (where earlier ones ended early, a truthful flag leaves this
        // one empty anyway).
        let first = wanted.first().copied().unwrap_or(0);
        let short = opened.checks.first().is_some_and(|c| c.short.is_some());
        let counts = reads.iter().any(|(k, r, _)| {
            !matches!(r.end, RangeEnd::Done | RangeEnd::Stopped) || (short && *k + 1 == split.len())
        });
        let sorted = reads.iter().any(|(k, _, _)| split.checks_sorted(*k));
        let replay_from = if counts {
            0
        } else if sorted {
            first.saturating_sub(1)
        } else {
            first
        };
        let mut st = Settle::default();
        if first > 0 {
            for k in replay_from..first {
                let read = split.read(k, &mut |_: &Event<'_>, _: u64| Ok(()));
                // Only a fetch fails a read that keeps nothing, or a cut
                // before this fragment that is not the segment's (so
                // neither is the fragment).
                let r = match read {
                    Ok(r) => r,
                    Err(e) => {
                        return Ok(FragmentRead {
                            kept: Vec::new(),
                            problems,
                            fatal: Some(e),
                            ends_segment: true,
                        })
                    }
                };
                let _ = split.settle_next(&mut st, k, &r);
            }
        }
        let mut ends = false;
        let mut kept = Vec::new();
        for (k, r, t) in reads {
            let (keep, failed, short) = split.settle_next(&mut st, k, &r);
            problems.extend(failed);
            problems.extend(short);
            if keep {
                kept.push(t);
            }
            ends = !keep || !matches!(r.end, RangeEnd::Done);
        }
        let ends_segment = ends || fatal.is_some() || !problems.is_empty();
        Ok(FragmentRead {
            kept,
            problems,
            fatal,
            ends_segment,
        })
    }
}
