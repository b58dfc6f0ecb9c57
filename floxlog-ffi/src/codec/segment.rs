//! Whole-segment queries that need no reader: the block scratch a reader
//! needs, and the segment header.

use crate::boundary::{data_in, output};
use crate::codec::types::*;
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
