//! The reader's index calls and seek, which prove the index the first
//! time one of them needs it, and the segment header query.

use super::{floxlog_reader, ReaderHandle};
use crate::boundary::{boundary, check_out, put};
use crate::codec::segment::floxlog_segment_header;
use crate::codec::types::same_fields;
use crate::codec::writer::floxlog_index_entry;
use crate::consts::*;
use crate::error::{floxlog_error, floxlog_result, Fail};
use crate::handle::{get, handle};
use floxlog_core::{Error, Index, IndexEntry, Segment};
use floxlog_result::*;

/// The segment's index, proven (every entry a frame or block boundary:
/// one pass over the frame headers) on the first call and kept in `slot`
/// with its error, so later calls neither repeat the pass nor report
/// anything else.
fn proven<'s>(
    seg: &Segment<'static>,
    slot: &'s mut Option<Result<Option<Index<'static>>, Error>>,
) -> &'s Result<Option<Index<'static>>, Error> {
    slot.get_or_insert_with(|| seg.index())
}

impl ReaderHandle {
    /// The proven index: `None` without one, its error if it is damaged.
    fn index(&mut self) -> Result<Option<&Index<'static>>, Fail> {
        proven(&self.seg, &mut self.index)
            .as_ref()
            .map(Option::as_ref)
            .map_err(|e| (*e).into())
    }

    /// Whether a call has proven the index yet (for the tests).
    #[cfg(all(test, feature = "std"))]
    pub(crate) fn index_proven(&self) -> bool {
        self.index.is_some()
    }
}

/// Repositions the cursor before the first event with
/// `exchange_ts_ns >= ts`: from the index entry `floxlog_reader_index_seek`
/// gives (or the first frame if the index is absent, damaged, or has no
/// entry before `ts`), skipping earlier events as they are read. The first
/// seek or index call proves the index (one pass over the frame headers)
/// and keeps the result. Clears a previous error and a held-back event. On
/// unsorted segments this is a starting hint: earlier events may still
/// follow.
///
/// # Safety
/// `r` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_seek(r: *mut floxlog_reader, ts: i64) -> floxlog_result {
    boundary(core::ptr::null_mut(), || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        // The index and the reader are separate fields: both borrowed.
        let ix = proven(&h.seg, &mut h.index).as_ref().ok();
        h.reader.seek(ix.and_then(Option::as_ref), ts);
        h.pending = None;
        h.deferred = None;
        Ok(FLOXLOG_OK)
    })
}

/// Sets `*header` to the segment's validated header.
///
/// # Safety
/// `r` must be a live handle; `header` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_header(
    r: *mut floxlog_reader,
    header: *mut floxlog_segment_header,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { get(r, header, "header", |h| h.seg.header().into()) }
}

/// Inspects the index trailer: on `FLOXLOG_OK` fills `*header` and
/// `*entry_count`; `FLOXLOG_NO_INDEX` when the HasIndex flag is clear;
/// `FLOXLOG_BAD_INDEX` or `FLOXLOG_INDEX_CRC_MISMATCH` (offset: the index
/// offset) when the index is damaged or an entry is not a frame (or block)
/// boundary (sequential reading is unaffected; seeks start at the first
/// frame). The first index call or seek on a handle proves the index (one
/// pass over the frame headers, not made at open) and keeps the result:
/// every later one reports the same.
///
/// # Safety
/// `r` must be a live handle; `header` and `entry_count` writable; `err`
/// may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_index(
    r: *mut floxlog_reader,
    header: *mut floxlog_index_header,
    entry_count: *mut usize,
    err: *mut floxlog_error,
) -> floxlog_result {
    boundary(err, || {
        check_out(header, "header")?;
        check_out(entry_count, "entry_count")?;
        // SAFETY: forwarded caller promise.
        let Some(ix) = unsafe { handle(r) }?.index()? else {
            return Ok(FLOXLOG_NO_INDEX);
        };
        // SAFETY: both checked above.
        unsafe {
            put(header, ix.header().into());
            put(entry_count, ix.len());
        }
        Ok(FLOXLOG_OK)
    })
}

/// The body of the index lookups: `*entry = pick(index)`, `FLOXLOG_END`
/// when `pick` finds nothing, `FLOXLOG_NO_INDEX`, or the index's error.
///
/// # Safety
/// As `floxlog_reader_index_entry`.
unsafe fn index_lookup(
    r: *mut floxlog_reader,
    entry: *mut floxlog_index_entry,
    err: *mut floxlog_error,
    pick: impl FnOnce(&Index<'_>) -> Option<IndexEntry>,
) -> floxlog_result {
    boundary(err, || {
        check_out(entry, "entry")?;
        // SAFETY: forwarded caller promise.
        let Some(ix) = unsafe { handle(r) }?.index()? else {
            return Ok(FLOXLOG_NO_INDEX);
        };
        let Some(e) = pick(ix) else {
            return Ok(FLOXLOG_END);
        };
        // SAFETY: checked above.
        unsafe { put(entry, (&e).into()) };
        Ok(FLOXLOG_OK)
    })
}

/// Sets `*entry` to index entry `i`: `FLOXLOG_OK`, `FLOXLOG_END` past the
/// last entry, `FLOXLOG_NO_INDEX`, or the index's error (proven on first
/// use, as `floxlog_reader_index` says).
///
/// # Safety
/// `r` must be a live handle; `entry` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_index_entry(
    r: *mut floxlog_reader,
    i: usize,
    entry: *mut floxlog_index_entry,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { index_lookup(r, entry, err, |ix| ix.get(i)) }
}

/// Sets `*entry` to the index entry a seek to `ts` starts from: the last
/// entry whose timestamp is strictly below `ts` (on an unsorted index, the
/// one with the largest such timestamp, first in file order). Strictly
/// below, because events stamped `ts` can come before an entry stamped
/// `ts`. `FLOXLOG_OK`; `FLOXLOG_END` when no entry is below `ts` (start at
/// the first frame); `FLOXLOG_NO_INDEX`; or the index's error (proven on
/// first use, as `floxlog_reader_index` says).
///
/// # Safety
/// `r` must be a live handle; `entry` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_reader_index_seek(
    r: *mut floxlog_reader,
    ts: i64,
    entry: *mut floxlog_index_entry,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { index_lookup(r, entry, err, |ix| ix.seek(ts)) }
}

/// A decoded 32-byte index header (format layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_index_header {
    /// `FLOXLOG_MAGIC_INDEX`.
    pub magic: u32,
    /// Index version (1).
    pub version: u16,
    /// The writer's interval (a hint).
    pub interval: u16,
    /// Entries that follow.
    pub entry_count: u32,
    /// CRC32 of the entries.
    pub crc32: u32,
    /// Timestamp of the first entry.
    pub first_ts_ns: i64,
    /// Timestamp of the last entry.
    pub last_ts_ns: i64,
}
const _: () = assert!(size_of::<floxlog_index_header>() == FLOXLOG_INDEX_HEADER_LEN);
floxlog_core::index_header_fields!(same_fields, floxlog_index_header);
