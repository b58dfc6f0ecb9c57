//! LZ4 blocks compressed off the appending thread, under the chunked
//! policies (`None`, `SyncOnClose`); under `Flush`, `SyncEveryBlock` and
//! `SyncEveryN` the append that fills a block compresses it, so that the
//! block is written (`Flush`) or handed to the I/O thread, with its fsync,
//! when that append returns, as those policies promise.
//!
//! The encoder seals each full block instead of compressing it
//! ([`SegmentWriter::defer_blocks`](floxlog_core::SegmentWriter::defer_blocks));
//! the appending thread swaps the block's scratch for a spare one (no
//! copy) and queues it for the compressor thread, which sorts and
//! compresses it exactly as the encoder would. Finished blocks are placed
//! back into the segment, in order, at the writer's next calls, so the
//! files are byte for byte those of compressing in place. At most
//! [`MAX_BLOCKS`] blocks per segment are sealed and unplaced (the appending
//! thread then waits for the oldest: back-pressure, bounded memory).
//!
//! Rotation stays exact: a segment rotates after the block that takes it
//! to `max_segment_bytes`, which needs that block's compressed size. While
//! the segment's bytes plus the LZ4 bound of its unplaced blocks stay
//! below the limit no block can cross it; once they may, the appending
//! thread waits for the unplaced blocks (near the end of each segment
//! only) and decides on the exact size.

use super::io_thread::lock;
use super::FileWriter;
use crate::tape::error::TapeError;
use floxlog_core::{compress_block, BlockSlot, SealedBlock};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Sealed, unplaced blocks per segment at most.
pub(super) const MAX_BLOCKS: usize = 4;

struct Job {
    /// The segment's `seq`, to route the result.
    seg: u64,
    block: Vec<u8>,
    slots: Vec<BlockSlot>,
    b: SealedBlock,
    at: u64,
}

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Compressed blocks (segment, bytes), in the order the jobs came.
    done: VecDeque<(u64, Result<Vec<u8>, String>)>,
    /// Scratch and output buffers back from the thread, for reuse.
    scratch: Vec<(Vec<u8>, Vec<BlockSlot>)>,
    outs: Vec<Vec<u8>>,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when a job is queued, a block done, or stop asked.
    cv: Condvar,
}

/// The compressor thread of a writer; joined on drop.
pub(super) struct Compressor {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Compressor {
    pub(super) fn start(
        dir: &std::path::Path,
        cpus: crate::tape::writer::CpuSet,
    ) -> Result<Compressor, TapeError> {
        let shared = Arc::new(Shared::default());
        let s = Arc::clone(&shared);
        let thread = crate::tape::writer::spawn_thread(dir, "floxlog-lz4", cpus, move || run(&s))?;
        Ok(Compressor {
            shared,
            thread: Some(thread),
        })
    }

    /// A scratch pair to put in place of a sealed block's (at least the
    /// same sizes; allocated only until the pool is warm).
    fn spare(&self, block_len: usize, slots_len: usize) -> (Vec<u8>, Vec<BlockSlot>) {
        let mut spare = lock(&self.shared.state).scratch.pop().unwrap_or_default();
        if spare.0.len() < block_len {
            spare.0.resize(block_len, 0);
        }
        if spare.1.len() < slots_len {
            spare.1.resize(slots_len, BlockSlot::EMPTY);
        }
        spare
    }

    fn submit(&self, job: Job) {
        lock(&self.shared.state).jobs.push_back(job);
        self.shared.cv.notify_all();
    }

    /// The oldest finished block of segment `seg`, waiting for it if
    /// `wait` (the caller knows one is queued).
    fn take(&self, seg: u64, wait: bool) -> Option<Result<Vec<u8>, String>> {
        let mut st = lock(&self.shared.state);
        loop {
            if let Some(i) = st.done.iter().position(|d| d.0 == seg) {
                return st.done.remove(i).map(|d| d.1);
            }
            if !wait {
                return None;
            }
            st = self.shared.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn recycle(&self, out: Vec<u8>) {
        lock(&self.shared.state).outs.push(out);
    }
}

impl Drop for Compressor {
    fn drop(&mut self) {
        lock(&self.shared.state).stop = true;
        self.shared.cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(shared: &Shared) {
    let mut st = lock(&shared.state);
    loop {
        let Some(mut job) = st.jobs.pop_front() else {
            if st.stop {
                return;
            }
            st = shared.cv.wait(st).unwrap_or_else(|e| e.into_inner());
            continue;
        };
        let mut out = st.outs.pop().unwrap_or_default();
        drop(st);
        if out.len() < job.b.out_bound() {
            out.resize(job.b.out_bound(), 0);
        }
        let r = compress_block(&mut job.block, &mut job.slots, job.b, &mut out, job.at)
            .map(|n| {
                out.truncate(n);
                out
            })
            .map_err(|e| e.to_string());
        st = lock(&shared.state);
        st.done.push_back((job.seg, r));
        st.scratch.push((job.block, job.slots));
        shared.cv.notify_all();
    }
}

impl FileWriter {
    /// After an append to segment `si`: queues the block it sealed, if any,
    /// and places the blocks compressed since (waiting for them where
    /// rotation or the bound on unplaced blocks needs their sizes).
    pub(super) fn lz4_pump(&mut self, si: usize) -> Result<(), TapeError> {
        let r = self.pump(si, false);
        if let Err(e) = &r {
            self.failed.get_or_insert_with(|| e.clone());
        }
        r
    }

    /// Places every block of segment `si` (before its last block, its
    /// trailer, a flush).
    pub(super) fn lz4_drain(&mut self, si: usize) -> Result<(), TapeError> {
        let r = self.pump(si, true);
        if let Err(e) = &r {
            self.failed.get_or_insert_with(|| e.clone());
        }
        r
    }

    fn pump(&mut self, si: usize, all: bool) -> Result<(), TapeError> {
        let max = self.cfg.max_segment_bytes;
        let (Some(c), Some(seg)) = (self.lz4.as_ref(), self.open[si].as_mut()) else {
            return Ok(());
        };
        if let Some(b) = seg.w.sealed() {
            let store = seg.w.storage_mut();
            let (bl, sl) = store.scratch_lens();
            let (block, slots) = store.swap_scratch(c.spare(bl, sl));
            seg.w.release_sealed();
            // Where the block goes is not known yet: at least here.
            let at = seg.w.segment_bytes();
            c.submit(Job {
                seg: seg.seq,
                block,
                slots,
                b,
                at,
            });
        }
        // Sizes needed: all of them once the segment may reach `max`.
        let exact = all || seg.w.segment_bytes() + seg.w.unplaced_bound() >= max;
        let keep = if exact { 0 } else { MAX_BLOCKS - 1 };
        while seg.w.unplaced() > 0 {
            let Some(r) = c.take(seg.seq, seg.w.unplaced() > keep) else {
                break;
            };
            let bytes = r.map_err(|e| {
                TapeError::input(
                    Some(&seg.io.path),
                    format!("cannot compress an LZ4 block: {e}"),
                )
            })?;
            seg.w.place_block(&bytes).map_err(|e| {
                TapeError::input(
                    Some(&seg.io.path),
                    format!("cannot place an LZ4 block: {e}"),
                )
                .at(e.offset)
            })?;
            c.recycle(bytes);
        }
        Ok(())
    }
}
