//! The journal's one use of `unsafe`: a segment file mapped shared, and the
//! release store that publishes a frame.
//!
//! Why it is sound:
//! - The file is created by the journal under the tape lock (no other
//!   writer, `recover` or `reindex` runs meanwhile) and its blocks are
//!   reserved with `posix_fallocate` before it is mapped, so no page of the
//!   mapping is beyond the end of the file or without disk space (no
//!   SIGBUS). The journal only shrinks a file after its mapping is
//!   dropped. Other processes only read it.
//! - The only Rust reference into the mapping is the `&mut [u8]` the
//!   segment encoder borrows for the length of one call; the publishing
//!   store goes through a raw pointer at a moment no reference is alive.
//! - The mapping's address does not change when the [`SegMap`] moves;
//!   a [`Publisher`] is only used while its `SegMap` lives (both belong
//!   to the segment the appending thread holds).

use memmap2::{MmapMut, MmapOptions};
use std::fs::File;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// A segment file mapped read-write, shared.
pub(super) struct SegMap {
    map: MmapMut,
}

impl SegMap {
    /// Maps the first `len` bytes of `file` (already at least that long).
    pub(super) fn new(file: &File, len: usize) -> std::io::Result<SegMap> {
        // SAFETY: see the module docs (exclusive writer, reserved blocks,
        // never shrunk while mapped).
        let map = unsafe { MmapOptions::new().len(len).map_mut(file)? };
        Ok(SegMap { map })
    }

    /// Makes the first `upto` bytes' pages present and writable (the
    /// first window, see [`super::window`]), so the appending thread takes
    /// no page fault there; returns the bytes made ready.
    pub(super) fn prefault(&mut self, upto: u64) -> u64 {
        let to = (upto as usize).min(self.map.len());
        // SAFETY: [0, to) is inside the mapping, which `self` keeps alive.
        unsafe { super::window::populate(self.map.as_mut_ptr(), 0, to) };
        to as u64
    }

    pub(super) fn bytes(&self) -> &[u8] {
        &self.map
    }

    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// The mapping's address (for its [`super::window::Window`]).
    pub(super) fn base(&mut self) -> *mut u8 {
        self.map.as_mut_ptr()
    }

    /// The store that publishes frames into this mapping.
    pub(super) fn publisher(&mut self) -> Publisher {
        Publisher {
            base: self.map.as_mut_ptr(),
            len: self.map.len(),
        }
    }
}

/// Publishes frames by writing their `size` field last (see
/// [`Publisher::publish`]).
#[derive(Clone, Copy)]
pub(super) struct Publisher {
    base: *mut u8,
    len: usize,
}

// SAFETY: a raw pointer into a shared file mapping, used by the one thread
// that holds the segment (see the module docs).
unsafe impl Send for Publisher {}
unsafe impl Sync for Publisher {}

impl Publisher {
    /// Writes `size` (LE) at offset `at`, after everything written into
    /// the mapping before: a release fence, then aligned atomic stores, so
    /// a reader that loads the size with acquire ordering and sees it sees
    /// the frame whole.
    ///
    /// A size field at a 4-aligned offset is one aligned 4-byte store,
    /// with no load: nothing around it is read back, so the store does not
    /// wait for the frame's cache line, which the frame's own stores have
    /// just asked of memory (a load from it would stall until the line
    /// arrives). With the record types of 1.0 that is every frame: every
    /// payload length is a multiple of 4 (trade 48, book 40 + 16n, option
    /// quote 112, pool state 32 + 20n), so after the 64-byte header every
    /// frame starts at a 4-aligned offset.
    ///
    /// Elsewhere (frames need not be aligned: 12-byte headers, payloads of
    /// any length) the 4 size bytes are read-modify-written inside the
    /// aligned 8-byte word(s) holding them; the other bytes of those words
    /// are final already (the previous frame's, or this frame's CRC and
    /// type), and only this thread writes the mapping. Whenever the bytes
    /// in the second word are zero (offset ≡ 7 with a payload under 256
    /// bytes, ≡ 6 under 64 KiB, ≡ 5 under 16 MiB) this is one
    /// single-copy-atomic store. Otherwise the high word goes first, then
    /// the low one: a live reader may briefly see only the high bytes (a
    /// wrong, larger-than-0 size whose payload CRC does not match) and must
    /// re-read a frame whose CRC fails at the live end of an unfinished
    /// journal segment (the tailer does: `tape/tail/cursor.rs`,
    /// `maybe_half_size`).
    #[inline(always)]
    pub(super) fn publish(&self, at: usize, size: u32) {
        debug_assert!(at + 4 <= self.len);
        fence(Ordering::Release);
        let addr = self.base as usize + at;
        if addr.is_multiple_of(4) {
            // SAFETY: a 4-aligned word inside the mapping (at + 4 <= len);
            // no reference into the mapping is alive (module docs).
            let a = unsafe { AtomicU32::from_ptr(addr as *mut u32) };
            a.store(size.to_le(), Ordering::Release);
            return;
        }
        let w0 = addr & !7;
        let k = addr - w0; // first size byte's place in word 0
        let bytes = size.to_le_bytes();
        // SAFETY: w0 (and w0 + 8 when the field crosses into it) are
        // 8-aligned words inside the page-aligned mapping (at + 4 <= len,
        // and the mapping's length is whole pages), no reference into the
        // mapping is alive (module docs).
        unsafe {
            if k + 4 > 8 {
                let low = 8 - k;
                let w1 = AtomicU64::from_ptr((w0 + 8) as *mut u64);
                if bytes[low..].iter().any(|&b| b != 0) {
                    let mut v = w1.load(Ordering::Relaxed).to_le_bytes();
                    v[..4 - low].copy_from_slice(&bytes[low..]);
                    w1.store(u64::from_le_bytes(v), Ordering::Release);
                }
                let a0 = AtomicU64::from_ptr(w0 as *mut u64);
                let mut v = a0.load(Ordering::Relaxed).to_le_bytes();
                v[k..].copy_from_slice(&bytes[..low]);
                a0.store(u64::from_le_bytes(v), Ordering::Release);
            } else {
                let a0 = AtomicU64::from_ptr(w0 as *mut u64);
                let mut v = a0.load(Ordering::Relaxed).to_le_bytes();
                v[k..k + 4].copy_from_slice(&bytes);
                a0.store(u64::from_le_bytes(v), Ordering::Release);
            }
        }
    }
}

/// Reserves the file's blocks up to `len` (so writes through a mapping
/// cannot meet a full disk) and makes it that long.
pub(super) fn reserve(file: &File, len: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let len_off = libc::off_t::try_from(len)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: a plain system call on an open descriptor.
        let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len_off) };
        match r {
            0 => return Ok(()),
            // Filesystems without fallocate: a sparse file instead.
            libc::EOPNOTSUPP | libc::EINVAL => {}
            e => return Err(std::io::Error::from_raw_os_error(e)),
        }
    }
    file.set_len(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every offset modulo 8 and sizes whose bytes fall on both sides of a
    /// word boundary: the 4 size bytes land LE at the offset, the bytes
    /// around them keep their values.
    #[test]
    fn publish_writes_the_size_and_nothing_else() {
        let f = tempfile::tempfile().unwrap();
        reserve(&f, 4096).unwrap();
        let mut m = SegMap::new(&f, 4096).unwrap();
        for at in 8..24usize {
            for size in [0x01u32, 0x0100, 0x0001_0100, 0x0102_0304, 0xff00_0000] {
                let b = m.bytes_mut();
                for (i, x) in b[..64].iter_mut().enumerate() {
                    *x = 0x40 + i as u8;
                }
                b[at..at + 4].fill(0);
                let want: Vec<u8> = {
                    let mut w = b[..64].to_vec();
                    w[at..at + 4].copy_from_slice(&size.to_le_bytes());
                    w
                };
                m.publisher().publish(at, size);
                assert_eq!(&m.bytes()[..64], &want[..], "at {at} size {size:#x}");
            }
        }
    }
}
