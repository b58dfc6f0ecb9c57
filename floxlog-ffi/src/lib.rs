//! C ABI for `floxlog-core`: writer, reader, standalone frames, errors.
//!
//! Conventions (see `include/floxlog.h`, generated from this crate):
//! - every function returns a `floxlog_result` (or a plain value when it
//!   cannot fail); `FLOXLOG_OK` is 0;
//! - outputs are written only on success; on failure a caller-provided
//!   `floxlog_error` (may be NULL) receives the kind, byte offset and a
//!   description;
//! - no panic crosses the boundary (`catch_unwind` on every export), every
//!   pointer is checked for NULL and alignment, every length for range;
//! - handles (`floxlog_writer`, `floxlog_reader`) are allocated once in
//!   `_new` and released with `_free`; nothing is allocated per event.
//!   They borrow the caller's buffers, which must outlive them.
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

use core::ffi::c_char;
use core::fmt::{self, Write as _};
use core::mem::MaybeUninit;
use core::panic::AssertUnwindSafe;
use floxlog_core::{Error, ErrorKind};
use std::panic::catch_unwind;

mod frame;
mod reader;
mod types;
mod writer;

pub use frame::*;
pub use reader::*;
pub use types::*;
pub use writer::*;

/// Result codes. 0 is success; 1..99 are non-error statuses; 100..199 are
/// data errors (100..114 are the conformance corpus's error kinds in the
/// order of its README); 200..299 are usage and resource errors. The
/// numbers are stable: new codes are only ever added.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum floxlog_result {
    /// Success.
    FLOXLOG_OK = 0,
    /// No more events (reader), or no such entry (index lookups).
    FLOXLOG_END = 1,
    /// The segment has no index (HasIndex flag clear).
    FLOXLOG_NO_INDEX = 2,
    /// `bad_magic`: segment magic is not `FLOX`.
    FLOXLOG_BAD_MAGIC = 100,
    /// `unsupported_version`: segment version is not 1.
    FLOXLOG_UNSUPPORTED_VERSION = 101,
    /// `unknown_flags`: a segment flag bit that 1.0 does not define.
    FLOXLOG_UNKNOWN_FLAGS = 102,
    /// `encrypted`: the Encrypted flag (reserved in 1.0).
    FLOXLOG_ENCRYPTED = 103,
    /// `reserved_nonzero`: a reserved header byte is not zero.
    FLOXLOG_RESERVED_NONZERO = 104,
    /// `truncated`: the data ends inside a header, frame or block.
    FLOXLOG_TRUNCATED = 105,
    /// `crc_mismatch`: a frame payload does not match its CRC32.
    FLOXLOG_CRC_MISMATCH = 106,
    /// `unsupported_record_version`: a frame's rec_version is not 1.
    FLOXLOG_UNSUPPORTED_RECORD_VERSION = 107,
    /// `frame_flags_nonzero`: a frame's reserved flags are not zero.
    FLOXLOG_FRAME_FLAGS_NONZERO = 108,
    /// `unknown_record_type`: a frame type no layout defines (strict mode).
    FLOXLOG_UNKNOWN_RECORD_TYPE = 109,
    /// `malformed_record`: a payload whose size does not fit its type.
    FLOXLOG_MALFORMED_RECORD = 110,
    /// `bad_block_magic`: a compressed block header's magic is not `FBLK`.
    FLOXLOG_BAD_BLOCK_MAGIC = 111,
    /// `decompression_failed`: an LZ4 block does not decode to exactly
    /// `original_size` bytes.
    FLOXLOG_DECOMPRESSION_FAILED = 112,
    /// `index_crc_mismatch`: index entries do not match the index CRC.
    FLOXLOG_INDEX_CRC_MISMATCH = 113,
    /// `bad_index`: index header or offset is invalid.
    FLOXLOG_BAD_INDEX = 114,
    /// `unknown_compression`: the compression byte is not a known codec or
    /// disagrees with the Compressed flag.
    FLOXLOG_UNKNOWN_COMPRESSION = 115,
    /// A required pointer is NULL (or a buffer pointer is NULL with a
    /// non-zero length).
    FLOXLOG_NULL_POINTER = 200,
    /// A caller buffer is too small; nothing was consumed or written.
    /// `floxlog_error.needed` says how much would do.
    FLOXLOG_BUFFER_TOO_SMALL = 201,
    /// The writer's index storage is full; the event was not accepted.
    FLOXLOG_INDEX_FULL = 202,
    /// An argument cannot be used as given (bad enum value, level count
    /// over 65535, overlapping buffers, wrong handle...).
    FLOXLOG_INVALID_INPUT = 203,
    /// The writer was already finished.
    FLOXLOG_FINISHED = 204,
    /// LZ4 requested or found, and this build has no LZ4 support.
    FLOXLOG_LZ4_UNSUPPORTED = 205,
    /// The spec profile's distinct-symbol table is full.
    FLOXLOG_SYMBOL_CAPACITY = 206,
    /// A count would overflow its on-disk field.
    FLOXLOG_CAPACITY_EXCEEDED = 207,
    /// A pointer is not aligned for its type.
    FLOXLOG_MISALIGNED = 208,
    /// An error this version of the C ABI has no code for.
    FLOXLOG_INTERNAL = 298,
    /// A Rust panic was caught at the boundary (a bug: please report it).
    FLOXLOG_PANIC = 299,
}

use floxlog_result::*;

impl floxlog_result {
    /// Every code, for tables and exhaustive tests.
    pub(crate) const ALL: [floxlog_result; 30] = [
        FLOXLOG_OK,
        FLOXLOG_END,
        FLOXLOG_NO_INDEX,
        FLOXLOG_BAD_MAGIC,
        FLOXLOG_UNSUPPORTED_VERSION,
        FLOXLOG_UNKNOWN_FLAGS,
        FLOXLOG_ENCRYPTED,
        FLOXLOG_RESERVED_NONZERO,
        FLOXLOG_TRUNCATED,
        FLOXLOG_CRC_MISMATCH,
        FLOXLOG_UNSUPPORTED_RECORD_VERSION,
        FLOXLOG_FRAME_FLAGS_NONZERO,
        FLOXLOG_UNKNOWN_RECORD_TYPE,
        FLOXLOG_MALFORMED_RECORD,
        FLOXLOG_BAD_BLOCK_MAGIC,
        FLOXLOG_DECOMPRESSION_FAILED,
        FLOXLOG_INDEX_CRC_MISMATCH,
        FLOXLOG_BAD_INDEX,
        FLOXLOG_UNKNOWN_COMPRESSION,
        FLOXLOG_NULL_POINTER,
        FLOXLOG_BUFFER_TOO_SMALL,
        FLOXLOG_INDEX_FULL,
        FLOXLOG_INVALID_INPUT,
        FLOXLOG_FINISHED,
        FLOXLOG_LZ4_UNSUPPORTED,
        FLOXLOG_SYMBOL_CAPACITY,
        FLOXLOG_CAPACITY_EXCEEDED,
        FLOXLOG_MISALIGNED,
        FLOXLOG_INTERNAL,
        FLOXLOG_PANIC,
    ];

    pub(crate) fn from_u32(code: u32) -> Option<floxlog_result> {
        Self::ALL.iter().copied().find(|c| *c as u32 == code)
    }

    /// Stable name (the corpus spelling for data errors) and description.
    fn info(self) -> (&'static core::ffi::CStr, &'static str) {
        match self {
            FLOXLOG_OK => (c"ok", "success"),
            FLOXLOG_END => (c"end", "no more events, or no such entry"),
            FLOXLOG_NO_INDEX => (c"no_index", "the segment has no index"),
            FLOXLOG_BAD_MAGIC => (c"bad_magic", "segment magic is not FLOX"),
            FLOXLOG_UNSUPPORTED_VERSION => (c"unsupported_version", "segment version is not 1"),
            FLOXLOG_UNKNOWN_FLAGS => (
                c"unknown_flags",
                "a segment flag bit that 1.0 does not define",
            ),
            FLOXLOG_ENCRYPTED => (c"encrypted", "the Encrypted flag (reserved in 1.0)"),
            FLOXLOG_RESERVED_NONZERO => (c"reserved_nonzero", "a reserved header byte is not zero"),
            FLOXLOG_TRUNCATED => (
                c"truncated",
                "the data ends inside a header, frame or block",
            ),
            FLOXLOG_CRC_MISMATCH => (c"crc_mismatch", "a frame payload does not match its CRC32"),
            FLOXLOG_UNSUPPORTED_RECORD_VERSION => (
                c"unsupported_record_version",
                "a frame's rec_version is not 1",
            ),
            FLOXLOG_FRAME_FLAGS_NONZERO => (
                c"frame_flags_nonzero",
                "a frame's reserved flags are not zero",
            ),
            FLOXLOG_UNKNOWN_RECORD_TYPE => (
                c"unknown_record_type",
                "a frame type no layout defines (strict mode)",
            ),
            FLOXLOG_MALFORMED_RECORD => (
                c"malformed_record",
                "a payload whose size does not fit its type",
            ),
            FLOXLOG_BAD_BLOCK_MAGIC => (
                c"bad_block_magic",
                "a compressed block header's magic is not FBLK",
            ),
            FLOXLOG_DECOMPRESSION_FAILED => (
                c"decompression_failed",
                "an LZ4 block does not decode to exactly original_size bytes",
            ),
            FLOXLOG_INDEX_CRC_MISMATCH => (
                c"index_crc_mismatch",
                "index entries do not match the index CRC",
            ),
            FLOXLOG_BAD_INDEX => (c"bad_index", "index header or offset is invalid"),
            FLOXLOG_UNKNOWN_COMPRESSION => (
                c"unknown_compression",
                "the compression byte is unknown or disagrees with the Compressed flag",
            ),
            FLOXLOG_NULL_POINTER => (c"null_pointer", "a required pointer is NULL"),
            FLOXLOG_BUFFER_TOO_SMALL => (
                c"buffer_too_small",
                "a caller buffer is too small; nothing was consumed or written",
            ),
            FLOXLOG_INDEX_FULL => (
                c"index_full",
                "the writer's index storage is full; the event was not accepted",
            ),
            FLOXLOG_INVALID_INPUT => (c"invalid_input", "an argument cannot be used as given"),
            FLOXLOG_FINISHED => (c"finished", "the writer was already finished"),
            FLOXLOG_LZ4_UNSUPPORTED => (c"lz4_unsupported", "this build has no LZ4 support"),
            FLOXLOG_SYMBOL_CAPACITY => (
                c"symbol_capacity",
                "the spec profile's distinct-symbol table is full",
            ),
            FLOXLOG_CAPACITY_EXCEEDED => (
                c"capacity_exceeded",
                "a count would overflow its on-disk field",
            ),
            FLOXLOG_MISALIGNED => (c"misaligned", "a pointer is not aligned for its type"),
            FLOXLOG_INTERNAL => (
                c"internal",
                "an error this version of the C ABI has no code for",
            ),
            FLOXLOG_PANIC => (c"panic", "a Rust panic was caught at the boundary (a bug)"),
        }
    }

    fn from_kind(kind: ErrorKind) -> floxlog_result {
        match kind {
            ErrorKind::BadMagic => FLOXLOG_BAD_MAGIC,
            ErrorKind::UnsupportedVersion => FLOXLOG_UNSUPPORTED_VERSION,
            ErrorKind::UnknownFlags => FLOXLOG_UNKNOWN_FLAGS,
            ErrorKind::Encrypted => FLOXLOG_ENCRYPTED,
            ErrorKind::ReservedNonzero => FLOXLOG_RESERVED_NONZERO,
            ErrorKind::Truncated => FLOXLOG_TRUNCATED,
            ErrorKind::CrcMismatch => FLOXLOG_CRC_MISMATCH,
            ErrorKind::UnsupportedRecordVersion => FLOXLOG_UNSUPPORTED_RECORD_VERSION,
            ErrorKind::FrameFlagsNonzero => FLOXLOG_FRAME_FLAGS_NONZERO,
            ErrorKind::UnknownRecordType => FLOXLOG_UNKNOWN_RECORD_TYPE,
            ErrorKind::MalformedRecord => FLOXLOG_MALFORMED_RECORD,
            ErrorKind::BadBlockMagic => FLOXLOG_BAD_BLOCK_MAGIC,
            ErrorKind::DecompressionFailed => FLOXLOG_DECOMPRESSION_FAILED,
            ErrorKind::IndexCrcMismatch => FLOXLOG_INDEX_CRC_MISMATCH,
            ErrorKind::BadIndex => FLOXLOG_BAD_INDEX,
            ErrorKind::UnknownCompression => FLOXLOG_UNKNOWN_COMPRESSION,
            ErrorKind::Lz4Unsupported => FLOXLOG_LZ4_UNSUPPORTED,
            ErrorKind::BufferTooSmall => FLOXLOG_BUFFER_TOO_SMALL,
            ErrorKind::IndexFull => FLOXLOG_INDEX_FULL,
            ErrorKind::SymbolCapacity => FLOXLOG_SYMBOL_CAPACITY,
            ErrorKind::CapacityExceeded => FLOXLOG_CAPACITY_EXCEEDED,
            ErrorKind::InvalidInput => FLOXLOG_INVALID_INPUT,
            ErrorKind::Finished => FLOXLOG_FINISHED,
            // ErrorKind is non_exhaustive: a kind added to the core later.
            _ => FLOXLOG_INTERNAL,
        }
    }
}

/// Bytes of `floxlog_error.what`, including its terminating NUL.
pub const FLOXLOG_WHAT_LEN: usize = 128;

/// A buffer of this many bytes always holds the message of
/// `floxlog_strerror` and `floxlog_error_format`, NUL included.
pub const FLOXLOG_MESSAGE_MAX: usize = 320;

/// Details of a failure, filled by any function that takes a
/// `floxlog_error *` when it fails and the pointer is not NULL (it is left
/// untouched on success). Plain data: the caller owns it, it holds no
/// pointers, and it stays valid after the handle that produced it is freed.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct floxlog_error {
    /// The `floxlog_result` code the function returned.
    pub code: u32,
    /// For failures inside a decompressed LZ4 block (`has_in_block`): the
    /// failing frame's offset inside the block's decompressed bytes.
    pub in_block: u32,
    /// Byte offset in the segment (or in the buffer given to a standalone
    /// frame function) of what failed: 0 for the segment header, the frame
    /// header's offset for a frame, the block header's offset for anything
    /// in a compressed block, the index offset for the index. For writer
    /// errors, the segment offset the event would have been written at.
    pub offset: u64,
    /// For `FLOXLOG_BUFFER_TOO_SMALL`, `FLOXLOG_INDEX_FULL` and some
    /// `FLOXLOG_TRUNCATED` errors (`has_needed`): bytes (or entries, or
    /// levels) the buffer needs.
    pub needed: u64,
    /// Non-zero when `in_block` is meaningful.
    pub has_in_block: u8,
    /// Non-zero when `needed` is meaningful.
    pub has_needed: u8,
    /// A short description of the check that failed, NUL-terminated
    /// (truncated to fit).
    pub what: [c_char; FLOXLOG_WHAT_LEN],
}

/// An internal failure before it is copied into a `floxlog_error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fail {
    pub code: floxlog_result,
    pub offset: u64,
    pub in_block: Option<u32>,
    pub needed: Option<u64>,
    pub what: &'static str,
}

impl Fail {
    pub(crate) const fn new(code: floxlog_result, what: &'static str) -> Fail {
        Fail {
            code,
            offset: 0,
            in_block: None,
            needed: None,
            what,
        }
    }
    pub(crate) const fn null(what: &'static str) -> Fail {
        Fail::new(FLOXLOG_NULL_POINTER, what)
    }
    pub(crate) const fn invalid(what: &'static str) -> Fail {
        Fail::new(FLOXLOG_INVALID_INPUT, what)
    }
    pub(crate) const fn too_small(needed: u64, what: &'static str) -> Fail {
        let mut f = Fail::new(FLOXLOG_BUFFER_TOO_SMALL, what);
        f.needed = Some(needed);
        f
    }
    pub(crate) const fn at(mut self, offset: u64) -> Fail {
        self.offset = offset;
        self
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail {
            code: floxlog_result::from_kind(e.kind),
            offset: e.offset,
            in_block: e.in_block,
            needed: e.needed,
            what: e.what,
        }
    }
}

impl Fail {
    fn to_c(self) -> floxlog_error {
        let mut what = [0 as c_char; FLOXLOG_WHAT_LEN];
        let mut n = self.what.len().min(FLOXLOG_WHAT_LEN - 1);
        while !self.what.is_char_boundary(n) {
            n -= 1;
        }
        for (d, s) in what.iter_mut().zip(&self.what.as_bytes()[..n]) {
            *d = *s as c_char;
        }
        floxlog_error {
            code: self.code as u32,
            in_block: self.in_block.unwrap_or(0),
            offset: self.offset,
            needed: self.needed.unwrap_or(0),
            has_in_block: self.in_block.is_some() as u8,
            has_needed: self.needed.is_some() as u8,
            what,
        }
    }
}

pub(crate) type FfiResult = Result<floxlog_result, Fail>;

/// The boundary every export goes through: runs `f`, turns a panic into
/// `FLOXLOG_PANIC`, and copies a failure into `*err` when `err` is usable.
#[inline(always)]
pub(crate) fn boundary(err: *mut floxlog_error, f: impl FnOnce() -> FfiResult) -> floxlog_result {
    // Only the code leaves the unwinding frame, so the success path moves a
    // u32 and nothing else; failures are reported from inside (cold).
    let r = catch_unwind(AssertUnwindSafe(|| match f() {
        Ok(code) => code,
        Err(fail) => {
            report(err, fail);
            fail.code
        }
    }));
    match r {
        Ok(code) => code,
        Err(_) => {
            report(
                err,
                Fail::new(FLOXLOG_PANIC, "a Rust panic was caught at the C boundary"),
            );
            FLOXLOG_PANIC
        }
    }
}

#[cold]
fn report(err: *mut floxlog_error, fail: Fail) {
    if !err.is_null() && err.is_aligned() {
        // SAFETY: non-NULL and aligned; the caller promises it points at a
        // writable floxlog_error. `write` does not read the old contents.
        unsafe { err.write(fail.to_c()) };
    }
}

// ---------------------------------------------------------------------------
// Pointer helpers. Each returns a Fail instead of dereferencing something
// unusable; the remaining promise (the memory is real) is the caller's.

/// Checks a required input pointer.
pub(crate) fn check_in<T>(p: *const T, what: &'static str) -> Result<(), Fail> {
    if p.is_null() {
        Err(Fail::null(what))
    } else if !p.is_aligned() {
        Err(Fail::new(FLOXLOG_MISALIGNED, what))
    } else {
        Ok(())
    }
}

/// Checks a required output pointer.
pub(crate) fn check_out<T>(p: *mut T, what: &'static str) -> Result<(), Fail> {
    check_in(p as *const T, what)
}

/// A shared reference from a checked input pointer.
///
/// # Safety
/// If non-NULL and aligned, `p` must point at a valid `T` that is not
/// written during `'a`.
pub(crate) unsafe fn in_ref<'a, T>(p: *const T, what: &'static str) -> Result<&'a T, Fail> {
    check_in(p, what)?;
    // SAFETY: checked non-NULL and aligned; validity is the caller's promise.
    Ok(unsafe { &*p })
}

/// Writes an output value through a pointer already checked by `check_out`.
///
/// # Safety
/// `p` must be non-NULL, aligned and point at writable memory for a `T`.
#[inline(always)]
pub(crate) unsafe fn put<T>(p: *mut T, v: T) {
    // SAFETY: the caller's promise; `write` does not drop or read the old
    // (possibly uninitialised) value.
    unsafe { p.write(v) }
}

fn check_len<T>(len: usize, what: &'static str) -> Result<(), Fail> {
    if len
        .checked_mul(core::mem::size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Fail::invalid(what));
    }
    Ok(())
}

/// A slice from a caller pointer and length. NULL is allowed only with
/// length 0 (an empty slice).
///
/// # Safety
/// If `len > 0`, `p` must point at `len` valid, initialised `T`s that are
/// not written during `'a`.
pub(crate) unsafe fn slice_in<'a, T>(
    p: *const T,
    len: usize,
    what: &'static str,
) -> Result<&'a [T], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    check_in(p, what)?;
    check_len::<T>(len, what)?;
    // SAFETY: non-NULL, aligned, length in range; validity is the caller's
    // promise.
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// A mutable slice over caller memory that may be uninitialised. NULL is
/// allowed only with length 0.
///
/// # Safety
/// If `len > 0`, `p` must point at `len` writable `T`s that nothing else
/// accesses during `'a`.
pub(crate) unsafe fn slice_uninit<'a, T>(
    p: *mut T,
    len: usize,
    what: &'static str,
) -> Result<&'a mut [MaybeUninit<T>], Fail> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_out(p, what)?;
    check_len::<T>(len, what)?;
    // SAFETY: non-NULL, aligned, length in range; MaybeUninit makes no
    // claim about the contents; exclusivity is the caller's promise.
    Ok(unsafe { core::slice::from_raw_parts_mut(p as *mut MaybeUninit<T>, len) })
}

/// A mutable byte slice over caller memory. The writer and reader keep
/// these for the handle's lifetime. The bytes are not zeroed (that would
/// cost a pass over every output buffer per segment): the core only ever
/// reads bytes of these buffers that it wrote first, as rustls-ffi assumes
/// of its callers' output buffers too.
///
/// # Safety
/// If `len > 0`, `p` must point at `len` writable bytes that nothing else
/// accesses while the result is in use.
pub(crate) unsafe fn bytes_mut<'a>(
    p: *mut u8,
    len: usize,
    what: &'static str,
) -> Result<&'a mut [u8], Fail> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_out(p, what)?;
    check_len::<u8>(len, what)?;
    // SAFETY: non-NULL, length in range; exclusivity and validity are the
    // caller's promise (see above for why the contents do not matter).
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

// ---------------------------------------------------------------------------
// Messages and version.

/// A `fmt::Write` over a byte buffer that counts what would not fit.
struct Cursor<'b> {
    buf: &'b mut [MaybeUninit<u8>],
    at: usize,
    overflow: bool,
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
    check_out(written, "written is NULL")?;
    if buf.is_null() {
        return Err(Fail::null("message buffer is NULL"));
    }
    // Measure first so nothing is written when it does not fit.
    let mut probe = Cursor {
        buf: &mut [],
        at: 0,
        overflow: false,
    };
    let _ = probe.write_fmt(args);
    let need = probe.at + 1;
    if need > len {
        return Err(Fail::too_small(
            need as u64,
            "message buffer too small (FLOXLOG_MESSAGE_MAX always suffices)",
        ));
    }
    // SAFETY: `buf` is non-NULL (checked) and the caller promises `len`
    // writable bytes; c_char and u8 have the same layout.
    let out = unsafe { slice_uninit(buf as *mut u8, len, "message buffer") }?;
    let mut c = Cursor {
        buf: out,
        at: 0,
        overflow: false,
    };
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

/// The library version, e.g. `"0.1.0"`: a static NUL-terminated string
/// (never free it).
#[no_mangle]
pub extern "C" fn floxlog_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// The `.floxlog` format version this library reads and writes (1).
#[no_mangle]
pub extern "C" fn floxlog_format_version() -> u16 {
    floxlog_core::FORMAT_VERSION
}

/// Whether this build reads and writes LZ4 segments.
#[no_mangle]
pub extern "C" fn floxlog_lz4_supported() -> bool {
    floxlog_core::LZ4_SUPPORTED
}

/// The stable short name of a result code: `"ok"`, `"end"`, the
/// conformance corpus's spelling for data errors (`"crc_mismatch"`...),
/// `"buffer_too_small"`... A static NUL-terminated string (never free it);
/// `"unknown"` for a number that is not a `floxlog_result`.
#[no_mangle]
pub extern "C" fn floxlog_result_name(code: u32) -> *const c_char {
    match floxlog_result::from_u32(code) {
        Some(r) => r.info().0.as_ptr(),
        None => c"unknown".as_ptr(),
    }
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
            Some(r) => {
                let (name, desc) = r.info();
                let name = name.to_str().unwrap_or("?");
                format_into(buf, len, written, format_args!("{name}: {desc}"))
            }
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
        let e = unsafe { in_ref(e, "error is NULL") }?;
        let name = floxlog_result_name_str(e.code);
        // `what` is read up to its first NUL, never past the array.
        let w = &e.what;
        let n = w.iter().position(|&c| c == 0).unwrap_or(w.len());
        let mut what = [0u8; FLOXLOG_WHAT_LEN];
        for (d, s) in what.iter_mut().zip(&w[..n]) {
            *d = *s as u8;
        }
        let what = String8(&what[..n]);
        let in_block = InBlock(e.has_in_block != 0, e.in_block);
        let needed = Needed(e.has_needed != 0, e.needed);
        format_into(
            buf,
            len,
            written,
            format_args!("{name} at byte {}{in_block}: {what}{needed}", e.offset),
        )
    })
}

fn floxlog_result_name_str(code: u32) -> &'static str {
    floxlog_result::from_u32(code)
        .and_then(|r| r.info().0.to_str().ok())
        .unwrap_or("unknown")
}

/// Bytes shown as text, with anything that is not printable ASCII as `?`.
struct String8<'a>(&'a [u8]);
impl fmt::Display for String8<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in self.0 {
            f.write_char(if (0x20..0x7f).contains(&b) {
                b as char
            } else {
                '?'
            })?;
        }
        Ok(())
    }
}
struct InBlock(bool, u32);
impl fmt::Display for InBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 {
            write!(f, " (+{} inside the decompressed block)", self.1)?;
        }
        Ok(())
    }
}
struct Needed(bool, u64);
impl fmt::Display for Needed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 {
            write!(f, " (needs {})", self.1)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
