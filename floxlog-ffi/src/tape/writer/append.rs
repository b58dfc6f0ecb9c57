//! Appending from C: one event per call (trade, book snapshot or delta,
//! option quote, pool state) and the batch calls (`_append_events`,
//! `_append_trades`), which hand runs to `TapeWriter::append_batch`.

use super::floxlog_tape_writer;
use crate::boundary::{check_out, in_ref, put_if_usable, slice_in};
use crate::codec::chunks::append_in_chunks;
use crate::codec::event::{book_in, event_in, pool_state_in};
use crate::codec::types::*;
use crate::error::{floxlog_result, Fail};
use crate::handle::handle;
use crate::tape::error::{floxlog_tape_error, tape_boundary, TapeFail};
use floxlog_core::{BookKind, Event, OptionQuote, Trade};
use floxlog_result::*;

/// Trades converted per call of the tape writer's trade batch.
const TRADE_CHUNK: usize = 256;

/// Appends one event through `ev` (which reads the caller's struct).
///
/// # Safety
/// `w` NULL or a live handle.
unsafe fn append_with<'e>(
    w: *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
    ev: impl FnOnce() -> Result<Event<'e>, Fail>,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        let ev = ev()?;
        h.open()?.append(&ev)?;
        Ok(FLOXLOG_OK)
    })
}

/// Appends a trade. On error the event was not written and everything
/// before it is intact.
///
/// # Safety
/// `w` a live handle; `trade` valid; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_trade(
    w: *mut floxlog_tape_writer,
    trade: *const floxlog_trade,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe { append_with(w, err, || Ok(Event::Trade(in_ref(trade, "trade")?.into()))) }
}

/// The body of the two book appends.
///
/// # Safety
/// As `floxlog_tape_writer_append_book_snapshot`.
unsafe fn append_book(
    w: *mut floxlog_tape_writer,
    book: *const floxlog_book,
    kind: BookKind,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        append_with(w, err, || {
            Ok(Event::Book(book_in(in_ref(book, "book")?, kind)?))
        })
    }
}

/// Appends a book snapshot (levels read from `book->bids`/`asks` during
/// the call).
///
/// # Safety
/// `w` a live handle; `book` valid with its level pointers; `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_book_snapshot(
    w: *mut floxlog_tape_writer,
    book: *const floxlog_book,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_book(w, book, BookKind::Snapshot, err) }
}

/// Appends a book delta (levels with quantity 0 remove a price).
///
/// # Safety
/// As `floxlog_tape_writer_append_book_snapshot`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_book_delta(
    w: *mut floxlog_tape_writer,
    book: *const floxlog_book,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_book(w, book, BookKind::Delta, err) }
}

/// Appends an option quote.
///
/// # Safety
/// `w` a live handle; `quote` valid; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_option_quote(
    w: *mut floxlog_tape_writer,
    quote: *const floxlog_option_quote,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        append_with(w, err, || {
            Ok(Event::OptionQuote(OptionQuote::from(in_ref(
                quote, "quote",
            )?)))
        })
    }
}

/// Appends a pool state (payload copied during the call).
///
/// # Safety
/// `w` a live handle; `pool` valid with its payload pointer; `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_pool_state(
    w: *mut floxlog_tape_writer,
    pool: *const floxlog_pool_state,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        append_with(w, err, || {
            Ok(Event::PoolState(pool_state_in(in_ref(pool, "pool")?)?))
        })
    }
}

/// Appends `count` items in order; `*appended` gets how many were written
/// on every return.
///
/// # Safety
/// `w` NULL or a live handle; `items` valid for `count`; `appended`
/// writable if usable.
unsafe fn append_many<'a, T: 'a>(
    w: *mut floxlog_tape_writer,
    items: *const T,
    count: usize,
    what: &'static str,
    appended: *mut usize,
    err: *mut floxlog_tape_error,
    ev: impl Fn(&'a T) -> Result<Event<'a>, Fail>,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = tape_boundary(err, || {
        check_out(appended, "appended")?;
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, items) = unsafe { (handle(w)?, slice_in(items, count, what)?) };
        let tw = h.open()?;
        let (done, r) = append_in_chunks(items, ev, |evs| {
            let (k, r) = tw.append_batch(evs);
            (k, r.map_err(TapeFail::from))
        });
        n = done;
        r?;
        Ok(FLOXLOG_OK)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(appended, n) };
    rc
}

/// Appends `count` events of any kind in order: the batch form, one call
/// for many events. Stops at the first event that fails and returns its
/// error; `*appended` receives how many were written, on every return.
///
/// # Safety
/// `w` a live handle; `events` valid for `count` events (their members'
/// pointers too; NULL only with 0); `appended` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_events(
    w: *mut floxlog_tape_writer,
    events: *const floxlog_event,
    count: usize,
    appended: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_many(w, events, count, "events", appended, err, |e| event_in(e)) }
}

/// Appends `count` trades in order, with the progress rule of
/// `floxlog_tape_writer_append_events`.
///
/// # Safety
/// `w` a live handle; `trades` valid for `count` trades (NULL only with 0);
/// `appended` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_trades(
    w: *mut floxlog_tape_writer,
    trades: *const floxlog_trade,
    count: usize,
    appended: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = tape_boundary(err, || {
        check_out(appended, "appended")?;
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, trades) = unsafe { (handle(w)?, slice_in(trades, count, "trades")?) };
        let tw = h.open()?;
        // Converted a chunk at a time on the stack (a field copy: the same
        // layout), then the tape writer's trade batch.
        let mut buf = [Trade::default(); TRADE_CHUNK];
        for part in trades.chunks(TRADE_CHUNK) {
            for (b, t) in buf.iter_mut().zip(part) {
                *b = Trade::from(t);
            }
            let (k, r) = tw.append_trades(buf.get(..part.len()).unwrap_or(&[]));
            n += k;
            r?;
        }
        Ok(FLOXLOG_OK)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(appended, n) };
    rc
}
