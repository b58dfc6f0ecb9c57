//! `floxlog_tape_appender`: one more appending thread into a writer's
//! tape (`floxlog::tape::Appender`). The append bodies are the writer's
//! (`append`, through `Sink`).

use super::append::{append_frames, append_trades, append_with};
use super::{claimed as writer_claimed, floxlog_tape_writer, open};
use crate::boundary::{check_out, in_ref, put};
use crate::codec::event::event_in;
use crate::codec::types::{floxlog_event, floxlog_trade};
use crate::error::floxlog_result;
use crate::handle::{free, into_c, opaque, shared, Claim};
use crate::tape::error::{floxlog_tape_error, tape_boundary, TapeResult};
use core::cell::UnsafeCell;
use floxlog::tape::Appender;
use floxlog_core::Event;
use floxlog_result::*;

/// Opaque appender handle (see `floxlog_tape_appender_open`): appends to
/// its writer's tape at the same time as the writer's other appenders.
/// Use each appender from one thread at a time (it may move between
/// threads; a call while another thread's call runs fails with
/// `FLOXLOG_BUSY`).
pub struct floxlog_tape_appender {
    _private: [u8; 0],
}

const TAPE_APPENDER_MAGIC: u64 = 0x5050_4145_5041_544c; // "LTAPEAPP"

#[repr(C)]
pub(crate) struct TapeAppenderHandle {
    magic: u64,
    claim: Claim,
    /// Only reached under the claim.
    a: UnsafeCell<Appender>,
}

opaque!(floxlog_tape_appender => TapeAppenderHandle, magic TAPE_APPENDER_MAGIC, null "a");

/// `f` on the appender behind `a`, under its claim.
///
/// # Safety
/// `a` NULL or a live handle.
pub(crate) unsafe fn claimed<R>(
    a: *mut floxlog_tape_appender,
    f: impl FnOnce(&mut Appender) -> TapeResult<R>,
) -> TapeResult<R> {
    // SAFETY: forwarded caller promise.
    let h = unsafe { shared(a) }?;
    let _claim = h.claim.take()?;
    // SAFETY: the claim makes this call the only one reaching `a`.
    f(unsafe { &mut *h.a.get() })
}

/// Opens an appender of writer `w` and sets `*out`: a handle for one more
/// thread appending to the tape at the same time as the others (the
/// writer's own appends included). Each append is atomic (a reader never
/// sees half of one), each appender's events keep their order in the file
/// (also inside the reference profile's LZ4 blocks, whose sort by time is
/// stable), and a process killed loses no event whose append returned and
/// was written (journal mode: every one). The appender is owned by the
/// caller and released with `floxlog_tape_appender_free`;
/// `floxlog_tape_writer_close` fails with `FLOXLOG_BUSY` while one is
/// open, and `floxlog_tape_writer_free` leaves the tape open until the
/// last one is freed. Fails with `FLOXLOG_FINISHED` once the writer is
/// closed.
///
/// # Safety
/// `w` a live writer handle; `out` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_appender_open(
    w: *mut floxlog_tape_writer,
    out: *mut *mut floxlog_tape_appender,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(out, "out")?;
        // SAFETY: forwarded caller promise.
        let a = unsafe { writer_claimed(w, |tw| Ok(open(tw)?.appender()?)) }?;
        let h = TapeAppenderHandle {
            magic: TAPE_APPENDER_MAGIC,
            claim: Claim::new(),
            a: UnsafeCell::new(a),
        };
        // SAFETY: checked above.
        unsafe { put(out, into_c::<floxlog_tape_appender>(h)) };
        Ok(FLOXLOG_OK)
    })
}

/// Appends one event of any kind (`ev->kind` says which). On error the
/// event was not written and everything before it is intact.
///
/// # Safety
/// `a` a live handle; `ev` valid (its member's pointers too); `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_appender_append(
    a: *mut floxlog_tape_appender,
    ev: *const floxlog_event,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe { append_with(a, err, || event_in(in_ref(ev, "ev")?)) }
}

/// Appends a trade, as `floxlog_tape_appender_append`.
///
/// # Safety
/// `a` a live handle; `trade` valid; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_appender_append_trade(
    a: *mut floxlog_tape_appender,
    trade: *const floxlog_trade,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe { append_with(a, err, || Ok(Event::Trade(in_ref(trade, "trade")?.into()))) }
}

/// Appends `count` trades in order, together (no other appender's event
/// between them unless the call fails), with the progress rule of
/// `floxlog_tape_writer_append_trades`: `*appended` receives how many were
/// written, on every return.
///
/// # Safety
/// `a` a live handle; `trades` valid for `count` trades (NULL only with
/// 0); `appended` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_appender_append_trades(
    a: *mut floxlog_tape_appender,
    trades: *const floxlog_trade,
    count: usize,
    appended: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_trades(a, trades, count, appended, err) }
}

/// `floxlog_tape_writer_append_frames` through this appender.
///
/// # Safety
/// `a` a live handle; `frames` valid for `len` bytes (NULL only with 0);
/// `count` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_appender_append_frames(
    a: *mut floxlog_tape_appender,
    frames: *const u8,
    len: usize,
    count: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_frames(a, frames, len, count, err) }
}

/// Releases the appender. The last appender of a writer already freed
/// closes the tape (errors lost, as `floxlog_tape_writer_free`'s). NULL is
/// a no-op.
///
/// # Safety
/// `a` NULL or a live handle, not used afterwards (nor during the call).
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_appender_free(a: *mut floxlog_tape_appender) {
    // SAFETY: forwarded caller promise.
    unsafe { free(a) }
}
