//! A session's frames in file order, decoded ahead on a worker pool
//! ([`Session::frames_ahead`]; [`super::Plan::Ranges`] of
//! [`Session::frames`]).
//!
//! For copying a whole tape (`floxlog convert`): the engine's ranges (at
//! LZ4 block or proven frame boundaries) are read, CRC-checked and
//! decompressed on the engine's threads, while the caller's thread takes
//! their frames in order. What the caller sees is what a file-order read
//! without a filter gives: the same frames in the same order, and each
//! [`Problem`] at the point where that read records it (segments whose
//! header fails first; a stream error after every frame before it), so a
//! caller that stops at a problem stops at the same frame. Memory holds at
//! most the pool's window of ranges of about [`RANGE_BYTES`] each (or the
//! request's `range_bytes`).

use super::Session;
use crate::tape::error::TapeError;
use crate::tape::read::merge::{OpenedTape, Order};
use crate::tape::read::parallel::run_parallel_each;
use crate::tape::read::problem::Problem;
use crate::tape::read::ranges::{RangeRead, Settle, Split};
use crate::tape::read::Request;
use floxlog_core::ReadOptions;

/// Target size of a range (file bytes).
const RANGE_BYTES: u64 = 4 << 20;

/// What [`super::Session::frames_ahead`] hands out.
#[derive(Debug)]
pub enum Ahead<'x> {
    /// A frame: its type and payload, byte for byte.
    Frame {
        /// Frame type.
        frame_type: u8,
        /// Payload.
        payload: &'x [u8],
    },
    /// A segment that stops early.
    Problem(Problem),
}

/// A range decoded by a worker: its frames' bytes, copied.
struct Decoded {
    read: RangeRead,
    /// Payloads, one after the other.
    bytes: Vec<u8>,
    /// Per frame: type, start of the payload in `bytes`, payload length.
    frames: Vec<(u8, usize, usize)>,
}

impl Session {
    /// Every frame of every segment that could be opened, in file order,
    /// unfiltered, decoded ahead in ranges of the request's `range_bytes`
    /// on its threads, and each problem where a file-order read finds it
    /// (see the module docs): what [`Session::frames`] reads on its ranges
    /// plan. Returns `f`'s first error, or a worker's panic.
    pub fn frames_ahead(
        &self,
        f: &mut dyn FnMut(Ahead<'_>) -> Result<(), TapeError>,
    ) -> Result<(), TapeError> {
        let r = &self.request;
        let range_bytes = if r.range_bytes == 0 {
            RANGE_BYTES
        } else {
            r.range_bytes
        };
        read_ahead(&self.opened, r.read, r.threads, range_bytes, f)
    }
}

/// [`Session::frames_ahead`] of `opened` in ranges of about `range_bytes`
/// on `threads` threads (0: one per core).
fn read_ahead(
    opened: &OpenedTape,
    opts: ReadOptions,
    threads: usize,
    range_bytes: u64,
    f: &mut dyn FnMut(Ahead<'_>) -> Result<(), TapeError>,
) -> Result<(), TapeError> {
    let cfg = Request {
        order: Order::File,
        read: opts,
        ..Request::default()
    };
    let split = Split::with_range_bytes(opened, &cfg, range_bytes);
    for p in split.header_problems() {
        f(Ahead::Problem(p.clone()))?;
    }
    let mut st = Settle::default();
    // Segments cut short whose read found nothing wrong, as the sequential
    // reader records them: at the end.
    let mut shorts = Vec::new();
    run_parallel_each(
        split.len(),
        threads,
        &|i| {
            let mut d = Decoded {
                read: RangeRead::default(),
                bytes: Vec::new(),
                frames: Vec::new(),
            };
            d.read = split.read_frames(i, &mut |frame_type, payload| {
                d.frames.push((frame_type, d.bytes.len(), payload.len()));
                d.bytes.extend_from_slice(payload);
            });
            Ok(d)
        },
        &mut |i, d: Decoded| {
            let (kept, failed, short) = split.settle_next(&mut st, i, &d.read);
            shorts.extend(short);
            if !kept {
                return Ok(());
            }
            for &(frame_type, at, len) in &d.frames {
                f(Ahead::Frame {
                    frame_type,
                    payload: &d.bytes[at..at + len],
                })?;
            }
            match failed {
                Some(p) => f(Ahead::Problem(p)),
                None => Ok(()),
            }
        },
    )?;
    shorts.into_iter().try_for_each(|p| f(Ahead::Problem(p)))
}
