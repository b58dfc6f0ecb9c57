//! Failures of the tape-level API: `floxlog_tape_error` (code, file, byte
//! offset and a printable message, all in the caller's struct), the code of
//! each tape error class, and the boundary every tape export goes through.

use crate::boundary::boundary;
use crate::error::{floxlog_result, Fail};
use crate::words::CWords;
use core::ffi::{c_char, CStr};
use floxlog::tape::{TapeError, TapeErrorKind};
use floxlog_result::*;
use std::path::PathBuf;

/// Bytes of `floxlog_tape_error.file`, including its NUL (PATH_MAX).
pub const FLOXLOG_TAPE_PATH_LEN: usize = 4096;
/// Bytes of `floxlog_tape_error.message`, including its NUL.
pub const FLOXLOG_TAPE_MESSAGE_LEN: usize = 1024;

/// Details of a failed tape operation, filled when a function that takes a
/// `floxlog_tape_error *` fails and the pointer is not NULL (untouched on
/// success). Plain data owned by the caller (about 5 KiB: fine on the
/// stack); it holds no pointers and outlives the handle that failed.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct floxlog_tape_error {
    /// The `floxlog_result` code the function returned.
    pub code: u32,
    /// Non-zero when `offset` is meaningful.
    pub has_offset: u8,
    /// Non-zero when `file` names a file (else it is the empty string).
    pub has_file: u8,
    /// Non-zero when `file` or `message` was cut to fit.
    pub truncated: u8,
    /// Byte offset in `file` of what failed (segment header 0, the frame
    /// or block header of a damaged frame, the index offset...).
    pub offset: u64,
    /// The file concerned (a segment, manifest, lock file or directory),
    /// NUL-terminated UTF-8 (a non-UTF-8 path is shown lossily).
    pub file: [c_char; FLOXLOG_TAPE_PATH_LEN],
    /// One printable text, NUL-terminated: `<file> at byte <offset>:
    /// <what failed>`, then on a second line `  hint: <what to do>` when
    /// there is a hint, naming this API's functions and settings.
    pub message: [c_char; FLOXLOG_TAPE_MESSAGE_LEN],
}

/// A failure of a tape export before it is copied out.
#[derive(Debug)]
pub(crate) enum TapeFail {
    /// A failure of the ABI layer (NULL pointer, bad enum value...).
    Ffi(Fail),
    /// A failure of the tape layer.
    Tape(Box<TapeError>),
    /// A tape error reported under a code of its own (e.g. a verify that
    /// failed, whose text names the first finding).
    Coded(floxlog_result, Box<TapeError>),
}

impl From<Fail> for TapeFail {
    fn from(f: Fail) -> Self {
        TapeFail::Ffi(f)
    }
}

impl From<TapeError> for TapeFail {
    fn from(e: TapeError) -> Self {
        TapeFail::Tape(Box::new(e))
    }
}

pub(crate) type TapeResult<T> = Result<T, TapeFail>;

/// The code of a tape error.
pub(crate) fn tape_code(e: &TapeError) -> floxlog_result {
    match e.kind {
        TapeErrorKind::Io(std::io::ErrorKind::WouldBlock) => FLOXLOG_TAPE_LOCKED,
        TapeErrorKind::Io(_) => FLOXLOG_IO_ERROR,
        TapeErrorKind::Data(k) => floxlog_result::from_kind(k),
        TapeErrorKind::Manifest => FLOXLOG_BAD_MANIFEST,
        TapeErrorKind::Input | TapeErrorKind::Usage => FLOXLOG_INVALID_INPUT,
    }
}

/// Copies `s` into a C char array, cut at a character boundary to leave
/// room for the NUL; returns whether it was cut.
pub(crate) fn put_str(dst: &mut [c_char], s: &str) -> bool {
    let mut n = s.len().min(dst.len().saturating_sub(1));
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    for (d, b) in dst.iter_mut().zip(&s.as_bytes()[..n]) {
        *d = *b as c_char;
    }
    if let Some(z) = dst.get_mut(n) {
        *z = 0;
    }
    n < s.len()
}

impl TapeFail {
    pub(crate) fn code(&self) -> floxlog_result {
        match self {
            TapeFail::Ffi(f) => f.code,
            TapeFail::Tape(e) => tape_code(e),
            TapeFail::Coded(c, _) => *c,
        }
    }

    /// Fills a C error (zeroed first).
    pub(crate) fn fill(&self, out: &mut floxlog_tape_error) {
        *out = zeroed_error();
        out.code = self.code() as u32;
        let cut = match self {
            TapeFail::Ffi(f) => {
                out.offset = f.offset;
                out.has_offset = u8::from(f.offset != 0);
                put_str(&mut out.message, &f.text())
            }
            TapeFail::Tape(e) | TapeFail::Coded(_, e) => {
                let mut cut = false;
                if let Some(p) = &e.path {
                    out.has_file = 1;
                    cut |= put_str(&mut out.file, &p.to_string_lossy());
                }
                if let Some(o) = e.offset {
                    out.has_offset = 1;
                    out.offset = o;
                }
                cut | put_str(&mut out.message, &e.localized(&CWords).to_string())
            }
        };
        out.truncated = u8::from(cut);
    }
}

/// An empty error (code 0, empty strings).
pub(crate) fn zeroed_error() -> floxlog_tape_error {
    floxlog_tape_error {
        code: 0,
        has_offset: 0,
        has_file: 0,
        truncated: 0,
        offset: 0,
        file: [0; FLOXLOG_TAPE_PATH_LEN],
        message: [0; FLOXLOG_TAPE_MESSAGE_LEN],
    }
}

/// Runs a tape export: a panic becomes `FLOXLOG_PANIC`, a failure is
/// copied into `*err` when `err` is usable.
pub(crate) fn tape_boundary(
    err: *mut floxlog_tape_error,
    f: impl FnOnce() -> TapeResult<floxlog_result>,
) -> floxlog_result {
    // The codec boundary catches the panic; its `floxlog_error` is not
    // wanted here, so a panic is reported into the tape error below.
    let mut failure: Option<TapeFail> = None;
    let rc = boundary(core::ptr::null_mut(), || match f() {
        Ok(code) => Ok(code),
        Err(fail) => {
            let code = fail.code();
            failure = Some(fail);
            Ok(code)
        }
    });
    if rc == FLOXLOG_PANIC {
        failure = Some(TapeFail::Ffi(Fail::new(
            FLOXLOG_PANIC,
            "a Rust panic was caught at the C boundary",
        )));
    }
    if let Some(fail) = failure {
        report(err, &fail);
    }
    rc
}

#[cold]
fn report(err: *mut floxlog_tape_error, fail: &TapeFail) {
    if !err.is_null() && err.is_aligned() {
        // Filled in a local first, so that no reference to possibly
        // uninitialised caller memory is made.
        let mut local = zeroed_error();
        fail.fill(&mut local);
        // SAFETY: non-NULL and aligned; the caller promises it points at a
        // writable floxlog_tape_error.
        unsafe { err.write(local) };
    }
}

/// A path from a C string (bytes as given: Unix paths need not be UTF-8).
///
/// # Safety
/// If non-NULL, `p` must point at a NUL-terminated string.
pub(crate) unsafe fn path_in(p: *const c_char, what: &'static str) -> Result<PathBuf, Fail> {
    if p.is_null() {
        return Err(Fail::null(what));
    }
    // SAFETY: the caller's promise.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    if bytes.is_empty() {
        return Err(Fail::invalid(what));
    }
    use std::os::unix::ffi::OsStrExt;
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
}

/// A UTF-8 string from a C string.
///
/// # Safety
/// As `path_in`.
pub(crate) unsafe fn str_in<'a>(p: *const c_char, what: &'static str) -> Result<&'a str, Fail> {
    if p.is_null() {
        return Err(Fail::null(what));
    }
    // SAFETY: the caller's promise.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| Fail::invalid(what))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(a: &[c_char]) -> String {
        let b: Vec<u8> = a
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn a_tape_error_keeps_file_offset_and_names_the_c_functions() {
        let e = TapeError::data(
            std::path::Path::new("/t/1.floxlog"),
            floxlog_core::Error::new(floxlog_core::ErrorKind::CrcMismatch, 640, "frame CRC"),
        );
        let mut c = zeroed_error();
        let rc = tape_boundary(&mut c, || Err(e.clone().into()));
        assert_eq!(rc, FLOXLOG_CRC_MISMATCH);
        assert_eq!(c.code, FLOXLOG_CRC_MISMATCH as u32);
        assert_eq!((c.has_offset, c.offset, c.has_file), (1, 640, 1));
        assert_eq!(text(&c.file), "/t/1.floxlog");
        assert_eq!(
            text(&c.message),
            e.localized(&crate::words::CWords).to_string()
        );
        assert!(text(&c.message).starts_with("/t/1.floxlog at byte 640: "));
        assert!(text(&c.message).contains("`floxlog_tape_recover` keeps"));
    }

    #[test]
    fn long_texts_are_cut_at_a_character_and_say_so() {
        let mut a = [1 as c_char; 8];
        assert!(put_str(&mut a, "ééééé"));
        assert_eq!(text(&a), "ééé");
        assert!(!put_str(&mut a, "ok"));
        assert_eq!(text(&a), "ok");
    }

    #[test]
    fn lock_and_io_errors_have_their_own_codes() {
        let p = std::path::Path::new("/t");
        let locked = TapeError::io(p, "locking", std::io::ErrorKind::WouldBlock.into());
        assert_eq!(tape_code(&locked), FLOXLOG_TAPE_LOCKED);
        let missing = TapeError::io(p, "opening", std::io::ErrorKind::NotFound.into());
        assert_eq!(tape_code(&missing), FLOXLOG_IO_ERROR);
        let m = TapeError::manifest(p, "bad", "fix");
        assert_eq!(tape_code(&m), FLOXLOG_BAD_MANIFEST);
    }
}
