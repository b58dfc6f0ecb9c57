//! `floxlog_tape_reader`: the events of a tape (a directory of either
//! layout, segment files, or a list of them), merged by timestamp or in
//! file order, filtered, from memory-mapped files: the reader `floxlog cat`
//! uses.

use crate::boundary::{batch_slots, check_out, in_ref, put, put_if_usable, slice_in};
use crate::codec::records::TradeSlots;
use crate::codec::types::*;
use crate::error::{floxlog_result, Fail};
use crate::handle::{free, get, handle, into_c};
use crate::tape::error::{floxlog_tape_error, path_in, tape_boundary, TapeResult};
use core::ffi::c_char;
use core::mem::MaybeUninit;
use floxlog_result::*;
use std::path::PathBuf;

mod handle;
mod options;
mod step;

use handle::TapeReaderHandle;
pub use options::*;
use step::{apply_fixups, merge_failure, position_of, step, Step};

/// Most level and payload bytes one batch copies out before it ends early.
const BATCH_BYTES: usize = 4 << 20;

/// Fills `*opts` with the defaults: time order, every event, CRCs checked,
/// unknown types rejected, torn tails tolerated, manifest trusted, 65536
/// events (ignored) and 256 MiB of ordering room.
///
/// # Safety
/// `opts` must be writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_options_default(
    opts: *mut floxlog_tape_reader_options,
) -> floxlog_result {
    // SAFETY: forwarded caller promise; the pointer is checked.
    unsafe {
        crate::boundary::output(core::ptr::null_mut(), opts, "opts", || {
            Ok(floxlog_tape_reader_options::default())
        })
    }
}

/// # Safety
/// As `floxlog_tape_reader_open_paths`.
unsafe fn open_inputs(
    inputs: TapeResult<Vec<PathBuf>>,
    opts: *const floxlog_tape_reader_options,
    reader: *mut *mut floxlog_tape_reader,
) -> TapeResult<floxlog_result> {
    check_out(reader, "reader")?;
    let inputs = inputs?;
    let o = if opts.is_null() {
        floxlog_tape_reader_options::default()
    } else {
        // SAFETY: non-NULL; the caller's promise.
        *unsafe { in_ref(opts, "opts") }?
    };
    let h = TapeReaderHandle::new(&inputs, &o)?;
    // SAFETY: checked above.
    unsafe { put(reader, into_c::<floxlog_tape_reader>(h)) };
    Ok(FLOXLOG_OK)
}

/// Opens a tape for reading and sets `*reader`: `path` is a tape directory
/// (flox layout, `<created_ns>.floxlog`, or spec layout, `series-NNNNNN.bin`
/// with `manifest.json`) or one segment file. `opts` NULL means the
/// defaults. Segments are memory-mapped, never copied whole; the reader
/// holds at most the orderings of the segments it reads at one time in
/// time order (`reorder_bytes`), one LZ4 block scratch (the tape's largest
/// block) and a small cache of decompressed blocks.
///
/// A segment another process truncates while it is read is an error
/// (`FLOXLOG_TRUNCATED`, "the file shrank while it was being read"), not
/// a `SIGBUS`: the first map installs a `SIGBUS` handler that acts only on
/// faults inside floxlog's own maps and hands any other to the handler
/// installed before it (or the default action). A host that installs its
/// own `SIGBUS` handler later should chain to the one it replaces; one that
/// wants no handler of ours sets `FLOXLOG_SIGBUS_GUARD=0` in the
/// environment (a truncation then kills the process, as with any map).
///
/// Fails only when the tape cannot be listed (missing path, unreadable or
/// out-of-tape manifest: `FLOXLOG_BAD_MANIFEST`) or the options are wrong.
/// Damage inside segments does not fail the open: the reader returns every
/// good event, then the errors (see `floxlog_tape_reader_next`).
///
/// # Safety
/// `path` a NUL-terminated path; `opts` NULL or valid (its filter's
/// arrays too); `reader` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_open(
    path: *const c_char,
    opts: *const floxlog_tape_reader_options,
    reader: *mut *mut floxlog_tape_reader,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: the caller's promise.
        let p = unsafe { path_in(path, "path is NULL or empty") }.map_err(Into::into);
        // SAFETY: forwarded caller promises.
        unsafe { open_inputs(p.map(|p| vec![p]), opts, reader) }
    })
}

/// `floxlog_tape_reader_open` over several inputs (`count` paths, each a
/// tape directory or a segment file), read as one tape: merged by time,
/// or in file order one input after another.
///
/// # Safety
/// `paths` valid for `count` NUL-terminated paths; otherwise as
/// `floxlog_tape_reader_open`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_open_paths(
    paths: *const *const c_char,
    count: usize,
    opts: *const floxlog_tape_reader_options,
    reader: *mut *mut floxlog_tape_reader,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        let inputs = (|| {
            if count == 0 {
                return Err(Fail::invalid("no paths given").into());
            }
            // SAFETY: the caller promises `count` pointers.
            let ps = unsafe { slice_in(paths, count, "paths") }?;
            ps.iter()
                // SAFETY: the caller promises NUL-terminated strings.
                .map(|p| unsafe { path_in(*p, "a path is NULL or empty") }.map_err(Into::into))
                .collect::<TapeResult<Vec<_>>>()
        })();
        // SAFETY: forwarded caller promises.
        unsafe { open_inputs(inputs, opts, reader) }
    })
}

/// `floxlog_tape_reader_next`'s fast path: a trade the session's cursor
/// read ahead into `*event`, without the error machinery of the general
/// call (nothing here can fail). False, and nothing done, when there is
/// none, or either pointer is unusable: the general call then reads on, or
/// reports it.
///
/// # Safety
/// As `floxlog_tape_reader_next`.
#[inline]
unsafe fn next_held(r: *mut floxlog_tape_reader, event: *mut floxlog_event) -> bool {
    // Nothing below panics; should it, the general call (which catches
    // panics) takes over.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if check_out(event, "event").is_err() {
            return false;
        }
        // SAFETY: forwarded caller promise; the pointer is checked.
        let Ok(h) = (unsafe { handle(r) }) else {
            return false;
        };
        let Some(t) = h.cursor().and_then(|c| c.next_held_trade()) else {
            return false;
        };
        h.events_out += 1;
        // SAFETY: `event` checked above.
        unsafe { crate::codec::event::write_trade(&t, event) };
        true
    }))
    .unwrap_or(false)
}

/// Reads the next event into `*event`.
///
/// Returns `FLOXLOG_OK` with an event; after the last event, each error
/// found (a damaged segment: its file and byte offset; a listed file that
/// could not be opened) is returned once, in order, and then `FLOXLOG_END`
/// for good. So every good event of every segment comes before any error,
/// and a loop `while ((rc = floxlog_tape_reader_next(...)) == FLOXLOG_OK)`
/// ends with `rc` = the first error or `FLOXLOG_END`.
///
/// What `*event` points at (book levels, pool state payloads) belongs to
/// the reader and stays valid until the next call on it.
///
/// # Safety
/// `r` a live handle; `event` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_next(
    r: *mut floxlog_tape_reader,
    event: *mut floxlog_event,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    if unsafe { next_held(r, event) } {
        return FLOXLOG_OK;
    }
    tape_boundary(err, || {
        check_out(event, "event")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        h.fixups.clear();
        let mut used = 0;
        // SAFETY: `event` checked above.
        match unsafe { step(h, event, 0, &mut used, false) }? {
            Step::Event => {
                // SAFETY: slot 0 was written by `step`.
                unsafe { apply_fixups(h, event) };
                Ok(FLOXLOG_OK)
            }
            Step::End => match h.next_error() {
                Some(e) => Err(e),
                None => Ok(FLOXLOG_END),
            },
        }
    })
}

/// Reads up to `cap` events into `events[0..cap)` and sets `*count`: the
/// batch form of `floxlog_tape_reader_next`. Returns `FLOXLOG_OK` with
/// `*count >= 1`; after the last event, the errors one per call with
/// `*count == 0`, then `FLOXLOG_END` with `*count == 0`. A batch also ends
/// early once it holds about 4 MiB of book levels and pool payloads.
/// `*count` is written on every return.
///
/// Levels and payloads of the batch's events belong to the reader and stay
/// valid until the next call on it.
///
/// # Safety
/// `r` a live handle; `events` valid for `cap` writable events; `count`
/// writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_next_batch(
    r: *mut floxlog_tape_reader,
    events: *mut floxlog_event,
    cap: usize,
    count: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    let read = |h: &mut TapeReaderHandle, out: &mut [MaybeUninit<floxlog_event>], n: &mut usize| {
        let base = out.as_mut_ptr() as *mut floxlog_event;
        h.fixups.clear();
        h.payloads.clear();
        let mut used = 0usize;
        let mut end_error = None;
        while *n < cap {
            // SAFETY: n < cap: inside the caller's events.
            match unsafe { step(h, base.add(*n), *n, &mut used, true) } {
                Ok(Step::Event) => *n += 1,
                Ok(Step::End) => break,
                Err(e) => {
                    end_error = Some(e);
                    break;
                }
            }
            if used * core::mem::size_of::<floxlog_level>() + h.payloads.len() > BATCH_BYTES {
                break;
            }
        }
        // SAFETY: the first `n` slots were written by `step`.
        unsafe { apply_fixups(h, base) };
        h.end_batch(*n, end_error, None)
    };
    // SAFETY: forwarded caller promises.
    unsafe { batch(r, events, cap, "events", count, err, read) }
}

/// Reads up to `cap` consecutive trades into `trades[0..cap)` and sets
/// `*count`: the fast path for trade tapes, one boundary crossing per batch
/// and each trade written straight into the caller's array.
///
/// The batch stops before the first event of another type, which is kept:
/// it is the next event `floxlog_tape_reader_next` or `_next_batch`
/// returns. Returns `FLOXLOG_OK` with `*count >= 1`; `FLOXLOG_NOT_TRADE`
/// with `*count == 0` when the next event is not a trade (read it with the
/// general call, then come back); after the last event, the errors one per
/// call and then `FLOXLOG_END`, as `floxlog_tape_reader_next_batch` does,
/// with `*count == 0`. `*count` is written on every return.
///
/// # Safety
/// `r` a live handle; `trades` valid for `cap` writable trades; `count`
/// writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_next_trades(
    r: *mut floxlog_tape_reader,
    trades: *mut floxlog_trade,
    cap: usize,
    count: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    let read = |h: &mut TapeReaderHandle, out: &mut [MaybeUninit<floxlog_trade>], n: &mut usize| {
        // Trades the per-event calls read ahead come first.
        let Some(c) = h.cursor() else {
            return h.end_batch(0, None, None);
        };
        let (run, done) = c.next_trades(&mut TradeSlots(out));
        *n = run.count;
        h.events_out += run.count as u64;
        let end_error = done.err().map(merge_failure);
        let idle = run.declined.then_some(FLOXLOG_NOT_TRADE);
        h.end_batch(*n, end_error, idle)
    };
    // SAFETY: forwarded caller promises.
    unsafe { batch(r, trades, cap, "trades", count, err, read) }
}

/// The frame of the batch reads: the checks of `count`, of the caller's
/// `cap` slots and of the handle, then `f` (which keeps the number of slots
/// written in its `n`), and `*count = n` on every return.
///
/// # Safety
/// `r` a live handle; `slots` valid for `cap` writable `T`s; `count`
/// writable; `err` may be NULL.
unsafe fn batch<T>(
    r: *mut floxlog_tape_reader,
    slots: *mut T,
    cap: usize,
    what: &'static str,
    count: *mut usize,
    err: *mut floxlog_tape_error,
    f: impl FnOnce(
        &mut TapeReaderHandle,
        &mut [MaybeUninit<T>],
        &mut usize,
    ) -> TapeResult<floxlog_result>,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = tape_boundary(err, || {
        // SAFETY: the caller promises `cap` writable slots.
        let out = unsafe { batch_slots(count, slots, cap, what) }?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        f(h, out, &mut n)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(count, n) };
    rc
}

/// Positions the reader at timestamp `ts`: the following calls return the
/// events with `exchange_ts_ns >= ts` that the filter keeps, in the
/// reader's order, as a reader opened with that lower bound would (seeking
/// back works too; errors found are returned again). Sorted segments start
/// at their proven index entry; others are scanned from their start.
///
/// # Safety
/// `r` a live handle; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_seek(
    r: *mut floxlog_tape_reader,
    ts: i64,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        h.restart(Some(h.from.map_or(ts, |f| f.max(ts))));
        Ok(FLOXLOG_OK)
    })
}

/// Sets `*stats` to what the reader has done so far (`events` counts
/// every event returned since the open, across seeks).
///
/// # Safety
/// `r` a live handle; `stats` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_get_stats(
    r: *mut floxlog_tape_reader,
    stats: *mut floxlog_tape_reader_stats,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { get(r, stats, "stats", |h| h.stats()) }
}

/// Sets `*pos` to where the last event returned (by `_next`, or the last of
/// a batch) is: its segment's number and byte offset. `FLOXLOG_END` (and
/// `*pos` untouched) before the first event and after a seek.
///
/// # Safety
/// `r` a live handle; `pos` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_position(
    r: *mut floxlog_tape_reader,
    pos: *mut floxlog_tape_position,
) -> floxlog_result {
    crate::boundary::boundary(core::ptr::null_mut(), || {
        check_out(pos, "pos")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        match h.cursor().and_then(|c| c.last()) {
            Some((segment, p)) => {
                let p = position_of(segment, p);
                // SAFETY: checked above.
                unsafe { put(pos, p) };
                Ok(FLOXLOG_OK)
            }
            None => Ok(FLOXLOG_END),
        }
    })
}

/// Sets `*path` to the path of segment number `segment` of the tape
/// (NUL-terminated, owned by the reader until it is freed);
/// `FLOXLOG_INVALID_INPUT` past the last segment.
///
/// # Safety
/// `r` a live handle; `path` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_segment_path(
    r: *mut floxlog_tape_reader,
    segment: u64,
    path: *mut *const c_char,
) -> floxlog_result {
    crate::boundary::boundary(core::ptr::null_mut(), || {
        check_out(path, "path")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        let p = usize::try_from(segment)
            .ok()
            .and_then(|i| h.paths.get(i))
            .ok_or(Fail::invalid("no segment of that number"))?;
        // SAFETY: checked above.
        unsafe { put(path, p.as_ptr()) };
        Ok(FLOXLOG_OK)
    })
}

/// Releases the reader and unmaps the tape; every pointer it handed out
/// dies with it. NULL is a no-op.
///
/// # Safety
/// `r` NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_free(r: *mut floxlog_tape_reader) {
    // SAFETY: forwarded caller promise.
    unsafe { free(r) }
}
