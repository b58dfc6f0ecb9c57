//! The boundary every fallible export goes through (with `std`, a panic
//! becomes `FLOXLOG_PANIC`; without, the build aborts on panic and
//! `panic.rs` handles it; a failure is copied into the caller's
//! `floxlog_error`),
//! and the checks on caller pointers and lengths. Each check returns a
//! `Fail` instead of dereferencing something unusable; the remaining
//! promise (the memory is real) is the caller's.

use crate::error::{floxlog_error, floxlog_result, Fail, PtrFault};
use core::mem::{size_of, MaybeUninit};
use floxlog_result::*;

pub(crate) type FfiResult = Result<floxlog_result, Fail>;

/// Runs `f`, turns a panic into `FLOXLOG_PANIC`, and copies a failure into
/// `*err` when `err` is usable.
#[inline(always)]
pub(crate) fn boundary(err: *mut floxlog_error, f: impl FnOnce() -> FfiResult) -> floxlog_result {
    // Only the code leaves the unwinding frame, so the success path moves a
    // u32 and nothing else; failures are reported from inside (cold).
    let body = || match f() {
        Ok(code) => code,
        Err(fail) => {
            report(err, fail);
            fail.code
        }
    };
    #[cfg(feature = "std")]
    let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(body));
    #[cfg(not(feature = "std"))]
    let r: Result<floxlog_result, ()> = Ok(body());
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

/// The body of a function whose result is one value written to `*out`:
/// checks `out`, computes the value (`f` may fail), writes it.
///
/// # Safety
/// If non-NULL and aligned, `out` must be writable.
#[inline(always)]
pub(crate) unsafe fn output<T>(
    err: *mut floxlog_error,
    out: *mut T,
    what: &'static str,
    f: impl FnOnce() -> Result<T, Fail>,
) -> floxlog_result {
    boundary(err, || {
        check_out(out, what)?;
        let v = f()?;
        // SAFETY: checked above; writability is the caller's promise.
        unsafe { put(out, v) };
        Ok(FLOXLOG_OK)
    })
}

/// Checks a required input pointer; `arg` is its name in the prototype.
pub(crate) fn check_in<T>(p: *const T, arg: &'static str) -> Result<(), Fail> {
    if p.is_null() {
        Err(Fail::null(arg))
    } else if !p.is_aligned() {
        Err(Fail::pointer(
            arg,
            PtrFault::Misaligned(core::mem::align_of::<T>()),
        ))
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

/// Writes `v` to `*p` if `p` is usable (non-NULL and aligned): for counts
/// that are reported on every return, failures included.
///
/// # Safety
/// If non-NULL and aligned, `p` must be writable.
pub(crate) unsafe fn put_if_usable<T>(p: *mut T, v: T) {
    if !p.is_null() && p.is_aligned() {
        // SAFETY: the caller's promise.
        unsafe { p.write(v) };
    }
}

/// Checks a caller buffer of `len` `T`s without touching it: NULL only when
/// empty, aligned, size in range.
pub(crate) fn check_slice<T>(p: *const T, len: usize, what: &'static str) -> Result<(), Fail> {
    if len == 0 {
        return Ok(());
    }
    if p.is_null() {
        return Err(Fail::pointer(what, PtrFault::NullWithCount(len)));
    }
    check_in(p, what)?;
    if len
        .checked_mul(size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Fail::pointer(what, PtrFault::TooLong(len)));
    }
    Ok(())
}

/// Whether two non-empty byte ranges `(start, len)` intersect.
pub(crate) fn overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.1 > 0 && b.1 > 0 && a.0 < b.0.saturating_add(b.1) && b.0 < a.0.saturating_add(a.1)
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
    check_slice(p, len, what)?;
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: non-NULL, aligned, length in range; validity is the caller's
    // promise.
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// Required input bytes (`data`, `len`): NULL is an error even with
/// length 0.
///
/// # Safety
/// As `slice_in`.
pub(crate) unsafe fn data_in<'a>(data: *const u8, len: usize) -> Result<&'a [u8], Fail> {
    if data.is_null() {
        return Err(Fail::null("data"));
    }
    // SAFETY: forwarded caller promise.
    unsafe { slice_in(data, len, "data") }
}

/// The checks every batch read makes of its arguments: `count` is
/// writable, `cap` is not 0, and `p` holds `cap` writable slots (`what`
/// names them in errors). Returns the slots.
///
/// # Safety
/// As [`slice_uninit`] for `p` and `cap`.
pub(crate) unsafe fn batch_slots<'a, T>(
    count: *mut usize,
    p: *mut T,
    cap: usize,
    what: &'static str,
) -> Result<&'a mut [MaybeUninit<T>], Fail> {
    check_out(count, "count")?;
    if cap == 0 {
        return Err(Fail::invalid("batch capacity is 0"));
    }
    // SAFETY: the caller's promise.
    unsafe { slice_uninit(p, cap, what) }
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
    check_slice(p, len, what)?;
    if len == 0 {
        return Ok(&mut []);
    }
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
    check_slice(p, len, what)?;
    if len == 0 {
        return Ok(&mut []);
    }
    // SAFETY: non-NULL, length in range; exclusivity and validity are the
    // caller's promise (see above for why the contents do not matter).
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

/// Copies `src` into the start of a caller buffer.
///
/// # Safety
/// As `slice_uninit` for `src.len()` bytes at `p`.
pub(crate) unsafe fn copy_out(p: *mut u8, src: &[u8], what: &'static str) -> Result<(), Fail> {
    // SAFETY: forwarded caller promise.
    let out = unsafe { slice_uninit(p, src.len(), what) }?;
    for (o, s) in out.iter_mut().zip(src) {
        o.write(*s);
    }
    Ok(())
}
