//! Cutting one segment into byte ranges that threads read independently.
//!
//! A range starts at a frame (or LZ4 block) boundary that the core vouches
//! for, so a core reader made there ([`Segment::reader_at`]) reads exactly
//! what a reader from the first frame reads from that point on: LZ4 block
//! headers walked by [`Segment::blocks`], the entries of a proven index
//! ([`Segment::index`]), or, for an uncompressed segment without one, the
//! frames a reader finds without checking CRCs (frame lengths do not depend
//! on the CRC, so the checked read meets the same boundaries up to its
//! first error; ranges after that error are never used).

use floxlog_core::{ReadOptions, Segment, SegmentHeader};

/// Where the ranges after the first start: offsets in increasing order,
/// about `target` bytes apart (none for a segment under twice that, or when
/// the header's index offset is lost: the reader then ends the frame area
/// at a trailer it recognises only on reaching it).
pub fn range_starts(seg: &Segment<'_>, opts: ReadOptions, target: u64) -> Vec<u64> {
    let first = SegmentHeader::LEN as u64;
    let target = target.max(1);
    if seg.index_lost() || seg.frames_end().saturating_sub(first) < 2 * target {
        return Vec::new();
    }
    let mut cuts = Vec::new();
    let mut last = first;
    let mut consider = |off: u64| {
        if off >= last + target && off < seg.frames_end() {
            cuts.push(off);
            last = off;
        }
    };
    if seg.is_compressed() {
        for b in seg.blocks().map_while(Result::ok) {
            consider(b.offset);
        }
    } else if let Ok(Some(ix)) = seg.index() {
        for e in ix.iter() {
            consider(e.file_offset);
        }
    } else {
        let opts = ReadOptions {
            verify_crc: false,
            ..opts
        };
        let mut r = seg.reader(opts, &mut []);
        while let Ok(Some(it)) = r.next_item() {
            consider(it.position.offset);
        }
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
