//! Messages for people: the name of a result code, its one-line message,
//! and a filled `floxlog_error` as one line, formatted into caller buffers.

use crate::boundary::{boundary, check_out, in_ref, put, slice_uninit, FfiResult};
use crate::error::{floxlog_error, floxlog_result, Fail, FLOXLOG_WHAT_LEN};
use core::ffi::c_char;
use core::fmt::{self, Write as _};
use core::mem::MaybeUninit;
use floxlog_result::*;

/// A buffer of this many bytes always holds the message of
/// `floxlog_strerror` and `floxlog_error_format`, NUL included.
pub const FLOXLOG_MESSAGE_MAX: usize = 320;

/// The stable short name of a result code: `"ok"`, `"end"`, the
/// conformance corpus's spelling for data errors (`"crc_mismatch"`...),
/// `"buffer_too_small"`... A static NUL-terminated string (never free it);
/// `"unknown"` for a number that is not a `floxlog_result`.
#[no_mangle]
pub extern "C" fn floxlog_result_name(code: u32) -> *const c_char {
    floxlog_result::c_name(code)
}

/// Copies the message of a result code (`"<name>: <description>"`) into
/// `buf`, NUL-terminated, and stores its length without the NUL in
/// `*written`.
///
/// Ownership: the caller owns `buf` (`len` bytes; `FLOXLOG_MESSAGE_MAX`
/// always suffices) and `written`. Nothing is written unless the whole
/// message fits (`FLOXLOG_BUFFER_TOO_SMALL` otherwise). An unknown code
/// gets a message saying so. No thread-local state is involved.
///
/// # Safety
/// `buf` must point at `len` writable bytes; `written` at a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_strerror(
    code: u32,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        match floxlog_result::from_u32(code) {
            Some(r) => format_into(
                buf,
                len,
                written,
                format_args!("{}: {}", r.name(), r.description()),
            ),
            None => format_into(
                buf,
                len,
                written,
                format_args!("unknown: {code} is not a floxlog_result code"),
            ),
        }
    })
}

/// Formats a filled `floxlog_error` as one line: the kind, the byte offset
/// and what failed, e.g. `"crc_mismatch at byte 12852: frame payload does
/// not match its CRC32"`, plus the position inside a decompressed block and
/// the size needed when present. Same buffer rules as `floxlog_strerror`.
///
/// # Safety
/// `e` must point at a `floxlog_error` (any contents are handled); `buf` at
/// `len` writable bytes; `written` at a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_error_format(
    e: *const floxlog_error,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        // SAFETY: checked for NULL/alignment; the caller promises a value.
        let e = unsafe { in_ref(e, "error") }?;
        // `what` is read up to its first NUL, never past the array.
        let n = e
            .what
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(FLOXLOG_WHAT_LEN);
        let mut what = [0u8; FLOXLOG_WHAT_LEN];
        for (d, s) in what.iter_mut().zip(&e.what[..n]) {
            // c_char is i8 on some targets, u8 on others (Arm).
            #[allow(clippy::unnecessary_cast)]
            let b = *s as u8;
            *d = b;
        }
        let line = ErrorLine {
            e,
            what: &what[..n],
        };
        format_into(buf, len, written, format_args!("{line}"))
    })
}

/// A `floxlog_error` as `floxlog_error_format` shows it: the layout of the
/// core's `Error` display, for any code and any bytes in `what`.
struct ErrorLine<'a> {
    e: &'a floxlog_error,
    what: &'a [u8],
}

impl fmt::Display for ErrorLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.e;
        let name = floxlog_result::from_u32(e.code).map_or("unknown", floxlog_result::name);
        write!(f, "{name} at byte {}", e.offset)?;
        if e.has_in_block != 0 {
            write!(f, " (+{} inside the decompressed block)", e.in_block)?;
        }
        f.write_str(": ")?;
        // Anything that is not printable ASCII shows as `?`.
        for &b in self.what {
            f.write_char(if (0x20..0x7f).contains(&b) {
                b as char
            } else {
                '?'
            })?;
        }
        if e.has_needed != 0 {
            write!(f, " (needs {})", e.needed)?;
        }
        Ok(())
    }
}

/// A `fmt::Write` over a byte buffer that counts what would not fit.
struct Cursor<'b> {
    buf: &'b mut [MaybeUninit<u8>],
    at: usize,
    overflow: bool,
}

impl<'b> Cursor<'b> {
    fn new(buf: &'b mut [MaybeUninit<u8>]) -> Self {
        Cursor {
            buf,
            at: 0,
            overflow: false,
        }
    }
}

impl fmt::Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let b = s.as_bytes();
        // Keep one byte for the NUL.
        let room = self.buf.len().saturating_sub(1).saturating_sub(self.at);
        if b.len() > room {
            self.overflow = true;
            self.at += b.len();
            return Ok(());
        }
        for (d, s) in self.buf[self.at..].iter_mut().zip(b) {
            d.write(*s);
        }
        self.at += b.len();
        Ok(())
    }
}

/// Formats into a caller buffer: all or nothing, NUL-terminated.
fn format_into(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
    args: fmt::Arguments<'_>,
) -> FfiResult {
    check_out(written, "written")?;
    if buf.is_null() {
        return Err(Fail::null("buf"));
    }
    // Measure first so nothing is written when it does not fit.
    let mut probe = Cursor::new(&mut []);
    let _ = probe.write_fmt(args);
    let need = probe.at + 1;
    if need > len {
        return Err(Fail::too_small(
            need as u64,
            "message buffer too small (FLOXLOG_MESSAGE_MAX always suffices)",
        ));
    }
    #[allow(clippy::unnecessary_cast)] // c_char is u8 on some targets
    let buf = buf as *mut u8;
    // SAFETY: `buf` is non-NULL (checked) and the caller promises `len`
    // writable bytes; c_char and u8 have the same layout.
    let out = unsafe { slice_uninit(buf, len, "buf") }?;
    let mut c = Cursor::new(out);
    let _ = c.write_fmt(args);
    if c.overflow {
        // The two passes disagreed (cannot happen for the same arguments).
        return Err(Fail::new(
            FLOXLOG_INTERNAL,
            "message changed while formatting",
        ));
    }
    c.buf[c.at].write(0);
    // SAFETY: checked by check_out above.
    unsafe { put(written, c.at) };
    Ok(FLOXLOG_OK)
}
