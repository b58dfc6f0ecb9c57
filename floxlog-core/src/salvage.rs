//! Resynchronising after damage: where a damaged segment can be read again.
//!
//! The reference and the spec stop at the first bad frame. Salvage goes on
//! at a later frame (or block) boundary, but a CRC-valid frame can sit
//! inside another frame's payload, so a resync point is accepted only when
//! the chain of whole, valid frames (LZ4: blocks that decompress to valid
//! frames) from it checks out all the way to the end of the frame area, to
//! a checkpoint (an index entry), or (LZ4) to the next block header.
//! Candidates are tried from the strongest evidence to the weakest:
//!
//! 1. the damaged frame's (block's) own extent, when its header is intact
//!    (a flipped payload bit): resuming right after it never looks inside
//!    its payload;
//! 2. the index entries past the damage: boundaries the writer recorded;
//! 3. a byte scan (LZ4: a scan for the `FBLK` magic). Only this last resort
//!    could land on a frame hidden in the payload of a frame whose header
//!    was destroyed and whose hidden chain ends exactly where it did.
//!
//! The work is bounded by a byte budget that the caller shares across every
//! resync of a segment, so a hostile file with many damaged regions cannot
//! make salvage quadratic.

use crate::block::{Block, BlockHeader};
use crate::frame::{check_frame, Checked, FrameHeader};
use crate::reader::{ReadOptions, Segment};

/// How a resync point was found (strongest evidence first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResyncBy {
    /// Right after the damaged frame or block, whose header was intact.
    Extent,
    /// At an index entry.
    IndexEntry,
    /// By scanning bytes for a chain that checks out.
    Scan,
}

/// Where to read on after damage at `damage`: the offset and how it was
/// found, or `None` if nothing after it checks out before `budget` (bytes
/// of chain walking; decreased by what this search spends) runs out.
/// `checkpoints` are the offsets of index entries (sorted; unproven entries
/// are fine: a chain must still reach them). `scratch` receives
/// decompressed blocks (LZ4; [`Segment::scratch_len`]).
pub fn resync(
    seg: &Segment<'_>,
    damage: u64,
    checkpoints: &[u64],
    opts: ReadOptions,
    scratch: &mut [u8],
    budget: &mut u64,
) -> Option<(u64, ResyncBy)> {
    let mut w = Walker {
        data: &seg.data()[..seg.frames_end() as usize],
        end: seg.frames_end(),
        compressed: seg.is_compressed(),
        checkpoints,
        opts,
        scratch,
        spent: 0,
        budget: *budget,
    };
    let found = w.search(damage);
    *budget = budget.saturating_sub(w.spent);
    found
}

struct Walker<'d, 's> {
    data: &'d [u8],
    end: u64,
    compressed: bool,
    checkpoints: &'d [u64],
    opts: ReadOptions,
    scratch: &'s mut [u8],
    spent: u64,
    budget: u64,
}

impl Walker<'_, '_> {
    /// The candidates, strongest evidence first (see the module docs).
    fn search(&mut self, damage: u64) -> Option<(u64, ResyncBy)> {
        if let Some(after) = self.extent(damage) {
            if after > damage && self.checks_out(after) {
                return Some((after, ResyncBy::Extent));
            }
        }
        for &c in self.checkpoints.iter().filter(|&&c| c > damage) {
            if self.checks_out(c) {
                return Some((c, ResyncBy::IndexEntry));
            }
            if self.spent > self.budget {
                return None;
            }
        }
        let mut p = damage + 1;
        while p < self.end && self.spent <= self.budget {
            let magic_ok = !self.compressed || self.data[p as usize..].starts_with(b"FBLK");
            if magic_ok && self.checks_out(p) {
                return Some((p, ResyncBy::Scan));
            }
            // Every candidate costs at least a byte, so the scan is bounded.
            self.spent += 1;
            p += 1;
        }
        None
    }

    /// The end of the frame (block) at `at` by its header, if the header
    /// is whole and its extent lies inside the frame area.
    fn extent(&self, at: u64) -> Option<u64> {
        let rest = self.data.get(at as usize..)?;
        let len = if self.compressed {
            BlockHeader::parse(rest, at).ok()?.block_len()
        } else {
            let h = FrameHeader::parse(rest, at).ok()?;
            FrameHeader::LEN as u64 + h.size as u64
        };
        let after = at.checked_add(len)?;
        (after <= self.end).then_some(after)
    }

    /// Whether the chain of units (frames or blocks) from `p` checks out
    /// to the end of the frame area, a checkpoint, or (LZ4) a block header.
    fn checks_out(&mut self, p: u64) -> bool {
        let mut q = p;
        loop {
            if q == self.end || (q > p && self.checkpoints.binary_search(&q).is_ok()) {
                return true;
            }
            if self.compressed && q > p && BlockHeader::parse(&self.data[q as usize..], q).is_ok() {
                // The block before checked out, and the next one starts
                // here: its own check comes when it is read.
                return true;
            }
            let Some(n) = self.unit(q) else {
                return false;
            };
            self.spent += n;
            if self.spent > self.budget {
                return false;
            }
            q += n;
        }
    }

    /// The length of the valid unit at `q`: a frame that passes every
    /// check (CRC, version, flags, type, layout), or a block that
    /// decompresses to exactly its frames, every one valid.
    fn unit(&mut self, q: u64) -> Option<u64> {
        let rest = &self.data[q as usize..];
        if !self.compressed {
            return match check_frame(rest, q, true, self.opts.unknown_types).ok()? {
                Checked::Event(_, n) | Checked::Skipped(n) => Some(n as u64),
            };
        }
        let b = Block::at(self.data, q).ok()?;
        let frames = b.decompress(self.scratch).ok()?;
        let (mut at, mut count) = (0usize, 0u32);
        while at < frames.len() {
            let n = match check_frame(&frames[at..], q, true, self.opts.unknown_types).ok()? {
                Checked::Event(_, n) | Checked::Skipped(n) => n,
            };
            at += n;
            count += 1;
        }
        (count == b.header.event_count as u32).then_some(b.header.block_len())
    }
}
