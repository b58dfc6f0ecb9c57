//! Cutting one segment into byte ranges that threads read independently.
//!
//! A range starts at a frame (or LZ4 block) boundary that the core vouches
//! for, so a core reader made there ([`Segment::reader_at`]) reads exactly
//! what a reader from the first frame reads from that point on: LZ4 block
//! headers walked by [`Segment::blocks`], entries of the index proven on
//! the frame chain ([`Segment::chain_reaches`], from one cut to the next,
//! the pairs on several threads, or by the reads of the ranges themselves:
//! [`candidates`]), or, for an uncompressed segment without one, the
//! frames a reader finds without checking CRCs (frame lengths do not depend
//! on the CRC, so the checked read meets the same boundaries up to its
//! first error; ranges after that error are never used).

use floxlog_core::{ReadOptions, Segment, SegmentHeader};

/// Where the ranges after the first start: offsets in increasing order,
/// about `target` bytes apart (none for a segment under twice that, or when
/// the header's index offset is lost: the reader then ends the frame area
/// at a trailer it recognises only on reaching it).
pub fn range_starts(seg: &Segment<'_>, opts: ReadOptions, target: u64) -> Vec<u64> {
    range_starts_on(seg, opts, target, 1)
}

/// [`range_starts`], an uncompressed segment's index entries proven on up
/// to `jobs` threads (the proof reads every frame header: serial, it was
/// a tenth of a whole-table read of a big segment).
pub fn range_starts_on(seg: &Segment<'_>, opts: ReadOptions, target: u64, jobs: usize) -> Vec<u64> {
    let c = candidates(seg, opts, target);
    if c.on_trust {
        proven_prefix(seg, c.starts, jobs)
    } else {
        c.starts
    }
}

/// Cut points before any proof: [`range_starts`]' when `on_trust` is
/// false; otherwise an uncompressed segment's index entries as they are
/// written, each a frame boundary only once a read from the cut before it
/// (or the first frame) ends exactly on it.
pub struct Candidates {
    /// The cut points, in increasing order.
    pub starts: Vec<u64>,
    /// Whether they are index entries taken on trust.
    pub on_trust: bool,
}

/// The cut points [`range_starts`] proves, unproven; see [`Candidates`].
pub fn candidates(seg: &Segment<'_>, opts: ReadOptions, target: u64) -> Candidates {
    let first = SegmentHeader::LEN as u64;
    let target = target.max(1);
    let mut out = Candidates {
        starts: Vec::new(),
        on_trust: false,
    };
    if seg.index_lost() || seg.frames_end().saturating_sub(first) < target.saturating_mul(2) {
        return out;
    }
    if seg.is_compressed() {
        let blocks = seg.blocks().map_while(Result::ok).map(|b| b.offset);
        out.starts = spaced(seg, blocks, target);
    } else if let Ok(Some(ix)) = seg.index_unproven() {
        // Only the entries used as cuts need proving: each from the one
        // before (the first from the first frame).
        out.starts = spaced(seg, ix.iter().map(|e| e.file_offset), target);
        out.on_trust = true;
    } else {
        let opts = ReadOptions {
            verify_crc: false,
            ..opts
        };
        let mut r = seg.reader(opts, &mut []);
        let frames =
            std::iter::from_fn(|| r.next_item().ok().flatten().map(|it| it.position.offset));
        out.starts = spaced(seg, frames, target);
    }
    out
}

/// The offsets of `boundaries` (increasing) kept as cut points: each at
/// least `target` bytes after the one before (the first frame the first),
/// inside the frame area.
fn spaced(seg: &Segment<'_>, boundaries: impl Iterator<Item = u64>, target: u64) -> Vec<u64> {
    let mut last = SegmentHeader::LEN as u64;
    let mut cuts = Vec::new();
    for off in boundaries {
        if off >= last + target && off < seg.frames_end() {
            cuts.push(off);
            last = off;
        }
    }
    cuts
}

/// Cut points of a segment fetched by range (`SegmentFile::fetched_frames`):
/// its index entries about `target` bytes apart, unproven (LZ4 segments
/// too: the bytes fetched decide the cuts, and walking the block headers
/// would fetch the object). A cut is proven by the read of the range
/// before it ending exactly there (`Split::unproven`); a range read alone
/// starts at an entry taken on trust, where the codec checks what it
/// reads (a block's header, every frame's CRC).
pub fn index_cuts(seg: &Segment<'_>, target: u64) -> Vec<u64> {
    let first = SegmentHeader::LEN as u64;
    let target = target.max(1);
    if seg.frames_end().saturating_sub(first) < target.saturating_mul(2) {
        return Vec::new();
    }
    match seg.index_unproven() {
        Ok(Some(ix)) => spaced(seg, ix.iter().map(|e| e.file_offset), target),
        _ => Vec::new(),
    }
}

/// Below this many bytes of frames a segment's cuts are best proven on the
/// calling thread (threads cost more than they save).
pub const PARALLEL_PROOF_BYTES: u64 = 16 << 20;

/// The cuts up to the first one not on the frame chain (damage, or an
/// index entry that points elsewhere: the rest of the segment is then one
/// range, read as a whole read reads it).
fn proven_prefix(seg: &Segment<'_>, mut cuts: Vec<u64>, jobs: usize) -> Vec<u64> {
    let n = cuts.len();
    let from = |k: usize| {
        if k == 0 {
            SegmentHeader::LEN as u64
        } else {
            cuts[k - 1]
        }
    };
    let proven = |k: usize| seg.chain_reaches(from(k), cuts[k]);
    let jobs = jobs.clamp(1, n.max(1));
    let bad = if jobs == 1 {
        (0..n).find(|&k| !proven(k))
    } else {
        let per = n.div_ceil(jobs);
        std::thread::scope(|s| {
            let proven = &proven;
            let parts: Vec<_> = (0..jobs)
                .map(|j| {
                    let ks = j * per..((j + 1) * per).min(n);
                    let start = ks.start;
                    (start, s.spawn(move || ks.into_iter().find(|&k| !proven(k))))
                })
                .collect();
            parts
                .into_iter()
                // A part that could not report counts as failing at its start.
                .filter_map(|(start, h)| h.join().unwrap_or(Some(start)))
                .min()
        })
    };
    if let Some(k) = bad {
        cuts.truncate(k);
    }
    cuts
}

/// The ranges `[start, end)` of a segment from [`range_starts`]; the last
/// ends at `u64::MAX` (the end of the frame area, wherever the reader
/// finds it).
pub fn ranges(starts: &[u64]) -> Vec<(u64, u64)> {
    let first = SegmentHeader::LEN as u64;
    let begins = std::iter::once(first).chain(starts.iter().copied());
    let ends = starts.iter().copied().chain(std::iter::once(u64::MAX));
    begins.zip(ends).collect()
}
