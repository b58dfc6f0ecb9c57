//! No kernel reads past the end of its slice: inputs end exactly at a page
//! followed by an inaccessible page, so any over-read faults.

use super::{kernels, reference, Rng};

struct Guarded {
    base: *mut u8,
    page: usize,
}

impl Guarded {
    fn new() -> Guarded {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        // SAFETY: anonymous private mapping of two fresh pages; checked below.
        let base = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        let base = base.cast::<u8>();
        // SAFETY: the second page lies inside the mapping just made.
        let rc = unsafe { libc::mprotect(base.add(page).cast(), page, libc::PROT_NONE) };
        assert_eq!(rc, 0);
        Guarded { base, page }
    }

    /// The whole first page, writable.
    fn page(&mut self) -> &mut [u8] {
        // SAFETY: the first page is mapped read-write and owned by self.
        unsafe { core::slice::from_raw_parts_mut(self.base, self.page) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`.
        unsafe { libc::munmap(self.base.cast(), 2 * self.page) };
    }
}

#[test]
fn no_read_past_the_end() {
    let mut g = Guarded::new();
    let mut rng = Rng(7);
    let fill = rng.bytes(g.page);
    g.page().copy_from_slice(&fill);
    let page: &[u8] = g.page();
    let end = page.len();
    let ks = kernels();
    for len in 0..=300 {
        let d = &page[end - len..];
        let want = reference(d);
        for (name, update, x4) in &ks {
            assert_eq!(update(0, d), want, "{name} len {len}");
            // All four lanes end at the boundary, with different lengths.
            let lanes = [d, &page[end - len / 2..], &page[end - len / 3..], d];
            assert_eq!(x4(lanes), lanes.map(reference), "{name} len {len}");
        }
        assert_eq!(crate::crc32(d), want);
        assert_eq!(crate::crc32_x4([d; 4]), [want; 4]);
    }
    // Long inputs too (the 512-bit path starts at 512 bytes).
    for len in [511, 512, 513, 1000, 2048, 4000] {
        if len > end {
            continue;
        }
        let d = &page[end - len..];
        for (name, update, x4) in &ks {
            assert_eq!(update(0, d), reference(d), "{name} len {len}");
            assert_eq!(x4([d; 4]), [reference(d); 4], "{name} len {len}");
        }
    }
}
