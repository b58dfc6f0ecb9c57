//! A tape's frames in file order, decoded ahead on a worker pool.
//!
//! For copying a whole tape (`floxlog convert`): byte ranges of the
//! segments (at LZ4 block or proven frame boundaries, see
//! [`super::split`]) are read, CRC-checked and decompressed on
//! [`crate::par::Pool`] threads, while the caller's thread takes their
//! frames in order. What the caller sees is what a [`super::TapeReader`]
//! in file order without a filter gives: the same frames in the same order,
//! and each [`Problem`] at the point where that reader records it (segments
//! whose header fails first; a stream error after every frame before it),
//! so a caller that stops at a problem stops at the same frame.
//! Memory holds at most the pool's window of ranges of about
//! [`RANGE_BYTES`] each.

use super::error::TapeError;
use super::merge::{OpenedTape, Problem};
use super::source::is_torn_tail;
use crate::par::Pool;
use floxlog_core::{Error, ReadOptions, Segment};
use std::path::Path;

/// Target size of a range (file bytes).
pub const RANGE_BYTES: u64 = 4 << 20;

/// What [`read_ahead`] hands out.
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

/// A segment to read.
struct Input<'a> {
    segment: usize,
    path: &'a Path,
    seg: Segment<'a>,
}

/// How a range's read ended.
enum End {
    Done,
    /// On `error`, after `events` events of the range.
    Failed {
        error: Error,
        events: u64,
    },
}

/// A range decoded by a worker.
struct Decoded {
    input: usize,
    /// Frame bytes (header and payload), one after the other.
    bytes: Vec<u8>,
    /// Per frame: type, start of the payload in `bytes`, payload length.
    frames: Vec<(u8, usize, usize)>,
    end: End,
}

/// Reads every segment of `opened` that could be opened, in file order, on
/// `threads` threads (0: one per core), handing frames and problems to `f`
/// (see the module docs). Returns `f`'s first error, or a worker's panic.
pub fn read_ahead(
    opened: &OpenedTape,
    opts: ReadOptions,
    threads: usize,
    f: &mut dyn FnMut(Ahead<'_>) -> Result<(), TapeError>,
) -> Result<(), TapeError> {
    read_ahead_in(opened, opts, threads, RANGE_BYTES, f)
}

/// [`read_ahead`] in ranges of about `range_bytes`.
pub fn read_ahead_in(
    opened: &OpenedTape,
    opts: ReadOptions,
    threads: usize,
    range_bytes: u64,
    f: &mut dyn FnMut(Ahead<'_>) -> Result<(), TapeError>,
) -> Result<(), TapeError> {
    let mut inputs = Vec::new();
    let mut header_problems = Vec::new();
    // One scratch size for the tape, as the sequential reader shares one:
    // whether a damaged block is `BufferTooSmall` depends on it.
    let mut scratch_len = 0usize;
    for (i, file) in opened.files.iter().enumerate() {
        let Some(file) = file else { continue };
        let data = file.bytes();
        match Segment::parse(data) {
            Ok(seg) => {
                scratch_len = scratch_len.max(seg.scratch_len());
                inputs.push(Input {
                    segment: i,
                    path: &file.path,
                    seg,
                });
            }
            Err(e) => header_problems.push(Problem::new(
                i,
                &file.path,
                e,
                0,
                data.is_empty(),
                opened.check(i),
            )),
        }
    }
    for p in header_problems {
        f(Ahead::Problem(p))?;
    }
    let mut jobs = Vec::new();
    for (k, input) in inputs.iter().enumerate() {
        let starts = super::split::range_starts(&input.seg, opts, range_bytes);
        let ranges = super::split::ranges(&starts);
        jobs.extend(ranges.into_iter().map(|(a, b)| (k, a, b)));
    }
    // Per input: events of its ranges delivered so far; `None` once one
    // ended on an error (a sequential read never reaches the rest).
    let mut events: Vec<Option<u64>> = vec![Some(0); inputs.len()];
    Pool::new(threads).run(
        jobs.into_iter(),
        |(k, start, end)| decode(&inputs[k], k, opts, scratch_len, start, end),
        |d: Decoded| {
            let Some(before) = events[d.input] else {
                return Ok(());
            };
            let frame = |&(frame_type, at, len): &(u8, usize, usize)| Ahead::Frame {
                frame_type,
                payload: &d.bytes[at..at + len],
            };
            match d.end {
                End::Done => {
                    events[d.input] = Some(before + d.frames.len() as u64);
                    d.frames.iter().try_for_each(|fr| f(frame(fr)))
                }
                End::Failed { error, events: n } => {
                    events[d.input] = None;
                    d.frames.iter().try_for_each(|fr| f(frame(fr)))?;
                    let input = &inputs[d.input];
                    let events_before = before + n;
                    let torn =
                        is_torn_tail(input.seg.header(), &error, events_before, input.seg.data());
                    let c = opened.check(input.segment);
                    let p = Problem::new(input.segment, input.path, error, events_before, torn, c);
                    f(Ahead::Problem(p))
                }
            }
        },
    )?;
    // Segments cut short whose read found nothing wrong, as the
    // sequential reader records them: at the end.
    let input_of = |i: usize| inputs.iter().position(|x| x.segment == i);
    let events_of = |i: usize| input_of(i).and_then(|k| events[k]).unwrap_or(0);
    for p in opened.short_problems(&[], events_of) {
        // A segment whose header or read failed has its problem already.
        if input_of(p.segment).is_some_and(|k| events[k].is_some()) {
            f(Ahead::Problem(p))?;
        }
    }
    Ok(())
}

/// Reads the frames (or LZ4 blocks) of `input` that start in `[start, end)`.
fn decode(
    input: &Input<'_>,
    k: usize,
    opts: ReadOptions,
    scratch_len: usize,
    start: u64,
    end: u64,
) -> Decoded {
    let mut d = Decoded {
        input: k,
        bytes: Vec::new(),
        frames: Vec::new(),
        end: End::Done,
    };
    let mut scratch = vec![0u8; scratch_len];
    let compressed = input.seg.is_compressed();
    let mut r = match input.seg.reader_at(start, opts, &mut scratch) {
        Ok(r) => r,
        Err(error) => {
            d.end = End::Failed { error, events: 0 };
            return d;
        }
    };
    let failed = |r: &floxlog_core::Reader<'_, '_>, error: Error| End::Failed {
        error,
        events: r.events_read(),
    };
    loop {
        match r.next_item() {
            Ok(Some(it)) if it.position.offset >= end => break,
            Ok(Some(it)) => {
                let mut h = [0u8; floxlog_core::FrameHeader::LEN];
                it.frame.header.emit(&mut h);
                d.bytes.extend_from_slice(&h);
                let p = d.bytes.len();
                d.bytes.extend_from_slice(it.frame.payload);
                d.frames
                    .push((it.frame.header.frame_type, p, it.frame.payload.len()));
            }
            Ok(None) => break,
            // Damage where the next range starts is that range's to report.
            Err(e) if e.offset >= end => break,
            Err(e) => {
                d.end = failed(&r, e);
                return d;
            }
        }
        // Leave a block once read, so that a range ending at the next block
        // does not decompress it.
        if compressed {
            if let Err(e) = r.end_block() {
                d.end = failed(&r, e);
                return d;
            }
        }
        if r.next_offset() >= end {
            break;
        }
    }
    d
}
