//! `floxlog_tape_book_at`: one symbol's book replayed from a tape.

use crate::boundary::{check_out, put, slice_uninit};
use crate::codec::types::floxlog_level;
use crate::error::floxlog_result;
use crate::tape::error::{floxlog_tape_error, path_in, tape_boundary};
use core::ffi::c_char;
use floxlog::book_replay::{book_at, ReplayOptions};
use floxlog::tape::{OpenOptions, Tape};
use floxlog_core::Level;
use floxlog_result::*;

/// The book of `symbol_id` in the tape at `path` (a tape directory or a
/// segment file) after every event stamped at or before `ts`
/// (exchange_ts_ns): its best `bid_capacity` bids into `bids_out` (highest
/// first) and best `ask_capacity` asks into `asks_out` (lowest first);
/// `*bid_count` / `*ask_count` are the levels written (fewer than the
/// capacities when the side is shorter; the capacities act as a depth).
/// Arrays may be NULL with capacity 0. The replay holds up to 65535 levels
/// a side in memory of its own, freed before returning.
///
/// Errors name the file and byte offset in `*err`: damage in a segment,
/// `FLOXLOG_MALFORMED_RECORD` for a negative quantity or a price listed
/// twice in a snapshot side, `FLOXLOG_IO_ERROR`, `FLOXLOG_BAD_MANIFEST`.
/// The torn tail of a segment whose writer is running or died is not an
/// error (the events before it are used).
///
/// # Safety
/// `path` NUL-terminated; the arrays writable for their capacities; the
/// counts writable; `err` may be NULL.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn floxlog_tape_book_at(
    path: *const c_char,
    symbol_id: u32,
    ts: i64,
    bids_out: *mut floxlog_level,
    bid_capacity: usize,
    asks_out: *mut floxlog_level,
    ask_capacity: usize,
    bid_count: *mut usize,
    ask_count: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(bid_count, "bid_count")?;
        check_out(ask_count, "ask_count")?;
        // SAFETY: the caller's promises.
        let bo = unsafe { slice_uninit(bids_out, bid_capacity, "bids_out") }?;
        // SAFETY: the caller's promises.
        let ao = unsafe { slice_uninit(asks_out, ask_capacity, "asks_out") }?;
        // SAFETY: the caller's promise.
        let path = unsafe { path_in(path, "path is NULL or empty") }?;
        let tape = Tape::open(&[path], OpenOptions::default())?;
        let (s, _warnings) = book_at(tape, symbol_id, ts, None, &ReplayOptions::default())?;
        let copy = |src: &[Level], dst: &mut [core::mem::MaybeUninit<floxlog_level>]| {
            let n = src.len().min(dst.len());
            for (d, l) in dst.iter_mut().zip(&src[..n]) {
                d.write(floxlog_level {
                    price_raw: l.price_raw,
                    qty_raw: l.qty_raw,
                });
            }
            n
        };
        let (nb, na) = (copy(&s.bids, bo), copy(&s.asks, ao));
        // SAFETY: checked above.
        unsafe {
            put(bid_count, nb);
            put(ask_count, na);
        }
        Ok(FLOXLOG_OK)
    })
}
