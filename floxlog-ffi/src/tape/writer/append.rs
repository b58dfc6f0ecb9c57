//! Appending from C: one event per call (trade, book snapshot or delta,
//! option quote, pool state), the batch calls (`_append_events`,
//! `_append_trades`), which hand runs to `TapeWriter::append_batch`, and
//! encoded frames (`_append_frames`). Each body is written once for both
//! handles that append: the writer's and an appender's ([`Sink`]).

use super::{claimed, floxlog_tape_appender, floxlog_tape_writer, open};
use crate::boundary::{check_out, in_ref, put_if_usable, slice_in};
use crate::codec::chunks::append_in_chunks;
use crate::codec::event::{book_in, event_in, pool_state_in};
use crate::codec::types::*;
use crate::error::{floxlog_result, Fail};
use crate::tape::error::{floxlog_tape_error, tape_boundary, TapeFail, TapeResult};
use floxlog::tape::{Appender, TapeError, TapeWriter};
use floxlog_core::{BookKind, Event, OptionQuote, Trade};
use floxlog_result::*;

/// Trades converted per call of the tape writer's trade batch.
const TRADE_CHUNK: usize = 256;

/// Where a handle's appends go.
pub(crate) enum Target<'a> {
    Writer(&'a mut TapeWriter),
    Appender(&'a mut Appender),
}

macro_rules! each {
    ($t:expr, $w:ident => $body:expr) => {
        match $t {
            Target::Writer($w) => $body,
            Target::Appender($w) => $body,
        }
    };
}

impl Target<'_> {
    fn append(&mut self, ev: &Event<'_>) -> Result<(), TapeError> {
        each!(self, w => w.append(ev))
    }
    fn append_batch(&mut self, evs: &[Event<'_>]) -> (usize, Result<(), TapeError>) {
        each!(self, w => w.append_batch(evs))
    }
    fn append_trades(&mut self, trades: &[Trade]) -> (usize, Result<(), TapeError>) {
        each!(self, w => w.append_trades(trades))
    }
    fn append_frames(&mut self, frames: &[u8]) -> (usize, Result<(), TapeError>) {
        each!(self, w => w.append_frames(frames))
    }
}

/// A C handle that appends: a tape writer or an appender.
pub(crate) trait Sink {
    /// `f` on the handle's appending end, under the handle's claim.
    ///
    /// # Safety
    /// `p` NULL or a live handle.
    unsafe fn with<R>(p: *mut Self, f: impl FnOnce(Target<'_>) -> TapeResult<R>) -> TapeResult<R>;
}

impl Sink for floxlog_tape_writer {
    unsafe fn with<R>(p: *mut Self, f: impl FnOnce(Target<'_>) -> TapeResult<R>) -> TapeResult<R> {
        // SAFETY: forwarded caller promise.
        unsafe { claimed(p, |w| f(Target::Writer(open(w)?))) }
    }
}

impl Sink for floxlog_tape_appender {
    unsafe fn with<R>(p: *mut Self, f: impl FnOnce(Target<'_>) -> TapeResult<R>) -> TapeResult<R> {
        // SAFETY: forwarded caller promise.
        unsafe { super::appender::claimed(p, |a| f(Target::Appender(a))) }
    }
}

/// Appends one event through `ev` (which reads the caller's struct).
///
/// # Safety
/// `w` NULL or a live handle.
pub(crate) unsafe fn append_with<'e, S: Sink>(
    w: *mut S,
    err: *mut floxlog_tape_error,
    ev: impl FnOnce() -> Result<Event<'e>, Fail>,
) -> floxlog_result {
    tape_boundary(err, || {
        let ev = ev()?;
        // SAFETY: forwarded caller promise.
        unsafe { S::with(w, |mut t| Ok(t.append(&ev)?)) }?;
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
pub(crate) unsafe fn append_many<'a, T: 'a, S: Sink>(
    w: *mut S,
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
        let items = unsafe { slice_in(items, count, what) }?;
        // SAFETY: forwarded caller promise.
        unsafe {
            S::with(w, |mut t| {
                let (done, r) = append_in_chunks(items, ev, |evs| {
                    let (k, r) = t.append_batch(evs);
                    (k, r.map_err(TapeFail::from))
                });
                n = done;
                r
            })
        }?;
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
    // SAFETY: forwarded caller promises.
    unsafe { append_trades(w, trades, count, appended, err) }
}

/// The body of the two trade batch calls.
///
/// # Safety
/// As `floxlog_tape_writer_append_trades`.
pub(crate) unsafe fn append_trades<S: Sink>(
    w: *mut S,
    trades: *const floxlog_trade,
    count: usize,
    appended: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = tape_boundary(err, || {
        check_out(appended, "appended")?;
        // SAFETY: forwarded caller promises; pointers are checked.
        let trades = unsafe { slice_in(trades, count, "trades") }?;
        // SAFETY: forwarded caller promise.
        unsafe {
            S::with(w, |mut t| {
                // Converted a chunk at a time on the stack (a field copy:
                // the same layout), then the tape writer's trade batch.
                let mut buf = [Trade::default(); TRADE_CHUNK];
                for part in trades.chunks(TRADE_CHUNK) {
                    for (b, t) in buf.iter_mut().zip(part) {
                        *b = Trade::from(t);
                    }
                    let (k, r) = t.append_trades(buf.get(..part.len()).unwrap_or(&[]));
                    n += k;
                    r?;
                }
                Ok(())
            })
        }?;
        Ok(FLOXLOG_OK)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(appended, n) };
    rc
}

/// Appends already-encoded 1.0 frames, `len` bytes at `frames` (headers
/// and payloads one after the other, as a NIC or FPGA that encodes frames
/// hands them over), as they are: each frame's size, type, record
/// version, flags, CRC and record are checked first. Stops at the first
/// bad frame, whose code is the check that failed (`FLOXLOG_CRC_MISMATCH`,
/// `FLOXLOG_TRUNCATED`...) and whose `err->offset` is its byte offset in
/// `frames`; the frames before it are appended. `*count` receives how
/// many frames were appended, on every return. The tape stays as valid as
/// with the event calls (counts, time range, index, Sorted flag,
/// rotation); in journal mode the bytes are copied straight into the
/// mapping.
///
/// # Safety
/// `w` a live handle; `frames` valid for `len` bytes (NULL only with 0);
/// `count` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_frames(
    w: *mut floxlog_tape_writer,
    frames: *const u8,
    len: usize,
    count: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_frames(w, frames, len, count, err) }
}

/// The body of the two frame calls.
///
/// # Safety
/// As `floxlog_tape_writer_append_frames`.
pub(crate) unsafe fn append_frames<S: Sink>(
    w: *mut S,
    frames: *const u8,
    len: usize,
    count: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = tape_boundary(err, || {
        check_out(count, "count")?;
        // SAFETY: forwarded caller promises; pointers are checked.
        let bytes = unsafe { slice_in(frames, len, "frames") }?;
        // SAFETY: forwarded caller promise.
        unsafe {
            S::with(w, |mut t| {
                let (k, r) = t.append_frames(bytes);
                n = k;
                Ok(r?)
            })
        }?;
        Ok(FLOXLOG_OK)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(count, n) };
    rc
}
