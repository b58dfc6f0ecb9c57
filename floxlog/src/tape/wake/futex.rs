//! The sleep and wake system calls behind a wake slot's `seq` word.

use super::Woke;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Sleeps while `word` holds `seen`, at most `max`.
#[cfg(target_os = "linux")]
pub(crate) fn wait(word: &AtomicU32, seen: u32, max: Duration) -> Woke {
    let ts = libc::timespec {
        tv_sec: max.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: max.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT (shared: the word is in a file mapping other
    // processes wake on) reads the aligned word and the timespec, both
    // alive for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            seen,
            &ts as *const libc::timespec,
        )
    };
    if r == 0 {
        return Woke::Woken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        // `seq` moved before the sleep began: a wake came already.
        Some(libc::EAGAIN) => Woke::Woken,
        _ => Woke::TimedOut,
    }
}

/// Wakes every sleeper on `word`.
#[cfg(target_os = "linux")]
pub(crate) fn wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the word's address as a key.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn wait(_: &AtomicU32, _: u32, _: Duration) -> Woke {
    Woke::Unsupported
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn wake_all(_: &AtomicU32) {}
