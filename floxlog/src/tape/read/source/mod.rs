//! Segment files mapped into memory, read-only.
//!
//! # Files that change under a reader
//!
//! A map shows the file as it is on disk. Appends are not seen (a live
//! tail re-maps: `cat --follow`); a file renamed or replaced keeps the
//! mapped inode alive, so the reader goes on with the bytes it opened. A
//! file truncated by another process would raise `SIGBUS` on the vanished
//! pages: [`guard`] turns that into zeros behind the new end and a mark,
//! and readers ask [`SegmentFile::shrunk`] when a segment's read ends (in
//! error or not), so that the error names the shrinking, the file and the
//! offset, and never blames the bytes.

mod fetched;
mod guard;

pub use fetched::Want;

use crate::tape::error::TapeError;
use floxlog_core::{segment_header::flags, SegmentHeader};
use memmap2::Mmap;
use std::path::{Path, PathBuf};

enum Data {
    Map(Mapped),
    /// A segment object fetched from object storage (`crate::tape::remote`):
    /// bytes in memory, which nothing can shrink (see [`fetched`]).
    Remote(fetched::Fetched),
    Empty,
}

/// A map and its registration with the `SIGBUS` guard (dropped first, so
/// the range is unregistered before it is unmapped).
struct Mapped {
    guard: Option<guard::Guard>,
    map: Mmap,
}

/// One segment file, mapped.
pub struct SegmentFile {
    /// Its path.
    pub path: PathBuf,
    data: Data,
    /// (device, inode) of what was mapped: a file since put in its place is
    /// not the one that shrank.
    id: (u64, u64),
}

impl SegmentFile {
    /// Opens and maps `path` read-only (an empty file maps to no bytes).
    /// Only a regular file is opened (see `crate::tape::dir::files::open_regular`);
    /// a symbolic link is followed (the caller named the file).
    pub fn open(path: &Path) -> Result<SegmentFile, TapeError> {
        Self::open_with(path, true)
    }

    /// [`SegmentFile::open`]; `follow`: whether a symbolic link is
    /// followed (not for a file found in a tape directory).
    pub fn open_with(path: &Path, follow: bool) -> Result<SegmentFile, TapeError> {
        Self::open_wanting(path, follow, Want::Whole)
    }

    /// [`SegmentFile::open_with`]; a segment object on object storage is
    /// fetched as `want` says (a local file is mapped whole).
    pub fn open_wanting(path: &Path, follow: bool, want: Want) -> Result<SegmentFile, TapeError> {
        if crate::tape::remote::is_url(path) {
            return Ok(SegmentFile {
                path: path.to_path_buf(),
                data: fetched::fetch(path, want)?.map_or(Data::Empty, Data::Remote),
                id: (0, 0),
            });
        }
        let f = crate::tape::dir::files::open_regular(path, follow)
            .map_err(|e| TapeError::io(path, "opening the segment", e))?;
        let meta = f
            .metadata()
            .map_err(|e| TapeError::io(path, "reading the segment's size", e))?;
        let len = meta.len();
        let data = if len == 0 {
            Data::Empty
        } else {
            // SAFETY: the map is read-only, and the bytes are only ever read
            // through bounds-checked slices. See the module docs for what a
            // concurrent truncation does.
            let m = unsafe { Mmap::map(&f) }
                .map_err(|e| TapeError::io(path, "mapping the segment", e))?;
            // Readers go front to back: a larger kernel read-ahead keeps
            // the disk busy while frames are decoded and blocks
            // decompressed (cold-cache reads). Only a hint: its failure
            // changes nothing else.
            #[cfg(unix)]
            let _ = m.advise(memmap2::Advice::Sequential);
            Data::Map(Mapped {
                guard: guard::Guard::register(m.as_ptr(), m.len()),
                map: m,
            })
        };
        Ok(SegmentFile {
            path: path.to_path_buf(),
            data,
            id: file_id(&meta),
        })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Data::Map(m) => &m.map,
            Data::Remote(f) => &f.map,
            Data::Empty => &[],
        }
    }

    /// Gives the mapped pages back (they are read from the file again if
    /// touched): a segment a reader has finished with stops counting in its
    /// resident memory, so reading a tape costs what it holds, not its size.
    pub fn release(&self) {
        #[cfg(unix)]
        if let Data::Map(Mapped { map: m, .. }) = &self.data {
            // SAFETY: a read-only shared file mapping: dropped pages read
            // back the same bytes from the file; nothing written is lost.
            // Only a hint: its failure changes nothing.
            let _ = unsafe { m.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }

    /// [`SegmentFile::release`] for the bytes behind `end` from `start` on
    /// (the compressed blocks a reader has decompressed, the frames a
    /// cursor has gone past): the whole pages from the one holding `start`
    /// up to the one holding `end`, which stays (it can hold the next
    /// frame or block).
    pub fn release_range(&self, start: u64, end: u64) {
        // The map starts on a page: offsets round as addresses do.
        let page = page_size();
        let end = end.min(self.len()) & !(page - 1);
        let start = start & !(page - 1);
        if start >= end {
            return;
        }
        #[cfg(unix)]
        if let Data::Map(Mapped { map: m, .. }) = &self.data {
            // SAFETY: as in release; the range lies inside the map.
            let _ = unsafe {
                m.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    start as usize,
                    (end - start) as usize,
                )
            };
        }
    }

    /// The mapped file opened again for reading (`None` if its path now
    /// names another file, or it cannot be opened): for a walk that reads
    /// through read(2) rather than faulting the map's pages in.
    pub fn reopen(&self) -> Option<std::fs::File> {
        if crate::tape::remote::is_url(&self.path) {
            return None;
        }
        let f = crate::tape::dir::files::open_regular(&self.path, true).ok()?;
        let id = file_id(&f.metadata().ok()?);
        (id == self.id).then_some(f)
    }

    /// File size.
    pub fn len(&self) -> u64 {
        self.bytes().len() as u64
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes().is_empty()
    }

    /// Whether the file shrank under the map: the offset from which the
    /// map no longer shows it (a read touched vanished pages, now zeros,
    /// or the same file is now shorter than the map). One `stat`: asked
    /// when a segment's read ends, not per event.
    pub fn shrunk(&self) -> Option<u64> {
        let fault = match &self.data {
            Data::Map(m) => m.guard.as_ref().and_then(guard::Guard::fault_at),
            // Bytes in memory, checked whole against the listing.
            Data::Remote(_) => return None,
            Data::Empty if crate::tape::remote::is_url(&self.path) => return None,
            Data::Empty => None,
        };
        let now = std::fs::metadata(&self.path)
            .ok()
            .filter(|m| file_id(m) == self.id)
            .map(|m| m.len())
            .filter(|&n| n < self.len());
        match (fault, now) {
            (Some(f), Some(n)) => Some(f.min(n)),
            (f, n) => f.or(n),
        }
    }

    /// If the file shrank under the map into bytes the read relied on, the
    /// error that says so, in place of `e` (the read's own end: the bytes
    /// past the new end read as zeros, and their checks failing is not
    /// damage to blame on the writer). `e`: what ended the read (`None`: it
    /// ran to the end of the frames, or a frame it had checked did not
    /// decode again).
    ///
    /// A shrink that left every byte the read relied on is no error: a
    /// journal's background thread finishing a segment cuts its zero tail
    /// off under live readers, and `recover` trims a torn tail. See
    /// `SegmentFile::relied_on`.
    pub fn shrink_error(&self, e: Option<&floxlog_core::Error>) -> Option<floxlog_core::Error> {
        let at = self.shrunk()?;
        if self.relied_on(e, at) <= at {
            return None;
        }
        Some(floxlog_core::Error::new(
            floxlog_core::ErrorKind::Truncated,
            e.map_or(at, |e| e.offset.min(at)),
            crate::tape::error::SHRANK,
        ))
    }

    /// The end of the bytes a read that ended on `e` relied on, as far as
    /// the file (now `at` bytes) still shows them; the map's length when it
    /// cannot tell. Only bytes below `at` are looked at, so that this never
    /// touches a vanished page.
    ///
    /// - A finished header with an index (as the map shows it now: the
    ///   journal writes the final header after the cut): its frames and
    ///   trailer, whatever `e` is, since the read never goes past them and
    ///   they are all still in the file.
    /// - An unfinished header and a read that stopped where a frame or
    ///   block begins, on data ending there (`Truncated`: a torn or zero
    ///   tail) or on an index trailer (a writer finishing the segment): the
    ///   bytes before that frame. A file cut there is read the same way.
    /// - Anything else (a frame that failed its checks, a read that ran to
    ///   the map's end, a header no longer in the file): every byte mapped.
    fn relied_on(&self, e: Option<&floxlog_core::Error>, at: u64) -> u64 {
        let all = self.len();
        let bytes = self.bytes();
        let head = SegmentHeader::LEN as u64;
        if at < head {
            return all;
        }
        let Ok(h) = SegmentHeader::parse(&bytes[..SegmentHeader::LEN]) else {
            return all;
        };
        if h.has(flags::HAS_INDEX) {
            return self.trailer_end(h.index_offset, at).unwrap_or(all);
        }
        if !header_is_unfinished(&h) {
            return all;
        }
        match e {
            Some(e) if e.kind == floxlog_core::ErrorKind::Truncated => e.offset.max(head),
            Some(e) if e.offset.saturating_add(4) <= at && e.offset >= head => {
                let o = e.offset as usize;
                match floxlog_core::index::starts_trailer(&bytes[o..o + 4]) {
                    true => e.offset,
                    false => all,
                }
            }
            _ => all,
        }
    }

    /// The end of the index trailer at `off`, if its header lies below
    /// `at`.
    fn trailer_end(&self, off: u64, at: u64) -> Option<u64> {
        let len = floxlog_core::IndexHeader::LEN as u64;
        let hdr_end = off.checked_add(len).filter(|&n| n <= at)?;
        let b = self.bytes().get(off as usize..hdr_end as usize)?;
        let ih = floxlog_core::IndexHeader::parse(b, off).ok()?;
        Some(off + floxlog_core::index::trailer_len(ih.entry_count as usize) as u64)
    }
}

/// The page size (a power of two), asked once.
fn page_size() -> u64 {
    static PAGE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        #[cfg(unix)]
        {
            // SAFETY: sysconf only reads a system constant.
            let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            if n > 0 && (n as u64).is_power_of_two() {
                return n as u64;
            }
        }
        4096
    })
}

#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// Whether a header looks like a writer's placeholder (the segment was never
/// closed): no index, not Sorted, and for uncompressed segments zero counts.
/// An LZ4 writer rewrites the counts after every block but sets HasIndex and
/// Sorted only at close, so an open LZ4 segment has flags == Compressed.
pub fn header_is_unfinished(h: &SegmentHeader) -> bool {
    if h.has(flags::HAS_INDEX) || h.has(flags::SORTED) {
        return false;
    }
    if h.has(flags::COMPRESSED) {
        true
    } else {
        h.event_count == 0 && h.first_event_ns == 0 && h.last_event_ns == 0
    }
}

/// Whether the read stopped at an unfinished journal segment's zero tail
/// (see [`floxlog_core::reader::ZERO_TAIL`]): a torn tail for every reader
/// (its error is `Truncated`), which `recover` cuts off.
pub fn is_zero_tail(e: &floxlog_core::Error) -> bool {
    e.kind == floxlog_core::ErrorKind::Truncated && e.what == floxlog_core::reader::ZERO_TAIL
}

/// Whether a read of a segment (header `h`, bytes `data`) that stopped on
/// `e` after `events_before` events is the torn tail of a writer that is
/// still running or died while appending, rather than damage: the header
/// is a placeholder, the read stopped at data that ends inside a frame or
/// block (or at an index trailer written just before the final header),
/// and the header claims no more events than the complete frames or blocks
/// hold. A finished LZ4 segment without an index looks like a placeholder,
/// but once cut short its header claims events that are gone.
pub fn is_torn_tail(
    h: &SegmentHeader,
    e: &floxlog_core::Error,
    events_before: u64,
    data: &[u8],
) -> bool {
    let at_trailer = usize::try_from(e.offset)
        .ok()
        .and_then(|o| data.get(o..))
        .is_some_and(floxlog_core::index::starts_trailer);
    header_is_unfinished(h)
        && (e.kind == floxlog_core::ErrorKind::Truncated || at_trailer)
        && u64::from(h.event_count) <= events_before
}
