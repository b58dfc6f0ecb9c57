//! Where a segment writer's bytes go: the caller's buffers
//! ([`WriterBuffers`]) or any other [`WriterStorage`] (a journal's file
//! mapping), and the sizes they need.

use crate::index::IndexEntry;

/// Position of one frame in the LZ4 staging area (the sort key of the
/// in-block stable sort). Callers only allocate these: `[BlockSlot::EMPTY; N]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockSlot {
    pub(crate) ts: i64,
    pub(crate) offset: u32,
    pub(crate) len: u32,
}

impl BlockSlot {
    /// An unused slot.
    pub const EMPTY: BlockSlot = BlockSlot {
        ts: 0,
        offset: 0,
        len: 0,
    };
}

/// The caller's buffers. The writer borrows them for its lifetime.
pub struct WriterBuffers<'b> {
    /// Encoded segment bytes accumulate here until consumed. At least 64
    /// bytes; an uncompressed frame needs `12 + payload` free, an LZ4 block
    /// `16 + lz4_bound(block bytes)`, the trailer `32 + 16 × entries`.
    pub out: &'b mut [u8],
    /// LZ4 only: staging for one block's frames plus room for its sorted
    /// copy, so twice the largest block's uncompressed bytes
    /// ([`block_scratch_len`]). May be empty for uncompressed segments.
    pub block: &'b mut [u8],
    /// LZ4 only: at least `index_interval` slots. May be empty otherwise.
    pub slots: &'b mut [BlockSlot],
    /// Index entries: one per `index_interval` events (uncompressed) or per
    /// block (LZ4). May be empty when `create_index` is false.
    pub index: &'b mut [IndexEntry],
}

/// Which of the writer's buffers is short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// The output buffer.
    Out,
    /// The LZ4 block scratch.
    Block,
    /// The LZ4 block slots.
    Slots,
    /// The index entry storage.
    Index,
}

/// All four buffers at once, borrowed mutably.
pub struct Parts<'p> {
    /// Output buffer.
    pub out: &'p mut [u8],
    /// LZ4 block scratch.
    pub block: &'p mut [u8],
    /// LZ4 block slots.
    pub slots: &'p mut [BlockSlot],
    /// Index entries.
    pub index: &'p mut [IndexEntry],
}

/// Where a [`SegmentWriter`](crate::SegmentWriter) keeps its bytes. [`WriterBuffers`] (fixed
/// slices) is the no_std implementation; a std crate can implement it over
/// growable vectors by overriding [`WriterStorage::grow`].
pub trait WriterStorage {
    /// The buffers, borrowed together.
    fn parts(&mut self) -> Parts<'_>;
    /// The output buffer, read-only.
    fn out(&self) -> &[u8];
    /// Called when buffer `which` is shorter than `needed` (bytes, or
    /// entries for slots and index); return true after growing it to at
    /// least `needed`, keeping its contents. The default cannot grow.
    fn grow(&mut self, which: Buffer, needed: usize) -> bool {
        let _ = (which, needed);
        false
    }
    /// Current lengths of (out, block, slots, index).
    fn lens(&self) -> (usize, usize, usize, usize);
}

impl WriterStorage for WriterBuffers<'_> {
    fn parts(&mut self) -> Parts<'_> {
        Parts {
            out: self.out,
            block: self.block,
            slots: self.slots,
            index: self.index,
        }
    }
    fn out(&self) -> &[u8] {
        self.out
    }
    fn lens(&self) -> (usize, usize, usize, usize) {
        (
            self.out.len(),
            self.block.len(),
            self.slots.len(),
            self.index.len(),
        )
    }
}

/// Whether `store`'s buffer `which` holds at least `needed`, growing it if
/// the storage can.
pub(super) fn holds<S: WriterStorage>(store: &mut S, which: Buffer, needed: usize) -> bool {
    len_of(store, which) >= needed || (store.grow(which, needed) && len_of(store, which) >= needed)
}

pub(super) fn len_of<S: WriterStorage>(store: &S, which: Buffer) -> usize {
    let (o, b, s, i) = store.lens();
    match which {
        Buffer::Out => o,
        Buffer::Block => b,
        Buffer::Slots => s,
        Buffer::Index => i,
    }
}

/// Block scratch needed for blocks of up to `max_block_bytes` uncompressed
/// frame bytes (staging plus the sorted copy).
pub const fn block_scratch_len(max_block_bytes: usize) -> usize {
    2 * max_block_bytes
}

/// Index entries a segment of `events` events needs.
pub const fn index_entries_needed(events: u64, interval: u16) -> u64 {
    let iv = if interval == 0 { 1 } else { interval as u64 };
    events.div_ceil(iv)
}
