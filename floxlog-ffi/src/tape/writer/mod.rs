//! `floxlog_tape_writer`: a tape on disk from C, on the tape writer the
//! CLI uses (segment files, rotation, durability, the tape lock, final
//! headers, index and manifest at close).
//!
//! The settings are in `config`, the append calls in `append`, the
//! appender handle in `appender`; this file holds the handle, open,
//! flush/sync, counts, metadata, close and free.
//!
//! Threads: the calls that change the writer take the handle's claim on
//! entry, so a second thread calling at the same time gets `FLOXLOG_BUSY`
//! and changes nothing; the counts are read from any thread.

mod append;
mod appender;
mod config;
mod health;

pub use append::*;
pub use appender::*;
pub use config::*;
pub use health::*;

use crate::boundary::{check_out, in_ref, output, put};
use crate::error::{floxlog_result, Fail};
use crate::handle::{free, into_c, opaque, shared, Claim};
use crate::tape::error::{floxlog_tape_error, path_in, str_in, tape_boundary, TapeResult};
use config::{tape_config_in, CClock};
use core::cell::UnsafeCell;
use core::ffi::c_char;
use core::ptr::null_mut;
use floxlog::tape::{TapeWriter, TapeWriterCounts};
use floxlog_result::*;

/// Opaque tape writer handle (see `floxlog_tape_writer_open`). Use one
/// handle from one thread at a time (it may move between threads): a call
/// that changes it while another thread's call runs fails with
/// `FLOXLOG_BUSY` and does nothing. The counts
/// (`floxlog_tape_writer_progress`, `_written_events`, `_durable_events`,
/// `_get_stats`)
/// may be read from any thread meanwhile. To append from several threads,
/// give each its own `floxlog_tape_appender`.
pub struct floxlog_tape_writer {
    _private: [u8; 0],
}

const TAPE_WRITER_MAGIC: u64 = 0x5752_4550_4154_4c46; // "FLTAPEWR"

#[repr(C)]
pub(crate) struct TapeWriterHandle {
    magic: u64,
    claim: Claim,
    /// `None` once closed; only reached under the claim.
    w: UnsafeCell<Option<TapeWriter>>,
    /// The counts, read from any thread (also after close).
    counts: TapeWriterCounts,
}

opaque!(floxlog_tape_writer => TapeWriterHandle, magic TAPE_WRITER_MAGIC, null "w");

/// `f` on the writer behind `w`, under the handle's claim (`FLOXLOG_BUSY`
/// if another thread's call holds it); `None` once closed.
///
/// # Safety
/// `w` NULL or a live handle.
pub(crate) unsafe fn claimed<R>(
    w: *mut floxlog_tape_writer,
    f: impl FnOnce(&mut Option<TapeWriter>) -> TapeResult<R>,
) -> TapeResult<R> {
    // SAFETY: forwarded caller promise.
    let h = unsafe { shared(w) }?;
    let _claim = h.claim.take()?;
    // SAFETY: the claim makes this call the only one reaching `w`.
    f(unsafe { &mut *h.w.get() })
}

/// The open writer, or `FLOXLOG_FINISHED`.
pub(crate) fn open(w: &mut Option<TapeWriter>) -> Result<&mut TapeWriter, Fail> {
    w.as_mut()
        .ok_or(Fail::new(FLOXLOG_FINISHED, "the tape writer is closed"))
}

/// Starts a tape in directory `dir` (created if missing; it must not hold a
/// tape already, unless `cfg->resume`: then the tape there is continued)
/// and sets `*writer`. `cfg` NULL means the defaults.
///
/// The writer takes the tape's lock (`.floxlog.lock`, flock): a second
/// writer, `recover` or `reindex` on the same directory is refused with
/// `FLOXLOG_TAPE_LOCKED` until this one is closed or its process dies.
/// Segment files appear on the first event of each; a process killed at
/// any point leaves a tape `floxlog_tape_recover` (or `floxlog recover`)
/// completes, keeping every event the writer reported written.
///
/// # Safety
/// `dir` a NUL-terminated path; `cfg` NULL or valid; `writer` writable;
/// `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_open(
    dir: *const c_char,
    cfg: *const floxlog_tape_writer_config,
    writer: *mut *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(writer, "writer")?;
        // SAFETY: the caller's promise.
        let dir = unsafe { path_in(dir, "dir is NULL or empty") }?;
        let c = if cfg.is_null() {
            floxlog_tape_writer_config::default()
        } else {
            // SAFETY: non-NULL; the caller's promise.
            *unsafe { in_ref(cfg, "cfg") }?
        };
        let tcfg = tape_config_in(&c)?;
        let mut w = TapeWriter::create(&dir, tcfg)?;
        if let Some(f) = c.clock_ns {
            let clock = CClock {
                f,
                ctx: c.clock_ctx,
            };
            w.set_clock(Box::new(move || clock.now()));
        }
        let h = TapeWriterHandle {
            magic: TAPE_WRITER_MAGIC,
            claim: Claim::new(),
            counts: w.counts(),
            w: UnsafeCell::new(Some(w)),
        };
        // SAFETY: checked above.
        unsafe { put(writer, into_c::<floxlog_tape_writer>(h)) };
        Ok(FLOXLOG_OK)
    })
}

/// Sets the flox-style `metadata.json` (a JSON object,
/// e.g. `{"exchange":"binance","symbols":[{"symbol_id":1,"name":"BTCUSDT"}]}`,
/// flox's `metadata.json`); readers then accept symbol names in filters.
/// It is written now, and again at each call, crash-atomically (temporary
/// file, fsync, rename, directory fsync): a killed writer's names survive
/// and monitors of the live tape see them. A failure to write it is
/// returned by the next flush, sync or close.
///
/// # Safety
/// `w` a live handle; `json` a NUL-terminated UTF-8 string; `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_set_metadata(
    w: *mut floxlog_tape_writer,
    json: *const c_char,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promises; pointers are checked.
        let text = unsafe { str_in(json, "json is NULL or not UTF-8") }?;
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|_| Fail::invalid("metadata is not valid JSON"))?;
        if !v.is_object() {
            return Err(Fail::invalid("metadata is not a JSON object").into());
        }
        // SAFETY: forwarded caller promise.
        unsafe {
            claimed(w, |tw| {
                open(tw)?.set_metadata(v);
                Ok(())
            })
        }?;
        Ok(FLOXLOG_OK)
    })
}

/// Hands every encoded byte to the OS and waits for it: afterwards
/// `floxlog_tape_writer_written_events` counts every event appended, except
/// LZ4 events staged in a block that is not full yet (blocks are never cut
/// short: that would change the file).
///
/// # Safety
/// `w` a live handle; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_flush(
    w: *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        unsafe { claimed(w, |tw| Ok(open(tw)?.flush()?)) }?;
        Ok(FLOXLOG_OK)
    })
}

/// `floxlog_tape_writer_flush`, then fsyncs every open segment and the
/// directory entries: afterwards durable events = written events.
///
/// # Safety
/// `w` a live handle; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_sync(
    w: *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        unsafe { claimed(w, |tw| Ok(open(tw)?.sync()?)) }?;
        Ok(FLOXLOG_OK)
    })
}

/// Sets `*out` to the events whose bytes the OS has (they survive the
/// process being killed): with the flox layout, the first `*out` events
/// appended. To read it with the durable count, use
/// `floxlog_tape_writer_progress` (one consistent pair).
///
/// # Safety
/// `w` a live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_written_events(
    w: *mut floxlog_tape_writer,
    out: *mut u64,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        output(null_mut(), out, "out", || {
            Ok(shared(w)?.counts.progress().0)
        })
    }
}

/// Sets `*out` to the events fsynced with their directory entries (they
/// survive a power loss too), counted like the written events. Grows at
/// the fsyncs of the durability policy, at `floxlog_tape_writer_sync` and
/// at close.
///
/// # Safety
/// `w` a live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_durable_events(
    w: *mut floxlog_tape_writer,
    out: *mut u64,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        output(null_mut(), out, "out", || {
            Ok(shared(w)?.counts.progress().1)
        })
    }
}

/// Sets `*written` and `*durable` together, as one consistent pair
/// (`*durable <= *written`): the two counts of
/// `floxlog_tape_writer_written_events` and `_durable_events`, which the
/// writer's background I/O thread advances, so two separate calls may see
/// different moments. Safe from any thread, also while another thread
/// appends (it waits at most for one append); after close, the counts as
/// of the close.
///
/// # Safety
/// `w` a live handle; `written` and `durable` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_progress(
    w: *mut floxlog_tape_writer,
    written: *mut u64,
    durable: *mut u64,
) -> floxlog_result {
    crate::boundary::boundary(core::ptr::null_mut(), || {
        check_out(written, "written")?;
        check_out(durable, "durable")?;
        // SAFETY: forwarded caller promise.
        let (wr, d) = unsafe { shared(w) }?.counts.progress();
        // SAFETY: both checked above.
        unsafe {
            put(written, wr);
            put(durable, d);
        }
        Ok(FLOXLOG_OK)
    })
}

/// Finishes the tape: every open segment gets its index trailer and final
/// header, then the manifest (and metadata.json) is written, fsynced as the
/// durability policy says, and the lock released. The handle stays valid
/// for the counters and must still be freed; appends then fail with
/// `FLOXLOG_FINISHED`. On error the tape is left as a killed writer would
/// leave it (recoverable); a second close returns `FLOXLOG_FINISHED`.
/// While an appender of the writer is open, close fails with
/// `FLOXLOG_BUSY` and changes nothing (the appenders go on).
///
/// # Safety
/// `w` a live handle; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_close(
    w: *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        unsafe {
            claimed(w, |tw| {
                // No appender can open meanwhile: that takes the claim.
                if open(tw)?.appenders() > 0 {
                    return Err(Fail::new(
                        FLOXLOG_BUSY,
                        "appenders of this writer are open: free them first (the tape was not closed)",
                    )
                    .into());
                }
                let tw = tw
                    .take()
                    .ok_or(Fail::new(FLOXLOG_FINISHED, "the tape writer is closed"))?;
                tw.close()?;
                Ok(())
            })
        }?;
        Ok(FLOXLOG_OK)
    })
}

/// Releases the handle. A writer not yet closed is closed first, and its
/// errors are lost: call `floxlog_tape_writer_close` to see them. With
/// appenders open, the tape stays open until the last of them is freed,
/// which then closes it so. NULL is a no-op.
///
/// # Safety
/// `w` NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_free(w: *mut floxlog_tape_writer) {
    // SAFETY: forwarded caller promise.
    unsafe { free(w) }
}
