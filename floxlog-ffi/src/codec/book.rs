//! Order books for C: `floxlog_book_state` over the caller's level arrays
//! (the core's `BookState`, resumed from the struct on every call). A
//! tape's book at a time is `tape/book.rs`.

use crate::boundary::{boundary, check_out, check_slice, overlap, put, slice_uninit};
use crate::codec::event::event_ptr_in;
use crate::codec::types::floxlog_level;
use crate::error::{floxlog_error, floxlog_result, Fail};
use core::mem::size_of;
use floxlog_core::{BookState, Event, Level, Levels};
use floxlog_result::*;

/// `side` argument of `floxlog_book_best` and `floxlog_book_side`: bids.
pub const FLOXLOG_BOOK_BID: u32 = 0;
/// `side` argument of `floxlog_book_best` and `floxlog_book_side`: asks.
pub const FLOXLOG_BOOK_ASK: u32 = 1;

/// One symbol's order book over level arrays the caller owns. Plain data:
/// `floxlog_book_init` fills it; `floxlog_book_apply` keeps `bids[0 ..
/// bid_count]` sorted by price descending (best bid first) and `asks[0 ..
/// ask_count]` ascending (best ask first), one level per price. The caller
/// may read the levels directly; it must not change the struct or the
/// arrays between calls (a struct that no longer describes a sorted book
/// is refused with `FLOXLOG_INVALID_INPUT`). No memory is allocated, and
/// nothing needs freeing beyond the caller's own arrays.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_book_state {
    /// Bid storage: `bid_capacity` levels.
    pub bids: *mut floxlog_level,
    /// Most bid levels the book can hold.
    pub bid_capacity: usize,
    /// Bid levels held.
    pub bid_count: usize,
    /// Ask storage: `ask_capacity` levels.
    pub asks: *mut floxlog_level,
    /// Most ask levels the book can hold.
    pub ask_capacity: usize,
    /// Ask levels held.
    pub ask_count: usize,
}

/// The two storage arrays as slices (both may be empty).
///
/// # Safety
/// The struct's pointers must hold their capacities of initialised levels
/// that nothing else accesses during `'a`.
unsafe fn storage<'a>(b: &floxlog_book_state) -> Result<(&'a mut [Level], &'a mut [Level]), Fail> {
    check_slice(b.bids, b.bid_capacity, "bids")?;
    check_slice(b.asks, b.ask_capacity, "asks")?;
    let range = |p: *mut floxlog_level, n: usize| (p as usize, n * size_of::<Level>());
    if overlap(range(b.bids, b.bid_capacity), range(b.asks, b.ask_capacity)) {
        return Err(Fail::invalid("book bids and asks storage overlap"));
    }
    let as_levels = |p: *mut floxlog_level, n: usize| {
        if n == 0 {
            return &mut [][..];
        }
        // SAFETY: checked non-NULL, aligned and in range above; the
        // caller's promise for the memory; `floxlog_level` and `Level` are
        // the same repr(C) {i64, i64} (asserted in types.rs).
        unsafe { core::slice::from_raw_parts_mut(p as *mut Level, n) }
    };
    Ok((
        as_levels(b.bids, b.bid_capacity),
        as_levels(b.asks, b.ask_capacity),
    ))
}

/// Sets up `*book` over `bids` (`bid_capacity` levels) and `asks`
/// (`ask_capacity` levels), both empty; the arrays are zeroed. The arrays
/// stay the caller's; they must outlive every use of `*book` and must not
/// overlap. A NULL array is allowed with capacity 0 (that side can only be
/// empty).
///
/// # Safety
/// `book` writable; each array writable for its capacity; `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_book_init(
    book: *mut floxlog_book_state,
    bids: *mut floxlog_level,
    bid_capacity: usize,
    asks: *mut floxlog_level,
    ask_capacity: usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(book, "book")?;
        let st = floxlog_book_state {
            bids,
            bid_capacity,
            bid_count: 0,
            asks,
            ask_capacity,
            ask_count: 0,
        };
        // Checked (and the pointers' memory zeroed, so that every level is
        // initialised) through uninit views first.
        // SAFETY: the caller's promise.
        let b = unsafe { slice_uninit(bids, bid_capacity, "bids") }?;
        b.fill(core::mem::MaybeUninit::new(floxlog_level::default()));
        // SAFETY: the caller's promise.
        let a = unsafe { slice_uninit(asks, ask_capacity, "asks") }?;
        a.fill(core::mem::MaybeUninit::new(floxlog_level::default()));
        // SAFETY: just initialised; checks the overlap.
        unsafe { storage(&st) }?;
        // SAFETY: checked above.
        unsafe { put(book, st) };
        Ok(FLOXLOG_OK)
    })
}

/// Applies a book event (`FLOXLOG_EVENT_BOOK_SNAPSHOT` or
/// `FLOXLOG_EVENT_BOOK_DELTA`) to `*book`, as spec 1.0 says: a snapshot
/// replaces each side with its listed levels; a delta sets the level of
/// each listed price with `qty_raw > 0` and removes it with `qty_raw ==
/// 0`. The event's `symbol_id` is not checked (one book is one symbol's).
/// `offset` is the event's byte offset, reported in `err->offset` on a
/// data error.
///
/// Errors: `FLOXLOG_MALFORMED_RECORD` (a negative `qty_raw`, a price listed
/// twice on one side of a snapshot), `FLOXLOG_CAPACITY_EXCEEDED` (a side
/// would need more levels than its capacity; `err->needed` says how many),
/// `FLOXLOG_INVALID_INPUT` (not a book event, event levels inside the
/// book's storage, a struct that is not a sorted book). After a data or
/// capacity error the book is empty; after the others it is unchanged.
///
/// # Safety
/// `book` initialised by `floxlog_book_init`; `event` valid (its level
/// arrays too); `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_book_apply(
    book: *mut floxlog_book_state,
    event: *const crate::codec::types::floxlog_event,
    offset: u64,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(book, "book")?;
        // SAFETY: checked; the caller's promise.
        let b = unsafe { &mut *book };
        // SAFETY: the caller's promise.
        let ev = unsafe { event_ptr_in(event) }?;
        let Event::Book(rec) = ev else {
            return Err(Fail::invalid("event is not a book snapshot or delta"));
        };
        // The event's levels are read while the storage is written: they
        // must not share memory.
        let store = |p: *mut floxlog_level, n: usize| (p as usize, n * size_of::<Level>());
        for lv in [rec.bids, rec.asks] {
            if let Levels::Slice(s) = lv {
                let r = (s.as_ptr() as usize, core::mem::size_of_val(s));
                if overlap(r, store(b.bids, b.bid_capacity))
                    || overlap(r, store(b.asks, b.ask_capacity))
                {
                    return Err(Fail::invalid("event levels lie inside the book's storage"));
                }
            }
        }
        // SAFETY: the caller's promise (init zeroed the arrays).
        let (bs, asks) = unsafe { storage(b) }?;
        let mut st = BookState::from_parts(bs, b.bid_count, asks, b.ask_count)
            .map_err(|_| Fail::invalid("book struct does not describe a sorted book"))?;
        let r = st.apply(&rec, offset);
        (b.bid_count, b.ask_count) = st.lens();
        r?;
        Ok(FLOXLOG_OK)
    })
}

/// Empties both sides of `*book` (the storage is kept).
///
/// # Safety
/// `book` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_book_clear(book: *mut floxlog_book_state) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        check_out(book, "book")?;
        // SAFETY: checked; the caller's promise.
        let b = unsafe { &mut *book };
        b.bid_count = 0;
        b.ask_count = 0;
        Ok(FLOXLOG_OK)
    })
}

/// The levels of one side (`FLOXLOG_BOOK_BID` or `FLOXLOG_BOOK_ASK`),
/// best first: `*levels` points into the book's storage (valid until the
/// next apply or clear), `*count` levels.
///
/// # Safety
/// `book` valid; `levels` and `count` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_book_side(
    book: *const floxlog_book_state,
    side: u32,
    levels: *mut *const floxlog_level,
    count: *mut usize,
) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        check_out(levels, "levels")?;
        check_out(count, "count")?;
        // SAFETY: the caller's promise.
        let b = unsafe { crate::boundary::in_ref(book, "book") }?;
        let (p, n, cap) = match side {
            FLOXLOG_BOOK_BID => (b.bids, b.bid_count, b.bid_capacity),
            FLOXLOG_BOOK_ASK => (b.asks, b.ask_count, b.ask_capacity),
            _ => {
                return Err(Fail::invalid(
                    "side is not FLOXLOG_BOOK_BID or FLOXLOG_BOOK_ASK",
                ))
            }
        };
        if n > cap {
            return Err(Fail::invalid("book struct does not describe a sorted book"));
        }
        // SAFETY: checked above.
        unsafe {
            put(levels, p as *const floxlog_level);
            put(count, n);
        }
        Ok(FLOXLOG_OK)
    })
}

/// The best level of one side (highest bid, lowest ask) in `*level`:
/// `FLOXLOG_OK`, or `FLOXLOG_END` if the side is empty (`*level` untouched).
///
/// # Safety
/// `book` valid; `level` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_book_best(
    book: *const floxlog_book_state,
    side: u32,
    level: *mut floxlog_level,
) -> floxlog_result {
    let mut p: *const floxlog_level = core::ptr::null();
    let mut n = 0usize;
    // SAFETY: forwarded; the locals are writable.
    let rc = unsafe { floxlog_book_side(book, side, &mut p, &mut n) };
    if rc != FLOXLOG_OK {
        return rc;
    }
    boundary(core::ptr::null_mut(), || {
        check_out(level, "level")?;
        if n == 0 {
            return Ok(FLOXLOG_END);
        }
        // SAFETY: n > 0 levels at p (checked by floxlog_book_side and the
        // caller's promise); `level` checked.
        unsafe { put(level, *p) };
        Ok(FLOXLOG_OK)
    })
}
