//! LZ4 blocks compressed elsewhere. With [`SegmentWriter::defer_blocks`],
//! `append` seals a full block instead of sorting and compressing it: its
//! staged frames and slots stay in the storage for the caller to take (and
//! replace) before the next append; the caller compresses them with
//! [`compress_block`], on any thread, and hands the results back in order
//! with [`SegmentWriter::place_block`], which puts each where `append`
//! would have: the same bytes, offsets, index entries and header counts.
//! A writer on a hot path so keeps the compression off it.

use super::{BlockSlot, SegmentWriter, WriterStorage};
use crate::block::{compress_bound, compress_into, BlockHeader};
use crate::error::{Error, ErrorKind, Result};
use crate::index::IndexEntry;

/// Sealed blocks a writer holds unplaced at most; `append` refuses to seal
/// one more (`BufferTooSmall`) until the oldest is placed.
pub const MAX_UNPLACED: usize = 8;

/// A block sealed for compression: its frames are the first `bytes` bytes
/// of the block scratch, its slots the first `events`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealedBlock {
    /// Frames in the block.
    pub events: usize,
    /// Uncompressed bytes.
    pub bytes: usize,
    /// Frames already in time order (no sort needed).
    pub in_order: bool,
}

impl SealedBlock {
    /// Output bytes [`compress_block`] may need: the block header and the
    /// LZ4 bound.
    pub const fn out_bound(&self) -> usize {
        BlockHeader::LEN + compress_bound(self.bytes)
    }
}

/// What `emit_block` notes of a block, taken when it is sealed.
#[derive(Clone, Copy, Default)]
pub(super) struct Sealed {
    len: usize,
    n: usize,
    first_ts: i64,
    min_ts: i64,
    max_ts: i64,
    /// The writer's counts once the block is in the file.
    events: u32,
    emitted_first: i64,
    emitted_last: i64,
}

/// The sealed blocks awaiting placement, oldest first (a ring).
#[derive(Default)]
pub(super) struct Deferred {
    pub(super) on: bool,
    ring: [Sealed; MAX_UNPLACED],
    head: usize,
    pub(super) len: usize,
    /// Sealed by the last append, its scratch not yet taken.
    pub(super) untaken: Option<SealedBlock>,
}

/// Sorts (stably by time, unless `b.in_order`) and compresses a block of
/// frames staged in the first half of `block` (slots in `slots`), writing
/// its header and LZ4 body into `out`; returns the bytes written. The same
/// bytes `append` emits for the block in place; `at` is the block's segment
/// offset, for errors only.
pub fn compress_block(
    block: &mut [u8],
    slots: &mut [BlockSlot],
    b: SealedBlock,
    out: &mut [u8],
    at: u64,
) -> Result<usize> {
    let (n, len) = (b.events, b.bytes);
    let half = block.len() / 2;
    if len > half || n > slots.len() || n > u16::MAX as usize || out.len() < BlockHeader::LEN {
        return Err(Error::new(
            ErrorKind::BufferTooSmall,
            at,
            "block scratch, slots or output shorter than the sealed block",
        ));
    }
    let (staging, sorted) = block.split_at_mut(half);
    let src: &[u8] = if b.in_order {
        &staging[..len]
    } else {
        // Stable: ties keep arrival order, which the offset encodes.
        let slots = &mut slots[..n];
        slots.sort_unstable_by_key(|s| (s.ts, s.offset));
        let mut p = 0usize;
        for s in slots.iter() {
            let (o, l) = (s.offset as usize, s.len as usize);
            sorted[p..p + l].copy_from_slice(&staging[o..o + l]);
            p += l;
        }
        &sorted[..len]
    };
    let (head, body) = out.split_at_mut(BlockHeader::LEN);
    let clen = compress_into(src, body, at)?;
    let mut hb = [0u8; BlockHeader::LEN];
    BlockHeader::new(clen as u32, len as u32, n as u16).emit(&mut hb);
    head.copy_from_slice(&hb);
    Ok(BlockHeader::LEN + clen)
}

impl<S: WriterStorage> SegmentWriter<S> {
    /// LZ4 only: with `on`, a full block is sealed for the caller to
    /// compress instead of being compressed by `append` (see the module
    /// docs of `writer::deferred`). The last, partial block is still
    /// compressed by [`SegmentWriter::finish`] (and `flush_block`), which
    /// refuse while sealed blocks are unplaced.
    pub fn defer_blocks(&mut self, on: bool) {
        self.deferred.on = on;
    }

    /// The block the last append sealed, whose scratch (the storage's
    /// block buffer and slots) the caller must take and replace, then call
    /// [`SegmentWriter::release_sealed`], before appending again.
    pub fn sealed(&self) -> Option<SealedBlock> {
        self.deferred.untaken
    }

    /// The sealed block's scratch was taken: appends may go on.
    pub fn release_sealed(&mut self) {
        self.deferred.untaken = None;
    }

    /// Sealed blocks not placed yet.
    pub fn unplaced(&self) -> usize {
        self.deferred.len
    }

    /// The most bytes the unplaced blocks can add to
    /// [`SegmentWriter::segment_bytes`] once placed (rotation decisions
    /// are exact below `segment_bytes() + unplaced_bound()`).
    pub fn unplaced_bound(&self) -> u64 {
        (0..self.deferred.len)
            .map(|i| {
                let s = &self.deferred.ring[(self.deferred.head + i) % MAX_UNPLACED];
                (BlockHeader::LEN + compress_bound(s.len)) as u64
            })
            .sum()
    }

    /// Puts the oldest unplaced block in the output: `bytes` is what
    /// [`compress_block`] wrote for it. Fails, changing nothing, when no
    /// block waits, when `bytes` is not that block (its header's counts),
    /// or when the output or index cannot hold it.
    pub fn place_block(&mut self, bytes: &[u8]) -> Result<()> {
        let pos = self.position();
        self.check_open()?;
        let d = &self.deferred;
        let rec = d.ring[d.head];
        let h = BlockHeader::parse(bytes, pos)?;
        if d.len == 0
            || h.original_size as usize != rec.len
            || h.event_count as usize != rec.n
            || bytes.len() != BlockHeader::LEN + h.compressed_size as usize
        {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                pos,
                "not the compressed bytes of the oldest sealed block",
            ));
        }
        if !self.ensure(super::Buffer::Out, self.out_len + bytes.len()) {
            return Err(self.out_short(pos, bytes.len(), "output buffer cannot hold the block"));
        }
        if self.cfg.create_index && !self.ensure(super::Buffer::Index, self.index_len + 1) {
            return Err(self.index_full(pos));
        }
        let at = self.out_len;
        self.store.parts().out[at..at + bytes.len()].copy_from_slice(bytes);
        self.note_block(&rec, pos, bytes.len());
        self.deferred.head = (self.deferred.head + 1) % MAX_UNPLACED;
        self.deferred.len -= 1;
        Ok(())
    }

    /// Refuses to seal beyond [`MAX_UNPLACED`], or to stage over a sealed
    /// block's scratch not taken yet.
    pub(super) fn check_deferred(&self, completes: bool, pos: u64) -> Result<()> {
        if self.deferred.untaken.is_some() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                pos,
                "the sealed LZ4 block's scratch was not taken (release_sealed)",
            ));
        }
        if completes && self.deferred.len == MAX_UNPLACED {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                pos,
                "too many sealed LZ4 blocks: place the oldest first",
            ));
        }
        Ok(())
    }

    /// Refuses to emit a block (the last one, at finish) or the trailer
    /// before every sealed block is placed.
    pub(super) fn check_placed(&self) -> Result<()> {
        if self.deferred.len > 0 || self.deferred.untaken.is_some() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                self.position(),
                "sealed LZ4 blocks are not placed yet",
            ));
        }
        Ok(())
    }

    /// The staged block's record, for placing it now or later.
    pub(super) fn sealed_record(&self) -> Sealed {
        Sealed {
            len: self.block_len,
            n: self.block_events,
            first_ts: self.block_first_ts,
            min_ts: self.block_min_ts,
            max_ts: self.block_max_ts,
            events: self.events,
            emitted_first: self.first_ts,
            emitted_last: self.last_ts,
        }
    }

    /// Seals the staged block (deferred mode): recorded, scratch left for
    /// the caller, staging reset.
    pub(super) fn seal_block(&mut self) {
        let rec = self.sealed_record();
        let d = &mut self.deferred;
        d.ring[(d.head + d.len) % MAX_UNPLACED] = rec;
        d.len += 1;
        d.untaken = Some(SealedBlock {
            events: rec.n,
            bytes: rec.len,
            in_order: self.block_sorted,
        });
        self.reset_block();
    }

    /// Notes a block of `bytes` output bytes put at segment offset `pos`:
    /// index entry, order flags, counts of what is emitted.
    pub(super) fn note_block(&mut self, rec: &Sealed, pos: u64, bytes: usize) {
        if self.cfg.create_index {
            self.store.parts().index[self.index_len] = IndexEntry {
                timestamp_ns: rec.first_ts,
                file_offset: pos,
            };
            self.index_len += 1;
        }
        self.out_len += bytes;
        if let Some(prev) = self.prev_block_max {
            if rec.min_ts < prev {
                self.blocks_sorted = false;
            }
        }
        // Within the block the sort made the order non-decreasing.
        self.prev_block_max = Some(rec.max_ts);
        self.events_emitted = rec.events;
        self.emitted_first_ts = rec.emitted_first;
        self.emitted_last_ts = rec.emitted_last;
    }

    pub(super) fn reset_block(&mut self) {
        self.block_len = 0;
        self.block_events = 0;
        self.block_sorted = true;
        self.block_min_ts = i64::MAX;
        self.block_max_ts = i64::MIN;
    }
}
