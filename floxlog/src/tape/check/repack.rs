//! Re-packing the LZ4 blocks of a segment at another block size (`reindex
//! --index-interval N` on an LZ4 segment) without reordering anything.
//!
//! A writer sorts each block by timestamp as it packs it; a re-pack does
//! not: it is a rewrite of the index, and the file order of the events is
//! the segment's record of what arrived when. Frames are copied byte for
//! byte in file order into blocks of N events; each block gets an index
//! entry (its first event's timestamp), and the Sorted flag is set only
//! if the whole stream, as written, never goes back in time.

use crate::tape::check::recover::{settings_of, RewriteOutcome};
use crate::tape::error::TapeError;
use crate::tape::read::source::header_is_unfinished;
use floxlog_core::block::{compress_bound, MAX_SCRATCH};
use floxlog_core::index::{emit_trailer, trailer_len};
use floxlog_core::segment_header::flags;
use floxlog_core::{BlockHeader, FrameHeader, IndexEntry, ReadOptions, Segment, SegmentHeader};
use std::path::Path;

/// One block being filled.
struct Staged {
    frames: Vec<u8>,
    events: u16,
    first_ts: i64,
}

/// Re-packs LZ4 segment `data` (at `path`) into blocks of `interval`
/// events in file order; see the module docs. The segment must be
/// finished and readable to its end.
// Long but kept whole: checks, one copy loop, then the header and index
// made from what that loop counted.
pub fn repack_lz4(data: &[u8], path: &Path, interval: u16) -> Result<RewriteOutcome, TapeError> {
    let seg = Segment::parse(data).map_err(|e| TapeError::data(path, e))?;
    if !seg.is_compressed() {
        return Err(TapeError::input(
            Some(path),
            "not an LZ4 segment: nothing to re-pack",
        ));
    }
    let mut cfg = settings_of(&seg);
    cfg.index_interval = interval;
    cfg.check()
        .map_err(|e| TapeError::usage(format!("--index-interval: {}", e.what)))?;
    let mut h = *seg.header();
    if header_is_unfinished(&h) && h.event_count == 0 {
        return Err(TapeError::input(
            Some(path),
            "the header is a writer's placeholder (the segment was never closed)",
        )
        .with_hint(format!(
            "`floxlog recover {}` finishes it, index included",
            path.display()
        )));
    }
    let mut scratch = crate::read::block_scratch(&seg);
    let mut r = seg.reader(ReadOptions::default(), &mut scratch);
    let mut out = data[..SegmentHeader::LEN].to_vec();
    let mut entries = Vec::new();
    let mut st = Staged {
        frames: Vec::new(),
        events: 0,
        first_ts: 0,
    };
    let mut sorted = true;
    let mut last = i64::MIN;
    let mut n = 0u64;
    while let Some(it) = r.next_item().map_err(|e| {
        TapeError::data(path, e).with_hint(format!(
            "the segment is damaged: `floxlog recover {}` keeps the events before the damage",
            path.display()
        ))
    })? {
        let ts = it.event.exchange_ts_ns();
        let len = FrameHeader::LEN + it.frame.payload.len();
        // A block no reader could decompress is never written.
        if st.events > 0 && st.frames.len() + len > MAX_SCRATCH {
            emit(&mut st, &mut out, &mut entries, path)?;
        }
        if st.events == 0 {
            st.first_ts = ts;
        }
        let mut fh = [0u8; FrameHeader::LEN];
        it.frame.header.emit(&mut fh);
        st.frames.extend_from_slice(&fh);
        st.frames.extend_from_slice(it.frame.payload);
        st.events += 1;
        sorted &= ts >= last;
        last = ts;
        n += 1;
        if st.events == interval {
            emit(&mut st, &mut out, &mut entries, path)?;
        }
    }
    emit(&mut st, &mut out, &mut entries, path)?;
    if u64::from(h.event_count) != n {
        return Err(TapeError::input(
            Some(path),
            format!(
                "the header claims {} events, the blocks hold {n}",
                h.event_count
            ),
        )
        .with_hint(format!(
            "`floxlog recover {}` rewrites the header from the frames",
            path.display()
        )));
    }
    // Same events in the same order: the header's counts and time fields
    // stay true; only the index and the Sorted claim are made anew.
    h.flags &= !(flags::HAS_INDEX | flags::SORTED);
    h.index_offset = 0;
    if sorted && n > 0 {
        h.flags |= flags::SORTED;
    }
    if !entries.is_empty() {
        let at = out.len();
        out.resize(at + trailer_len(entries.len()), 0);
        emit_trailer(&entries, interval, &mut out[at..]);
        h.flags |= flags::HAS_INDEX;
        h.index_offset = at as u64;
    }
    out[..SegmentHeader::LEN].copy_from_slice(&h.to_bytes());
    let end = out.len() as u64;
    Ok(RewriteOutcome {
        bytes: out,
        events: n,
        stopped: None,
        dropped_from: end,
        dropped_bytes: 0,
        dropped_detail: None,
        skipped: Vec::new(),
        config: cfg,
    })
}

/// Compresses the staged frames as one block at the end of `out`, with
/// its index entry. Nothing staged: nothing written.
fn emit(
    st: &mut Staged,
    out: &mut Vec<u8>,
    entries: &mut Vec<IndexEntry>,
    path: &Path,
) -> Result<(), TapeError> {
    if st.events == 0 {
        return Ok(());
    }
    let at = out.len();
    let body = at + BlockHeader::LEN;
    out.resize(body + compress_bound(st.frames.len()), 0);
    let clen =
        floxlog_core::lz4_compress::compress(&st.frames, &mut out[body..]).ok_or_else(|| {
            TapeError::input(Some(path), "LZ4 compression of a block failed").at(at as u64)
        })?;
    let sizes = (u32::try_from(clen), u32::try_from(st.frames.len()));
    let (Ok(c), Ok(o)) = sizes else {
        return Err(TapeError::input(Some(path), "a block too large for its header").at(at as u64));
    };
    let mut hb = [0u8; BlockHeader::LEN];
    BlockHeader::new(c, o, st.events).emit(&mut hb);
    out[at..body].copy_from_slice(&hb);
    out.truncate(body + clen);
    entries.push(IndexEntry {
        timestamp_ns: st.first_ts,
        file_offset: at as u64,
    });
    st.frames.clear();
    st.events = 0;
    Ok(())
}
