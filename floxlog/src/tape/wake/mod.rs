//! The tape's wake page: a small file (`.floxlog.wake`) in the tape
//! directory, mapped shared by the journal writer and its tailers, through
//! which a process asleep waiting on the tape is woken by the one that
//! changed it, with no system call when nobody sleeps.
//!
//! The page holds [`Slot`]s, one per kind of sleeper: [`Page::tailers`]
//! (tailers waiting for the next frame) and [`Page::writer`] (kept for the
//! writer's own background thread: the same mechanism wakes it when it
//! sleeps and work is due). A slot is four words:
//!
//! - `seq`, the futex word: bumped by a waker before it wakes;
//! - `waiting`: set by a sleeper before it sleeps, cleared by the waker
//!   that wakes it (so a killed sleeper costs one needless wake, not one
//!   per append for ever);
//! - `gen`: bumped when what sleepers follow changed beyond the next
//!   frame (a segment got its first frame, the writer closed): a tailer
//!   that sees it change looks at the directory again;
//! - `armed`: non-zero while a waker that owns the slot is alive (a
//!   journal writer holds the tape): without it, sleepers back off
//!   instead of waiting for a wake that no one sends.
//!
//! A sleeper: sets `waiting`, reads `seq`, checks its condition again
//! (the frame's size word), then sleeps while `seq` is still what it read,
//! for a bounded time. A waker, after publishing: a plain load of
//! `waiting`, and only when set, clears it, bumps `seq` and wakes all.
//! The waker's load is not ordered after its publishing store (no fence on
//! the append path), so in a window of a few nanoseconds both sides can
//! miss each other; the sleeper's bounded sleep ends that case.
//!
//! Linux sleeps on `futex(2)` (shared, not private: the sleepers are
//! other processes); elsewhere [`Slot::sleep`] reports that it cannot and
//! the caller backs off as before.

pub(crate) mod futex;

use std::fs::OpenOptions;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The wake page's file name in a tape directory.
pub const WAKE_FILE: &str = ".floxlog.wake";

/// Bytes of the file (one page).
const PAGE: usize = 4096;
/// First 8 bytes: what the file is, and the layout's version.
const MAGIC: u64 = u64::from_le_bytes(*b"FLXWAKE1");
/// Each slot on its own cache line, so a waker's store to one does not
/// disturb the line another side spins on.
const SLOT_AT: [usize; 2] = [64, 128];

/// One kind of sleeper's words (see the module docs).
#[repr(C)]
pub struct Slot {
    seq: AtomicU32,
    waiting: AtomicU32,
    gen: AtomicU32,
    armed: AtomicU32,
}

/// How a sleep ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woke {
    /// A waker bumped `seq` (before or during the sleep).
    Woken,
    /// The time ran out (or a signal came).
    TimedOut,
    /// This platform has no sleep on the page: back off instead.
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    Unsupported,
}

impl Slot {
    /// After publishing: wakes the sleepers, if any said they sleep. The
    /// cost when none does: one load.
    #[inline(always)]
    pub fn notify(&self) {
        if self.waiting.load(Ordering::Relaxed) != 0 {
            self.wake_all();
        }
    }

    /// What sleepers follow changed beyond the next frame: bumps `gen`,
    /// then wakes them as [`Slot::notify`].
    pub fn changed(&self) {
        self.gen.fetch_add(1, Ordering::Release);
        self.notify();
    }

    #[cold]
    #[inline(never)]
    fn wake_all(&self) {
        self.waiting.store(0, Ordering::Relaxed);
        self.seq.fetch_add(1, Ordering::Release);
        futex::wake_all(&self.seq);
    }

    /// `gen` now (compare with a later read to see a change).
    #[inline(always)]
    pub fn gen(&self) -> u32 {
        self.gen.load(Ordering::Acquire)
    }

    /// Whether a waker owning this slot is alive.
    #[inline(always)]
    pub fn armed(&self) -> bool {
        self.armed.load(Ordering::Acquire) != 0
    }

    /// A sleeper's first step: says it will sleep and returns the `seq` to
    /// sleep on. Check the condition again after this, then
    /// [`Slot::sleep`].
    pub fn prepare(&self) -> u32 {
        self.waiting.store(1, Ordering::SeqCst);
        self.seq.load(Ordering::SeqCst)
    }

    /// Sleeps while `seq` is `seen` (from [`Slot::prepare`]), at most `max`.
    pub fn sleep(&self, seen: u32, max: Duration) -> Woke {
        futex::wait(&self.seq, seen, max)
    }
}

/// The journal writer's one call after publishing frames: wakes sleeping
/// tailers (`first`: the segment's first frames, so they look for it).
#[inline(always)]
pub(crate) fn published(page: &Option<Page>, first: bool) {
    if let Some(p) = page {
        if first {
            p.tailers().changed();
        } else {
            p.tailers().notify();
        }
    }
}

/// A tape's wake page, mapped.
pub struct Page {
    map: memmap2::MmapMut,
    /// Made by a waker (the journal writer), at this path: on drop its
    /// slot is disarmed, its sleepers woken, and the file removed (a
    /// sleeper keeps its map, sees the slot disarmed, and looks for the
    /// next writer's page).
    owner: Option<std::path::PathBuf>,
}

impl Page {
    /// The waker's side: creates (or takes over) the tape's page and arms
    /// the tailers' slot. Only the tape lock's holder calls this.
    pub fn create(dir: &Path) -> std::io::Result<Page> {
        let path = dir.join(WAKE_FILE);
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        if f.metadata()?.len() < PAGE as u64 {
            f.set_len(PAGE as u64)?;
        }
        let mut p = Page::map(&f, Some(path))?;
        if p.magic() != MAGIC {
            // New, or not ours: zeroed before it is marked as a page.
            p.map.fill(0);
            // SAFETY: an 8-aligned word inside the page-aligned map.
            let m = unsafe { std::sync::atomic::AtomicU64::from_ptr(p.map.as_mut_ptr().cast()) };
            m.store(MAGIC, Ordering::Release);
        }
        p.tailers().armed.store(1, Ordering::Release);
        Ok(p)
    }

    /// A sleeper's side: the tape's page if a waker made one (None: no
    /// file, not a page, or not writable by this process).
    pub fn open(dir: &Path) -> Option<Page> {
        let path = dir.join(WAKE_FILE);
        let mut o = OpenOptions::new();
        o.read(true).write(true);
        #[cfg(unix)]
        {
            // A link or FIFO named like the page is never opened.
            use std::os::unix::fs::OpenOptionsExt;
            o.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
        }
        let f = o.open(&path).ok()?;
        let md = f.metadata().ok()?;
        if !md.is_file() || md.len() < PAGE as u64 {
            return None;
        }
        let p = Page::map(&f, None).ok()?;
        (p.magic() == MAGIC).then_some(p)
    }

    fn map(f: &std::fs::File, owner: Option<std::path::PathBuf>) -> std::io::Result<Page> {
        // SAFETY: the file is at least PAGE long and only ever grows (the
        // waker sets its length once; nothing shrinks it), so no page of
        // the map lies past its end; every access goes through atomics.
        let map = unsafe { memmap2::MmapOptions::new().len(PAGE).map_mut(f)? };
        Ok(Page { map, owner })
    }

    fn magic(&self) -> u64 {
        // SAFETY: an 8-aligned word inside the page-aligned map.
        let m = unsafe { std::sync::atomic::AtomicU64::from_ptr(self.map.as_ptr() as *mut u64) };
        m.load(Ordering::Acquire)
    }

    fn slot(&self, i: usize) -> &Slot {
        const { assert!(std::mem::size_of::<Slot>() <= 64) };
        // SAFETY: SLOT_AT[i] + 16 <= PAGE, 64-aligned in the page-aligned
        // map, which lives as long as `self`; `Slot` is four atomics
        // (repr(C)), valid for any bytes, shared across processes only
        // through atomic operations.
        unsafe { &*(self.map.as_ptr().add(SLOT_AT[i]) as *const Slot) }
    }

    /// Tailers waiting for the next frame; woken by the journal writer.
    pub fn tailers(&self) -> &Slot {
        self.slot(0)
    }

    /// The writer's own background thread (production journal): woken by
    /// appending threads when it sleeps and work is due.
    #[allow(dead_code)] // the production journal's (issue 35) to use
    pub fn writer(&self) -> &Slot {
        self.slot(1)
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        if let Some(path) = &self.owner {
            let s = self.tailers();
            s.armed.store(0, Ordering::Release);
            s.changed();
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests;
