//! Size helpers: how large the caller's buffers must be. All but
//! `floxlog_event_frame_len` are pure arithmetic that saturates, never
//! fails and never panics (they are outside the unwinding boundary).

use crate::boundary::output;
use crate::consts::*;
use crate::error::{floxlog_error, floxlog_result};
use crate::event::event_ptr_in;
use crate::types::*;
use floxlog_core::block::compress_bound;

/// Block scratch bytes an LZ4 writer needs for blocks of up to
/// `max_block_bytes` frame bytes (staging plus the sorted copy: twice).
/// Saturates at SIZE_MAX.
#[no_mangle]
pub extern "C" fn floxlog_block_scratch_len(max_block_bytes: usize) -> usize {
    max_block_bytes.saturating_mul(2)
}

/// Output bytes one LZ4 block of `block_bytes` frame bytes may take: its
/// 16-byte header plus the compressor's worst case (the room the writer
/// checks for). SIZE_MAX past UINT32_MAX bytes, which no block can hold
/// (its sizes are 32-bit fields).
#[no_mangle]
pub extern "C" fn floxlog_lz4_block_len_max(block_bytes: usize) -> usize {
    // Also keeps `compress_bound` to sizes its arithmetic is sure to handle
    // (lz4_flex's bound multiplies the size by 110 in a u64).
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
        output(err, len, "len is NULL", || {
            Ok(FLOXLOG_FRAME_HEADER_LEN + event_ptr_in(event)?.payload_len())
        })
    }
}
