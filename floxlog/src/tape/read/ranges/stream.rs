//! A range of a segment object read by range (listed with
//! `Want::Cuts` (`Session::open_fragments`): header and index trailer held,
//! no frames): its frames fetched in parts of about [`STREAM_BYTES`], the
//! next part fetched while one is read, each dropped once read, so a
//! fragment's read holds two parts, not the fragment. A read that may stop
//! before its range ends (a `to` bound) fetches a part only when it gets
//! there: nothing is fetched that it would not read.
//!
//! Parts are cut at index entries, taken on trust as the fragments' cuts
//! are, and proven the same way: the read of a part must end exactly at the
//! next (see `Split::unproven`). A read that needs an index seek or checks
//! the Sorted flag fetches its range as one part (both look across parts).

use super::{ColumnSink, Input, Proof, Range, RangeEnd, RangeRead, Split};
use crate::tape::error::TapeError;
use crate::tape::read::shortfall::SegmentCheck;
use crate::tape::read::source::SegmentFile;
use crate::tape::read::Request;
use crate::tape::remote::{PARTS_IN_FLIGHT, PART_BYTES};
use floxlog_core::{Segment, SegmentHeader};

/// Bytes of frames fetched at a time: as many as one fetch has in flight.
pub const STREAM_BYTES: u64 = PART_BYTES * PARTS_IN_FLIGHT as u64;

#[cfg(test)]
thread_local! {
    /// [`STREAM_BYTES`] for this thread's reads (tests: parts of a small
    /// tape).
    pub static TEST_STREAM_BYTES: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    /// The largest part this thread's reads fetched, in bytes.
    pub static TEST_LARGEST_PART: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Parts this thread's reads read, and fetched ahead of being read.
    pub static TEST_PARTS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

fn stream_bytes() -> u64 {
    #[cfg(test)]
    if let Some(b) = TEST_STREAM_BYTES.with(std::cell::Cell::get) {
        return b;
    }
    STREAM_BYTES
}

impl<'a> Split<'a> {
    /// Whether range `c` is read by fetching its frames: its segment
    /// object holds none of them.
    pub(super) fn fetches(&self, c: &Range) -> bool {
        let f = self.inputs[c.input].file.fetched_frames();
        self.fetching && f.is_some_and(|(s, e)| s == e)
    }

    /// Reads range `c` part by part (see the module docs), into `sink`.
    pub(super) fn read_fetching<K: ColumnSink + ?Sized>(
        &self,
        c: Range,
        sink: &mut K,
    ) -> Result<RangeRead, TapeError> {
        let input = &self.inputs[c.input];
        let seek = input.sorted && self.cfg.filter.from.is_some() && c.start.is_none();
        let parts = if input.check_sorted || seek {
            vec![(c.start, c.end)]
        } else {
            parts(&input.seg, c.start, c.end, stream_bytes())
        };
        let first = SegmentHeader::LEN as u64;
        let fetch = |&(start, end): &(Option<u64>, u64)| {
            input.file.with_frames(start.unwrap_or(first), end)
        };
        // The next part's fetch overlaps this part's decoding; a prefetched
        // part the read stops before is dropped unread, its error unseen.
        let ahead = self.cfg.filter.to.is_none() && parts.len() > 1;
        std::thread::scope(|sc| {
            let mut next = None;
            let mut out = RangeRead {
                raw_last: i64::MIN,
                ..RangeRead::default()
            };
            let mut each = || -> Result<(), TapeError> {
                for (i, p) in parts.iter().enumerate() {
                    let file = match next.take() {
                        Some(h) => joined(h)?,
                        None => fetch(p)?,
                    };
                    if let Some(q) = parts.get(i + 1).filter(|_| ahead) {
                        next = Some(sc.spawn(move || fetch(q)));
                        #[cfg(test)]
                        TEST_PARTS.with(|c| c.set((c.get().0, c.get().1 + 1)));
                    }
                    if self.read_part(input, *p, &file, sink, &mut out)? {
                        break;
                    }
                }
                Ok(())
            };
            let r = each();
            // A part fetched for a read that ended before it: waited for,
            // and dropped with whatever its fetch met.
            if let Some(h) = next {
                let _ = h.join();
            }
            r.map(|()| out)
        })
    }

    /// Reads one part `p` of `input`, fetched as `file`, into `sink` and
    /// `out`; whether the read ends there (stopped or failed).
    fn read_part<K: ColumnSink + ?Sized>(
        &self,
        input: &Input<'_>,
        (start, end): (Option<u64>, u64),
        file: &SegmentFile,
        sink: &mut K,
        out: &mut RangeRead,
    ) -> Result<bool, TapeError> {
        #[cfg(test)]
        if let Some((s, e)) = file.fetched_frames() {
            TEST_LARGEST_PART.with(|c| c.set(c.get().max(e - s)));
            TEST_PARTS.with(|c| c.set((c.get().0 + 1, c.get().1)));
        }
        let part = Split::one_range(file, input.segment, input.check, &self.cfg, start, end)?;
        let mut r = part.read(0, sink)?;
        // A part's end taken on trust and not proven: the index lies.
        if let Some(e) = part.unproven(0, &r) {
            return Err(e);
        }
        if let RangeEnd::Failed(e, _) = r.end {
            if let Some(judged) = input.judged_to_the_end(&e, start, end, &self.cfg)? {
                r = judged;
            }
        }
        let before = out.events;
        out.events += r.events;
        out.track.then(&r.track);
        out.reached = r.reached;
        out.raw_first = out.raw_first.or(r.raw_first);
        if r.raw_first.is_some() {
            out.raw_last = r.raw_last;
        }
        match r.end {
            RangeEnd::Done => Ok(false),
            RangeEnd::Stopped => {
                out.end = RangeEnd::Stopped;
                Ok(true)
            }
            // Counted from the range's start, as one read counts.
            RangeEnd::Failed(e, n) => {
                out.end = RangeEnd::Failed(e, before + n);
                Ok(true)
            }
        }
    }

    /// A split of `file` that is the one range `[start, end)` of segment
    /// `segment` (`end` a cut taken on trust unless `u64::MAX`), read as
    /// it is (never fetching).
    fn one_range(
        file: &'a SegmentFile,
        segment: usize,
        check: SegmentCheck,
        cfg: &Request,
        start: Option<u64>,
        end: u64,
    ) -> Result<Split<'a>, TapeError> {
        let files = std::iter::once((segment, file, check));
        let mut s = Split::build(files, cfg, Proof::Threads(1), &|_| u64::MAX);
        if s.inputs.is_empty() {
            return Err(TapeError::input(
                Some(&file.path),
                "the segment header no longer reads: list the dataset again",
            ));
        }
        s.fetching = false;
        s.ranges = vec![Range {
            input: 0,
            start,
            end,
            on_trust: end != u64::MAX,
        }];
        Ok(s)
    }
}

/// The part a prefetching thread fetched (a panic there is this thread's).
fn joined(
    h: std::thread::ScopedJoinHandle<'_, Result<SegmentFile, TapeError>>,
) -> Result<SegmentFile, TapeError> {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

impl Input<'_> {
    /// The read of part `[start, end)` again, to judge the error `e` it
    /// ended on as a read that sees every frame byte does, when its
    /// judgement looks past the part: an uncompressed segment's frames
    /// ending in zeros to the end of the data (a journal's zero tail) are
    /// zeros to the end of the part only. `None`: `e` stands. The events
    /// before `e` are the same bytes either way, so a sink has them once.
    fn judged_to_the_end(
        &self,
        e: &floxlog_core::Error,
        start: Option<u64>,
        end: u64,
        cfg: &Request,
    ) -> Result<Option<RangeRead>, TapeError> {
        if e.what != floxlog_core::reader::ZERO_TAIL || end >= self.seg.frames_end() {
            return Ok(None);
        }
        let first = SegmentHeader::LEN as u64;
        let file = self.file.with_frames(start.unwrap_or(first), u64::MAX)?;
        // Not limited to the part either (a limit ends the data there as
        // the part's end did): the read stops at `e`'s frame all the same.
        let part = Split::one_range(&file, self.segment, self.check, cfg, start, u64::MAX)?;
        let r = part.read(0, &mut |_: &floxlog_core::Event<'_>, _: u64| Ok(()))?;
        Ok(Some(r))
    }
}

/// The parts of `[start, end)` (`None`: the first frame; `u64::MAX`: the
/// end of the frame area): cut at index entries at least `bytes` apart.
fn parts(seg: &Segment<'_>, start: Option<u64>, end: u64, bytes: u64) -> Vec<(Option<u64>, u64)> {
    let mut last = start.unwrap_or(SegmentHeader::LEN as u64);
    let mut cuts = Vec::new();
    if let Ok(Some(ix)) = seg.index_unproven() {
        for e in ix.iter() {
            let o = e.file_offset;
            if o >= last.saturating_add(bytes.max(1)) && o < end.min(seg.frames_end()) {
                cuts.push(o);
                last = o;
            }
        }
    }
    let begins = std::iter::once(start).chain(cuts.iter().map(|&c| Some(c)));
    let ends = cuts.iter().copied().chain(std::iter::once(end));
    begins.zip(ends).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_cut_at_index_entries_far_enough_apart() {
        let d = tempfile::tempdir().unwrap();
        let cfg = crate::tape::TapeWriterConfig {
            created_ns: Some(1),
            ..crate::tape::TapeWriterConfig::default()
        };
        let mut w = crate::tape::TapeWriter::create(d.path(), cfg).unwrap();
        for i in 0..20_000 {
            w.append(&crate::synth::mixed_event(3, i).as_event())
                .unwrap();
        }
        let seg = w.close().unwrap().remove(0);
        let bytes = std::fs::read(d.path().join(&seg.name)).unwrap();
        let s = Segment::parse(&bytes).unwrap();
        let entries: Vec<u64> = s
            .index_unproven()
            .unwrap()
            .unwrap()
            .iter()
            .map(|e| e.file_offset)
            .collect();
        let p = parts(&s, None, u64::MAX, 100_000);
        assert!(p.len() > 3, "{p:?}");
        assert_eq!(p[0].0, None);
        assert_eq!(p.last().unwrap().1, u64::MAX);
        for w in p.windows(2) {
            let cut = w[1].0.unwrap();
            assert_eq!(w[0].1, cut);
            assert!(entries.contains(&cut));
            assert!(cut - w[0].0.unwrap_or(64) >= 100_000);
        }
        // A range smaller than a part is one part.
        let (a, b) = (entries[1], entries[3]);
        assert_eq!(parts(&s, Some(a), b, 1 << 30), vec![(Some(a), b)]);
    }
}
