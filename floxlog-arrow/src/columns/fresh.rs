//! A column of plain integers in fresh (or reused) memory that becomes an
//! Arrow buffer without a copy.
//!
//! Why not `Vec`: a table of millions of trades is hundreds of MB of fresh
//! memory, and most of a read's time went into the kernel faulting it in
//! 4 KiB pages (plus a `memset` of what the kernel had just zeroed, to
//! hand the batch kernel initialised slices). A large column here is an
//! anonymous map (advised for huge pages from 2 MiB on, faulted 2 MiB at a
//! time), or such a map given back by a dropped table (see `Pool`): its
//! slots hold zeros or stale values, every one a valid integer, so none
//! needs a `memset`, and only slots written are ever kept. Small columns
//! are a zeroed `Vec` (`calloc`).

use arrow_buffer::{ArrowNativeType, ScalarBuffer};

/// Integers: every bit pattern is a valid value (so zero-filled or reused
/// memory is initialised memory of them).
pub trait Plain: ArrowNativeType + Copy + Default {}
impl Plain for u8 {}
impl Plain for u16 {}
impl Plain for u32 {}
impl Plain for i32 {}
impl Plain for i64 {}
impl Plain for u64 {}
impl Plain for i128 {}

/// Columns of at least this many bytes are mapped (huge-page advised from
/// 2 MiB on); smaller ones are a `Vec`. Low enough that every column of a
/// batch of 64 Ki trades (one byte a row at least) is mapped, so reused.
const MAP_BYTES: usize = 64 << 10;

/// A growable column: `len` values written, `cap` slots (valid values,
/// written or not).
pub struct Fresh<T: Plain> {
    mem: Mem<T>,
    len: usize,
}

enum Mem<T> {
    Vec(Vec<T>),
    #[cfg(unix)]
    Map(map::Map<T>),
}

impl<T: Plain> Default for Fresh<T> {
    fn default() -> Self {
        Fresh {
            mem: Mem::Vec(Vec::new()),
            len: 0,
        }
    }
}

impl<T: Plain> Fresh<T> {
    /// An empty column with at least `cap` slots.
    pub fn with_capacity(cap: usize) -> Fresh<T> {
        #[cfg(unix)]
        if cap.saturating_mul(size_of::<T>()) >= MAP_BYTES {
            if let Some(m) = map::Map::zeroed(cap) {
                return Fresh {
                    mem: Mem::Map(m),
                    len: 0,
                };
            }
        }
        Fresh {
            mem: Mem::Vec(vec![T::default(); cap]),
            len: 0,
        }
    }

    /// Values written.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Slots (written or not).
    #[inline]
    pub fn cap(&self) -> usize {
        self.slots().len()
    }

    #[inline]
    fn slots(&self) -> &[T] {
        match &self.mem {
            Mem::Vec(v) => v,
            #[cfg(unix)]
            Mem::Map(m) => m.as_slice(),
        }
    }

    #[inline]
    fn slots_mut(&mut self) -> &mut [T] {
        match &mut self.mem {
            Mem::Vec(v) => v,
            #[cfg(unix)]
            Mem::Map(m) => m.as_mut_slice(),
        }
    }

    /// The values written.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.slots()[..self.len]
    }

    /// At least `cap` slots, the values kept (a new allocation and a copy
    /// when there are fewer).
    pub fn reserve_total(&mut self, cap: usize) {
        if cap <= self.cap() {
            return;
        }
        let mut bigger = Fresh::with_capacity(cap.max(self.cap() * 2));
        bigger.slots_mut()[..self.len].copy_from_slice(self.as_slice());
        bigger.len = self.len;
        *self = bigger;
    }

    /// Appends a value.
    #[inline]
    pub fn push(&mut self, v: T) {
        if self.len == self.cap() {
            self.reserve_total(self.len + 1);
        }
        let n = self.len;
        self.slots_mut()[n] = v;
        self.len = n + 1;
    }

    /// The `n` slots after the values (reserved here when missing), to be
    /// written and then kept by [`Fresh::set_len`].
    #[inline]
    pub fn room(&mut self, n: usize) -> &mut [T] {
        let at = self.len;
        self.reserve_total(at + n);
        &mut self.slots_mut()[at..at + n]
    }

    /// Keeps the first `len` slots as the values (every slot is a valid
    /// value: written, zero, or a stale value of a reused map).
    #[inline]
    pub fn set_len(&mut self, len: usize) {
        self.len = len.min(self.cap());
    }

    /// The values as an Arrow buffer (no copy); the column starts over
    /// empty, with no slots.
    pub fn take_buffer(&mut self) -> ScalarBuffer<T> {
        let len = self.len;
        match std::mem::take(self).mem {
            Mem::Vec(mut v) => {
                v.truncate(len);
                ScalarBuffer::from(v)
            }
            #[cfg(unix)]
            Mem::Map(m) => ScalarBuffer::new(m.into_buffer(len), 0, len),
        }
    }
}

#[cfg(unix)]
mod map {
    //! The only unsafe code of the crate: an anonymous map owned by one
    //! column until it becomes an immutable Arrow buffer.
    use super::Plain;
    use arrow_buffer::Buffer;
    use std::collections::BTreeMap;
    use std::marker::PhantomData;
    use std::ptr::NonNull;
    use std::sync::{Arc, Mutex};

    const HUGE: usize = 2 << 20;
    const PAGE: usize = 4 << 10;

    /// `cap` values of `T` in a private anonymous map (zero-filled, or
    /// reused from the pool).
    pub struct Map<T> {
        raw: Raw,
        cap: usize,
        _t: PhantomData<T>,
    }

    /// The map itself, unmapped on drop (by the column, or by the last
    /// Arrow buffer over it).
    struct Raw {
        ptr: NonNull<u8>,
        bytes: usize,
        /// Bytes from the start written in this map's lives so far (so
        /// faulted in): the pool hands out the most written first.
        touched: usize,
    }

    // SAFETY: `Raw` owns its mapping exclusively: while a `Map` holds it
    // only that `Map` (behind `&mut` for writes) reaches the memory; once
    // handed to Arrow it is only read.
    unsafe impl Send for Raw {}
    unsafe impl Sync for Raw {}
    impl std::panic::RefUnwindSafe for Raw {}

    impl Drop for Raw {
        fn drop(&mut self) {
            let (ptr, bytes) = (self.ptr.as_ptr() as usize, self.bytes);
            if let Ok(mut p) = POOL.lock() {
                if p.bytes + bytes <= POOL_BYTES {
                    // The kernel may take the pages back under memory
                    // pressure (they then read as zero: still valid
                    // values); until then a reuse costs no fault and no
                    // zeroing.
                    // SAFETY: the range is this mapping; nothing refers to
                    // the memory any more (its owner is being dropped).
                    #[cfg(target_os = "linux")]
                    unsafe {
                        libc::madvise(self.ptr.as_ptr().cast(), bytes, libc::MADV_FREE)
                    };
                    p.bytes += bytes;
                    p.maps.entry(bytes).or_default().push((self.touched, ptr));
                    return;
                }
            }
            // SAFETY: ptr/bytes are exactly what mmap returned; nothing
            // refers to the memory any more (its owner is being dropped).
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.bytes) };
        }
    }

    /// Maps given back by dropped columns (and the Arrow buffers over
    /// them), at most [`POOL_BYTES`] of them, for the next columns: a table
    /// read after another was dropped reuses its memory instead of having
    /// the kernel fault in and zero hundreds of MB again (a third of a
    /// whole-table read's time; more on a virtual machine, where memory
    /// the guest has not touched yet is also the host's to fault in).
    /// (bytes written, address) pairs by size.
    struct Pool {
        maps: BTreeMap<usize, Vec<(usize, usize)>>,
        bytes: usize,
    }

    static POOL: Mutex<Pool> = Mutex::new(Pool {
        maps: BTreeMap::new(),
        bytes: 0,
    });

    /// Most bytes of maps the pool keeps.
    const POOL_BYTES: usize = 1 << 30;

    /// A pooled map of at least `bytes` and at most twice that (of the
    /// smallest such size, the one most written before: a batch cut short
    /// leaves its maps partly written, and a page never written is still
    /// the kernel's to fault in and zero), taken out of the pool.
    fn pooled(bytes: usize) -> Option<Raw> {
        let mut p = POOL.lock().ok()?;
        // A size is listed only while it has maps.
        let (&got, _) = p.maps.range(bytes..=bytes.saturating_mul(2)).next()?;
        let maps = p.maps.get_mut(&got)?;
        let (i, _) = maps.iter().enumerate().max_by_key(|(_, m)| m.0)?;
        let (touched, ptr) = maps.swap_remove(i);
        if maps.is_empty() {
            p.maps.remove(&got);
        }
        p.bytes -= got;
        Some(Raw {
            ptr: NonNull::new(ptr as *mut u8)?,
            bytes: got,
            touched,
        })
    }

    impl<T: Plain> Map<T> {
        /// `None` when the map cannot be made (the caller falls back to
        /// the heap).
        pub fn zeroed(cap: usize) -> Option<Map<T>> {
            let want = cap.checked_mul(size_of::<T>())?;
            // Huge pages only for maps they fill (a small column would
            // hold a whole 2 MiB page for a few rows).
            let bytes = want.checked_next_multiple_of(if want >= HUGE { HUGE } else { PAGE })?;
            if let Some(raw) = pooled(bytes) {
                return Some(Map {
                    cap: raw.bytes / size_of::<T>(),
                    raw,
                    _t: PhantomData,
                });
            }
            // SAFETY: a fresh private anonymous mapping; no existing memory
            // is touched.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    bytes,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return None;
            }
            let ptr = NonNull::new(p.cast::<u8>())?;
            // Advice only (the kernel may decline): 2 MiB faults instead
            // of 4 KiB ones.
            // SAFETY: the range is the mapping just made.
            #[cfg(target_os = "linux")]
            if bytes >= HUGE {
                unsafe { libc::madvise(p, bytes, libc::MADV_HUGEPAGE) };
            }
            Some(Map {
                raw: Raw {
                    ptr,
                    bytes,
                    touched: 0,
                },
                cap: bytes / size_of::<T>(),
                _t: PhantomData,
            })
        }

        pub fn as_slice(&self) -> &[T] {
            // SAFETY: the mapping is page-aligned (aligned for T), holds
            // `cap` values, holds bytes the kernel zero-filled or that were
            // written since (every bit pattern is a valid T: `Plain`), and
            // lives as long as `self`.
            unsafe { std::slice::from_raw_parts(self.raw.ptr.as_ptr().cast::<T>(), self.cap) }
        }

        pub fn as_mut_slice(&mut self) -> &mut [T] {
            // SAFETY: as `as_slice`; `&mut self` makes this the only
            // reference to the memory.
            unsafe { std::slice::from_raw_parts_mut(self.raw.ptr.as_ptr().cast::<T>(), self.cap) }
        }

        /// The whole map as an immutable Arrow buffer that unmaps it when
        /// its last reference goes (`len` values written).
        pub fn into_buffer(mut self, len: usize) -> Buffer {
            let written = len.saturating_mul(size_of::<T>()).min(self.raw.bytes);
            self.raw.touched = self.raw.touched.max(written);
            let ptr = self.raw.ptr;
            let bytes = self.raw.bytes;
            // SAFETY: ptr is valid for `bytes` initialised bytes for as
            // long as the owner (the Raw moved into the Arc) lives, and
            // nothing writes to it any more (the Map is consumed).
            unsafe { Buffer::from_custom_allocation(ptr, bytes, Arc::new(self.raw)) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_survive_growth_from_heap_to_map_and_into_a_buffer() {
        let mut c = Fresh::<i64>::with_capacity(3);
        for i in 0..5 {
            c.push(i);
        }
        assert_eq!(c.as_slice(), &[0, 1, 2, 3, 4]);
        // Past MAP_BYTES, and past a huge page: mapped, the values copied.
        c.reserve_total(MAP_BYTES / 8 + 1);
        assert!(c.cap() > MAP_BYTES / 8);
        assert_eq!(c.as_slice(), &[0, 1, 2, 3, 4]);
        c.reserve_total((4 << 20) / 8);
        assert!(c.cap() >= (4 << 20) / 8);
        c.room(2).copy_from_slice(&[7, 8]);
        c.set_len(7);
        let b = c.take_buffer();
        assert_eq!(&b[..], &[0, 1, 2, 3, 4, 7, 8]);
        assert_eq!(c.len(), 0);
        assert_eq!(c.cap(), 0);
    }

    #[test]
    fn a_dropped_map_is_reused_and_only_written_values_are_kept() {
        let n = MAP_BYTES / 8 * 3;
        let mut a = Fresh::<u64>::with_capacity(n);
        a.room(n).fill(u64::MAX);
        a.set_len(n);
        drop(a.take_buffer());
        // Maybe the same map again (other tests run alongside): whatever
        // its slots held, the column holds only what was written.
        let mut b = Fresh::<u64>::with_capacity(n);
        assert!(b.cap() >= n);
        b.room(3).copy_from_slice(&[1, 2, 3]);
        b.set_len(3);
        assert_eq!(&b.take_buffer()[..], &[1, 2, 3]);
    }
}
