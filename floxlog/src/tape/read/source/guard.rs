//! Survives a segment file shrinking under its map.
//!
//! Touching a mapped page that lies past the end of a file another process
//! has since truncated raises `SIGBUS`. Reading through `pread` into owned
//! buffers would avoid it, but every layer above (the core's slice-based
//! segment parser, the batch kernels, time order's random access) reads the
//! map in place; copying every byte costs a pass over the data. So the
//! maps are guarded instead, at no cost on the read path:
//!
//! - each map registers its address range in a lock-free list (nodes are
//!   never freed, only reused, so the handler can walk it at any time);
//! - a `SIGBUS` handler, installed once, looks the faulting address up in
//!   that list. Inside one of our maps, it maps zero-filled anonymous pages
//!   over the rest of that map (`MAP_FIXED`), marks the map as faulted and
//!   returns: the read resumes on zeros, which no frame check accepts, and
//!   the reader then reports that the file shrank (see
//!   [`crate::tape::read::source::SegmentFile::shrunk`]). Any other address goes to the handler
//!   that was installed before ours (Rust's stack-overflow handler, a
//!   host's, ASan's), or to the default action: only our maps are ours.
//!
//! `mmap` is not on POSIX's async-signal-safe list, but on Linux and macOS
//! it is a plain system call that touches no user-space lock.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// One registered map (or a free node).
pub(super) struct Slot {
    /// Claimed by a map.
    used: AtomicBool,
    /// Start address; 0 while (re)registering or free.
    start: AtomicUsize,
    len: AtomicUsize,
    /// Offset of the first page replaced by zeros (`usize::MAX`: none).
    fault_at: AtomicUsize,
    next: AtomicPtr<Slot>,
}

static HEAD: AtomicPtr<Slot> = AtomicPtr::new(std::ptr::null_mut());

/// Whether our handler is in place (installed on the first map).
static INSTALLED: OnceLock<bool> = OnceLock::new();
/// The action before ours, for the handler (set before ours is installed).
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// A registered map: unregistered on drop (before the map is unmapped).
pub(super) struct Guard {
    slot: &'static Slot,
}

impl Guard {
    /// Registers `[start, start + len)`; `None` if the handler could not be
    /// installed (the map is then as unguarded as any other).
    pub fn register(start: *const u8, len: usize) -> Option<Guard> {
        if !*INSTALLED.get_or_init(|| enabled() && install().is_some()) {
            return None;
        }
        let start = start as usize;
        let slot = claim();
        slot.len.store(len, Ordering::Release);
        slot.fault_at.store(usize::MAX, Ordering::Release);
        slot.start.store(start, Ordering::Release);
        Some(Guard { slot })
    }

    /// Offset of the first byte replaced by zeros, if the file shrank under
    /// the map and a read touched the vanished pages.
    pub fn fault_at(&self) -> Option<u64> {
        match self.slot.fault_at.load(Ordering::Acquire) {
            usize::MAX => None,
            o => Some(o as u64),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.slot.start.store(0, Ordering::Release);
        self.slot.len.store(0, Ordering::Release);
        self.slot.used.store(false, Ordering::Release);
    }
}

/// `FLOXLOG_SIGBUS_GUARD=0` leaves `SIGBUS` alone (plain maps): for hosts
/// that want no handler of ours, and to measure what the guard costs.
fn enabled() -> bool {
    std::env::var_os("FLOXLOG_SIGBUS_GUARD").is_none_or(|v| v != "0")
}

/// A free node, or a new one pushed on the list.
fn claim() -> &'static Slot {
    let mut p = HEAD.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: nodes are leaked boxes, never freed.
        let s = unsafe { &*p };
        if s.used
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return s;
        }
        p = s.next.load(Ordering::Acquire);
    }
    let s: &'static Slot = Box::leak(Box::new(Slot {
        used: AtomicBool::new(true),
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
        fault_at: AtomicUsize::new(usize::MAX),
        next: AtomicPtr::new(std::ptr::null_mut()),
    }));
    let mut head = HEAD.load(Ordering::Acquire);
    loop {
        s.next.store(head, Ordering::Release);
        let me = s as *const Slot as *mut Slot;
        match HEAD.compare_exchange(head, me, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return s,
            Err(h) => head = h,
        }
    }
}

fn install() -> Option<()> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = usize::try_from(page).ok().filter(|p| p.is_power_of_two())?;
    // SAFETY: zeroed sigaction structs are valid (empty mask, no flags);
    // the new action's handler is a valid `extern "C"` function with the
    // SA_SIGINFO signature, and `old` receives the previous action.
    unsafe {
        let mut new: libc::sigaction = std::mem::zeroed();
        let mut old: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
        libc::sigemptyset(&mut new.sa_mask);
        // The previous action is read first and published before ours is
        // installed, so the handler always has it to chain to.
        if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) != 0 {
            return None;
        }
        PAGE.store(page, Ordering::Release);
        PREVIOUS.store(Box::into_raw(Box::new(old)), Ordering::Release);
        if libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) != 0 {
            return None;
        }
        Some(())
    }
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { info.as_ref().map_or(0, |i| i.si_addr() as usize) };
    if addr != 0 && zero_fill(addr) {
        return;
    }
    chain(sig, info, ctx);
}

/// Replaces the rest of the registered map holding `addr` with zero pages.
fn zero_fill(addr: usize) -> bool {
    let page = PAGE.load(Ordering::Relaxed);
    let mut p = HEAD.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: nodes are leaked boxes, never freed.
        let s = unsafe { &*p };
        p = s.next.load(Ordering::Acquire);
        let start = s.start.load(Ordering::Acquire);
        let len = s.len.load(Ordering::Acquire);
        if start == 0 || addr < start || addr - start >= len {
            continue;
        }
        let from = addr & !(page - 1);
        let end = (start + len).div_ceil(page) * page;
        // SAFETY: [from, end) lies inside our own read-only file map (the
        // map covers whole pages); replacing it with private anonymous
        // zero pages changes no other memory, and the map's owner unmaps
        // the same range later.
        let r = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                end - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if r == libc::MAP_FAILED {
            return false;
        }
        s.fault_at.fetch_min(from - start, Ordering::AcqRel);
        return true;
    }
    false
}

/// Hands a fault that is not ours to the action installed before ours.
fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let old = PREVIOUS.load(Ordering::Acquire);
    // SAFETY: PREVIOUS is a leaked box written once before our handler was
    // installed; the handler it names was installed by this process.
    unsafe {
        if let Some(old) = old.as_ref() {
            let h = old.sa_sigaction;
            if h != libc::SIG_DFL && h != libc::SIG_IGN {
                if old.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(h);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
                    f(sig);
                }
                return;
            }
        }
        // The default action: a real bus error still ends the process, as
        // it would have without us (returning re-runs the faulting access).
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
        libc::raise(sig);
    }
}
