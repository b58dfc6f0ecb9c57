//! LZ4 segments: frames staged per block, the block sorted by time,
//! compressed and emitted when it holds `index_interval` events (or on
//! [`SegmentWriter::flush_block`]). Out of the main file so the
//! uncompressed append path stays small.

use super::{
    block_scratch_len, compress_block, BlockSlot, Buffer, SealedBlock, SegmentWriter, Source,
    WriterStorage,
};
use crate::block::{compress_bound, BlockHeader};
use crate::error::{Error, ErrorKind, Result};

impl<S: WriterStorage> SegmentWriter<S> {
    /// LZ4: stages the frame for the current block (emitting the block when
    /// it is full). Out of line so the uncompressed path stays small.
    #[inline(never)]
    pub(super) fn stage_lz4(
        &mut self,
        src: Source<'_>,
        pos: u64,
        frame_len: usize,
        ts: i64,
        new_symbol: Option<u32>,
    ) -> Result<()> {
        let staged = self.block_len + frame_len;
        if staged > u32::MAX as usize || !self.ensure(Buffer::Block, block_scratch_len(staged)) {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                pos,
                "LZ4 block scratch full: call flush_block() or give more scratch",
            )
            .needing(block_scratch_len(staged) as u64));
        }
        let completes = self.block_events + 1 >= self.cfg.index_interval as usize;
        let defer = self.deferred.on;
        if defer {
            self.check_deferred(completes, pos)?;
        } else if completes {
            self.check_block_room(staged, pos)?;
        }
        let at = self.block_len;
        let profile = self.cfg.profile;
        let parts = self.store.parts();
        src.emit(profile, &mut parts.block[at..at + frame_len], true, true);
        parts.slots[self.block_events] = BlockSlot {
            ts,
            offset: at as u32,
            len: frame_len as u32,
        };
        if self.block_events == 0 {
            self.block_first_ts = ts;
        } else if ts < self.block_max_ts {
            self.block_sorted = false;
        }
        self.block_min_ts = self.block_min_ts.min(ts);
        self.block_max_ts = self.block_max_ts.max(ts);
        self.block_len = staged;
        self.block_events += 1;
        self.note_event(ts, new_symbol);
        if completes && defer {
            self.seal_block();
        } else if completes {
            // Room was checked above, so this cannot fail.
            self.emit_block()?;
        }
        Ok(())
    }

    /// Checks output and index room for emitting a block of `bytes`.
    pub(super) fn check_block_room(&mut self, bytes: usize, pos: u64) -> Result<()> {
        let need = BlockHeader::LEN + compress_bound(bytes);
        if !self.ensure(Buffer::Out, self.out_len + need) {
            return Err(self.out_short(
                pos,
                need,
                "output buffer cannot hold the next compressed block: consume pending bytes and retry",
            ));
        }
        if self.cfg.create_index && !self.ensure(Buffer::Index, self.index_len + 1) {
            return Err(self.index_full(pos));
        }
        Ok(())
    }

    /// LZ4 only: emits the staged events as a block now, before it holds
    /// `index_interval` events (a valid segment, but no longer the
    /// reference's block grouping). No-op when nothing is staged.
    pub fn flush_block(&mut self) -> Result<()> {
        self.check_open()?;
        self.check_placed()?;
        if self.block_events == 0 {
            return Ok(());
        }
        self.check_block_room(self.block_len, self.position())?;
        self.emit_block()
    }

    /// Sorts, compresses and emits the staged block. Callers checked room.
    pub(super) fn emit_block(&mut self) -> Result<()> {
        let pos = self.position();
        let rec = self.sealed_record();
        let b = SealedBlock {
            events: self.block_events,
            bytes: self.block_len,
            in_order: self.block_sorted,
        };
        let out_len = self.out_len;
        let parts = self.store.parts();
        let n = compress_block(parts.block, parts.slots, b, &mut parts.out[out_len..], pos)?;
        self.note_block(&rec, pos, n);
        self.reset_block();
        Ok(())
    }
}
