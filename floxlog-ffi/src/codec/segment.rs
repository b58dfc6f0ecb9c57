//! Whole-segment queries that need no reader: the block scratch a reader
//! needs, and the segment header.

use crate::boundary::{data_in, output};
use crate::codec::types::same_fields;
use crate::consts::*;
use crate::error::{floxlog_error, floxlog_result};
use floxlog_core::{Segment, SegmentHeader};

/// Largest decompressed block `floxlog_segment_scratch_len` asks for
/// (256 MiB; the reference's own limit is 100 MiB).
pub const FLOXLOG_MAX_BLOCK_BYTES: usize = 256 << 20;
// A literal for cbindgen; the core's limit is the one that applies.
const _: () = assert!(FLOXLOG_MAX_BLOCK_BYTES == floxlog_core::block::MAX_SCRATCH);

/// Sets `*needed` to the block scratch a reader of this segment needs: the
/// largest `original_size` among its block headers up to the first damaged
/// one (0 for an uncompressed segment), but never more than the block's
/// `compressed_size` could decode to (LZ4 expands at most 256-fold) nor
/// `FLOXLOG_MAX_BLOCK_BYTES`, so that a damaged header never asks for
/// gigabytes (such a block then stops the read with
/// `FLOXLOG_BUFFER_TOO_SMALL`). Walks block headers without decompressing.
/// `data` is read during the call only.
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
    // SAFETY: forwarded caller promises.
    unsafe {
        output(err, needed, "needed", || {
            Ok(Segment::parse(data_in(data, len)?)?.scratch_len())
        })
    }
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
    // SAFETY: forwarded caller promises.
    unsafe {
        output(err, header, "header", || {
            Ok((&SegmentHeader::parse(data_in(data, len)?)?).into())
        })
    }
}

// The C struct of the segment header.

/// A decoded 64-byte segment header. Field order, sizes and offsets are
/// those of the format's SegmentHeader.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_segment_header {
    /// `FLOXLOG_MAGIC_SEGMENT`.
    pub magic: u32,
    /// Format version (1).
    pub version: u16,
    /// `FLOXLOG_FLAG_*` bits.
    pub flags: u8,
    /// Exchange tag.
    pub exchange_id: u8,
    /// Wall clock when the segment was opened, ns.
    pub created_ns: i64,
    /// First (reference) or earliest (spec) event timestamp.
    pub first_event_ns: i64,
    /// Last (reference) or latest (spec) event timestamp.
    pub last_event_ns: i64,
    /// Events in the segment (0 in a placeholder header).
    pub event_count: u32,
    /// Distinct symbols (0 from the reference writer).
    pub symbol_count: u32,
    /// Offset of the index trailer; 0 if none.
    pub index_offset: u64,
    /// 0 none, 1 LZ4.
    pub compression: u8,
    /// Zero.
    pub reserved: [u8; 15],
}
const _: () = assert!(size_of::<floxlog_segment_header>() == FLOXLOG_SEGMENT_HEADER_LEN);
floxlog_core::segment_header_fields!(same_fields, floxlog_segment_header);
