//! The in-order scan: whether an uncompressed segment's events already come
//! in time order, found by a walk of the frame chain that reads each
//! frame's length, type and timestamp and decodes nothing else (no CRC, no
//! record checks): a fraction of the ordering pass, so that time order over
//! a recorder's usual segment (in order, never flagged Sorted) costs little
//! more than file order. A large segment is walked on two threads, split at
//! an index entry near its middle.
//!
//! The walk is conservative: it looks at every frame the checked read could
//! return as an event (the same chain from the same start; it goes on past
//! frames that read would stop at), and every event's timestamp is its
//! payload's first 8 bytes in every 1.0 record type. A non-decreasing
//! sequence has no decreasing subsequence, so when the scan finds the
//! timestamps in order, whatever subset of them the checked, filtered read
//! returns is in order too.

use crate::tape::read::merge::order::Behind;
use crate::tape::read::source::SegmentFile;
use floxlog_core::{frame_type, FrameHeader, Segment, SegmentHeader};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Frame bytes from which the walk is split between two threads.
const SPLIT_BYTES: usize = 16 << 20;

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
    scan_split(seg, file, SPLIT_BYTES)
}

/// [`scan_in_order`], split from `split_bytes` of frames on.
fn scan_split(seg: &Segment<'_>, file: &SegmentFile, split_bytes: usize) -> Scan {
    if seg.is_compressed() {
        return Scan::Unknown;
    }
    let data = seg.data();
    let end = usize::try_from(seg.frames_end()).map_or(data.len(), |e| e.min(data.len()));
    let Some(frames) = data.get(..end) else {
        return Scan::Unknown;
    };
    let start = SegmentHeader::LEN;
    if let Some(cut) = middle_cut(seg, start, end, split_bytes) {
        // The second half's walk starts at an unproven index entry: the
        // first half's walk landing on it exactly proves it is on the chain
        // (else the second half's findings mean nothing).
        // A first half out of order ends the second's walk: the answer
        // is known.
        let stop = AtomicBool::new(false);
        let (a, b) = std::thread::scope(|s| {
            let second = s.spawn(|| walk(frames, cut, end, file, Some(&stop)));
            let a = walk(frames, start, cut, file, None);
            if a == Err(Scan::OutOfOrder) {
                stop.store(true, Relaxed);
            }
            (a, second.join())
        });
        match (a, b) {
            (Err(Scan::OutOfOrder), _) => return Scan::OutOfOrder,
            (Ok(a), Ok(Ok(b))) => {
                return match (a, b) {
                    (Some((_, last)), Some((first, _))) if first < last => Scan::OutOfOrder,
                    _ => Scan::InOrder,
                };
            }
            (Ok(_), Ok(Err(e))) => return e,
            // The cut is not on the chain (or the thread failed): one walk.
            _ => {}
        }
    }
    match walk(frames, start, end, file, None) {
        Ok(_) => Scan::InOrder,
        Err(e) => e,
    }
}

/// An index entry's offset near the middle of the frames `[start, end)`,
/// for a segment worth splitting; unproven.
fn middle_cut(seg: &Segment<'_>, start: usize, end: usize, split_bytes: usize) -> Option<usize> {
    if end - start < split_bytes || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2
    {
        return None;
    }
    let ix = seg.index_unproven().ok()??;
    let mid = start + (end - start) / 2;
    let cut = ix
        .iter()
        .filter_map(|e| usize::try_from(e.file_offset).ok())
        .filter(|&o| o > start && o < end)
        .min_by_key(|&o| o.abs_diff(mid))?;
    Some(cut)
}

/// Bytes of the file a walk reads at a time through read(2).
const CHUNK: usize = 64 << 10;

/// The frame bytes a walk reads: through read(2), a chunk at a time, when
/// the mapped file can be opened again (the walk then faults in no page of
/// the map, so the read after it is the first to), else from the map.
struct Bytes<'a> {
    map: &'a [u8],
    file: Option<std::fs::File>,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    at: usize,
    /// Where the walk ends: no read goes past it.
    to: usize,
}

impl<'a> Bytes<'a> {
    fn new(map: &'a [u8], file: &SegmentFile, to: usize) -> Self {
        Bytes {
            map,
            file: file.reopen().filter(|_| cfg!(unix)),
            buf: Vec::new(),
            at: 0,
            to,
        }
    }

    /// Bytes `[pos, pos + N)` (all below `to`), or `None` if the file no
    /// longer has them.
    #[inline]
    fn get<const N: usize>(&mut self, pos: usize) -> Option<[u8; N]> {
        let end = pos.checked_add(N).filter(|&e| e <= self.to)?;
        let s = if self.file.is_none() {
            self.map.get(pos..end)?
        } else {
            if pos < self.at || end > self.at + self.buf.len() {
                self.fill(pos, N)?;
            }
            self.buf.get(pos - self.at..end - self.at)?
        };
        s.try_into().ok()
    }

    /// Reads the chunk from `pos` (at least `n` bytes).
    #[cold]
    fn fill(&mut self, pos: usize, n: usize) -> Option<()> {
        let f = self.file.as_ref()?;
        let len = CHUNK.max(n).min(self.to - pos);
        self.buf.resize(len, 0);
        read_at(f, &mut self.buf, pos as u64)?;
        self.at = pos;
        Some(())
    }
}

#[cfg(unix)]
fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> Option<()> {
    use std::os::unix::fs::FileExt;
    f.read_exact_at(buf, at).ok()
}

#[cfg(not(unix))]
fn read_at(_: &std::fs::File, _: &mut [u8], _: u64) -> Option<()> {
    None
}

/// Walks the frame chain from `from`, which must land exactly on `to`:
/// the first and last timestamps of the events seen (`None`: none), or
/// `OutOfOrder` at the first that goes back, or `Unknown` where the chain
/// breaks or crosses `to` (or once `stop` is set).
fn walk(
    frames: &[u8],
    from: usize,
    to: usize,
    file: &SegmentFile,
    stop: Option<&AtomicBool>,
) -> Result<Option<(i64, i64)>, Scan> {
    let mut bytes = Bytes::new(frames, file, to);
    let mut behind = Behind::starting_at(file, from as u64);
    let mut pos = from;
    let mut seen: Option<(i64, i64)> = None;
    let mut last = i64::MIN;
    let mut count = 0u32;
    while pos < to {
        // The header and, for a record, its timestamp (the payload's first
        // 8 bytes) in one look; only the header where less is left.
        let (h, ts) = match bytes.get::<{ FrameHeader::LEN + 8 }>(pos) {
            Some(b) => {
                let (h, t) = b.split_at(FrameHeader::LEN);
                (h.try_into().ok(), t.try_into().ok().map(i64::from_le_bytes))
            }
            None => (bytes.get::<{ FrameHeader::LEN }>(pos), None),
        };
        let h: [u8; FrameHeader::LEN] = h.ok_or(Scan::Unknown)?;
        let size = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let next = (pos + FrameHeader::LEN)
            .checked_add(size)
            .filter(|&n| n <= to)
            .ok_or(Scan::Unknown)?;
        // Only the five types 1.0 defines decode to events; a record's
        // payload of 8 bytes or more within `to` was read with its header.
        if (frame_type::TRADE..=frame_type::POOL_STATE).contains(&h[8]) && size >= 8 {
            let ts = ts.ok_or(Scan::Unknown)?;
            if ts < last {
                return Err(Scan::OutOfOrder);
            }
            last = ts;
            seen = Some((seen.map_or(ts, |s| s.0), ts));
        }
        if bytes.file.is_none() {
            behind.at(pos as u64);
        }
        count = count.wrapping_add(1);
        if count.is_multiple_of(4096) && stop.is_some_and(|s| s.load(Relaxed)) {
            return Err(Scan::Unknown);
        }
        pos = next;
    }
    Ok(seen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Compression, WriterConfig};
    use crate::segment::{finish_to_vec, vec_writer};
    use floxlog_core::segment_header::{field, flags};
    use floxlog_core::IndexHeader;

    /// An uncompressed segment of mixed events at `ts`, not flagged Sorted.
    fn segment(ts: &[i64]) -> Vec<u8> {
        let mut w = vec_writer(WriterConfig {
            compression: Compression::None,
            index_interval: 8,
            created_ns: 1,
            ..Default::default()
        })
        .unwrap();
        for (i, &t) in ts.iter().enumerate() {
            let mut ev = crate::synth::mixed_event(5, i as u64);
            match &mut ev {
                crate::owned::OwnedEvent::Trade(x) => x.exchange_ts_ns = t,
                crate::owned::OwnedEvent::Book(b) => b.head.exchange_ts_ns = t,
                crate::owned::OwnedEvent::OptionQuote(q) => q.exchange_ts_ns = t,
                crate::owned::OwnedEvent::PoolState(p) => p.head.exchange_ts_ns = t,
            }
            w.append(&ev.as_event()).unwrap();
        }
        let mut s = finish_to_vec(w).unwrap();
        s[field::FLAGS] &= !flags::SORTED;
        s
    }

    fn scan(bytes: &[u8], dir: &std::path::Path) -> (Scan, bool) {
        let p = dir.join("s.floxlog");
        std::fs::write(&p, bytes).unwrap();
        let f = SegmentFile::open(&p).unwrap();
        let seg = Segment::parse(f.bytes()).unwrap();
        let end = seg.frames_end() as usize;
        let split = middle_cut(&seg, SegmentHeader::LEN, end, 1).is_some();
        (scan_split(&seg, &f, 1), split)
    }

    /// Split at an index entry: in order, or one event going back in
    /// either half or right at the cut, is found so; an index entry moved
    /// off the chain is no cut (one walk decides).
    #[test]
    fn the_split_scan_finds_what_one_walk_finds() {
        let d = tempfile::tempdir().unwrap();
        let n = 200;
        let base: Vec<i64> = (0..n).map(|i| 1_000 + i * 10).collect();
        let (got, split) = scan(&segment(&base), d.path());
        assert!(split, "the test must take the split path");
        assert_eq!(got, Scan::InOrder);
        for at in [3, 50, 99, 100, 101, 150, 199] {
            let mut ts = base.clone();
            ts[at] -= 25;
            assert_eq!(
                scan(&segment(&ts), d.path()).0,
                Scan::OutOfOrder,
                "back at {at}"
            );
        }
        // Every index entry pointed into a payload: never a cut, and the
        // walk from it is not trusted.
        let mut s = segment(&base);
        let seg = Segment::parse(&s).unwrap();
        let ix = seg.index_unproven().unwrap().unwrap();
        let (off, len) = (ix.offset() as usize, ix.len());
        let entries = off + IndexHeader::LEN..off + IndexHeader::LEN + len * 16;
        for i in 0..len {
            let at = entries.start + i * 16 + 8;
            let o = u64::from_le_bytes(s[at..at + 8].try_into().unwrap()) + 20;
            s[at..at + 8].copy_from_slice(&o.to_le_bytes());
        }
        let mut h = IndexHeader::parse(&s[off..], off as u64).unwrap();
        h.crc32 = floxlog_core::crc32::crc32(&s[entries]);
        let mut b = [0u8; IndexHeader::LEN];
        h.emit(&mut b);
        s[off..off + IndexHeader::LEN].copy_from_slice(&b);
        assert_eq!(scan(&s, d.path()), (Scan::InOrder, true));
        // And with an event going back in the second half.
        let mut ts = base.clone();
        ts[150] -= 25;
        let mut t = segment(&ts);
        t[off..].copy_from_slice(&s[off..]);
        assert_eq!(scan(&t, d.path()), (Scan::OutOfOrder, true));
    }
}
