//! The writer's appends: one event of each type, batches, and raw frames.

use super::floxlog_writer;
use crate::boundary::boundary;
use crate::boundary::{check_out, in_ref, put_if_usable, slice_in};
use crate::codec::chunks::append_in_chunks;
use crate::codec::event::{book_in, event_in, event_ptr_in, pool_state_in};
use crate::codec::types::*;
use crate::error::{floxlog_error, floxlog_result, Fail};
use crate::handle::handle;
use floxlog_core::{BookKind, Event, OptionQuote, Trade};
use floxlog_result::*;

/// The body of the single-event appends: `ev` reads the caller's event
/// after the handle is checked.
///
/// # Safety
/// `w` must be NULL or a live handle; `ev` is run in the caller's context.
#[inline(always)]
unsafe fn append_one<'e>(
    w: *mut floxlog_writer,
    err: *mut floxlog_error,
    ev: impl FnOnce() -> Result<Event<'e>, Fail>,
) -> floxlog_result {
    boundary(err, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        h.w.append(&ev()?)?;
        Ok(FLOXLOG_OK)
    })
}

/// The body of the batch appends: appends `count` items converted by `ev`
/// in order, stops at the first error, and reports how many were accepted
/// in `*appended` on every return.
///
/// # Safety
/// `w` must be NULL or a live handle; `items` valid for `count` items that
/// `ev` may read; `appended` writable if non-NULL and aligned.
#[inline(always)]
unsafe fn append_batch<'a, T: 'a>(
    w: *mut floxlog_writer,
    items: *const T,
    count: usize,
    what: &'static str,
    appended: *mut usize,
    err: *mut floxlog_error,
    ev: impl Fn(&'a T) -> Result<Event<'a>, Fail>,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = boundary(err, || {
        check_out(appended, "appended")?;
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, items) = unsafe { (handle(w)?, slice_in(items, count, what)?) };
        let (done, r) = append_in_chunks(items, ev, |evs| {
            let (k, r) = h.w.append_batch(evs);
            (k, r.map_err(Fail::from))
        });
        n = done;
        r.map(|()| FLOXLOG_OK)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(appended, n) };
    rc
}

/// Appends a trade. On any error the event was not accepted and everything
/// before it is intact: after `FLOXLOG_BUFFER_TOO_SMALL` drain and retry;
/// after `FLOXLOG_INDEX_FULL` finish the segment and start another.
/// `*trade` is read during the call only.
///
/// # Safety
/// `w` must be a live handle; `trade` a valid pointer; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append_trade(
    w: *mut floxlog_writer,
    trade: *const floxlog_trade,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe { append_one(w, err, || Ok(Event::Trade(in_ref(trade, "trade")?.into()))) }
}

/// Appends `count` trades from `trades` in order: the batch form of
/// `floxlog_writer_append_trade`, one call for many events. Stops at the
/// first trade that is not accepted and returns its error; `*appended`
/// receives how many were accepted, on every return (so after
/// `FLOXLOG_BUFFER_TOO_SMALL`, drain and continue from `trades + *appended`).
/// The trades are read during the call only.
///
/// # Safety
/// `w` must be a live handle; `trades` valid for `count` trades (NULL only
/// with 0); `appended` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append_trades(
    w: *mut floxlog_writer,
    trades: *const floxlog_trade,
    count: usize,
    appended: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        append_batch(w, trades, count, "trades", appended, err, |t| {
            Ok(Event::Trade(Trade::from(t)))
        })
    }
}

/// Appends `count` events of any kind from `events` in order: the batch
/// form of `floxlog_writer_append`, with the progress rule of
/// `floxlog_writer_append_trades`.
///
/// # Safety
/// `w` must be a live handle; `events` valid for `count` events (their
/// members' pointers too); `appended` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append_events(
    w: *mut floxlog_writer,
    events: *const floxlog_event,
    count: usize,
    appended: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises (valid events, their members'
    // pointers too).
    unsafe { append_batch(w, events, count, "events", appended, err, |e| event_in(e)) }
}

/// The body of the book appends.
///
/// # Safety
/// As `floxlog_writer_append_book_snapshot`.
unsafe fn append_book(
    w: *mut floxlog_writer,
    book: *const floxlog_book,
    kind: BookKind,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        append_one(w, err, || {
            Ok(Event::Book(book_in(in_ref(book, "book")?, kind)?))
        })
    }
}

/// Appends a book snapshot (frame type 2). The levels are read through
/// `book->bids` / `book->asks` during the call only (at most 65535 per
/// side, 8-byte aligned, NULL allowed with a count of 0). `header_type`
/// must be 0 or 2 (see `floxlog_book`). Errors as
/// `floxlog_writer_append_trade`.
///
/// # Safety
/// `w` must be a live handle; `book` and its level pointers valid for their
/// counts; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append_book_snapshot(
    w: *mut floxlog_writer,
    book: *const floxlog_book,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_book(w, book, BookKind::Snapshot, err) }
}

/// Appends a book delta (frame type 3); as
/// `floxlog_writer_append_book_snapshot`, with `header_type` 0 (stored as
/// 1 under the reference profile), 1 or 3.
///
/// # Safety
/// As `floxlog_writer_append_book_snapshot`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append_book_delta(
    w: *mut floxlog_writer,
    book: *const floxlog_book,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_book(w, book, BookKind::Delta, err) }
}

/// Appends an option quote (frame type 4). Errors as
/// `floxlog_writer_append_trade`.
///
/// # Safety
/// `w` must be a live handle; `quote` a valid pointer; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append_option_quote(
    w: *mut floxlog_writer,
    quote: *const floxlog_option_quote,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        append_one(w, err, || {
            Ok(Event::OptionQuote(OptionQuote::from(in_ref(
                quote, "quote",
            )?)))
        })
    }
}

/// Appends a pool state (frame type 5); `payload_len` bytes are copied from
/// `state->payload` during the call. Errors as
/// `floxlog_writer_append_trade`.
///
/// # Safety
/// `w` must be a live handle; `state` and its payload valid; `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append_pool_state(
    w: *mut floxlog_writer,
    state: *const floxlog_pool_state,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        append_one(w, err, || {
            Ok(Event::PoolState(pool_state_in(in_ref(state, "state")?)?))
        })
    }
}

/// Appends an event of any kind (`event->kind` selects the member).
/// Errors as the typed append functions, plus `FLOXLOG_INVALID_INPUT` for
/// an unknown kind.
///
/// # Safety
/// `w` must be a live handle; `event` valid (its member's pointers too);
/// `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append(
    w: *mut floxlog_writer,
    event: *const floxlog_event,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe { append_one(w, err, || event_ptr_in(event)) }
}

/// Appends a frame from its type and payload bytes, copied verbatim (for
/// converting tapes byte for byte). The payload must decode as a valid
/// record of a known type (`FLOXLOG_INVALID_INPUT` otherwise).
///
/// # Safety
/// `w` must be a live handle; `payload` valid for `len` bytes (NULL only
/// with 0); `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append_raw(
    w: *mut floxlog_writer,
    frame_type: u8,
    payload: *const u8,
    len: usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, p) = unsafe { (handle(w)?, slice_in(payload, len, "payload")?) };
        h.w.append_raw(frame_type, p)?;
        Ok(FLOXLOG_OK)
    })
}
