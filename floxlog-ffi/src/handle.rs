//! Opaque handles: a Rust value behind a pointer to an opaque C type,
//! placed in the caller's storage (`_init`) or boxed (`_new`, with `std`),
//! recognised by a magic number in its first field, and the getter every
//! read-only query of a handle is.

#[cfg(feature = "std")]
use crate::boundary::boundary;
use crate::boundary::{check_out, output};
use crate::consts::FLOXLOG_STORAGE_ALIGN;
use crate::error::{floxlog_result, Fail, PtrFault};
use core::ffi::c_void;
#[cfg(feature = "tape")]
use core::sync::atomic::{AtomicBool, Ordering};
#[cfg(feature = "std")]
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
    /// Whether the handle was boxed by `_new` (else it lives in caller
    /// storage, which `_free` must not release). Handles without `_init`
    /// are always boxed.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    fn is_boxed(_h: &Self::Handle) -> bool {
        true
    }
}

/// Makes C type `$c` the opaque face of handle `$h`, whose name in
/// messages is `$null` when NULL. Checks at compile time what [`Opaque`]'s
/// safety needs: `$h` is `repr(C)` (its definition says so) with `magic:
/// u64` first. With `storage $bytes`, `$h` may also live in caller storage
/// (`_init`): it has a `boxed: bool` field, and `$bytes` (its
/// `_STORAGE_BYTES` constant) and `FLOXLOG_STORAGE_ALIGN` are checked to
/// cover it (on every target: the header's constants are the same for all).
macro_rules! opaque {
    ($c:ident => $h:ident, magic $m:expr, null $null:literal) => {
        opaque!(@impl $c => $h, $m, $null, {});
    };
    ($c:ident => $h:ident, magic $m:expr, null $null:literal, storage $bytes:expr) => {
        const _: () = assert!(core::mem::size_of::<$h>() <= $bytes);
        const _: () =
            assert!(core::mem::align_of::<$h>() <= $crate::consts::FLOXLOG_STORAGE_ALIGN);
        opaque!(@impl $c => $h, $m, $null, {
            fn is_boxed(h: &$h) -> bool {
                h.boxed
            }
        });
    };
    (@impl $c:ident => $h:ident, $m:expr, $null:literal, { $($boxed:tt)* }) => {
        const _: () = assert!(core::mem::offset_of!($h, magic) == 0);
        const _: fn(&$h) -> u64 = |h| h.magic;
        // SAFETY: `$h` is repr(C) with the u64 magic first (checked above).
        unsafe impl $crate::handle::Opaque for $c {
            type Handle = $h;
            const MAGIC: u64 = $m;
            const NULL: &'static str = $null;
            const WRONG: &'static str = concat!("not a ", stringify!($c), " handle");
            $($boxed)*
        }
    };
}
pub(crate) use opaque;

/// Checks caller storage for a handle of type `H` before anything is
/// built: non-NULL, aligned to `FLOXLOG_STORAGE_ALIGN`, at least
/// `size_of::<H>()` bytes (what the `_STORAGE_BYTES` constant covers).
pub(crate) fn storage_for<H>(storage: *mut c_void, len: usize) -> Result<*mut H, Fail> {
    if storage.is_null() {
        return Err(Fail::null("storage"));
    }
    if !(storage as usize).is_multiple_of(FLOXLOG_STORAGE_ALIGN) {
        return Err(Fail::pointer(
            "storage",
            PtrFault::Misaligned(FLOXLOG_STORAGE_ALIGN),
        ));
    }
    if len < core::mem::size_of::<H>() {
        return Err(Fail::too_small(
            core::mem::size_of::<H>() as u64,
            "handle storage too small (see FLOXLOG_*_STORAGE_BYTES)",
        ));
    }
    Ok(storage as *mut H)
}

/// Moves a handle into storage checked by `storage_for`; the C pointer.
///
/// # Safety
/// `p` came from `storage_for` and the caller promises the memory is
/// writable and unused by anything else while the handle lives.
pub(crate) unsafe fn place<C: Opaque>(p: *mut C::Handle, h: C::Handle) -> *mut C {
    // SAFETY: the caller's promise; `write` does not read the old bytes.
    unsafe { p.write(h) };
    p as *mut C
}

/// Boxes a handle for C (released by `free`).
#[cfg(feature = "std")]
pub(crate) fn into_c<C: Opaque>(h: C::Handle) -> *mut C {
    debug_assert!(C::is_boxed(&h));
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

#[cfg(feature = "tape")]
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

#[cfg(feature = "tape")]
/// A handle's claim: taken on entry by each call that changes the handle,
/// so that a second thread calling at the same time is told
/// `FLOXLOG_BUSY` (and does nothing) instead of racing the first.
pub(crate) struct Claim(AtomicBool);

#[cfg(feature = "tape")]
/// The claim held for one call; released on drop.
pub(crate) struct Claimed<'a>(&'a AtomicBool);

#[cfg(feature = "tape")]
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

#[cfg(feature = "tape")]
impl Drop for Claimed<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The body of `_free`: NULL is a no-op; the magic is cleared before the
/// handle is dropped, so a second free is recognised while the memory is
/// not reused. A handle in caller storage (`_init`) is only ended: its
/// storage is the caller's.
///
/// # Safety
/// As `handle`.
#[cfg(feature = "std")]
pub(crate) unsafe fn free<C: Opaque>(p: *mut C) {
    let _ = boundary(core::ptr::null_mut(), || {
        if p.is_null() {
            return Ok(FLOXLOG_OK);
        }
        // SAFETY: validates the magic before taking ownership.
        let boxed = C::is_boxed(unsafe { handle(p) }?);
        // SAFETY: a live handle; the magic is its first field. Boxed, it
        // came from `into_c`; else it holds nothing to release.
        unsafe {
            (p as *mut u64).write(0);
            if boxed {
                drop(Box::from_raw(p as *mut C::Handle));
            }
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
    #[cfg(feature = "tape")]
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
