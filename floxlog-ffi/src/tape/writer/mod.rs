//! `floxlog_tape_writer`: a tape on disk from C, on the tape writer the
//! CLI uses (segment files, rotation, durability, the tape lock, final
//! headers, index and manifest at close).
//!
//! The settings are in `config`, the append calls in `append`; this file
//! holds the handle, open, flush/sync, counts, metadata, close and free.

mod append;
mod config;

pub use append::*;
pub use config::*;

use crate::boundary::{check_out, in_ref, put};
use crate::error::{floxlog_result, Fail};
use crate::handle::{free, get, handle, into_c, opaque};
use crate::tape::error::{floxlog_tape_error, path_in, str_in, tape_boundary};
use config::{tape_config_in, CClock};
use core::ffi::c_char;
use floxlog::tape::{Durability, TapeWriter};
use floxlog_result::*;

/// Opaque tape writer handle (see `floxlog_tape_writer_open`). Use one
/// handle from one thread at a time; it may move between threads.
pub struct floxlog_tape_writer {
    _private: [u8; 0],
}

const TAPE_WRITER_MAGIC: u64 = 0x5752_4550_4154_4c46; // "FLTAPEWR"

#[repr(C)]
pub(crate) struct TapeWriterHandle {
    magic: u64,
    /// `None` once closed.
    w: Option<TapeWriter>,
    /// Counts at close, reported after it.
    written: u64,
    durable: u64,
    /// The durability policy fsyncs at close.
    syncs: bool,
}

opaque!(floxlog_tape_writer => TapeWriterHandle, magic TAPE_WRITER_MAGIC, null "w");

impl TapeWriterHandle {
    fn open(&mut self) -> Result<&mut TapeWriter, Fail> {
        self.w
            .as_mut()
            .ok_or(Fail::new(FLOXLOG_FINISHED, "the tape writer is closed"))
    }
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
        let syncs = !matches!(tcfg.durability, Durability::None | Durability::Flush);
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
            w: Some(w),
            written: 0,
            durable: 0,
            syncs,
        };
        // SAFETY: checked above.
        unsafe { put(writer, into_c::<floxlog_tape_writer>(h)) };
        Ok(FLOXLOG_OK)
    })
}

/// Sets the flox-style `metadata.json` written at close (a JSON object,
/// e.g. `{"exchange":"binance","symbols":[{"symbol_id":1,"name":"BTCUSDT"}]}`,
/// flox's `metadata.json`);
/// readers then accept symbol names in filters.
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
        let (h, text) = unsafe { (handle(w)?, str_in(json, "json is NULL or not UTF-8")?) };
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|_| Fail::invalid("metadata is not valid JSON"))?;
        if !v.is_object() {
            return Err(Fail::invalid("metadata is not a JSON object").into());
        }
        h.open()?.set_metadata(v);
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
        let h = unsafe { handle(w) }?;
        h.open()?.flush()?;
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
        let h = unsafe { handle(w) }?;
        h.open()?.sync()?;
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
        get(w, out, "out", |h| {
            h.w.as_ref().map_or(h.written, TapeWriter::written_events)
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
        get(w, out, "out", |h| {
            h.w.as_ref().map_or(h.durable, TapeWriter::durable_events)
        })
    }
}

/// Sets `*written` and `*durable` together, as one consistent pair
/// (`*durable <= *written`): the two counts of
/// `floxlog_tape_writer_written_events` and `_durable_events`, which the
/// writer's background I/O thread advances, so two separate calls may see
/// different moments.
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
        let h = unsafe { handle(w) }?;
        // Durable first: both only grow, and durable never passes written.
        let (d, wr) = match h.w.as_ref() {
            Some(tw) => {
                let d = tw.durable_events();
                (d, tw.written_events().max(d))
            }
            None => (h.durable, h.written),
        };
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
        let h = unsafe { handle(w) }?;
        let tw =
            h.w.take()
                .ok_or(Fail::new(FLOXLOG_FINISHED, "the tape writer is closed"))?;
        h.written = tw.written_events();
        h.durable = tw.durable_events();
        let before = tw.stats().events;
        tw.close()?;
        // Closing writes what was staged: everything appended is written;
        // it is durable unless the policy never fsyncs.
        h.written = before;
        if h.syncs {
            h.durable = before;
        }
        Ok(FLOXLOG_OK)
    })
}

/// Releases the handle. A writer not yet closed is closed first, and its
/// errors are lost: call `floxlog_tape_writer_close` to see them. NULL is
/// a no-op.
///
/// # Safety
/// `w` NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_free(w: *mut floxlog_tape_writer) {
    // SAFETY: forwarded caller promise.
    unsafe { free(w) }
}
