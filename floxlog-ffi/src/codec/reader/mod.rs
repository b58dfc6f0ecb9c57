//! `floxlog_reader`: a validated segment over a caller buffer (a mapped
//! file) and a cursor that yields events into C structs: opening, and the
//! reads (one event, a batch, a run of trades). The index calls and seek
//! are in `lookup.rs`.

use crate::boundary::{
    batch_slots, boundary, bytes_mut, check_out, data_in, output, overlap, put, put_if_usable,
};
use crate::codec::event::{levels_short, write_event, write_trade, LevelScratch};
use crate::codec::records::TradeSlots;
use crate::codec::types::*;
use crate::error::{floxlog_error, floxlog_result, Fail};
use crate::handle::{get, handle, opaque, place, storage_for};
use core::ffi::c_void;
use core::mem::MaybeUninit;
use floxlog_core::{Error, Event, Index, Reader, Segment, TradeStop};
use floxlog_result::*;

// The index calls, seek and the header query.
mod lookup;
pub use lookup::*;

/// Opaque reader handle (see `floxlog_reader_init`). Not thread-safe: use
/// one handle from one thread at a time (several handles may share the
/// same segment bytes, each with its own scratch).
pub struct floxlog_reader {
    _private: [u8; 0],
}

const READER_MAGIC: u64 = 0x5244_4552_584f_4c46; // "FLOXREDR"

/// Bytes of caller storage a `floxlog_reader` needs
/// (`floxlog_reader_init`), on any target; align it to
/// `FLOXLOG_STORAGE_ALIGN`.
pub const FLOXLOG_READER_STORAGE_BYTES: usize = 640;

/// An event the reader yielded but did not hand out (a book that did not
/// fit the caller's level scratch, or the event that ended a trades-only
/// batch), kept so the next call can. Its views point into the segment
/// bytes or the block scratch, which the core only overwrites when it
/// loads the next block, i.e. not before the next `next_event`.
type Pending = Event<'static>;

/// What a `floxlog_reader *` points at; `magic` first (repr(C)) so a
/// handle of the wrong type is recognised.
#[repr(C)]
pub(crate) struct ReaderHandle {
    magic: u64,
    /// Made by `floxlog_reader_new` (else it lives in caller storage).
    boxed: bool,
    seg: Segment<'static>,
    /// The index, proven by the first call that needs it (`None` until
    /// then: opening and reading never pay for the proof's pass over the
    /// frame headers) and kept, error included; its errors never affect
    /// sequential reading.
    index: Option<Result<Option<Index<'static>>, Error>>,
    /// Borrows the caller's segment bytes and block scratch.
    reader: Reader<'static, 'static>,
    pending: Option<Pending>,
    /// An error met inside a batch after some events, returned next.
    deferred: Option<Fail>,
    compressed: bool,
}

opaque!(floxlog_reader => ReaderHandle, magic READER_MAGIC, null "r",
    storage FLOXLOG_READER_STORAGE_BYTES);

/// Fills `*opts` with the defaults: verify CRCs, reject unknown frame
/// types.
///
/// # Safety
/// `opts` must be writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_options_default(
    opts: *mut floxlog_reader_options,
) -> floxlog_result {
    // SAFETY: forwarded caller promise.
    unsafe {
        output(core::ptr::null_mut(), opts, "options", || {
            Ok(Default::default())
        })
    }
}

/// Opens a segment (the body of `floxlog_reader_init`, and of
/// `floxlog_reader_new` with `std`).
///
/// # Safety
/// As `floxlog_reader_init` for the segment, options and scratch.
unsafe fn make_reader(
    data: *const u8,
    len: usize,
    opts: *const floxlog_reader_options,
    scratch: *mut u8,
    scratch_len: usize,
    boxed: bool,
) -> Result<ReaderHandle, Fail> {
    let ranges = ((data as usize, len), (scratch as usize, scratch_len));
    // SAFETY: the caller promises `data` for the handle's lifetime and
    // a valid `opts` if not NULL.
    let (data, opts): (&'static [u8], _) =
        unsafe { (data_in(data, len)?, floxlog_reader_options::from_ptr(opts)?) };
    if overlap(ranges.0, ranges.1) {
        return Err(Fail::invalid("segment data and scratch overlap"));
    }
    if scratch_len > 0 {
        check_out(scratch, "scratch")?;
    }
    let seg = Segment::parse(data)?;
    // SAFETY: as above.
    let scratch: &'static mut [u8] = unsafe { bytes_mut(scratch, scratch_len, "scratch") }?;
    let reader = seg.reader(opts.core(), scratch);
    Ok(ReaderHandle {
        magic: READER_MAGIC,
        boxed,
        seg,
        index: None,
        reader,
        pending: None,
        deferred: None,
        compressed: seg.is_compressed(),
    })
}

/// Opens a segment into a handle in caller storage: validates its 64-byte
/// header and positions the cursor before the first event. The index is
/// not read here: the first index call or seek validates it (including
/// that every entry is a frame or block boundary, one pass over the frame
/// headers) and keeps the result; its errors are reported by
/// `floxlog_reader_index` and the other index calls, never by opening or
/// reading. On success `*reader_out` receives the handle (it points into
/// `storage`). The library allocates nothing: this is how firmware and the
/// codec-only library open a segment.
///
/// Ownership: `storage` (`storage_len` bytes, at least
/// `FLOXLOG_READER_STORAGE_BYTES`, aligned to `FLOXLOG_STORAGE_ALIGN`)
/// holds the handle until the caller stops using it (there is nothing to
/// release: reuse the storage, or pass the handle to `floxlog_reader_free`
/// in the full library, which only ends it). `data` (`len` bytes: a whole
/// segment file, e.g. mapped) and `scratch` are borrowed by the handle
/// while it is used; they must stay valid and unchanged, and must not
/// overlap. `scratch` receives decompressed LZ4 blocks:
/// `floxlog_segment_scratch_len` bytes (NULL/0 for an uncompressed
/// segment; a block larger than the scratch stops the read with
/// `FLOXLOG_BUFFER_TOO_SMALL`); its initial contents do not matter.
/// `opts` may be NULL (defaults) and is read during the call only.
///
/// Errors: `FLOXLOG_NULL_POINTER`; `FLOXLOG_MISALIGNED` (`storage` too);
/// `FLOXLOG_BUFFER_TOO_SMALL` for `storage` under the handle's size;
/// `FLOXLOG_INVALID_INPUT` when `data` and `scratch` overlap; the header's
/// data error (`FLOXLOG_TRUNCATED`, `FLOXLOG_BAD_MAGIC`, ... at offset 0).
///
/// # Safety
/// `storage` must be writable for `storage_len` bytes and not used by
/// anything else while the handle is; `data` must be valid for `len` bytes
/// and `scratch` for `scratch_len` writable bytes while the handle is
/// used; `reader_out` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_init(
    storage: *mut c_void,
    storage_len: usize,
    data: *const u8,
    len: usize,
    opts: *const floxlog_reader_options,
    scratch: *mut u8,
    scratch_len: usize,
    reader_out: *mut *mut floxlog_reader,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(reader_out, "reader_out")?;
        let at = storage_for::<ReaderHandle>(storage, storage_len)?;
        // SAFETY: forwarded caller promises.
        let h = unsafe { make_reader(data, len, opts, scratch, scratch_len, false) }?;
        // SAFETY: `at` was checked; the caller promises the storage.
        unsafe { put(reader_out, place(at, h)) };
        Ok(FLOXLOG_OK)
    })
}

/// `floxlog_reader_init` with the handle allocated by the library (full
/// library only): on success `*reader_out` receives a handle the caller
/// releases with `floxlog_reader_free`. Same arguments, ownership and
/// errors otherwise.
///
/// # Safety
/// As `floxlog_reader_init` without the storage.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_new(
    data: *const u8,
    len: usize,
    opts: *const floxlog_reader_options,
    scratch: *mut u8,
    scratch_len: usize,
    reader_out: *mut *mut floxlog_reader,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(reader_out, "reader_out")?;
        // SAFETY: forwarded caller promises.
        let h = unsafe { make_reader(data, len, opts, scratch, scratch_len, true) }?;
        // SAFETY: checked above.
        unsafe { put(reader_out, crate::handle::into_c(h)) };
        Ok(FLOXLOG_OK)
    })
}

/// Releases a reader handle (full library only); the caller's buffers are
/// not touched. NULL is a no-op. A handle from `floxlog_reader_init` is
/// only ended: its storage stays the caller's. Pointers from earlier
/// events into the scratch stay pointing at the caller's memory.
///
/// # Safety
/// `r` must be NULL or a live handle from `floxlog_reader_new` or
/// `floxlog_reader_init`.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_free(r: *mut floxlog_reader) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::handle::free(r) }
}

/// Reads the next event into `*event`.
///
/// Returns `FLOXLOG_OK` with an event, `FLOXLOG_END` after the last one,
/// or the error that ends the read (kind and byte offset in `*err`); every
/// good event before the damage is yielded first, and after an error the
/// reader returns `FLOXLOG_END`.
///
/// Book levels are decoded into `levels` (caller-owned, `level_cap`
/// entries, 8-byte aligned; NULL/0 if the segment has no books): bids
/// first, then asks. If a book needs more than `level_cap`, the call
/// returns `FLOXLOG_BUFFER_TOO_SMALL` with `needed` = bid + ask levels and
/// keeps the event: call again with a larger buffer
/// (`FLOXLOG_MAX_LEVELS_PER_SIDE` * 2 always suffices).
///
/// Lifetimes of what `*event` points at: book levels, until `levels` is
/// reused; pool state payloads, into `data` for uncompressed segments
/// (valid while `data` is) or into the block scratch for LZ4 (valid until
/// the next call on this reader).
///
/// # Safety
/// `r` must be a live handle; `event` writable; `levels` valid for
/// `level_cap` writable entries (NULL only with 0); `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_next(
    r: *mut floxlog_reader,
    event: *mut floxlog_event,
    levels: *mut floxlog_level,
    level_cap: usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(event, "event")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        // SAFETY: the caller promises `level_cap` writable levels.
        let mut ls = unsafe { LevelScratch::new(levels, level_cap) }?;
        // SAFETY: `event` checked above.
        match unsafe { read_one(h, event, &mut ls) }? {
            Some(_) => Ok(FLOXLOG_OK),
            None => Ok(FLOXLOG_END),
        }
    })
}

/// Reads up to `cap` events into `events[0..cap)` and sets `*count` to how
/// many: the batch form of `floxlog_reader_next`, one call for many events.
///
/// Returns `FLOXLOG_OK` with `*count >= 1`, `FLOXLOG_END` with `*count == 0`
/// after the last event, or an error with `*count == 0`. An error met after
/// some events ends the batch early (`FLOXLOG_OK` with those events) and is
/// returned by the next call, so every good event is still delivered first.
/// `*count` is written on every return (`count` must not be NULL).
///
/// Book levels of all the batch's books are packed into `levels` (bids then
/// asks, book after book); a book that does not fit the space left ends the
/// batch and comes first in the next one; if it is the batch's first event,
/// the call returns `FLOXLOG_BUFFER_TOO_SMALL` as `floxlog_reader_next`
/// does. In an LZ4 segment a batch ends after a pool state, whose payload
/// points into the block scratch: valid until the next call on this reader.
///
/// # Safety
/// `r` must be a live handle; `events` valid for `cap` writable events;
/// `levels` valid for `level_cap` writable entries (NULL only with 0);
/// `count` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_next_batch(
    r: *mut floxlog_reader,
    events: *mut floxlog_event,
    cap: usize,
    levels: *mut floxlog_level,
    level_cap: usize,
    count: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = boundary(err, || {
        // SAFETY: the caller promises `cap` writable events.
        let out = unsafe { batch_slots(count, events, cap, "events") }?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        // SAFETY: the caller promises `level_cap` writable levels.
        let mut ls = unsafe { LevelScratch::new(levels, level_cap) }?;
        let base = out.as_mut_ptr() as *mut floxlog_event;
        // The first event through `read_one`: a deferred error or a
        // held-back book comes first, and errors are returned as they are.
        // SAFETY: `base` is the caller's first event (cap >= 1).
        let Some(first) = unsafe { read_one(h, base, &mut ls.rest(0)) }? else {
            return Ok(FLOXLOG_END);
        };
        n = 1;
        if first.pool && h.compressed {
            return Ok(FLOXLOG_OK);
        }
        let mut used = first.levels;
        // The rest in a tight loop, trades first (the hot path).
        while n < cap {
            // SAFETY: n < cap, inside the caller's events.
            let slot = unsafe { base.add(n) };
            let next = h.reader.next_event();
            let ev = match &next {
                Ok(Some(ev)) => ev,
                Ok(None) => break,
                Err(e) => {
                    h.deferred = Some((*e).into());
                    break;
                }
            };
            if let Event::Trade(t) = ev {
                // SAFETY: `slot` is one of the caller's events.
                unsafe { write_trade(t, slot) };
                n += 1;
                continue;
            }
            // SAFETY: as above.
            if unsafe { write_event(ev, slot, &mut ls.rest(used)) }.is_err() {
                // A book too big for the space left: first in the next
                // batch.
                // SAFETY: the reader moves on only in the next call.
                unsafe { hold_back(&mut h.pending, ev) };
                break;
            }
            n += 1;
            let w = Wrote::of(ev);
            used += w.levels;
            if w.pool && h.compressed {
                break;
            }
        }
        Ok(FLOXLOG_OK)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(count, if rc == FLOXLOG_OK { n } else { 0 }) };
    rc
}

/// Reads up to `cap` consecutive trades into `trades[0..cap)` and sets
/// `*count` to how many: the fast path for trade tapes, one boundary
/// crossing per batch and each trade written straight into the caller's
/// array (no `floxlog_event` in between).
///
/// The batch stops before the first event of another type; that event is
/// kept and is the next one `floxlog_reader_next` or
/// `floxlog_reader_next_batch` returns. Returns `FLOXLOG_OK` with
/// `*count >= 1`; `FLOXLOG_NOT_TRADE` with `*count == 0` when the next
/// event is not a trade (read it with the general call, then come back);
/// `FLOXLOG_END` with `*count == 0` after the last event; or an error with
/// `*count == 0`. An error met after some trades ends the batch early
/// (`FLOXLOG_OK` with those) and is returned by the next call, so every good
/// trade is still delivered first. `*count` is written on every return.
///
/// # Safety
/// `r` must be a live handle; `trades` valid for `cap` writable trades;
/// `count` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_next_trades(
    r: *mut floxlog_reader,
    trades: *mut floxlog_trade,
    cap: usize,
    count: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = boundary(err, || {
        // SAFETY: the caller promises `cap` writable trades.
        let out = unsafe { batch_slots(count, trades, cap, "trades") }?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        if let Some(f) = h.deferred.take() {
            return Err(f);
        }
        if h.pending.is_some() {
            return Ok(FLOXLOG_NOT_TRADE);
        }
        let (k, error) = read_trades(h, out);
        n = k;
        if let Some(e) = error {
            if n == 0 {
                return Err(e.into());
            }
            h.deferred = Some(e.into());
        }
        Ok(match (n, h.pending.is_some()) {
            (0, true) => FLOXLOG_NOT_TRADE,
            (0, false) => FLOXLOG_END,
            _ => FLOXLOG_OK,
        })
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(count, if rc == FLOXLOG_OK { n } else { 0 }) };
    rc
}

/// The body of `floxlog_reader_next_trades`: the core's batch kernel fills
/// `out` until it is full, the events end, an event of another type (read
/// and held back for the next call) or an error (returned with the count
/// before it). Out of line: inside the boundary's closure the compiler
/// kept decoded values in memory.
#[inline(never)]
fn read_trades(
    h: &mut ReaderHandle,
    out: &mut [MaybeUninit<floxlog_trade>],
) -> (usize, Option<Error>) {
    let b = h.reader.next_trades_into(&mut TradeSlots(out));
    match b.stop {
        TradeStop::Full | TradeStop::End => {}
        TradeStop::Error(e) => return (b.count, Some(e)),
        TradeStop::OtherType => match h.reader.next_event_at() {
            Ok(Some((ev, _))) => {
                // SAFETY: the reader moves on only in the next call.
                unsafe { hold_back(&mut h.pending, &ev) };
            }
            Ok(None) => {}
            Err(e) => return (b.count, Some(e)),
        },
    }
    (b.count, None)
}

/// What writing an event took.
struct Wrote {
    /// Level slots used.
    levels: usize,
    /// It is a pool state.
    pool: bool,
}

impl Wrote {
    #[inline(always)]
    fn of(ev: &Event<'_>) -> Wrote {
        let (levels, pool) = match ev {
            Event::Book(b) => (b.bids.len() + b.asks.len(), false),
            Event::PoolState(_) => (0, true),
            _ => (0, false),
        };
        Wrote { levels, pool }
    }
}

/// Keeps an event the call could not hand out, for the next call.
///
/// # Safety
/// Only the lifetime changes: the event's views must stay valid until the
/// reader moves on (see `Pending`); `seek` and `free` drop the pending
/// event first.
unsafe fn hold_back(pending: &mut Option<Pending>, ev: &Event<'_>) {
    // SAFETY: the caller's promise.
    *pending = Some(unsafe { core::mem::transmute::<Event<'_>, Event<'static>>(*ev) });
}

/// Reads one event into `*out` (`None` after the last): a deferred error
/// first, then a held-back book, then the next event.
///
/// The decode hot path, shaped by measurement (c-tests/bench.c): the
/// result is matched by reference, trades first, so the success path loads
/// only the fields it writes out (moving the event out of the result copies
/// its largest variant).
///
/// # Safety
/// `out` must be non-NULL, aligned and writable.
#[inline(always)]
unsafe fn read_one(
    h: &mut ReaderHandle,
    out: *mut floxlog_event,
    ls: &mut LevelScratch<'_>,
) -> Result<Option<Wrote>, Fail> {
    if let Some(f) = h.deferred.take() {
        return Err(f);
    }
    if let Some(ev) = h.pending {
        // SAFETY: the caller's promise; the event's views are still valid
        // (see Pending).
        unsafe { write_event(&ev, out, ls) }.map_err(levels_short)?;
        h.pending = None;
        return Ok(Some(Wrote::of(&ev)));
    }
    let next = h.reader.next_event();
    let ev = match &next {
        Ok(Some(ev)) => ev,
        Ok(None) => return Ok(None),
        Err(e) => return Err((*e).into()),
    };
    if let Event::Trade(t) = ev {
        // SAFETY: the caller's promise.
        unsafe { write_trade(t, out) };
        return Ok(Some(Wrote {
            levels: 0,
            pool: false,
        }));
    }
    // SAFETY: the caller's promise.
    if let Err(need) = unsafe { write_event(ev, out, ls) } {
        // SAFETY: the reader moves on only in the next call.
        unsafe { hold_back(&mut h.pending, ev) };
        return Err(levels_short(need));
    }
    Ok(Some(Wrote::of(ev)))
}

/// Sets `*pos` to where the last event yielded was (frame header offset,
/// or block header offset plus offset inside the decompressed block).
///
/// # Safety
/// `r` must be a live handle; `pos` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_position(
    r: *mut floxlog_reader,
    pos: *mut floxlog_position,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { get(r, pos, "pos", |h| (&h.reader.position()).into()) }
}

/// Sets `*offset` to the segment offset of the next frame or block header
/// the cursor will read: after an error, where the damage starts; after
/// the last event, the end of the frame area.
///
/// # Safety
/// `r` must be a live handle; `offset` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_next_offset(
    r: *mut floxlog_reader,
    offset: *mut u64,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { get(r, offset, "offset", |h| h.reader.next_offset()) }
}

/// Sets `*count` to the events yielded so far (including one held back by
/// `FLOXLOG_BUFFER_TOO_SMALL`).
///
/// # Safety
/// `r` must be a live handle; `count` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_events_read(
    r: *mut floxlog_reader,
    count: *mut u64,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { get(r, count, "count", |h| h.reader.events_read()) }
}

// The C structs the reader fills or reads.

/// Reader and frame decode options.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct floxlog_reader_options {
    /// Non-zero: check every frame's CRC32 (default 1).
    pub verify_crc: u8,
    /// Non-zero: skip frames of unknown type by their size; zero: stop with
    /// `FLOXLOG_UNKNOWN_RECORD_TYPE` (spec 1.0; default 0).
    pub skip_unknown_types: u8,
}

/// Where the reader found the last event.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_position {
    /// The frame header's offset, or for compressed segments the block
    /// header's offset.
    pub offset: u64,
    /// Compressed segments: the frame's offset inside the decompressed
    /// block (`has_in_block` is then 1).
    pub in_block: u32,
    /// 1 when `in_block` is meaningful.
    pub has_in_block: u8,
}
