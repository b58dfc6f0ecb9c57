//! `floxlog_writer`: the core's streaming segment writer over caller
//! buffers.

use crate::boundary::{
    boundary, bytes_mut, check_out, check_slice, copy_out, in_ref, output, overlap, put,
    put_if_usable, slice_in, slice_uninit,
};
use crate::codec::chunks::append_in_chunks;
use crate::codec::event::{book_in, event_in, event_ptr_in, pool_state_in};
use crate::codec::records::config_in;
use crate::codec::types::*;
use crate::consts::*;
use crate::error::{floxlog_error, floxlog_result, Fail};
use crate::handle::{free, get, handle, into_c, Opaque};
use core::mem::ManuallyDrop;
use floxlog_core::{
    BlockSlot, BookKind, Compression, Event, IndexEntry, OptionQuote, SegmentWriter, Trade,
    WriterBuffers, WriterConfig,
};
use floxlog_result::*;

/// Opaque writer handle (see `floxlog_writer_new`). Not thread-safe: use
/// one handle from one thread at a time.
pub struct floxlog_writer {
    _private: [u8; 0],
}

const WRITER_MAGIC: u64 = 0x5254_5257_584f_4c46; // "FLOXWRTR"

/// What a `floxlog_writer *` points at. repr(C) keeps `magic` first, so a
/// handle of the wrong type is recognised.
#[repr(C)]
pub(crate) struct WriterHandle {
    magic: u64,
    /// Borrows the caller's buffers and `slots`; dropped before `slots`.
    w: ManuallyDrop<SegmentWriter<WriterBuffers<'static>>>,
    /// LZ4 block slots (the core's type has no C layout, so the handle owns
    /// them: allocated once here, never per event). Null when unused.
    slots: *mut [BlockSlot],
}

impl Drop for WriterHandle {
    fn drop(&mut self) {
        // SAFETY: `w` is dropped exactly once, here, before the slots it
        // borrows are freed.
        unsafe { ManuallyDrop::drop(&mut self.w) };
        if !self.slots.is_null() {
            // SAFETY: `slots` came from Box::into_raw in writer_new and
            // nothing borrows it any more.
            drop(unsafe { Box::from_raw(self.slots) });
        }
    }
}

// SAFETY: WriterHandle is repr(C) with the u64 magic first.
unsafe impl Opaque for floxlog_writer {
    type Handle = WriterHandle;
    const MAGIC: u64 = WRITER_MAGIC;
    const NULL: &'static str = "w";
    const WRONG: &'static str = "not a floxlog_writer handle";
}

/// Fills `*cfg` with the defaults: uncompressed, index every 1000 events,
/// exchange 0, reference profile, created_ns 0.
///
/// # Safety
/// `cfg` must point at writable memory for a `floxlog_writer_config`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_config_default(
    cfg: *mut floxlog_writer_config,
) -> floxlog_result {
    // SAFETY: forwarded caller promise.
    unsafe {
        output(core::ptr::null_mut(), cfg, "cfg", || {
            Ok((&WriterConfig::default()).into())
        })
    }
}

/// Creates a writer over the caller's buffers and puts the 64-byte
/// placeholder header into `bufs->out`. On success `*writer_out` receives
/// the handle, which the caller releases with `floxlog_writer_free`.
///
/// Ownership: `cfg` and `bufs` are read during the call only. The buffers
/// `bufs` describes stay borrowed by the handle until it is freed (see
/// `floxlog_writer_buffers`). For LZ4 the handle also allocates
/// `index_interval` block slots of 16 bytes, once.
///
/// Errors: `FLOXLOG_NULL_POINTER`; `FLOXLOG_INVALID_INPUT` for a bad enum
/// value, an interval of 0, or overlapping buffers; `FLOXLOG_MISALIGNED`
/// for an index pointer not 8-byte aligned; `FLOXLOG_BUFFER_TOO_SMALL` for
/// an output buffer under 64 bytes; `FLOXLOG_LZ4_UNSUPPORTED`.
///
/// # Safety
/// `cfg`, `bufs` and `writer_out` must be valid pointers (or NULL, which is
/// reported); the buffers must be valid for their lengths for the handle's
/// lifetime; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_new(
    cfg: *const floxlog_writer_config,
    bufs: *const floxlog_writer_buffers,
    writer_out: *mut *mut floxlog_writer,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(writer_out, "writer_out")?;
        // SAFETY: checked by in_ref; the caller promises the contents.
        let c = unsafe { in_ref(cfg, "cfg") }?;
        // SAFETY: as above.
        let b = unsafe { in_ref(bufs, "bufs") }?;
        let cfg = config_in(c)?;
        if b.out.is_null() {
            return Err(Fail::null("bufs->out"));
        }
        let out = (b.out as usize, b.out_len);
        let block = (b.block as usize, b.block_len);
        let index_bytes = b.index_capacity.saturating_mul(FLOXLOG_INDEX_ENTRY_LEN);
        let index = (b.index as usize, index_bytes);
        if overlap(out, block) || overlap(out, index) || overlap(block, index) {
            return Err(Fail::invalid("writer buffers overlap"));
        }
        // Everything that can fail is checked before the buffers are
        // touched, so a failed call leaves them as they were.
        if b.out_len < FLOXLOG_SEGMENT_HEADER_LEN {
            return Err(Fail::too_small(
                FLOXLOG_SEGMENT_HEADER_LEN as u64,
                "output buffer cannot hold the 64-byte segment header",
            ));
        }
        cfg.check()?;
        check_slice(b.block, b.block_len, "bufs->block")?;
        check_slice(b.index, b.index_capacity, "bufs->index")?;
        // SAFETY: the caller promises each buffer for the handle's
        // lifetime; the helpers check NULL, alignment and length.
        let out = unsafe { bytes_mut(b.out, b.out_len, "bufs->out") }?;
        // SAFETY: as above.
        let block = unsafe { bytes_mut(b.block, b.block_len, "bufs->block") }?;
        // SAFETY: as above; layouts of floxlog_index_entry and IndexEntry
        // are asserted equal in types.rs.
        let index_raw =
            unsafe { slice_uninit(b.index as *mut IndexEntry, b.index_capacity, "bufs->index") }?;
        for e in index_raw.iter_mut() {
            e.write(IndexEntry::default());
        }
        // SAFETY: every element was just initialised.
        let index: &'static mut [IndexEntry] = unsafe {
            core::slice::from_raw_parts_mut(
                index_raw.as_mut_ptr() as *mut IndexEntry,
                index_raw.len(),
            )
        };
        let (slots_ptr, slots): (*mut [BlockSlot], &'static mut [BlockSlot]) =
            if cfg.compression == Compression::Lz4 {
                let raw = Box::into_raw(
                    vec![BlockSlot::EMPTY; cfg.index_interval as usize].into_boxed_slice(),
                );
                // SAFETY: freshly leaked; freed only by WriterHandle::drop
                // (or below on error) after the borrow ends.
                (raw, unsafe { &mut *raw })
            } else {
                (
                    core::ptr::slice_from_raw_parts_mut(core::ptr::null_mut(), 0),
                    &mut [],
                )
            };
        let w = match SegmentWriter::new(
            cfg,
            WriterBuffers {
                out,
                block,
                slots,
                index,
            },
        ) {
            Ok(w) => w,
            Err(e) => {
                if !slots_ptr.is_null() {
                    // SAFETY: from Box::into_raw above; the failed writer
                    // (and its borrow) is gone.
                    drop(unsafe { Box::from_raw(slots_ptr) });
                }
                return Err(e.into());
            }
        };
        let h = WriterHandle {
            magic: WRITER_MAGIC,
            w: ManuallyDrop::new(w),
            slots: slots_ptr,
        };
        // SAFETY: checked by check_out above.
        unsafe { put(writer_out, into_c(h)) };
        Ok(FLOXLOG_OK)
    })
}

/// Releases a writer handle. The caller's buffers are not touched (pending
/// bytes you have not drained stay in `out`). NULL is a no-op. Do not use
/// the handle afterwards.
///
/// # Safety
/// `w` must be NULL or a live handle from `floxlog_writer_new`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_free(w: *mut floxlog_writer) {
    // SAFETY: forwarded caller promise.
    unsafe { free(w) }
}

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

/// The reference's rotation test: sets `*exceeds` to whether appending
/// `event` would take an uncompressed segment past `max_segment_bytes`
/// (`segment bytes + 12 + payload > max`). Always false for LZ4 and for a
/// segment with no events yet. Finish the segment and start a new writer
/// when it is true.
///
/// # Safety
/// `w` must be a live handle; `event` valid; `exceeds` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_would_exceed(
    w: *mut floxlog_writer,
    event: *const floxlog_event,
    max_segment_bytes: u64,
    exceeds: *mut bool,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        output(err, exceeds, "exceeds", || {
            let (h, ev) = (handle(w)?, event_ptr_in(event)?);
            Ok(h.w.would_exceed(&ev, max_segment_bytes))
        })
    }
}

/// LZ4 only: emits the staged events as a block now, before it holds
/// `index_interval` events (valid, but no longer the reference's block
/// grouping). No-op when nothing is staged or uncompressed.
///
/// # Safety
/// `w` must be a live handle; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_flush_block(
    w: *mut floxlog_writer,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        // SAFETY: forwarded caller promise.
        unsafe { handle(w) }?.w.flush_block()?;
        Ok(FLOXLOG_OK)
    })
}

/// Points `*data` at the encoded bytes not yet drained (inside the
/// caller's `out` buffer) and sets `*len`. The bytes stay valid until the
/// next call that changes the writer (append, consume, drain, finish,
/// free). The first 64 bytes of a segment are a placeholder header: put
/// the header from `floxlog_writer_finish` at offset 0 when done.
///
/// # Safety
/// `w` must be a live handle; `data` and `len` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_pending(
    w: *mut floxlog_writer,
    data: *mut *const u8,
    len: *mut usize,
) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        check_out(data, "data")?;
        check_out(len, "len")?;
        // SAFETY: forwarded caller promise.
        let p = unsafe { handle(w) }?.w.pending();
        // SAFETY: both checked above.
        unsafe {
            put(data, p.as_ptr());
            put(len, p.len());
        }
        Ok(FLOXLOG_OK)
    })
}

/// Marks the first `n` pending bytes as taken (written out by the caller);
/// the rest move to the front of `out`. `FLOXLOG_INVALID_INPUT` (nothing
/// consumed) if `n` exceeds the pending length.
///
/// # Safety
/// `w` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_consume(
    w: *mut floxlog_writer,
    n: usize,
) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        if n > h.w.pending().len() {
            return Err(Fail::invalid("consume: n exceeds the pending bytes"));
        }
        h.w.consume(n);
        Ok(FLOXLOG_OK)
    })
}

/// Copies up to `cap` pending bytes into `dst` (caller-owned) and consumes
/// them; `*written` receives how many (0 when nothing is pending).
///
/// # Safety
/// `w` must be a live handle; `dst` valid for `cap` bytes (NULL only with
/// 0); `written` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_drain(
    w: *mut floxlog_writer,
    dst: *mut u8,
    cap: usize,
    written: *mut usize,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        output(core::ptr::null_mut(), written, "written", || {
            let h = handle(w)?;
            check_slice(dst, cap, "destination")?;
            let n = h.w.pending().len().min(cap);
            copy_out(dst, &h.w.pending()[..n], "destination")?;
            h.w.consume(n);
            Ok(n)
        })
    }
}

/// The body of the functions that copy a 64-byte segment header out:
/// checks `header_out` for 64 bytes, then copies what `f` makes.
///
/// # Safety
/// `w` must be NULL or a live handle; `header_out` valid for `header_len`
/// writable bytes.
unsafe fn header_to(
    w: *mut floxlog_writer,
    header_out: *mut u8,
    header_len: usize,
    err: *mut floxlog_error,
    f: impl FnOnce(&mut WriterHandle) -> Result<[u8; 64], Fail>,
) -> floxlog_result {
    boundary(err, || {
        if header_out.is_null() {
            return Err(Fail::null("header_out"));
        }
        if header_len < FLOXLOG_SEGMENT_HEADER_LEN {
            return Err(Fail::too_small(64, "header_out must hold 64 bytes"));
        }
        // SAFETY: forwarded caller promise.
        let header = f(unsafe { handle(w) }?)?;
        // SAFETY: the caller promises `header_len` >= 64 writable bytes.
        unsafe { copy_out(header_out, &header, "header_out") }?;
        Ok(FLOXLOG_OK)
    })
}

/// Ends the segment: emits the last LZ4 block, appends the index trailer
/// to the pending bytes, and copies the final 64-byte header into
/// `header_out` (caller-owned, at least 64 bytes), which belongs at offset
/// 0 of the segment in place of the placeholder.
///
/// On `FLOXLOG_BUFFER_TOO_SMALL` nothing is lost: drain and call again.
/// Afterwards the pending bytes (ending with the trailer) can still be
/// drained; appends fail with `FLOXLOG_FINISHED`.
///
/// # Safety
/// `w` must be a live handle; `header_out` valid for `header_len` bytes;
/// `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_finish(
    w: *mut floxlog_writer,
    header_out: *mut u8,
    header_len: usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { header_to(w, header_out, header_len, err, |h| Ok(h.w.finish()?)) }
}

/// Copies into `header_out` (at least 64 bytes) the header a reader would
/// find at offset 0 if the writer stopped now, as the reference leaves it:
/// uncompressed, the placeholder; LZ4, the counts as of the last emitted
/// block. Recorders that rewrite the header as they go write this.
///
/// # Safety
/// `w` must be a live handle; `header_out` valid for `header_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_current_header(
    w: *mut floxlog_writer,
    header_out: *mut u8,
    header_len: usize,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        header_to(w, header_out, header_len, core::ptr::null_mut(), |h| {
            Ok(h.w.current_header().to_bytes())
        })
    }
}

/// Fills `*stats` with the writer's counts.
///
/// # Safety
/// `w` must be a live handle; `stats` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_get_stats(
    w: *mut floxlog_writer,
    stats: *mut floxlog_writer_stats,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        get(w, stats, "stats", |h| {
            let s = h.w.stats();
            floxlog_writer_stats {
                segment_bytes: s.segment_bytes,
                pending_offset: h.w.pending_offset(),
                events: s.events,
                events_emitted: s.events_emitted,
                index_entries: s.index_entries,
                staged_bytes: s.staged_bytes,
                pending_bytes: h.w.pending().len(),
                finished: h.w.is_finished() as u8,
            }
        })
    }
}
