//! `floxlog_reader`: a validated segment over a caller buffer (a mapped
//! file) and a cursor that yields events into C structs.

use crate::types::*;
use crate::{
    boundary, bytes_mut, check_out, floxlog_error, floxlog_result, in_ref, put, slice_in, Fail,
};
use floxlog_core::{
    BlockHeader, Book, Error, Event, Index, Position, Reader, Segment, SegmentHeader, MAGIC_BLOCK,
};
use floxlog_result::*;

/// Opaque reader handle (see `floxlog_reader_new`). Not thread-safe: use
/// one handle from one thread at a time (several handles may share the
/// same segment bytes, each with its own scratch).
pub struct floxlog_reader {
    _private: [u8; 0],
}

const READER_MAGIC: u64 = 0x5244_4552_584f_4c46; // "FLOXREDR"

/// A book the reader yielded that did not fit the caller's level scratch,
/// kept so the next call can hand it out. Its levels are views into the
/// segment bytes or the block scratch, which the core only overwrites when
/// it loads the next block, i.e. not before the next `next_event`.
type Pending = Book<'static>;

/// What a `floxlog_reader *` points at; `magic` first (repr(C)) so a
/// handle of the wrong type is recognised.
#[repr(C)]
struct ReaderHandle {
    magic: u64,
    seg: Segment<'static>,
    /// Validated once at open; its errors never affect sequential reading.
    index: Result<Option<Index<'static>>, Error>,
    /// Borrows the caller's segment bytes and block scratch.
    reader: Reader<'static, 'static>,
    pending: Option<Pending>,
    /// An error met inside a batch after some events, returned next.
    deferred: Option<Fail>,
    compressed: bool,
}

impl Drop for ReaderHandle {
    fn drop(&mut self) {
        self.magic = 0;
    }
}

/// # Safety
/// `r` must be NULL or a live handle from `floxlog_reader_new`.
unsafe fn handle<'a>(r: *mut floxlog_reader) -> Result<&'a mut ReaderHandle, Fail> {
    let h = r as *mut ReaderHandle;
    check_out(h, "reader is NULL")?;
    // SAFETY: non-NULL and aligned; the caller promises a live handle.
    let h = unsafe { &mut *h };
    if h.magic != READER_MAGIC {
        return Err(Fail::invalid("not a floxlog_reader handle"));
    }
    Ok(h)
}

/// Fills `*opts` with the defaults: verify CRCs, reject unknown frame
/// types.
///
/// # Safety
/// `opts` must be writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_read_options_default(
    opts: *mut floxlog_read_options,
) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        check_out(opts, "options is NULL")?;
        // SAFETY: checked above.
        unsafe { put(opts, floxlog_read_options::default()) };
        Ok(FLOXLOG_OK)
    })
}

/// Opens a segment: validates its 64-byte header and its index (whose
/// errors are reported by `floxlog_reader_index`, never by reading) and
/// positions the cursor before the first event. On success `*reader_out`
/// receives the handle; release it with `floxlog_reader_free`.
///
/// Ownership: `data` (`len` bytes: a whole segment file, e.g. mapped) and
/// `scratch` are borrowed by the handle until it is freed; they must stay
/// valid and unchanged, and must not overlap. `scratch` receives
/// decompressed LZ4 blocks: `floxlog_segment_scratch_len` bytes (NULL/0 for
/// an uncompressed segment; a block larger than the scratch stops the read
/// with `FLOXLOG_BUFFER_TOO_SMALL`); its initial contents do not matter. `opts` may be
/// NULL (defaults) and is read during the call only.
///
/// Errors: `FLOXLOG_NULL_POINTER`; the header's data error
/// (`FLOXLOG_TRUNCATED`, `FLOXLOG_BAD_MAGIC`, ... at offset 0).
///
/// # Safety
/// `data` must be valid for `len` bytes and `scratch` for `scratch_len`
/// writable bytes for the handle's lifetime; `reader_out` writable; `err`
/// may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_new(
    data: *const u8,
    len: usize,
    opts: *const floxlog_read_options,
    scratch: *mut u8,
    scratch_len: usize,
    reader_out: *mut *mut floxlog_reader,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(reader_out, "reader_out is NULL")?;
        if data.is_null() {
            return Err(Fail::null("segment data is NULL"));
        }
        let opts = if opts.is_null() {
            floxlog_read_options::default()
        } else {
            // SAFETY: checked by in_ref; the caller promises a value.
            *unsafe { in_ref(opts, "options") }?
        };
        let (d, s) = (data as usize, scratch as usize);
        if len > 0
            && scratch_len > 0
            && d < s.saturating_add(scratch_len)
            && s < d.saturating_add(len)
        {
            return Err(Fail::invalid("segment data and scratch overlap"));
        }
        // SAFETY: the caller promises both buffers for the handle's
        // lifetime; the helpers check NULL, alignment and length.
        let data: &'static [u8] = unsafe { slice_in(data, len, "segment data") }?;
        if scratch_len > 0 {
            check_out(scratch, "scratch is NULL")?;
        }
        let seg = Segment::parse(data)?;
        // SAFETY: as above.
        let scratch: &'static mut [u8] = unsafe { bytes_mut(scratch, scratch_len, "scratch") }?;
        let index = seg.index();
        let reader = seg.reader(opts.core(), scratch);
        let h = Box::new(ReaderHandle {
            magic: READER_MAGIC,
            seg,
            index,
            reader,
            pending: None,
            deferred: None,
            compressed: seg.is_compressed(),
        });
        // SAFETY: checked above.
        unsafe { put(reader_out, Box::into_raw(h) as *mut floxlog_reader) };
        Ok(FLOXLOG_OK)
    })
}

/// Releases a reader handle; the caller's buffers are not touched. NULL is
/// a no-op. Pointers from earlier events into the scratch stay pointing at
/// the caller's memory.
///
/// # Safety
/// `r` must be NULL or a live handle from `floxlog_reader_new`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_free(r: *mut floxlog_reader) {
    let _ = boundary(core::ptr::null_mut(), || {
        if r.is_null() {
            return Ok(FLOXLOG_OK);
        }
        // SAFETY: validates the magic before taking ownership.
        unsafe { handle(r) }?;
        // SAFETY: a live handle from Box::into_raw in floxlog_reader_new.
        drop(unsafe { Box::from_raw(r as *mut ReaderHandle) });
        Ok(FLOXLOG_OK)
    });
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
        check_out(event, "event is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        // SAFETY: the caller promises `level_cap` writable levels.
        let mut ls = unsafe { LevelScratch::new(levels, level_cap) }?;
        // SAFETY: `event` checked above.
        match unsafe { read_one(h, event, &mut ls) }? {
            Step::Wrote { .. } => Ok(FLOXLOG_OK),
            Step::End => Ok(FLOXLOG_END),
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
        check_out(count, "count is NULL")?;
        if cap == 0 {
            return Err(Fail::invalid("batch capacity is 0"));
        }
        // SAFETY: the caller promises `cap` writable events.
        let out = unsafe { crate::slice_uninit(events, cap, "events") }?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        // SAFETY: the caller promises `level_cap` writable levels.
        let mut ls = unsafe { LevelScratch::new(levels, level_cap) }?;
        let base = out.as_mut_ptr() as *mut floxlog_event;
        // The first event through `read_one`: a deferred error or a
        // held-back book comes first, and errors are returned as they are.
        // SAFETY: `base` is the caller's first event (cap >= 1).
        let mut used = match unsafe { read_one(h, base, &mut ls.rest(0)) }? {
            Step::End => return Ok(FLOXLOG_END),
            Step::Wrote { levels, pool } => {
                n = 1;
                if pool && h.compressed {
                    return Ok(FLOXLOG_OK);
                }
                levels
            }
        };
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
            match unsafe { write_event(ev, slot, &mut ls.rest(used)) } {
                Ok(()) => {
                    n += 1;
                    match ev {
                        Event::Book(b) => used += b.bids.len() + b.asks.len(),
                        Event::PoolState(_) if h.compressed => break,
                        _ => {}
                    }
                }
                Err(_) => {
                    // A book too big for the space left: first in the
                    // next batch.
                    if let Event::Book(b) = ev {
                        // SAFETY: as in `read_one`.
                        h.pending =
                            Some(unsafe { core::mem::transmute::<Book<'_>, Book<'static>>(*b) });
                    }
                    break;
                }
            }
        }
        Ok(FLOXLOG_OK)
    });
    if !count.is_null() && count.is_aligned() {
        // SAFETY: checked non-NULL and aligned; the caller's promise.
        unsafe { count.write(if rc == FLOXLOG_OK { n } else { 0 }) };
    }
    rc
}

/// What `read_one` did.
enum Step {
    /// Wrote an event that used `levels` level slots; `pool` if it is a
    /// pool state.
    Wrote { levels: usize, pool: bool },
    /// No more events.
    End,
}

/// Reads one event into `*out`: a deferred error first, then a held-back
/// book, then the next event.
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
) -> Result<Step, Fail> {
    if let Some(f) = h.deferred.take() {
        return Err(f);
    }
    if let Some(book) = h.pending {
        // SAFETY: the caller's promise; the book's views are still valid
        // (see Pending).
        unsafe { write_event(&Event::Book(book), out, ls) }.map_err(levels_short)?;
        h.pending = None;
        return Ok(Step::Wrote {
            levels: book.bids.len() + book.asks.len(),
            pool: false,
        });
    }
    let next = h.reader.next_event();
    let ev = match &next {
        Ok(Some(ev)) => ev,
        Ok(None) => return Ok(Step::End),
        Err(e) => return Err((*e).into()),
    };
    if let Event::Trade(t) = ev {
        // SAFETY: the caller's promise.
        unsafe { write_trade(t, out) };
        return Ok(Step::Wrote {
            levels: 0,
            pool: false,
        });
    }
    // SAFETY: the caller's promise.
    match unsafe { write_event(ev, out, ls) } {
        Ok(()) => Ok(match ev {
            Event::Book(b) => Step::Wrote {
                levels: b.bids.len() + b.asks.len(),
                pool: false,
            },
            Event::PoolState(_) => Step::Wrote {
                levels: 0,
                pool: true,
            },
            _ => Step::Wrote {
                levels: 0,
                pool: false,
            },
        }),
        Err(need) => {
            if let Event::Book(b) = ev {
                // SAFETY: only the lifetime changes; the views stay valid
                // until the reader moves on (see Pending), and `seek` and
                // `free` drop the pending book first.
                h.pending = Some(unsafe { core::mem::transmute::<Book<'_>, Book<'static>>(*b) });
            }
            Err(levels_short(need))
        }
    }
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
    boundary(core::ptr::null_mut(), || {
        check_out(pos, "pos is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        let p: Position = h.reader.position();
        let v = floxlog_position {
            offset: p.offset,
            in_block: p.in_block.unwrap_or(0),
            has_in_block: p.in_block.is_some() as u8,
        };
        // SAFETY: checked above.
        unsafe { put(pos, v) };
        Ok(FLOXLOG_OK)
    })
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
    boundary(core::ptr::null_mut(), || {
        check_out(offset, "offset is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        // SAFETY: checked above.
        unsafe { put(offset, h.reader.next_offset()) };
        Ok(FLOXLOG_OK)
    })
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
    boundary(core::ptr::null_mut(), || {
        check_out(count, "count is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        // SAFETY: checked above.
        unsafe { put(count, h.reader.events_read()) };
        Ok(FLOXLOG_OK)
    })
}

/// Repositions the cursor before the first event with
/// `exchange_ts_ns >= ts`: from the index entry the index picks (or the
/// first frame if the index is absent, damaged, or every entry is later),
/// skipping earlier events as they are read. Clears a previous error and a
/// held-back event. On unsorted segments this is a starting hint.
///
/// # Safety
/// `r` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_seek(r: *mut floxlog_reader, ts: i64) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        let ix = h.index.as_ref().ok().and_then(|o| o.as_ref());
        h.reader.seek(ix, ts);
        h.pending = None;
        h.deferred = None;
        Ok(FLOXLOG_OK)
    })
}

/// Sets `*header` to the segment's validated header.
///
/// # Safety
/// `r` must be a live handle; `header` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_header(
    r: *mut floxlog_reader,
    header: *mut floxlog_segment_header,
) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        check_out(header, "header is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        // SAFETY: checked above.
        unsafe { put(header, h.seg.header().into()) };
        Ok(FLOXLOG_OK)
    })
}

/// Inspects the index trailer: on `FLOXLOG_OK` fills `*header` and
/// `*entry_count`; `FLOXLOG_NO_INDEX` when the HasIndex flag is clear;
/// `FLOXLOG_BAD_INDEX` or `FLOXLOG_INDEX_CRC_MISMATCH` (offset: the index
/// offset) when the index is damaged (sequential reading is unaffected).
///
/// # Safety
/// `r` must be a live handle; `header` and `entry_count` writable; `err`
/// may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_index(
    r: *mut floxlog_reader,
    header: *mut floxlog_index_header,
    entry_count: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(header, "header is NULL")?;
        check_out(entry_count, "entry_count is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        match &h.index {
            Ok(Some(ix)) => {
                // SAFETY: both checked above.
                unsafe {
                    put(header, ix.header().into());
                    put(entry_count, ix.len());
                }
                Ok(FLOXLOG_OK)
            }
            Ok(None) => Ok(FLOXLOG_NO_INDEX),
            Err(e) => Err((*e).into()),
        }
    })
}

/// Sets `*entry` to index entry `i`: `FLOXLOG_OK`, `FLOXLOG_END` past the
/// last entry, `FLOXLOG_NO_INDEX`, or the index's error.
///
/// # Safety
/// `r` must be a live handle; `entry` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_index_entry(
    r: *mut floxlog_reader,
    i: usize,
    entry: *mut floxlog_index_entry,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(entry, "entry is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        match &h.index {
            Ok(Some(ix)) => match ix.get(i) {
                Some(e) => {
                    // SAFETY: checked above.
                    unsafe { put(entry, e.into()) };
                    Ok(FLOXLOG_OK)
                }
                None => Ok(FLOXLOG_END),
            },
            Ok(None) => Ok(FLOXLOG_NO_INDEX),
            Err(e) => Err((*e).into()),
        }
    })
}

/// Sets `*entry` to the index entry a seek to `ts` starts from (the
/// largest timestamp `<= ts`, first of a run of equal ones):
/// `FLOXLOG_OK`; `FLOXLOG_END` when every entry is later (start at the
/// first frame); `FLOXLOG_NO_INDEX`; or the index's error.
///
/// # Safety
/// `r` must be a live handle; `entry` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_index_seek(
    r: *mut floxlog_reader,
    ts: i64,
    entry: *mut floxlog_index_entry,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(entry, "entry is NULL")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        match &h.index {
            Ok(Some(ix)) => match ix.seek(ts) {
                Some(e) => {
                    // SAFETY: checked above.
                    unsafe { put(entry, e.into()) };
                    Ok(FLOXLOG_OK)
                }
                None => Ok(FLOXLOG_END),
            },
            Ok(None) => Ok(FLOXLOG_NO_INDEX),
            Err(e) => Err((*e).into()),
        }
    })
}

/// Largest decompressed block `floxlog_segment_scratch_len` asks for
/// (256 MiB; the reference's own limit is 100 MiB).
pub const FLOXLOG_MAX_BLOCK_BYTES: usize = 256 << 20;

/// LZ4 cannot expand data by more than this factor, so a block claiming
/// more is damaged (and will fail to decompress anyway).
const LZ4_MAX_RATIO: u64 = 256;

/// Sets `*needed` to the block scratch a reader of this segment needs: the
/// largest plausible `original_size` among its block headers (0 for an
/// uncompressed segment), capped at `FLOXLOG_MAX_BLOCK_BYTES`, so that a
/// damaged header never asks for gigabytes. Walks block headers without
/// decompressing. `data` is read during the call only.
///
/// Errors: the segment header's data error.
///
/// # Safety
/// `data` valid for `len` bytes; `needed` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_segment_scratch_len(
    data: *const u8,
    len: usize,
    needed: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(needed, "needed is NULL")?;
        if data.is_null() {
            return Err(Fail::null("segment data is NULL"));
        }
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_in(data, len, "segment data") }?;
        let seg = Segment::parse(data)?;
        let mut need = 0usize;
        if seg.is_compressed() {
            let end = seg.frames_end() as usize;
            let mut pos = SegmentHeader::LEN;
            while pos < end {
                let Some(h) = BlockHeader::parse(&data[pos..end]) else {
                    break;
                };
                if h.magic != MAGIC_BLOCK {
                    break;
                }
                let plausible = (h.compressed_size as u64 * LZ4_MAX_RATIO + 64)
                    .min(FLOXLOG_MAX_BLOCK_BYTES as u64);
                need = need.max((h.original_size as u64).min(plausible) as usize);
                pos = pos.saturating_add(BlockHeader::LEN + h.compressed_size as usize);
            }
        }
        // SAFETY: checked above.
        unsafe { put(needed, need) };
        Ok(FLOXLOG_OK)
    })
}

/// Decodes and validates a segment header from the first 64 bytes of
/// `data` (magic, version, flags, reserved bytes, codec; every error at
/// offset 0) into `*header`. `data` is read during the call only.
///
/// # Safety
/// `data` valid for `len` bytes; `header` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_segment_header_parse(
    data: *const u8,
    len: usize,
    header: *mut floxlog_segment_header,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(header, "header is NULL")?;
        if data.is_null() {
            return Err(Fail::null("data is NULL"));
        }
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_in(data, len, "data") }?;
        let h = SegmentHeader::parse(data)?;
        // SAFETY: checked above.
        unsafe { put(header, (&h).into()) };
        Ok(FLOXLOG_OK)
    })
}
