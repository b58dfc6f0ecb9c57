//! `floxlog_writer`: the core's streaming segment writer over caller
//! buffers.

use crate::types::*;
use crate::{
    boundary, bytes_mut, check_out, floxlog_error, floxlog_result, in_ref, put, slice_uninit, Fail,
};
use core::mem::ManuallyDrop;
use floxlog_core::{
    BlockSlot, BookKind, Compression, Event, IndexEntry, Profile, SegmentWriter, WriterBuffers,
    WriterConfig,
};
use floxlog_result::*;

/// Opaque writer handle (see `floxlog_writer_new`). Not thread-safe: use
/// one handle from one thread at a time.
pub struct floxlog_writer {
    _private: [u8; 0],
}

/// Writer settings. Get the defaults with `floxlog_writer_config_default`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct floxlog_writer_config {
    /// Wall-clock ns stamped as the header's `created_ns` (the library has
    /// no clock; pass `clock_gettime(CLOCK_REALTIME)` or a fixed value).
    pub created_ns: i64,
    /// Events between index entries (uncompressed) or events per LZ4 block.
    /// At least 1; default 1000.
    pub index_interval: u16,
    /// `FLOXLOG_COMPRESSION_NONE` (default) or `FLOXLOG_COMPRESSION_LZ4`.
    pub compression: u8,
    /// Non-zero: write the sparse index trailer (default 1).
    pub create_index: u8,
    /// Exchange tag of the segment header (default 0).
    pub exchange_id: u8,
    /// `FLOXLOG_PROFILE_REFERENCE` (default) or `FLOXLOG_PROFILE_SPEC`.
    pub profile: u8,
}

/// The caller's buffers for a writer. They are borrowed, not copied: they
/// must stay valid, and must not be touched by the caller, until
/// `floxlog_writer_free`. They must not overlap. Their initial contents do
/// not matter.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_writer_buffers {
    /// Encoded segment bytes accumulate here until drained (required).
    /// At least 64 bytes (the placeholder header). Each uncompressed event
    /// needs 12 + payload bytes free (a trade frame is 60), each LZ4 block
    /// `floxlog_lz4_block_len_max(block bytes)`, the index trailer
    /// `floxlog_index_trailer_len(entries)`. When it is full, appends fail
    /// with `FLOXLOG_BUFFER_TOO_SMALL` until you drain.
    pub out: *mut u8,
    /// Bytes at `out`.
    pub out_len: usize,
    /// LZ4 only: staging for one block's frames and its sorted copy,
    /// `floxlog_block_scratch_len(largest block's frame bytes)` bytes
    /// (a block of N trades has N * 60 frame bytes). NULL/0 when
    /// uncompressed.
    pub block: *mut u8,
    /// Bytes at `block`.
    pub block_len: usize,
    /// Index entry storage (8-byte aligned):
    /// `floxlog_index_entries_needed(events, index_interval)` entries for
    /// an uncompressed segment, one per block for LZ4. NULL/0 when
    /// `create_index` is 0. When full, appends fail with
    /// `FLOXLOG_INDEX_FULL`.
    pub index: *mut floxlog_index_entry,
    /// Entries at `index`.
    pub index_capacity: usize,
}

/// Counts of what a writer has accepted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_writer_stats {
    /// Segment bytes produced so far (header, frames or blocks; the
    /// trailer once finished). What rotation compares with a size limit.
    pub segment_bytes: u64,
    /// Segment offset of the first byte still pending in `out`.
    pub pending_offset: u64,
    /// Events accepted (including those staged in an unfinished LZ4 block).
    pub events: u32,
    /// Events in blocks already emitted (equals `events` uncompressed).
    pub events_emitted: u32,
    /// Index entries recorded.
    pub index_entries: usize,
    /// Bytes staged for the next LZ4 block.
    pub staged_bytes: usize,
    /// Bytes waiting in `out` to be drained.
    pub pending_bytes: usize,
    /// 1 once `floxlog_writer_finish` has succeeded.
    pub finished: u8,
}

const WRITER_MAGIC: u64 = 0x5254_5257_584f_4c46; // "FLOXWRTR"

/// What a `floxlog_writer *` points at. repr(C) keeps `magic` first, so a
/// handle of the wrong type is recognised.
#[repr(C)]
struct WriterHandle {
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
        self.magic = 0;
    }
}

/// The handle behind a caller pointer.
///
/// # Safety
/// `w` must be NULL or a pointer returned by `floxlog_writer_new` and not
/// yet freed.
unsafe fn handle<'a>(w: *mut floxlog_writer) -> Result<&'a mut WriterHandle, Fail> {
    let h = w as *mut WriterHandle;
    check_out(h, "writer is NULL")?;
    // SAFETY: non-NULL and aligned; the caller promises a live handle.
    let h = unsafe { &mut *h };
    if h.magic != WRITER_MAGIC {
        return Err(Fail::invalid("not a floxlog_writer handle"));
    }
    Ok(h)
}

fn config_in(c: &floxlog_writer_config) -> Result<WriterConfig, Fail> {
    let compression = match c.compression {
        FLOXLOG_COMPRESSION_NONE => Compression::None,
        FLOXLOG_COMPRESSION_LZ4 => Compression::Lz4,
        _ => {
            return Err(Fail::invalid(
                "compression is not a FLOXLOG_COMPRESSION_* value",
            ))
        }
    };
    let profile = match c.profile {
        FLOXLOG_PROFILE_REFERENCE => Profile::Reference,
        FLOXLOG_PROFILE_SPEC => Profile::Spec,
        _ => return Err(Fail::invalid("profile is not a FLOXLOG_PROFILE_* value")),
    };
    Ok(WriterConfig {
        compression,
        create_index: c.create_index != 0,
        index_interval: c.index_interval,
        exchange_id: c.exchange_id,
        created_ns: c.created_ns,
        profile,
    })
}

/// Whether two non-empty byte ranges intersect.
fn overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.1 > 0 && b.1 > 0 && a.0 < b.0.saturating_add(b.1) && b.0 < a.0.saturating_add(a.1)
}

/// Checks a caller buffer without touching it: NULL only when empty,
/// aligned, length in range.
fn precheck<T>(p: *mut T, len: usize, what: &'static str) -> Result<(), Fail> {
    if len == 0 {
        return Ok(());
    }
    check_out(p, what)?;
    if len
        .checked_mul(core::mem::size_of::<T>())
        .is_none_or(|n| n > isize::MAX as usize)
    {
        return Err(Fail::invalid(what));
    }
    Ok(())
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
    boundary(core::ptr::null_mut(), || {
        check_out(cfg, "config is NULL")?;
        let d = WriterConfig::default();
        // SAFETY: checked above.
        unsafe {
            put(
                cfg,
                floxlog_writer_config {
                    created_ns: d.created_ns,
                    index_interval: d.index_interval,
                    compression: FLOXLOG_COMPRESSION_NONE,
                    create_index: 1,
                    exchange_id: d.exchange_id,
                    profile: FLOXLOG_PROFILE_REFERENCE,
                },
            )
        };
        Ok(FLOXLOG_OK)
    })
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
        check_out(writer_out, "writer_out is NULL")?;
        // SAFETY: checked by in_ref; the caller promises the contents.
        let c = unsafe { in_ref(cfg, "config is NULL") }?;
        // SAFETY: as above.
        let b = unsafe { in_ref(bufs, "buffers is NULL") }?;
        let cfg = config_in(c)?;
        if b.out.is_null() {
            return Err(Fail::null("output buffer is NULL"));
        }
        let ranges = [
            (b.out as usize, b.out_len),
            (b.block as usize, b.block_len),
            (
                b.index as usize,
                b.index_capacity.saturating_mul(FLOXLOG_INDEX_ENTRY_LEN),
            ),
        ];
        if overlap(ranges[0], ranges[1])
            || overlap(ranges[0], ranges[2])
            || overlap(ranges[1], ranges[2])
        {
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
        if cfg.index_interval == 0 {
            return Err(Fail::invalid("index_interval must be at least 1"));
        }
        if cfg.compression == Compression::Lz4 && !floxlog_core::LZ4_SUPPORTED {
            return Err(Fail::new(
                FLOXLOG_LZ4_UNSUPPORTED,
                "this build has no LZ4 support",
            ));
        }
        precheck(b.block, b.block_len, "block scratch")?;
        precheck(b.index, b.index_capacity, "index storage")?;
        // SAFETY: the caller promises each buffer for the handle's
        // lifetime; the helpers check NULL, alignment and length.
        let out = unsafe { bytes_mut(b.out, b.out_len, "output buffer") }?;
        // SAFETY: as above.
        let block = unsafe { bytes_mut(b.block, b.block_len, "block scratch") }?;
        // SAFETY: as above; layouts of floxlog_index_entry and IndexEntry
        // are asserted equal in types.rs.
        let index_raw = unsafe {
            slice_uninit(
                b.index as *mut IndexEntry,
                b.index_capacity,
                "index storage",
            )
        }?;
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
            if cfg.compression == Compression::Lz4 && cfg.index_interval > 0 {
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
        let h = Box::new(WriterHandle {
            magic: WRITER_MAGIC,
            w: ManuallyDrop::new(w),
            slots: slots_ptr,
        });
        // SAFETY: checked by check_out above.
        unsafe { put(writer_out, Box::into_raw(h) as *mut floxlog_writer) };
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
    let _ = boundary(core::ptr::null_mut(), || {
        if w.is_null() {
            return Ok(FLOXLOG_OK);
        }
        // SAFETY: validates the magic before taking ownership.
        unsafe { handle(w) }?;
        // SAFETY: a live handle from Box::into_raw in floxlog_writer_new.
        drop(unsafe { Box::from_raw(w as *mut WriterHandle) });
        Ok(FLOXLOG_OK)
    });
}

#[inline(always)]
fn append_event(h: &mut WriterHandle, ev: &Event<'_>) -> crate::FfiResult {
    h.w.append(ev)?;
    Ok(FLOXLOG_OK)
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
    boundary(err, || {
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, t) = unsafe { (handle(w)?, in_ref(trade, "trade is NULL")?) };
        append_event(h, &Event::Trade(trade_in(t)))
    })
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
    let mut n = 0usize;
    let rc = boundary(err, || {
        check_out(appended, "appended is NULL")?;
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, ts) = unsafe { (handle(w)?, crate::slice_in(trades, count, "trades")?) };
        for t in ts {
            h.w.append(&Event::Trade(trade_in(t)))?;
            n += 1;
        }
        Ok(FLOXLOG_OK)
    });
    // SAFETY: checked non-NULL and aligned; the caller's promise.
    unsafe { put_progress(appended, n) };
    rc
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
    let mut n = 0usize;
    let rc = boundary(err, || {
        check_out(appended, "appended is NULL")?;
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, evs) = unsafe { (handle(w)?, crate::slice_in(events, count, "events")?) };
        for e in evs {
            // SAFETY: the caller promises valid events.
            let ev = unsafe { event_in(e) }?;
            h.w.append(&ev)?;
            n += 1;
        }
        Ok(FLOXLOG_OK)
    });
    // SAFETY: checked non-NULL and aligned; the caller's promise.
    unsafe { put_progress(appended, n) };
    rc
}

/// Writes a batch's progress count when the pointer is usable.
///
/// # Safety
/// If non-NULL and aligned, `p` must be writable.
unsafe fn put_progress(p: *mut usize, n: usize) {
    if !p.is_null() && p.is_aligned() {
        // SAFETY: the caller's promise.
        unsafe { p.write(n) };
    }
}

/// Appends a book snapshot (frame type 2). The levels are read through
/// `book->bids` / `book->asks` during the call only (at most 65535 per
/// side, 8-byte aligned, NULL allowed with a count of 0). Under the
/// reference profile `header_type` must be 0 or 2. Errors as
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
    boundary(err, || {
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, b) = unsafe { (handle(w)?, in_ref(book, "book is NULL")?) };
        // SAFETY: as above, for the level pointers.
        let b = unsafe { book_in(b, BookKind::Snapshot) }?;
        append_event(h, &Event::Book(b))
    })
}

/// Appends a book delta (frame type 3); as
/// `floxlog_writer_append_book_snapshot`, with `header_type` 1 or 3 under
/// the reference profile.
///
/// # Safety
/// As `floxlog_writer_append_book_snapshot`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_append_book_delta(
    w: *mut floxlog_writer,
    book: *const floxlog_book,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, b) = unsafe { (handle(w)?, in_ref(book, "book is NULL")?) };
        // SAFETY: as above, for the level pointers.
        let b = unsafe { book_in(b, BookKind::Delta) }?;
        append_event(h, &Event::Book(b))
    })
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
    boundary(err, || {
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, q) = unsafe { (handle(w)?, in_ref(quote, "option quote is NULL")?) };
        append_event(h, &Event::OptionQuote(option_quote_in(q)))
    })
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
    boundary(err, || {
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, p) = unsafe { (handle(w)?, in_ref(state, "pool state is NULL")?) };
        // SAFETY: as above, for the payload pointer.
        let p = unsafe { pool_state_in(p) }?;
        append_event(h, &Event::PoolState(p))
    })
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
    boundary(err, || {
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, ev) = unsafe { (handle(w)?, event_ptr_in(event)?) };
        append_event(h, &ev)
    })
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
        let (h, p) = unsafe { (handle(w)?, crate::slice_in(payload, len, "payload")?) };
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
    boundary(err, || {
        check_out(exceeds, "exceeds is NULL")?;
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, ev) = unsafe { (handle(w)?, event_ptr_in(event)?) };
        let r = h.w.would_exceed(&ev, max_segment_bytes);
        // SAFETY: checked above.
        unsafe { put(exceeds, r) };
        Ok(FLOXLOG_OK)
    })
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
        let h = unsafe { handle(w) }?;
        h.w.flush_block()?;
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
        check_out(data, "data is NULL")?;
        check_out(len, "len is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        let p = h.w.pending();
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
    boundary(core::ptr::null_mut(), || {
        check_out(written, "written is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        // SAFETY: the caller promises `cap` writable bytes at `dst`.
        let d = unsafe { slice_uninit(dst, cap, "destination") }?;
        let p = h.w.pending();
        let n = p.len().min(d.len());
        for (o, s) in d.iter_mut().zip(&p[..n]) {
            o.write(*s);
        }
        h.w.consume(n);
        // SAFETY: checked above.
        unsafe { put(written, n) };
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
    boundary(err, || {
        if header_out.is_null() {
            return Err(Fail::null("header_out is NULL"));
        }
        if header_len < FLOXLOG_SEGMENT_HEADER_LEN {
            return Err(Fail::too_small(64, "header_out must hold 64 bytes"));
        }
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        let header = h.w.finish()?;
        // SAFETY: the caller promises `header_len` >= 64 writable bytes.
        let out = unsafe { slice_uninit(header_out, 64, "header_out") }?;
        for (o, s) in out.iter_mut().zip(&header) {
            o.write(*s);
        }
        Ok(FLOXLOG_OK)
    })
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
    boundary(core::ptr::null_mut(), || {
        if header_out.is_null() {
            return Err(Fail::null("header_out is NULL"));
        }
        if header_len < FLOXLOG_SEGMENT_HEADER_LEN {
            return Err(Fail::too_small(64, "header_out must hold 64 bytes"));
        }
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        let header = h.w.current_header().to_bytes();
        // SAFETY: the caller promises `header_len` >= 64 writable bytes.
        let out = unsafe { slice_uninit(header_out, 64, "header_out") }?;
        for (o, s) in out.iter_mut().zip(&header) {
            o.write(*s);
        }
        Ok(FLOXLOG_OK)
    })
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
    boundary(core::ptr::null_mut(), || {
        check_out(stats, "stats is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        let s = h.w.stats();
        let v = floxlog_writer_stats {
            segment_bytes: s.segment_bytes,
            pending_offset: h.w.pending_offset(),
            events: s.events,
            events_emitted: s.events_emitted,
            index_entries: s.index_entries,
            staged_bytes: s.staged_bytes,
            pending_bytes: h.w.pending().len(),
            finished: h.w.is_finished() as u8,
        };
        // SAFETY: checked above.
        unsafe { put(stats, v) };
        Ok(FLOXLOG_OK)
    })
}

// ---------------------------------------------------------------------------
// Size helpers (pure; they never fail).

/// Block scratch bytes an LZ4 writer needs for blocks of up to
/// `max_block_bytes` frame bytes (staging plus the sorted copy: twice).
/// Saturates at SIZE_MAX.
#[no_mangle]
pub extern "C" fn floxlog_block_scratch_len(max_block_bytes: usize) -> usize {
    max_block_bytes.saturating_mul(2)
}

/// Output bytes one LZ4 block of `block_bytes` frame bytes may take: its
/// 16-byte header plus the compressor's worst case. Saturates at SIZE_MAX.
#[no_mangle]
pub extern "C" fn floxlog_lz4_block_len_max(block_bytes: usize) -> usize {
    let liblz4 = block_bytes
        .saturating_add(block_bytes / 255)
        .saturating_add(16);
    // lz4_flex's bound (what the writer checks) is unchecked arithmetic:
    // only ask it where it cannot overflow.
    let flex = if block_bytes <= usize::MAX / 4 {
        lz4_flex::block::get_maximum_output_size(block_bytes)
    } else {
        usize::MAX
    };
    liblz4.max(flex).saturating_add(FLOXLOG_BLOCK_HEADER_LEN)
}

/// Index entries an uncompressed segment of `events` events needs with
/// this interval (an interval of 0 counts as 1).
#[no_mangle]
pub extern "C" fn floxlog_index_entries_needed(events: u64, interval: u16) -> u64 {
    floxlog_core::index_entries_needed(events, interval)
}

/// Bytes of an index trailer with `entries` entries (32 + 16 each).
/// Saturates at SIZE_MAX.
#[no_mangle]
pub extern "C" fn floxlog_index_trailer_len(entries: usize) -> usize {
    entries
        .saturating_mul(FLOXLOG_INDEX_ENTRY_LEN)
        .saturating_add(FLOXLOG_INDEX_HEADER_LEN)
}

/// Sets `*len` to the encoded frame length of `event` (12-byte header plus
/// payload: 60 for a trade, 124 for an option quote, 52 + 16 per level for
/// a book, 44 + payload for a pool state).
///
/// # Safety
/// `event` valid (its member's pointers too); `len` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_event_frame_len(
    event: *const floxlog_event,
    len: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(len, "len is NULL")?;
        // SAFETY: forwarded caller promise; pointer checked.
        let ev = unsafe { event_ptr_in(event) }?;
        // SAFETY: checked above.
        unsafe { put(len, FLOXLOG_FRAME_HEADER_LEN + ev.payload_len()) };
        Ok(FLOXLOG_OK)
    })
}
