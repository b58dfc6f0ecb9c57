//! The in-order scan: whether an uncompressed segment's events already come
//! in time order, found by a walk of the frame chain that reads each
//! frame's length, type and timestamp and decodes nothing else (no CRC, no
//! record checks): a fraction of the ordering pass, so that time order over
//! a recorder's usual segment (in order, never flagged Sorted) costs little
//! more than file order.
//!
//! The walk is conservative: it looks at every frame the checked read could
//! return as an event (the same chain from the same start; it goes on past
//! frames that read would stop at), and every event's timestamp is its
//! payload's first 8 bytes in every 1.0 record type. A non-decreasing
//! sequence has no decreasing subsequence, so when the scan finds the
//! timestamps in order, whatever subset of them the checked, filtered read
//! returns is in order too.

use super::order::Behind;
use crate::tape::source::SegmentFile;
use floxlog_core::{frame_type, FrameHeader, Segment, SegmentHeader};

/// What the scan found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scan {
    /// Every event's timestamp is at or after the one before it.
    InOrder,
    /// Some go back (the scan stopped at the first that does).
    OutOfOrder,
    /// Cannot tell (LZ4 blocks, or a chain that does not end where the
    /// frames do): the ordering pass decides.
    Unknown,
}

/// Scans `seg` (mapped by `file`, whose pages behind the walk are given
/// back as it goes).
pub(super) fn scan_in_order(seg: &Segment<'_>, file: &SegmentFile) -> Scan {
    if seg.is_compressed() {
        return Scan::Unknown;
    }
    let data = seg.data();
    let end = usize::try_from(seg.frames_end()).map_or(data.len(), |e| e.min(data.len()));
    let Some(frames) = data.get(..end) else {
        return Scan::Unknown;
    };
    let mut pos = SegmentHeader::LEN;
    let mut last = i64::MIN;
    let mut behind = Behind::new(file);
    while pos < end {
        let Some(h) = frames.get(pos..pos + FrameHeader::LEN) else {
            return Scan::Unknown;
        };
        let size = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let ty = h[8];
        let payload = pos + FrameHeader::LEN;
        let Some(next) = payload.checked_add(size).filter(|&n| n <= end) else {
            return Scan::Unknown;
        };
        // Only the five types 1.0 defines decode to events.
        if (frame_type::TRADE..=frame_type::POOL_STATE).contains(&ty) {
            if let Some(ts) = frames.get(payload..payload + 8).filter(|_| size >= 8) {
                let ts =
                    i64::from_le_bytes([ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], ts[7]]);
                if ts < last {
                    return Scan::OutOfOrder;
                }
                last = ts;
            }
        }
        behind.at(pos as u64);
        pos = next;
    }
    Scan::InOrder
}
