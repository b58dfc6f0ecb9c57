//! `floxlog_event` and the core's `Event`: C events (with their level and
//! payload pointers) viewed as core events without copying, and decoded
//! events written into caller memory, book levels into the caller's level
//! scratch.

use crate::boundary::{check_in, slice_in, slice_uninit};
use crate::codec::records::convert;
use crate::codec::types::*;
use crate::consts::*;
use crate::error::Fail;
use core::mem::MaybeUninit;
use core::ptr::addr_of_mut;
use floxlog_core::book::MAX_LEVELS_PER_SIDE;
use floxlog_core::{Book, BookKind, Event, Level, Levels, OptionQuote, PoolState, Trade};

// ---------------------------------------------------------------------------
// C -> core.

/// Views one side's caller levels as core levels.
///
/// # Safety
/// `p` must point at `n` levels (or be NULL with `n == 0`) that stay
/// unchanged during `'a`.
/// `side` names the pointer (`book->bids`), `count` its count field.
unsafe fn levels_in<'a>(
    p: *const floxlog_level,
    n: usize,
    side: &'static str,
    count: &'static str,
) -> Result<Levels<'a>, Fail> {
    if n > MAX_LEVELS_PER_SIDE {
        return Err(Fail::invalid(count));
    }
    // SAFETY: the caller's promise; layouts are asserted equal in types.rs.
    let levels = unsafe { slice_in(p as *const Level, n, side) }?;
    Ok(Levels::Slice(levels))
}

/// Both ways between a C struct with pointers and its core record, over
/// the core's field list: `From<&$core> for $c` (the pointers set by
/// `$cx` over `$v`) and `$from_c` (C -> core, with the given variable parts).
macro_rules! head_convert {
    ({ $v:ident: $core:ident $c:ident $from_c:ident ($($vx:ident: $vt:ty),*) { $($cx:ident: $ce:expr),* } }
     $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*) => {
        convert!($v: &$core<'_> => $c { $($f),* } $($cx: $ce),*);

        /// The core record of `c`'s fields and the given variable parts.
        fn $from_c<'a>(c: &$c, $($vx: $vt),*) -> $core<'a> {
            $core { $($f: c.$f,)* $($vx,)* }
        }
    };
}

floxlog_core::book_fields!(head_convert, {
    b: Book floxlog_book book_of (kind: BookKind, bids: Levels<'a>, asks: Levels<'a>) {
        // The levels: `write_event` points them into the caller's scratch.
        bids: NO_LEVELS.as_ptr(), bid_count: 0, asks: NO_LEVELS.as_ptr(), ask_count: 0
    }
});

floxlog_core::pool_state_fields!(head_convert, {
    p: PoolState floxlog_pool_state pool_state_of (payload: &'a [u8]) {
        payload: p.payload.as_ptr(), payload_len: p.payload.len()
    }
});

/// # Safety
/// The level pointers of `b` must satisfy `levels_in`.
pub(crate) unsafe fn book_in<'a>(b: &'a floxlog_book, kind: BookKind) -> Result<Book<'a>, Fail> {
    // SAFETY: forwarded caller promise.
    let bids = unsafe {
        levels_in(
            b.bids,
            b.bid_count,
            "book->bids",
            "book->bid_count is over 65535 levels",
        )
    }?;
    // SAFETY: forwarded caller promise.
    let asks = unsafe {
        levels_in(
            b.asks,
            b.ask_count,
            "book->asks",
            "book->ask_count is over 65535 levels",
        )
    }?;
    Ok(book_of(b, kind, bids, asks))
}

/// # Safety
/// `p.payload` must point at `payload_len` bytes (or be NULL with 0).
pub(crate) unsafe fn pool_state_in(p: &floxlog_pool_state) -> Result<PoolState<'_>, Fail> {
    if p.payload_len > u32::MAX as usize - FLOXLOG_POOL_STATE_HEADER_LEN {
        return Err(Fail::invalid("pool state payload does not fit a frame"));
    }
    // SAFETY: the caller's promise.
    let payload = unsafe { slice_in(p.payload, p.payload_len, "state->payload") }?;
    Ok(pool_state_of(p, payload))
}

/// A core event from a C event (views, no copies).
///
/// # Safety
/// `ev` must be a valid event: the union member named by `kind` is read, and
/// its pointers must satisfy `book_in` / `pool_state_in`.
pub(crate) unsafe fn event_in(ev: &floxlog_event) -> Result<Event<'_>, Fail> {
    // Every member is plain data (integers and raw pointers), so reading
    // any member of any bit pattern is defined; the member named by `kind`
    // is the one the caller filled. Level and payload pointers are the
    // caller's promise.
    Ok(match ev.kind {
        FLOXLOG_EVENT_TRADE => {
            // SAFETY: see above.
            Event::Trade(Trade::from(unsafe { &ev.data.trade }))
        }
        FLOXLOG_EVENT_BOOK_SNAPSHOT => {
            // SAFETY: see above.
            Event::Book(unsafe { book_in(&ev.data.book, BookKind::Snapshot) }?)
        }
        FLOXLOG_EVENT_BOOK_DELTA => {
            // SAFETY: see above.
            Event::Book(unsafe { book_in(&ev.data.book, BookKind::Delta) }?)
        }
        FLOXLOG_EVENT_OPTION_QUOTE => {
            // SAFETY: see above.
            Event::OptionQuote(OptionQuote::from(unsafe { &ev.data.option_quote }))
        }
        FLOXLOG_EVENT_POOL_STATE => {
            // SAFETY: see above.
            Event::PoolState(unsafe { pool_state_in(&ev.data.pool_state) }?)
        }
        _ => {
            return Err(Fail::invalid(
                "floxlog_event.kind is not a FLOXLOG_EVENT_* type",
            ))
        }
    })
}

/// Checks an event pointer and converts it.
///
/// # Safety
/// As `event_in`, for `*ev` if it is non-NULL and aligned.
pub(crate) unsafe fn event_ptr_in<'a>(ev: *const floxlog_event) -> Result<Event<'a>, Fail> {
    check_in(ev, "event")?;
    // SAFETY: checked; the caller's promise for the contents.
    unsafe { event_in(&*ev) }
}

// ---------------------------------------------------------------------------
// core -> C.

/// Where empty level lists point when the caller gave no scratch.
static NO_LEVELS: [floxlog_level; 1] = [floxlog_level {
    price_raw: 0,
    qty_raw: 0,
}];

/// Level scratch from the caller: checked pointer and capacity.
pub(crate) struct LevelScratch<'a> {
    slots: &'a mut [MaybeUninit<floxlog_level>],
}

impl<'a> LevelScratch<'a> {
    /// # Safety
    /// `p` must point at `cap` writable levels (or be NULL with 0) that
    /// nothing else accesses during `'a`.
    pub(crate) unsafe fn new(p: *mut floxlog_level, cap: usize) -> Result<Self, Fail> {
        Ok(LevelScratch {
            // SAFETY: forwarded caller promise.
            slots: unsafe { slice_uninit(p, cap, "levels") }?,
        })
    }

    /// Scratch over memory the library owns (the tape reader's).
    #[cfg(feature = "tape")]
    pub(crate) fn from_slots(slots: &'a mut [MaybeUninit<floxlog_level>]) -> Self {
        LevelScratch { slots }
    }

    /// The slots after the first `used` (empty when all are used).
    pub(crate) fn rest(&mut self, used: usize) -> LevelScratch<'_> {
        let at = used.min(self.slots.len());
        LevelScratch {
            slots: &mut self.slots[at..],
        }
    }
}

/// Writes a trade event to `*out` in place.
///
/// # Safety
/// `out` must be non-NULL, aligned and writable.
#[inline(always)]
pub(crate) unsafe fn write_trade(t: &Trade, out: *mut floxlog_event) {
    // SAFETY: the caller's promise; field projections, no references.
    unsafe {
        addr_of_mut!((*out).kind).write(FLOXLOG_EVENT_TRADE);
        addr_of_mut!((*out).data.trade).write(t.into());
    }
}

/// Writes the C form of a decoded event to `*out`, field by field and in
/// place (no whole-event temporaries: this is the decode hot path). Book
/// levels are decoded into `scratch` (frames are unaligned, so they are
/// never pointed at in place). `Err` carries the number of levels the
/// scratch would need; nothing is written then.
///
/// # Safety
/// `out` must be non-NULL, aligned and writable.
#[inline(always)]
pub(crate) unsafe fn write_event(
    ev: &Event<'_>,
    out: *mut floxlog_event,
    scratch: &mut LevelScratch<'_>,
) -> Result<(), usize> {
    // SAFETY (every write below): `out` is valid for writes (the caller's
    // promise); `addr_of_mut!` projects to fields without creating
    // references to possibly uninitialised memory.
    match ev {
        // SAFETY: see above.
        Event::Trade(t) => unsafe { write_trade(t, out) },
        // SAFETY: see above.
        Event::OptionQuote(q) => unsafe {
            addr_of_mut!((*out).kind).write(FLOXLOG_EVENT_OPTION_QUOTE);
            addr_of_mut!((*out).data.option_quote).write(q.into());
        },
        // SAFETY: see above.
        Event::PoolState(p) => unsafe {
            addr_of_mut!((*out).kind).write(FLOXLOG_EVENT_POOL_STATE);
            addr_of_mut!((*out).data.pool_state).write(p.into());
        },
        Event::Book(b) => {
            let (nb, na) = (b.bids.len(), b.asks.len());
            let total = nb + na;
            if total > scratch.slots.len() {
                return Err(total);
            }
            let (bid_slots, ask_slots) = scratch.slots[..total].split_at_mut(nb);
            for (slots, side) in [(bid_slots, &b.bids), (ask_slots, &b.asks)] {
                for (d, l) in slots.iter_mut().zip(side.iter()) {
                    d.write((&l).into());
                }
            }
            let base: *const floxlog_level = if scratch.slots.is_empty() {
                NO_LEVELS.as_ptr()
            } else {
                scratch.slots.as_ptr() as *const floxlog_level
            };
            let kind = match b.kind {
                BookKind::Snapshot => FLOXLOG_EVENT_BOOK_SNAPSHOT,
                BookKind::Delta => FLOXLOG_EVENT_BOOK_DELTA,
            };
            // SAFETY: see above.
            unsafe {
                addr_of_mut!((*out).kind).write(kind);
                addr_of_mut!((*out).data.book).write(floxlog_book {
                    bids: base,
                    bid_count: nb,
                    // In bounds (at most one past the end) since
                    // nb <= total <= capacity.
                    asks: base.wrapping_add(nb),
                    ask_count: na,
                    ..floxlog_book::from(b)
                });
            }
        }
    }
    Ok(())
}

/// The failure for a level scratch that is too small.
pub(crate) fn levels_short(needed: usize) -> Fail {
    Fail::too_small(
        needed as u64,
        "level scratch too small for this book (needed = levels); nothing was consumed",
    )
}
