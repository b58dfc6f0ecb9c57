//! `floxlog_writer`: the core's streaming segment writer over caller
//! buffers.

use crate::boundary::{
    boundary, bytes_mut, check_out, check_slice, copy_out, in_ref, output, overlap, put,
    slice_uninit,
};
use crate::codec::event::event_ptr_in;
use crate::codec::records::config_in;
use crate::codec::types::same_layout;
use crate::codec::types::*;
use crate::consts::*;
use crate::error::{floxlog_error, floxlog_result, Fail};
use crate::handle::{get, handle, opaque, storage_for};
use core::ffi::c_void;
use core::mem::MaybeUninit;
use core::ptr::addr_of_mut;
use floxlog_core::{
    BlockSlot, Compression, IndexEntry, SegmentWriter, WriterBuffers, WriterConfig,
};
use floxlog_result::*;

// The appends.
mod append;
pub use append::*;

/// Opaque writer handle (see `floxlog_writer_init`). Not thread-safe: use
/// one handle from one thread at a time.
pub struct floxlog_writer {
    _private: [u8; 0],
}

const WRITER_MAGIC: u64 = 0x5254_5257_584f_4c46; // "FLOXWRTR"

/// Bytes of caller storage a `floxlog_writer` needs
/// (`floxlog_writer_init`), on any target; align it to
/// `FLOXLOG_STORAGE_ALIGN`. Nearly all of it is the set of distinct symbol
/// ids the spec profile counts.
pub const FLOXLOG_WRITER_STORAGE_BYTES: usize = 17_408;

/// What a `floxlog_writer *` points at. repr(C) keeps `magic` first, so a
/// handle of the wrong type is recognised.
#[repr(C)]
pub(crate) struct WriterHandle {
    magic: u64,
    /// Made by `floxlog_writer_new` (else it lives in caller storage).
    boxed: bool,
    /// Borrows the caller's buffers (the LZ4 block slots among them).
    w: Writer,
}

/// The core's writer over the caller's buffers.
type Writer = SegmentWriter<WriterBuffers<'static>>;

opaque!(floxlog_writer => WriterHandle, magic WRITER_MAGIC, null "w",
    storage FLOXLOG_WRITER_STORAGE_BYTES);

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

/// Bytes of one LZ4 block slot (a staged frame's time, offset and length)
/// and their alignment: `index_interval` of them sit at the front of the
/// block buffer.
pub(crate) const SLOT_LEN: usize = core::mem::size_of::<BlockSlot>();
pub(crate) const SLOT_ALIGN: usize = core::mem::align_of::<BlockSlot>();
const _: () = assert!(SLOT_LEN == 16 && SLOT_ALIGN <= 8);

/// Cuts the caller's LZ4 block buffer into the block slots (at its first
/// `SLOT_ALIGN`-aligned byte) and the frame staging after them.
fn split_block(
    block: &'static mut [u8],
    interval: u16,
) -> Result<(&'static mut [BlockSlot], &'static mut [u8]), Fail> {
    let pad = (block.as_ptr() as usize).wrapping_neg() % SLOT_ALIGN;
    let slots_end = (interval as usize)
        .checked_mul(SLOT_LEN)
        .and_then(|n| n.checked_add(pad))
        .filter(|n| *n <= block.len())
        .ok_or(Fail::too_small(
            (pad + interval as usize * SLOT_LEN) as u64,
            "LZ4 block buffer cannot hold index_interval block slots (floxlog_block_scratch_len)",
        ))?;
    let (head, staging) = block.split_at_mut(slots_end);
    let raw = &mut head[pad..];
    for b in raw.iter_mut() {
        *b = 0;
    }
    // SAFETY: `raw` is SLOT_ALIGN-aligned (align_offset) and holds
    // `interval` slots; all-zero bytes are a valid BlockSlot (plain
    // integers); the borrow of `raw` moves into the result.
    let slots = unsafe {
        core::slice::from_raw_parts_mut(raw.as_mut_ptr() as *mut BlockSlot, interval as usize)
    };
    Ok((slots, staging))
}

/// Checks the settings and buffers and builds the writer at `at` (the
/// body of `floxlog_writer_init`, and of `floxlog_writer_new` with `std`).
/// Nothing is touched before everything that can fail was checked. The
/// handle is written in place, field by field: built on the stack and
/// moved, its 17 KB would be firmware stack.
///
/// # Safety
/// As `floxlog_writer_init` for `cfg` and `bufs`; `at` must be writable
/// for a `WriterHandle` (it is initialised only on success).
unsafe fn make_writer(
    at: *mut WriterHandle,
    cfg: *const floxlog_writer_config,
    bufs: *const floxlog_writer_buffers,
    boxed: bool,
) -> Result<(), Fail> {
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
    if b.out_len < FLOXLOG_SEGMENT_HEADER_LEN {
        return Err(Fail::too_small(
            FLOXLOG_SEGMENT_HEADER_LEN as u64,
            "output buffer cannot hold the 64-byte segment header",
        ));
    }
    cfg.check()?;
    check_slice(b.block, b.block_len, "bufs->block")?;
    check_slice(b.index, b.index_capacity, "bufs->index")?;
    // SAFETY: the caller promises each buffer for the handle's lifetime;
    // the helpers check NULL, alignment and length.
    let out = unsafe { bytes_mut(b.out, b.out_len, "bufs->out") }?;
    // SAFETY: as above.
    let block = unsafe { bytes_mut(b.block, b.block_len, "bufs->block") }?;
    // The last check (room for the slots) before anything is written.
    let (slots, block) = if cfg.compression == Compression::Lz4 {
        split_block(block, cfg.index_interval)?
    } else {
        (&mut [][..], block)
    };
    // SAFETY: as above; layouts of floxlog_index_entry and IndexEntry
    // are asserted equal in types.rs.
    let index_raw =
        unsafe { slice_uninit(b.index as *mut IndexEntry, b.index_capacity, "bufs->index") }?;
    for e in index_raw.iter_mut() {
        e.write(IndexEntry::default());
    }
    // SAFETY: every element was just initialised.
    let index: &'static mut [IndexEntry] = unsafe {
        core::slice::from_raw_parts_mut(index_raw.as_mut_ptr() as *mut IndexEntry, index_raw.len())
    };
    let bufs = WriterBuffers {
        out,
        block,
        slots,
        index,
    };
    // SAFETY: the caller's promise for `at`; MaybeUninit has the layout
    // of the field and makes no claim about its bytes.
    let slot = unsafe { &mut *(addr_of_mut!((*at).w) as *mut MaybeUninit<Writer>) };
    // Built in place (`new_in`): no copy of the writer on the stack.
    SegmentWriter::new_in(slot, cfg, bufs)?;
    // SAFETY: as above; with `w` written, every field is.
    unsafe {
        addr_of_mut!((*at).boxed).write(boxed);
        addr_of_mut!((*at).magic).write(WRITER_MAGIC);
    }
    Ok(())
}

/// Creates a writer in caller storage over the caller's buffers and puts
/// the 64-byte placeholder header into `bufs->out`. On success
/// `*writer_out` receives the handle (it points into `storage`). The
/// library allocates nothing: this is how firmware and the codec-only
/// library create a writer.
///
/// Ownership: `storage` (`storage_len` bytes, at least
/// `FLOXLOG_WRITER_STORAGE_BYTES`, aligned to `FLOXLOG_STORAGE_ALIGN`)
/// holds the handle until the caller stops using it (there is nothing to
/// release: reuse the storage, or pass the handle to `floxlog_writer_free`
/// in the full library, which only ends it). `cfg` and `bufs` are read
/// during the call only; the buffers `bufs` describes stay borrowed by the
/// handle (see `floxlog_writer_buffers`). For LZ4 the block buffer also
/// holds `index_interval` 16-byte block slots
/// (`floxlog_block_scratch_len`).
///
/// Errors: `FLOXLOG_NULL_POINTER`; `FLOXLOG_INVALID_INPUT` for a bad enum
/// value, an interval of 0, or overlapping buffers; `FLOXLOG_MISALIGNED`
/// for `storage` or an index pointer not 8-byte aligned;
/// `FLOXLOG_BUFFER_TOO_SMALL` for `storage` under the handle's size, an
/// output buffer under 64 bytes, or an LZ4 block buffer without room for
/// the block slots; `FLOXLOG_LZ4_UNSUPPORTED`.
///
/// # Safety
/// `storage` must be writable for `storage_len` bytes and not used by
/// anything else while the handle is; `cfg`, `bufs` and `writer_out` must
/// be valid pointers (or NULL, which is reported); the buffers must be
/// valid for their lengths for the handle's lifetime; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_init(
    storage: *mut c_void,
    storage_len: usize,
    cfg: *const floxlog_writer_config,
    bufs: *const floxlog_writer_buffers,
    writer_out: *mut *mut floxlog_writer,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(writer_out, "writer_out")?;
        let at = storage_for::<WriterHandle>(storage, storage_len)?;
        // SAFETY: forwarded caller promises; `at` was checked and the
        // caller promises the storage.
        unsafe { make_writer(at, cfg, bufs, false) }?;
        // SAFETY: checked by check_out above.
        unsafe { put(writer_out, at as *mut floxlog_writer) };
        Ok(FLOXLOG_OK)
    })
}

/// `floxlog_writer_init` with the handle allocated by the library (full
/// library only): on success `*writer_out` receives a handle the caller
/// releases with `floxlog_writer_free`. Same arguments, ownership and
/// errors otherwise.
///
/// # Safety
/// As `floxlog_writer_init` without the storage.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_new(
    cfg: *const floxlog_writer_config,
    bufs: *const floxlog_writer_buffers,
    writer_out: *mut *mut floxlog_writer,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(writer_out, "writer_out")?;
        let mut b = Box::<WriterHandle>::new_uninit();
        // SAFETY: forwarded caller promises; `b` is writable. On failure
        // it is freed uninitialised (a half-built writer only borrows).
        unsafe { make_writer(b.as_mut_ptr(), cfg, bufs, true) }?;
        // SAFETY: initialised by make_writer's success; released by
        // floxlog_writer_free (handle::free, as a boxed handle).
        let p = Box::into_raw(unsafe { b.assume_init() });
        // SAFETY: checked by check_out above.
        unsafe { put(writer_out, p as *mut floxlog_writer) };
        Ok(FLOXLOG_OK)
    })
}

/// Releases a writer handle (full library only). The caller's buffers are
/// not touched (pending bytes you have not drained stay in `out`). NULL is
/// a no-op. A handle from `floxlog_writer_init` is only ended: its storage
/// stays the caller's. Do not use the handle afterwards.
///
/// # Safety
/// `w` must be NULL or a live handle from `floxlog_writer_new` or
/// `floxlog_writer_init`.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_free(w: *mut floxlog_writer) {
    // SAFETY: forwarded caller promise.
    unsafe { crate::handle::free(w) }
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

// The C structs of the writer's settings, buffers and counts.

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
/// the handle's end (`floxlog_writer_free`, or the last use of a handle in
/// caller storage). They must not overlap. Their initial contents do not
/// matter.
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
    /// LZ4 only: `index_interval` block slots, then staging for one
    /// block's frames and its sorted copy: `floxlog_block_scratch_len(
    /// largest block's frame bytes, index_interval)` bytes (a block of N
    /// trades has N * 60 frame bytes). NULL/0 when uncompressed.
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

/// One index entry (format layout). Also the element type of the writer's
/// index storage.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_index_entry {
    /// Timestamp of the indexed frame (or of the first event handed to the
    /// writer for the indexed block).
    pub timestamp_ns: i64,
    /// Offset of the frame or block header from the segment start.
    pub file_offset: u64,
}
// The writer's index storage is caller memory of floxlog_index_entry,
// handed to the core as `&mut [IndexEntry]` (both repr(C) {i64, u64}):
// checked field by field from the core's list.
floxlog_core::index_entry_fields!(same_layout, floxlog_index_entry, IndexEntry);

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
