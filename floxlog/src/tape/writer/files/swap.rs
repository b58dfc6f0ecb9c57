//! Segment writer storage whose output buffer moves whole to the I/O thread.

use floxlog_core::writer::{Buffer, Parts, WriterStorage};
use floxlog_core::{BlockSlot, IndexEntry, SegmentWriter};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::io_thread::{lock, CHUNK};

/// The output buffer grows by doubling, but not past this while what it
/// must hold fits (so the chunked policies' buffers stay a chunk and a bit).
const OUT_TARGET: usize = CHUNK + CHUNK / 8;

/// Where the writer and its [`SwapStorage`] exchange output buffers.
#[derive(Default)]
pub(super) struct Exchange {
    armed: AtomicBool,
    slot: Mutex<Option<Vec<u8>>>,
}

/// Segment writer storage over growable vectors (like
/// [`crate::segment::VecStorage`]) whose output buffer can be swapped whole
/// through an [`Exchange`]: see [`take_pending`].
pub(super) struct SwapStorage {
    out: Vec<u8>,
    block: Vec<u8>,
    slots: Vec<BlockSlot>,
    index: Vec<IndexEntry>,
    xchg: Arc<Exchange>,
}

/// A segment writer over [`SwapStorage`].
pub(super) type SwapWriter = SegmentWriter<SwapStorage>;

impl SwapStorage {
    /// Storage with a 64 KiB output buffer to start with, and its exchange.
    pub fn new() -> (SwapStorage, Arc<Exchange>) {
        let xchg = Arc::new(Exchange::default());
        let s = SwapStorage {
            out: vec![0; 64 << 10],
            block: Vec::new(),
            slots: Vec::new(),
            index: Vec::new(),
            xchg: Arc::clone(&xchg),
        };
        (s, xchg)
    }

    /// Lengths of the LZ4 block scratch and slots.
    pub fn scratch_lens(&self) -> (usize, usize) {
        (self.block.len(), self.slots.len())
    }

    /// Puts `fresh` in place of the LZ4 block scratch and slots (a sealed
    /// block's, going to the compressor) and returns them.
    pub fn swap_scratch(&mut self, fresh: (Vec<u8>, Vec<BlockSlot>)) -> (Vec<u8>, Vec<BlockSlot>) {
        let block = std::mem::replace(&mut self.block, fresh.0);
        let slots = std::mem::replace(&mut self.slots, fresh.1);
        (block, slots)
    }

    #[cold]
    fn swap_out(&mut self) {
        let mut slot = lock(&self.xchg.slot);
        if let Some(mut fresh) = slot.take() {
            if fresh.len() < self.out.len() {
                fresh.resize(self.out.len(), 0);
            }
            std::mem::swap(&mut self.out, &mut fresh);
            *slot = Some(fresh);
        }
        self.xchg.armed.store(false, Ordering::Relaxed);
    }
}

fn grow_to<T: Clone + Default>(v: &mut Vec<T>, needed: usize, cap: usize) {
    if v.len() < needed {
        let mut n = needed.max(v.len().saturating_mul(2));
        if needed <= cap {
            n = n.min(cap);
        }
        v.resize(n, T::default());
    }
}

impl WriterStorage for SwapStorage {
    #[inline]
    fn parts(&mut self) -> Parts<'_> {
        // Armed only by take_pending, around its consume (which starts by
        // borrowing the parts): the output buffer is swapped right there.
        if self.xchg.armed.load(Ordering::Relaxed) {
            self.swap_out();
        }
        Parts {
            out: &mut self.out,
            block: &mut self.block,
            slots: &mut self.slots,
            index: &mut self.index,
        }
    }
    #[inline]
    fn out(&self) -> &[u8] {
        &self.out
    }
    fn grow(&mut self, which: Buffer, needed: usize) -> bool {
        match which {
            Buffer::Out => grow_to(&mut self.out, needed, OUT_TARGET),
            Buffer::Block => grow_to(&mut self.block, needed, usize::MAX),
            Buffer::Slots => grow_to(&mut self.slots, needed, usize::MAX),
            Buffer::Index => grow_to(&mut self.index, needed, usize::MAX),
        }
        true
    }
    #[inline]
    fn lens(&self) -> (usize, usize, usize, usize) {
        (
            self.out.len(),
            self.block.len(),
            self.slots.len(),
            self.index.len(),
        )
    }
}

/// Takes every pending byte of `w` without copying: its output buffer is
/// swapped for `fresh` (grown to the same length if shorter) while `w`
/// consumes them. Returns the old buffer and how many bytes of it are the
/// pending ones (from its start), or `None` if the storage did not swap
/// (the pending bytes are then lost: a bug, reported as an internal error).
pub(super) fn take_pending(
    w: &mut SwapWriter,
    xchg: &Exchange,
    fresh: Vec<u8>,
) -> Option<(Vec<u8>, usize)> {
    let n = w.pending().len();
    let at = w.pending().as_ptr();
    *lock(&xchg.slot) = Some(fresh);
    xchg.armed.store(true, Ordering::Relaxed);
    w.consume(n);
    xchg.armed.store(false, Ordering::Relaxed);
    let old = lock(&xchg.slot).take()?;
    (old.as_ptr() == at && n <= old.len()).then_some((old, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use floxlog_core::{Event, Trade, WriterConfig};

    fn trade(i: i64) -> Event<'static> {
        Event::Trade(Trade {
            exchange_ts_ns: 1_000 + i,
            price_raw: 100 + i,
            trade_id: i as u64,
            ..Default::default()
        })
    }

    #[test]
    fn take_pending_moves_the_buffer_without_copying() {
        let (store, xchg) = SwapStorage::new();
        let mut w = SegmentWriter::new(WriterConfig::default(), store).unwrap();
        let mut whole = Vec::new();
        for round in 0..3 {
            for i in 0..1000 {
                w.append(&trade(round * 1000 + i)).unwrap();
            }
            let expect = w.pending().to_vec();
            let ptr = w.pending().as_ptr();
            let at = w.pending_offset();
            assert_eq!(at, whole.len() as u64);
            let (buf, n) = take_pending(&mut w, &xchg, Vec::new()).expect("swapped");
            assert_eq!(buf.as_ptr(), ptr, "the very buffer, not a copy");
            assert_eq!(&buf[..n], &expect[..]);
            assert!(w.pending().is_empty());
            assert_eq!(w.pending_offset(), at + n as u64);
            whole.extend_from_slice(&buf[..n]);
        }
        let h = w.finish().unwrap();
        whole.extend_from_slice(w.pending());
        whole[..64].copy_from_slice(&h);
        let seg = floxlog_core::Segment::parse(&whole).unwrap();
        let mut r = seg.reader(Default::default(), &mut []);
        let mut n = 0;
        while let Some(ev) = r.next_event().unwrap() {
            assert_eq!(ev.exchange_ts_ns(), 1_000 + n);
            n += 1;
        }
        assert_eq!(n, 3000);
    }
}
