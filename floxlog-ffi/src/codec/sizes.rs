//! Size helpers: how large the caller's buffers must be. All but
//! `floxlog_event_frame_len` are pure arithmetic that saturates, never
//! fails and never panics (they are outside the unwinding boundary).

use crate::boundary::output;
use crate::codec::event::event_ptr_in;
use crate::codec::types::*;
use crate::codec::writer::floxlog_writer_config;
use crate::consts::*;
use crate::error::{floxlog_error, floxlog_result};
use floxlog_core::block::compress_bound;

/// Bytes of `floxlog_writer_buffers.block` an LZ4 writer needs for blocks
/// of up to `max_block_bytes` frame bytes with this `index_interval`: 16
/// bytes of block slot per event of a block (plus up to 7 to align them),
/// then the frames' staging and their sorted copy (twice
/// `max_block_bytes`). Saturates at SIZE_MAX.
#[no_mangle]
pub extern "C" fn floxlog_block_scratch_len(max_block_bytes: usize, index_interval: u16) -> usize {
    use crate::codec::writer::{SLOT_ALIGN, SLOT_LEN};
    max_block_bytes
        .saturating_mul(2)
        .saturating_add(usize::from(index_interval) * SLOT_LEN + SLOT_ALIGN - 1)
}

/// Output bytes one LZ4 block of `block_bytes` frame bytes may take: its
/// 16-byte header plus the compressor's worst case (the room the writer
/// checks for). SIZE_MAX past UINT32_MAX bytes, which no block can hold
/// (its sizes are 32-bit fields).
#[no_mangle]
pub extern "C" fn floxlog_lz4_block_len_max(block_bytes: usize) -> usize {
    if block_bytes > u32::MAX as usize {
        return usize::MAX;
    }
    compress_bound(block_bytes).saturating_add(FLOXLOG_BLOCK_HEADER_LEN)
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
/// `event` valid (its member's pointers too); `len` writable; `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_event_frame_len(
    event: *const floxlog_event,
    len: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; the event pointer is checked.
    unsafe {
        output(err, len, "len", || {
            Ok(FLOXLOG_FRAME_HEADER_LEN + event_ptr_in(event)?.payload_len())
        })
    }
}

/// The buffer sizes `floxlog_writer_get_buffer_sizes` computes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_writer_buffer_sizes {
    /// Bytes for `floxlog_writer_buffers.out`.
    pub out_len: usize,
    /// Bytes for `floxlog_writer_buffers.block` (0 when uncompressed).
    pub block_len: usize,
    /// Entries for `floxlog_writer_buffers.index` (0 without an index).
    pub index_capacity: usize,
}

/// Sets `*sizes` to buffers that let a codec writer with `cfg` write a
/// whole segment of up to `max_events` events whose frames are at most
/// `max_frame_len` bytes each (`floxlog_event_frame_len`; 60 for trades),
/// when `out` is drained after every append (`floxlog_writer_drain`, or
/// `_pending` + `_consume`): room for the header, one frame (LZ4: one
/// block at its worst-case compressed size) and the index trailer. No
/// guessing about LZ4 bounds: this is the room the writer checks for.
/// Fails with `FLOXLOG_CAPACITY_EXCEEDED` if a size does not fit `size_t`.
///
/// # Safety
/// `cfg` valid; `sizes` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_writer_get_buffer_sizes(
    cfg: *const floxlog_writer_config,
    max_frame_len: usize,
    max_events: u64,
    sizes: *mut floxlog_writer_buffer_sizes,
    err: *mut floxlog_error,
) -> floxlog_result {
    use crate::boundary::in_ref;
    use crate::error::Fail;
    // SAFETY: forwarded caller promises; the pointers are checked.
    unsafe {
        output(err, sizes, "sizes", || {
            let c = crate::codec::records::config_in(in_ref(cfg, "cfg")?)?;
            c.check()?;
            let too_big = || {
                Fail::new(
                    floxlog_result::FLOXLOG_CAPACITY_EXCEEDED,
                    "a buffer size does not fit size_t",
                )
            };
            let interval = u64::from(c.index_interval.max(1));
            let lz4 = c.compression == floxlog_core::Compression::Lz4;
            let entries = match (c.create_index, lz4) {
                (false, _) => 0,
                (true, true) => max_events.div_ceil(interval),
                (true, false) => floxlog_core::index_entries_needed(max_events, c.index_interval),
            };
            let entries = usize::try_from(entries).map_err(|_| too_big())?;
            let (chunk, block_len) = if lz4 {
                let block_bytes = max_frame_len
                    .checked_mul(c.index_interval as usize)
                    .ok_or_else(too_big)?;
                let bound = floxlog_lz4_block_len_max(block_bytes);
                let scratch = floxlog_block_scratch_len(block_bytes, c.index_interval);
                if bound == usize::MAX || scratch == usize::MAX {
                    return Err(too_big());
                }
                (bound, scratch)
            } else {
                (max_frame_len, 0)
            };
            let trailer = if c.create_index {
                floxlog_index_trailer_len(entries)
            } else {
                0
            };
            let out_len = FLOXLOG_SEGMENT_HEADER_LEN
                .checked_add(chunk)
                .and_then(|n| n.checked_add(trailer))
                .filter(|n| *n != usize::MAX)
                .ok_or_else(too_big)?;
            Ok(floxlog_writer_buffer_sizes {
                out_len,
                block_len,
                index_capacity: entries,
            })
        })
    }
}
