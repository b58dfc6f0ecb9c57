//! A small cache of decompressed LZ4 blocks, for reading frames of
//! compressed segments out of file order (segments read in order keep
//! their one block themselves): by (segment, block offset), least
//! recently used evicted first, bounded in bytes (always room for the one
//! block being read, however large: the core bounds a block's scratch).

use crate::tape::read::source::SegmentFile;
use floxlog_core::{Block, Segment};

/// Bytes of decompressed blocks kept beyond the one in use.
pub(super) const CACHE_BYTES: usize = 32 << 20;

/// Most blocks kept (small blocks: a short linear search stays cheap).
const CACHE_BLOCKS: usize = 64;

struct Entry {
    seg: usize,
    offset: u64,
    buf: Vec<u8>,
    len: usize,
    used: u64,
}

/// See the module docs.
#[derive(Default)]
pub(super) struct BlockCache {
    entries: Vec<Entry>,
    held: usize,
    tick: u64,
}

impl BlockCache {
    /// The frames of the block at `offset` of segment `seg_no` (mapped by
    /// `file`), decompressed now unless cached. Errors are the core's (the
    /// block header's offset).
    pub fn get(
        &mut self,
        seg_no: usize,
        seg: &Segment<'_>,
        file: &SegmentFile,
        offset: u64,
    ) -> Result<&[u8], floxlog_core::Error> {
        self.tick += 1;
        if let Some(i) = self.find(seg_no, offset) {
            let e = &mut self.entries[i];
            e.used = self.tick;
            return Ok(&e.buf[..e.len]);
        }
        let data = seg.data();
        let end = (seg.frames_end() as usize).min(data.len());
        let block = Block::at(&data[..end], offset)?;
        // Bounded by the core (MAX_SCRATCH, and by the LZ4 ratio).
        let need = block.header.scratch_needed();
        let mut buf = self.make_room(need);
        if buf.len() < need {
            buf.resize(need, 0);
        }
        let len = block.decompress(&mut buf)?.len();
        // Its compressed bytes are not needed again while it is cached.
        file.release_range(offset, block.end());
        Ok(self.insert(seg_no, offset, buf, len))
    }

    /// Drops every block of a segment (it has been read).
    pub fn forget(&mut self, seg_no: usize) {
        self.entries.retain(|e| e.seg != seg_no);
        self.held = self.entries.iter().map(|e| e.buf.capacity()).sum();
    }

    fn find(&self, seg_no: usize, offset: u64) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.seg == seg_no && e.offset == offset)
    }

    fn insert(&mut self, seg: usize, offset: u64, buf: Vec<u8>, len: usize) -> &[u8] {
        self.held += buf.capacity();
        self.entries.push(Entry {
            seg,
            offset,
            buf,
            len,
            used: self.tick,
        });
        let e = &self.entries[self.entries.len() - 1];
        &e.buf[..e.len]
    }

    /// Evicts least recently used blocks until `need` more bytes fit the
    /// budget; returns a buffer to reuse (the last one evicted, if any).
    fn make_room(&mut self, need: usize) -> Vec<u8> {
        let mut spare = Vec::new();
        while !self.entries.is_empty()
            && (self.held + need > CACHE_BYTES || self.entries.len() >= CACHE_BLOCKS)
        {
            let Some(i) = (0..self.entries.len()).min_by_key(|&i| self.entries[i].used) else {
                break;
            };
            let e = self.entries.swap_remove(i);
            self.held -= e.buf.capacity();
            spare = e.buf;
        }
        spare
    }
}
