//! Whole segments in memory: a growable storage for the core writer, and
//! helpers that encode events into finished segment bytes.

use floxlog_core::writer::{Buffer, Parts, WriterStorage};
use floxlog_core::{BlockSlot, Error, Event, IndexEntry, SegmentWriter, WriterConfig};

/// Writer storage over vectors that grow on demand, so appends never fail
/// for lack of room (memory permitting).
#[derive(Default)]
pub struct VecStorage {
    out: Vec<u8>,
    block: Vec<u8>,
    slots: Vec<BlockSlot>,
    index: Vec<IndexEntry>,
}

impl VecStorage {
    /// Empty storage with `out_capacity` output bytes to start with.
    pub fn with_capacity(out_capacity: usize) -> VecStorage {
        VecStorage {
            out: vec![0; out_capacity.max(64)],
            ..VecStorage::default()
        }
    }
}

fn grow_to<T: Clone + Default>(v: &mut Vec<T>, needed: usize) {
    if v.len() < needed {
        let n = needed.max(v.len().saturating_mul(2));
        v.resize(n, T::default());
    }
}

impl WriterStorage for VecStorage {
    fn parts(&mut self) -> Parts<'_> {
        Parts {
            out: &mut self.out,
            block: &mut self.block,
            slots: &mut self.slots,
            index: &mut self.index,
        }
    }
    fn out(&self) -> &[u8] {
        &self.out
    }
    fn grow(&mut self, which: Buffer, needed: usize) -> bool {
        match which {
            Buffer::Out => grow_to(&mut self.out, needed),
            Buffer::Block => grow_to(&mut self.block, needed),
            Buffer::Slots => grow_to(&mut self.slots, needed),
            Buffer::Index => grow_to(&mut self.index, needed),
        }
        true
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

/// A writer that grows its own buffers.
pub type VecWriter = SegmentWriter<VecStorage>;

/// A new growable writer.
pub fn vec_writer(cfg: WriterConfig) -> Result<VecWriter, Error> {
    SegmentWriter::new(cfg, VecStorage::with_capacity(1 << 16))
}

/// Finishes `w` and returns the complete segment, assuming nothing was
/// consumed from it (the final header is patched in at offset 0).
pub fn finish_to_vec(mut w: VecWriter) -> Result<Vec<u8>, Error> {
    debug_assert_eq!(w.pending_offset(), 0);
    let header = w.finish()?;
    let mut bytes = w.pending().to_vec();
    bytes[..64].copy_from_slice(&header);
    Ok(bytes)
}

/// Encodes `events` as segments the way the reference does: a new segment
/// (with `created_ns(i)` for segment `i`) whenever the next frame would take
/// an uncompressed segment past `max_segment_bytes`. No event, no segment
/// (as the tape writer, which removes a segment no event reached).
pub fn encode_segments<'e>(
    cfg: WriterConfig,
    events: impl IntoIterator<Item = Event<'e>>,
    max_segment_bytes: u64,
    mut created_ns: impl FnMut(usize) -> i64,
) -> Result<Vec<Vec<u8>>, Error> {
    let mut out = Vec::new();
    let mut w = vec_writer(WriterConfig {
        created_ns: created_ns(0),
        ..cfg
    })?;
    let mut any = false;
    for ev in events {
        any = true;
        if w.would_exceed(&ev, max_segment_bytes) {
            let next = vec_writer(WriterConfig {
                created_ns: created_ns(out.len() + 1),
                ..cfg
            })?;
            out.push(finish_to_vec(std::mem::replace(&mut w, next))?);
        }
        w.append(&ev)?;
    }
    if any {
        out.push(finish_to_vec(w)?);
    }
    Ok(out)
}
