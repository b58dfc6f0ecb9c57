//! Standalone frames and headers, for callers that build their own
//! streams.

use crate::boundary::{boundary, bytes_mut, check_out, data_in, output, put};
use crate::codec::event::{event_ptr_in, levels_short, write_event, LevelScratch};
use crate::codec::reader::floxlog_reader_options;
use crate::codec::records::profile_in;
use crate::codec::types::*;
use crate::consts::*;
use crate::error::{floxlog_error, floxlog_result, Fail};
use floxlog_core::{decode_frame, encode_frame, BlockHeader, FrameHeader, FrameOptions};
use floxlog_result::*;

/// Encodes `event` as one complete frame (12-byte header with CRC, then
/// the payload) at the start of `out` (caller-owned, `out_len` bytes;
/// `floxlog_event_frame_len` says how many are needed) and sets
/// `*written`. `profile` is `FLOXLOG_PROFILE_REFERENCE` (book header type
/// byte as given) or `FLOXLOG_PROFILE_SPEC` (2/3). `out` is untouched on
/// error: `FLOXLOG_BUFFER_TOO_SMALL` (with `needed`), `FLOXLOG_INVALID_INPUT`.
///
/// # Safety
/// `event` valid (its member's pointers too); `out` valid for `out_len`
/// writable bytes; `written` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_frame_encode(
    event: *const floxlog_event,
    profile: u8,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(written, "written")?;
        let profile = profile_in(profile)?;
        // SAFETY: forwarded caller promise; pointer checked.
        let ev = unsafe { event_ptr_in(event) }?;
        let need = FLOXLOG_FRAME_HEADER_LEN + ev.payload_len();
        if out.is_null() && out_len > 0 {
            return Err(Fail::null("out"));
        }
        if out_len < need {
            ev.validate(profile).map_err(Fail::invalid)?;
            return Err(Fail::too_small(
                need as u64,
                "output buffer shorter than the frame",
            ));
        }
        // SAFETY: the caller promises `out_len` >= `need` writable bytes.
        let dst = unsafe { bytes_mut(out, need, "out") }?;
        let n = encode_frame(&ev, profile, dst)?;
        // SAFETY: checked above.
        unsafe { put(written, n) };
        Ok(FLOXLOG_OK)
    })
}

/// Decodes the frame at the start of `data` with every check (header and
/// payload present, rec_version, flags, CRC when `opts->verify_crc`, type,
/// record layout; errors at offset 0 = the start of `data`). On
/// `FLOXLOG_OK`, `*event` holds the event and `*consumed` the frame's
/// encoded length; a skipped unknown type (only with
/// `opts->skip_unknown_types`) gives `event->kind == FLOXLOG_EVENT_NONE`.
/// `opts` may be NULL (defaults).
///
/// Book levels are decoded into `levels` (`level_cap` entries; a short
/// buffer gives `FLOXLOG_BUFFER_TOO_SMALL` with `needed` = levels); pool
/// payloads point into `data`.
///
/// # Safety
/// `data` valid for `len` bytes; `event` and `consumed` writable; `levels`
/// valid for `level_cap` writable entries (NULL only with 0); `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_frame_decode(
    data: *const u8,
    len: usize,
    opts: *const floxlog_reader_options,
    event: *mut floxlog_event,
    levels: *mut floxlog_level,
    level_cap: usize,
    consumed: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(event, "event")?;
        check_out(consumed, "consumed")?;
        // SAFETY: the caller promises `len` readable bytes and a valid
        // `opts` if not NULL.
        let (data, opts) =
            unsafe { (data_in(data, len)?, floxlog_reader_options::from_ptr(opts)?) };
        // SAFETY: the caller promises `level_cap` writable levels.
        let mut ls = unsafe { LevelScratch::new(levels, level_cap) }?;
        let o = opts.core();
        let (ev, n) = decode_frame(
            data,
            FrameOptions {
                verify_crc: o.verify_crc,
                unknown_types: o.unknown_types,
            },
        )?;
        match ev {
            // SAFETY: `event` checked above.
            Some(ev) => unsafe { write_event(&ev, event, &mut ls) }.map_err(levels_short)?,
            // SAFETY: as above.
            None => unsafe { core::ptr::addr_of_mut!((*event).kind).write(FLOXLOG_EVENT_NONE) },
        }
        // SAFETY: checked above.
        unsafe { put(consumed, n) };
        Ok(FLOXLOG_OK)
    })
}

/// Decodes the 12-byte frame header at the start of `data` into `*header`
/// without validating it. `FLOXLOG_TRUNCATED` (needed 12) if shorter.
///
/// # Safety
/// `data` valid for `len` bytes; `header` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_frame_header_parse(
    data: *const u8,
    len: usize,
    header: *mut floxlog_frame_header,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        output(err, header, "header", || {
            Ok((&FrameHeader::parse(data_in(data, len)?, 0)?).into())
        })
    }
}

/// Decodes the 16-byte compressed block header at the start of `data` into
/// `*header`: `FLOXLOG_TRUNCATED` (needed 16) if shorter,
/// `FLOXLOG_BAD_BLOCK_MAGIC` if the magic is not `FBLK` (nothing written
/// then).
///
/// # Safety
/// `data` valid for `len` bytes; `header` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_block_header_parse(
    data: *const u8,
    len: usize,
    header: *mut floxlog_block_header,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        output(err, header, "header", || {
            Ok((&BlockHeader::parse(data_in(data, len)?, 0)?).into())
        })
    }
}

// The C structs of the headers the functions above decode.

/// A decoded 12-byte frame header (format layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_frame_header {
    /// Payload bytes after the header.
    pub size: u32,
    /// CRC32 of the payload.
    pub crc32: u32,
    /// Record type (`FLOXLOG_EVENT_*` for known types).
    pub frame_type: u8,
    /// Record layout version (1).
    pub rec_version: u8,
    /// Reserved, zero.
    pub flags: u16,
}
const _: () = assert!(size_of::<floxlog_frame_header>() == FLOXLOG_FRAME_HEADER_LEN);

/// A decoded 16-byte compressed block header (format layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_block_header {
    /// `FLOXLOG_MAGIC_BLOCK`.
    pub magic: u32,
    /// LZ4 bytes after the header.
    pub compressed_size: u32,
    /// Bytes the LZ4 data decodes to.
    pub original_size: u32,
    /// Frames in the block.
    pub event_count: u16,
    /// Reserved.
    pub flags: u16,
}
const _: () = assert!(size_of::<floxlog_block_header>() == FLOXLOG_BLOCK_HEADER_LEN);
