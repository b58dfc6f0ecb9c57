//! The pages of a live segment made ready ahead of the appender: only a
//! bounded window ([`WINDOW`] bytes) past the append position is faulted
//! in and dirtied, not the whole segment, so an idle writer costs its
//! window, not its segments (their blocks stay reserved by `fallocate`:
//! no page of the mapping can meet a full disk).
//!
//! The appender moves the window without a system call: when its position
//! passes the next step ([`STEP`]) it stores how far it wants pages ready
//! and rings the background thread (which makes a system call only when
//! that thread sleeps); the thread faults the pages in with
//! `MADV_POPULATE_WRITE`, off the appending thread.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Bytes made ready ahead of the append position (a few MiB: at 60-byte
/// trades, 70,000 appends).
pub(super) const WINDOW: u64 = 4 << 20;
/// The appender asks for the window to move every this many bytes.
pub(super) const STEP: u64 = WINDOW / 2;

/// One live segment's window (shared by the appender and the background
/// thread).
pub(super) struct Window {
    /// The mapping's address and length.
    base: usize,
    len: usize,
    /// Bytes from 0 the appender wants ready.
    pub(super) want: AtomicU64,
    state: Mutex<State>,
}

struct State {
    /// Bytes from 0 made ready.
    ready: u64,
    /// False once the mapping is (about to be) dropped: nothing may touch it.
    mapped: bool,
}

impl Window {
    /// A window over the mapping at `base`, `len` bytes, whose first
    /// `ready` bytes are made ready already.
    pub(super) fn new(base: *mut u8, len: usize, ready: u64) -> Window {
        Window {
            base: base as usize,
            len,
            want: AtomicU64::new(ready),
            state: Mutex::new(State {
                ready,
                mapped: true,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the appender asked for pages not ready yet.
    pub(super) fn due(&self) -> bool {
        let want = self.want.load(Ordering::SeqCst);
        want > self.lock().ready
    }

    /// Makes the pages the appender asked for ready (background thread).
    /// Returns the bytes faulted in.
    pub(super) fn advance(&self) -> u64 {
        let mut st = self.lock();
        let want = self.want.load(Ordering::Acquire).min(self.len as u64);
        if !st.mapped || want <= st.ready {
            return 0;
        }
        // SAFETY: [ready, want) is inside the mapping, which is alive
        // (`mapped`, checked under the lock its unmapper takes first).
        unsafe { populate(self.base as *mut u8, st.ready as usize, want as usize) };
        let done = want - st.ready;
        st.ready = want;
        done
    }

    /// Bytes from 0 made ready.
    #[cfg(test)]
    pub(super) fn ready(&self) -> u64 {
        self.lock().ready
    }

    /// Called before the mapping is dropped: the background thread will
    /// not touch it any more (waits for it to finish if it is at work).
    pub(super) fn unmapping(&self) {
        self.lock().mapped = false;
    }
}

/// Faults in (writable) the pages of `[from, to)` of the mapping at `base`.
///
/// # Safety
/// The range must be inside a live shared writable mapping.
pub(super) unsafe fn populate(base: *mut u8, from: usize, to: usize) {
    let from = from & !4095;
    if to <= from {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a page-aligned range inside the mapping (caller).
        let r =
            unsafe { libc::madvise(base.add(from).cast(), to - from, libc::MADV_POPULATE_WRITE) };
        if r == 0 {
            return;
        }
    }
    // Kernels before 5.14: touch each page with an atomic add of 0, which
    // faults it in writable without changing a byte the appender may be
    // writing at the same time (it never is, unless it outran the window).
    for at in (from..to).step_by(4096) {
        // SAFETY: inside the mapping (caller); an atomic RMW of 0.
        unsafe { AtomicU8::from_ptr(base.add(at)).fetch_add(0, Ordering::Relaxed) };
    }
}
