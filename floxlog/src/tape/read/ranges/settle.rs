//! Judging the reads of a split's ranges as one sequential read: which
//! ranges it reaches, the problems it reports, and the cuts taken on trust
//! that the reads proved (or did not).

use super::{Input, RangeEnd, RangeRead, Split};
use crate::tape::error::TapeError;
use crate::tape::read::merge::unsorted;
use crate::tape::read::problem::Problem;
use crate::tape::read::source::is_torn_tail;

impl Split<'_> {
    /// Which ranges a sequential read reaches (each segment's ranges up to
    /// the first that ends early), given every range's read in order; and
    /// the problems of the tape as a sequential read reports them (an
    /// error's event count includes the ranges before it). `None` when a
    /// cut taken on trust ([`Split::on_trust`]) was not proven by the read
    /// before it (it ended elsewhere, or on an error that may be the cut's):
    /// the reads are then no sequential read's, and the caller reads again
    /// in one pass.
    pub fn settle(self, reads: &[RangeRead]) -> Option<(Vec<bool>, Vec<Problem>)> {
        let mut st = Settle::default();
        let mut problems = self.problems.clone();
        let mut kept = Vec::with_capacity(reads.len());
        for (i, r) in reads.iter().enumerate() {
            let (k, failed, short) = self.settle_next(&mut st, i, r);
            let c = self.ranges.get(i)?;
            let proven = match r.end {
                RangeEnd::Done => r.reached == c.end,
                RangeEnd::Stopped => true,
                RangeEnd::Failed(..) => false,
            };
            if k && c.on_trust && !proven {
                return None;
            }
            kept.push(k);
            problems.extend(failed);
            problems.extend(short);
        }
        Some((kept, problems))
    }

    /// [`Split::settle`] one range at a time, in order, for a caller that
    /// streams them (cuts proven before the reads: not [`Split::on_trust`]'s): whether range `i` is kept, the problem that ends its
    /// segment there, and (its segment's last range, kept or not) the
    /// problem of a segment cut short whose read found nothing wrong
    /// (which a sequential reader records at the end of the read).
    pub fn settle_next(
        &self,
        st: &mut Settle,
        i: usize,
        r: &RangeRead,
    ) -> (bool, Option<Problem>, Option<Problem>) {
        let Some(c) = self.ranges.get(i) else {
            return (false, None, None);
        };
        let input = &self.inputs[c.input];
        if c.start.is_none() {
            *st = Settle::default();
        }
        // The segment's last range: one cut short is damage even when what
        // is left reads, or is not read (stopped at `to` in an earlier
        // range: the sequential reader too judges the cut by the events it
        // read).
        let last = self.ranges.get(i + 1).is_none_or(|n| n.start.is_none());
        let short = |st: &Settle| {
            (last && !st.failed)
                .then(|| Problem::cut_short(input.segment, input.path, input.check, st.before))
                .flatten()
        };
        if st.stopped {
            return (false, None, short(st));
        }
        // The Sorted flag checked across the cut: a range whose first
        // event goes back ends the segment there, as the sequential read
        // stops at that event.
        let back = r.raw_first.filter(|&(ts, _)| ts < st.raw_last);
        if let (true, Some((ts, at))) = (input.check_sorted, back) {
            let mut l = st.raw_last;
            if let Some(e) = unsorted(true, &mut l, ts, at) {
                st.stopped = true;
                st.failed = true;
                return (false, Some(problem(input, e, st.before + 1)), None);
            }
        }
        if r.raw_first.is_some() {
            st.raw_last = r.raw_last;
        }
        let mut failed = None;
        match r.end {
            RangeEnd::Done => {}
            RangeEnd::Stopped => st.stopped = true,
            RangeEnd::Failed(e, events) => {
                st.stopped = true;
                st.failed = true;
                let events = if c.start.is_none() && c.end == u64::MAX {
                    events
                } else {
                    st.before + events
                };
                failed = Some(problem(input, e, events));
            }
        }
        st.before += r.events;
        (true, failed, short(st))
    }

    /// For range `i` of a segment fetched by range, whose end is a cut
    /// taken on trust (an index entry), the error when its read `r` did
    /// not prove the cut: the frame (or block) before it runs over it, so
    /// the entry is no boundary and the fragments after it are not the
    /// segment's (the index is damaged). `None` otherwise: a read that
    /// failed on its own damage reports that, as a read of the whole
    /// segment would.
    pub fn unproven(&self, i: usize, r: &RangeRead) -> Option<TapeError> {
        let c = self.ranges.get(i)?;
        let input = &self.inputs[c.input];
        if !c.on_trust || input.file.fetched_frames().is_none() {
            return None;
        }
        let over = match r.end {
            RangeEnd::Done => (r.reached != c.end).then_some(r.reached),
            RangeEnd::Stopped => None,
            // Cut short at the range's end: the one thing that tells a
            // frame over the cut from a frame over the segment's end.
            RangeEnd::Failed(e, _) if e.kind == floxlog_core::ErrorKind::Truncated => input
                .seg
                .end_of_frame_at(e.offset)
                .filter(|&p| p > c.end && p <= input.seg.frames_end())
                .map(|_| e.offset),
            RangeEnd::Failed(..) => None,
        }?;
        let what = if input.seg.is_compressed() {
            "LZ4 block"
        } else {
            "frame"
        };
        Some(
            TapeError::input(
                Some(input.path),
                format!(
                    "the index entry at byte {} is no {what} boundary: the {what} at byte {over} runs \
                     over it; the segment's index is damaged (read the segment whole, with \
                     floxlog.open, or rebuild it with `floxlog reindex`)",
                    c.end
                ),
            )
            .at(over),
        )
    }
}

/// Where [`Split::settle_next`] is in the current segment.
#[derive(Clone, Copy, Debug)]
pub struct Settle {
    /// A range of the segment ended early: the rest are not reached.
    stopped: bool,
    /// ... on an error (that is the segment's problem: it is not also
    /// judged cut short).
    failed: bool,
    /// Events of the segment's ranges so far.
    before: u64,
    /// Last timestamp of the segment so far (Sorted flag checks).
    raw_last: i64,
}

impl Default for Settle {
    fn default() -> Self {
        Settle {
            stopped: false,
            failed: false,
            before: 0,
            raw_last: i64::MIN,
        }
    }
}

/// The problem that ends a segment's read: `e`, or the file's shrinking
/// under the map if it shrank (never a torn tail).
fn problem(input: &Input<'_>, e: floxlog_core::Error, events_before: u64) -> Problem {
    let shrunk = input.file.shrink_error(Some(&e));
    let torn = shrunk.is_none() && is_torn_tail(&input.header, &e, events_before, input.seg.data());
    Problem::new(
        input.segment,
        input.path,
        shrunk.unwrap_or(e),
        events_before,
        torn,
        input.check,
    )
}
