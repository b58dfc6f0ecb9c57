//! Standalone frames and headers, for callers that build their own
//! streams.

use crate::types::*;
use crate::{boundary, check_out, floxlog_error, floxlog_result, put, slice_in, Fail};
use floxlog_core::{decode_frame, encode_frame, BlockHeader, FrameHeader, FrameOptions, Profile};
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
        check_out(written, "written is NULL")?;
        let profile = match profile {
            FLOXLOG_PROFILE_REFERENCE => Profile::Reference,
            FLOXLOG_PROFILE_SPEC => Profile::Spec,
            _ => return Err(Fail::invalid("profile is not a FLOXLOG_PROFILE_* value")),
        };
        // SAFETY: forwarded caller promise; pointer checked.
        let ev = unsafe { event_ptr_in(event) }?;
        let need = FLOXLOG_FRAME_HEADER_LEN + ev.payload_len();
        if out.is_null() && out_len > 0 {
            return Err(Fail::null("out is NULL"));
        }
        if out_len < need {
            ev.validate(profile).map_err(Fail::invalid)?;
            return Err(Fail::too_small(
                need as u64,
                "output buffer shorter than the frame",
            ));
        }
        // SAFETY: the caller promises `out_len` >= `need` writable bytes.
        let dst = unsafe { crate::bytes_mut(out, need, "out") }?;
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
    opts: *const floxlog_read_options,
    event: *mut floxlog_event,
    levels: *mut floxlog_level,
    level_cap: usize,
    consumed: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(event, "event is NULL")?;
        check_out(consumed, "consumed is NULL")?;
        if data.is_null() {
            return Err(Fail::null("data is NULL"));
        }
        let opts = if opts.is_null() {
            floxlog_read_options::default()
        } else {
            // SAFETY: checked by in_ref; the caller promises a value.
            *unsafe { crate::in_ref(opts, "options") }?
        };
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_in(data, len, "data") }?;
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
    boundary(err, || {
        check_out(header, "header is NULL")?;
        if data.is_null() {
            return Err(Fail::null("data is NULL"));
        }
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_in(data, len, "data") }?;
        let Some(h) = FrameHeader::parse(data) else {
            let mut f = Fail::new(
                FLOXLOG_TRUNCATED,
                "data shorter than a 12-byte frame header",
            );
            f.needed = Some(FLOXLOG_FRAME_HEADER_LEN as u64);
            return Err(f);
        };
        let v = floxlog_frame_header {
            size: h.size,
            crc32: h.crc32,
            frame_type: h.frame_type,
            rec_version: h.rec_version,
            flags: h.flags,
        };
        // SAFETY: checked above.
        unsafe { put(header, v) };
        Ok(FLOXLOG_OK)
    })
}

/// Decodes the 16-byte compressed block header at the start of `data` into
/// `*header`: `FLOXLOG_TRUNCATED` if shorter, `FLOXLOG_BAD_BLOCK_MAGIC` if
/// the magic is not `FBLK` (nothing written then).
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
    boundary(err, || {
        check_out(header, "header is NULL")?;
        if data.is_null() {
            return Err(Fail::null("data is NULL"));
        }
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_in(data, len, "data") }?;
        let Some(h) = BlockHeader::parse(data) else {
            let mut f = Fail::new(
                FLOXLOG_TRUNCATED,
                "data shorter than a 16-byte block header",
            );
            f.needed = Some(FLOXLOG_BLOCK_HEADER_LEN as u64);
            return Err(f);
        };
        if h.magic != FLOXLOG_MAGIC_BLOCK {
            return Err(Fail::new(FLOXLOG_BAD_BLOCK_MAGIC, "block magic is not FBLK").at(0));
        }
        // SAFETY: checked above.
        unsafe { put(header, (&h).into()) };
        Ok(FLOXLOG_OK)
    })
}
