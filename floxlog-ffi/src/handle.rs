//! Opaque handles: a Rust value boxed behind a pointer to an opaque C
//! type, recognised by a magic number in its first field, and the getter
//! every read-only query of a handle is.

use crate::boundary::{boundary, check_out, output};
use crate::error::{floxlog_result, Fail};
use core::sync::atomic::{AtomicBool, Ordering};
use floxlog_result::*;

/// An opaque C type whose pointers point at a `Self::Handle`.
///
/// # Safety
/// `Handle` is `repr(C)` with a `u64` first field that holds `MAGIC` while
/// the value is alive, so a pointer to any handle can be told apart by
/// reading that field.
pub(crate) unsafe trait Opaque: Sized {
    /// The Rust value behind the pointer.
    type Handle;
    /// The value of the handle's first field.
    const MAGIC: u64;
    /// `what` of the failure for a NULL pointer.
    const NULL: &'static str;
    /// `what` of the failure for a pointer to something else.
    const WRONG: &'static str;
}

/// Makes C type `$c` the opaque face of handle `$h`, whose name in
/// messages is `$null` when NULL. Checks at compile time what [`Opaque`]'s
/// safety needs: `$h` is `repr(C)` (its definition says so) with `magic:
/// u64` first.
macro_rules! opaque {
    ($c:ident => $h:ident, magic $m:expr, null $null:literal) => {
        const _: () = assert!(core::mem::offset_of!($h, magic) == 0);
        const _: fn(&$h) -> u64 = |h| h.magic;
        // SAFETY: `$h` is repr(C) with the u64 magic first (checked above).
        unsafe impl $crate::handle::Opaque for $c {
            type Handle = $h;
            const MAGIC: u64 = $m;
            const NULL: &'static str = $null;
            const WRONG: &'static str = concat!("not a ", stringify!($c), " handle");
        }
    };
}
pub(crate) use opaque;

/// Boxes a handle for C (released by `free`).
pub(crate) fn into_c<C: Opaque>(h: C::Handle) -> *mut C {
    Box::into_raw(Box::new(h)) as *mut C
}

/// The handle behind a caller pointer.
///
/// # Safety
/// `p` must be NULL or a pointer returned by the handle's `_new` and not
/// yet freed (a live handle of another type is recognised).
pub(crate) unsafe fn handle<'a, C: Opaque>(p: *mut C) -> Result<&'a mut C::Handle, Fail> {
    // SAFETY: forwarded caller promise.
    let h = unsafe { checked(p) }?;
    // SAFETY: a live handle (its magic says so); the caller promises no
    // other use of it during the call.
    Ok(unsafe { &mut *h })
}

/// `p` as a pointer to its handle, once NULL and the magic are checked.
///
/// # Safety
/// As `handle`.
unsafe fn checked<C: Opaque>(p: *mut C) -> Result<*mut C::Handle, Fail> {
    let h = p as *mut C::Handle;
    check_out(h, C::NULL)?;
    // SAFETY: non-NULL and aligned for the handle, so for its leading u64;
    // the caller promises a live handle, whose first field is its magic.
    if unsafe { (h as *const u64).read() } != C::MAGIC {
        return Err(Fail::invalid(C::WRONG));
    }
    Ok(h)
}

/// The handle behind a caller pointer, shared: for handles whose calls may
/// run on several threads at once (their mutable state behind a [`Claim`]
/// or atomics).
///
/// # Safety
/// As `handle`, except that other threads may use the handle meanwhile
/// (never `_free` it).
pub(crate) unsafe fn shared<'a, C: Opaque>(p: *mut C) -> Result<&'a C::Handle, Fail> {
    // SAFETY: forwarded caller promise; only shared references are made
    // of a handle other threads may use.
    let h = unsafe { checked(p) }?;
    // SAFETY: a live handle (its magic says so).
    Ok(unsafe { &*h })
}

/// A handle's claim: taken on entry by each call that changes the handle,
/// so that a second thread calling at the same time is told
/// `FLOXLOG_BUSY` (and does nothing) instead of racing the first.
pub(crate) struct Claim(AtomicBool);

/// The claim held for one call; released on drop.
pub(crate) struct Claimed<'a>(&'a AtomicBool);

impl Claim {
    pub(crate) const fn new() -> Claim {
        Claim(AtomicBool::new(false))
    }

    /// Takes the claim, or `FLOXLOG_BUSY` if another call holds it.
    #[inline]
    pub(crate) fn take(&self) -> Result<Claimed<'_>, Fail> {
        self.0
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .map(|_| Claimed(&self.0))
            .map_err(|_| Fail::new(FLOXLOG_BUSY, "handle in use by another thread"))
    }
}

impl Drop for Claimed<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The body of `_free`: NULL is a no-op; the magic is cleared before the
/// handle is dropped, so a second free is recognised while the memory is
/// not reused.
///
/// # Safety
/// As `handle`.
pub(crate) unsafe fn free<C: Opaque>(p: *mut C) {
    let _ = boundary(core::ptr::null_mut(), || {
        if p.is_null() {
            return Ok(FLOXLOG_OK);
        }
        // SAFETY: validates the magic before taking ownership.
        unsafe { handle(p) }?;
        // SAFETY: a live handle from `into_c`; the magic is its first field.
        unsafe {
            (p as *mut u64).write(0);
            drop(Box::from_raw(p as *mut C::Handle));
        }
        Ok(FLOXLOG_OK)
    });
}

/// The body of a getter: `*out = f(handle)`, with the pointer checks of
/// both (`out` first).
///
/// # Safety
/// `p` as for `handle`; if non-NULL and aligned, `out` must be writable.
#[inline(always)]
pub(crate) unsafe fn get<C: Opaque, T>(
    p: *mut C,
    out: *mut T,
    what: &'static str,
    f: impl FnOnce(&mut C::Handle) -> T,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { output(core::ptr::null_mut(), out, what, || Ok(f(handle(p)?))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A claim held refuses a second taker with FLOXLOG_BUSY until it is
    /// released.
    #[test]
    fn a_held_claim_refuses_a_second_call() {
        let c = Claim::new();
        let held = c.take().unwrap();
        let busy = c.take().err().unwrap();
        assert_eq!(busy.code, FLOXLOG_BUSY);
        assert_eq!(busy.what, "handle in use by another thread");
        drop(held);
        assert!(c.take().is_ok());
    }
}
