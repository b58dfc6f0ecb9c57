//! `floxlog_tape_reader`: the events of a tape (a directory of either
//! layout, segment files, or a list of them), merged by timestamp or in
//! file order, filtered, from memory-mapped files: the reader `floxlog cat`
//! uses.

use crate::boundary::{batch_slots, check_out, in_ref, put, put_if_usable, slice_in};
use crate::error::{floxlog_result, Fail};
use crate::event::{write_event, LevelScratch};
use crate::handle::{free, get, handle, into_c, Opaque};
use crate::records::TradeSlots;
use crate::tape_error::{floxlog_tape_error, path_in, str_in, tape_boundary, TapeFail, TapeResult};
use crate::types::*;
use core::ffi::c_char;
use core::mem::MaybeUninit;
use core::ptr::{addr_of_mut, NonNull};
use floxlog::tape::merge::{DEFAULT_REORDER_BYTES, DEFAULT_REORDER_WINDOW};
use floxlog::tape::{
    Filter, OpenOptions, OpenedTape, Order, ReadConfig, ReadOutcome, Tape, TapeError,
    TapeErrorKind, TapeReader,
};
use floxlog_core::{Event, Position, ReadOptions, UnknownTypes};
use floxlog_result::*;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// `floxlog_tape_read_options.order`: merged by exchange timestamp across
/// segments (a stable k-way merge: ties keep segment, then file order).
pub const FLOXLOG_ORDER_TIME: u8 = 0;
/// `floxlog_tape_read_options.order`: segment by segment, each in file
/// order.
pub const FLOXLOG_ORDER_FILE: u8 = 1;

/// Which events a tape reader returns. All-zero means every event.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_tape_filter {
    /// With `has_from`: keep `exchange_ts_ns >= from_ns`.
    pub from_ns: i64,
    /// With `has_to`: keep `exchange_ts_ns < to_ns`.
    pub to_ns: i64,
    /// Non-zero: `from_ns` applies.
    pub has_from: u8,
    /// Non-zero: `to_ns` applies.
    pub has_to: u8,
    /// Event types to keep, as bits `1u << FLOXLOG_EVENT_*`; 0 keeps all.
    pub types: u32,
    /// Symbol ids to keep (read during open only; NULL only with 0).
    pub symbol_ids: *const u32,
    /// Entries at `symbol_ids`.
    pub symbol_id_count: usize,
    /// Symbol names to keep, resolved through the tape's `metadata.json`
    /// (case-insensitive; a decimal string is an id); an unknown name
    /// fails the open with `FLOXLOG_INVALID_INPUT` listing the known ones.
    /// Read during open only; NULL only with 0. With ids as well, the union
    /// is kept; with neither, every symbol.
    pub symbol_names: *const *const c_char,
    /// Entries at `symbol_names`.
    pub symbol_name_count: usize,
}

/// How a tape reader reads. Get the defaults with
/// `floxlog_tape_read_options_default`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_tape_read_options {
    /// Which events.
    pub filter: floxlog_tape_filter,
    /// `FLOXLOG_ORDER_*` (default time).
    pub order: u8,
    /// Non-zero: check every frame's CRC32 (default 1).
    pub verify_crc: u8,
    /// Non-zero: skip frames of types 1.0 does not define; zero (default):
    /// such a frame is an error.
    pub skip_unknown_types: u8,
    /// Non-zero: a segment whose writer is still running or died (a
    /// placeholder header and a torn last frame or block) is an error too;
    /// by default its complete events are returned and the torn tail is
    /// only counted in `floxlog_tape_reader_stats.torn_tails`.
    pub strict: u8,
    /// Non-zero: list each directory instead of trusting `manifest.json`.
    pub ignore_manifest: u8,
    /// Accepted and ignored (default 65536): time order is exact, not
    /// windowed. Kept so that the struct's layout does not change.
    pub reorder_window: usize,
    /// Time order: most bytes the orderings may hold together (16 bytes an
    /// event of the segments whose time ranges overlap; default 256 MiB);
    /// a tape that needs more fails with `FLOXLOG_CAPACITY_EXCEEDED`,
    /// naming `reorder_bytes`, instead of growing without bound.
    pub reorder_bytes: u64,
}

/// What a tape reader has done so far.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_tape_reader_stats {
    /// Segment files of the tape.
    pub segments: u64,
    /// Bytes of the mapped segment files.
    pub bytes: u64,
    /// Events returned.
    pub events: u64,
    /// Always 0: time order is exact, nothing is returned late. Kept so
    /// that the struct's layout does not change.
    pub late_events: u64,
    /// Segments that ended in a running or killed writer's torn tail.
    pub torn_tails: u64,
    /// Errors found so far (segments that could not be read to their end,
    /// files that could not be opened): each is returned by
    /// `floxlog_tape_reader_next` after the last event.
    pub errors: u64,
}

/// Where the last event a tape reader returned is
/// (`floxlog_tape_reader_position`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_tape_position {
    /// The segment's number in the tape (0-based, in listing order).
    pub segment: u64,
    /// The frame header's byte offset in the segment file; for LZ4
    /// segments, the block header's.
    pub offset: u64,
    /// LZ4 segments (`has_in_block`): the frame's offset inside the
    /// decompressed block.
    pub in_block: u32,
    /// 1 when `in_block` is meaningful.
    pub has_in_block: u8,
}

/// Opaque tape reader handle (see `floxlog_tape_reader_open`). Use one
/// handle from one thread at a time; it may move between threads.
pub struct floxlog_tape_reader {
    _private: [u8; 0],
}

const TAPE_READER_MAGIC: u64 = 0x4452_4550_4154_4c46; // "FLTAPERD"

/// Most level and payload bytes one batch copies out before it ends early.
const BATCH_BYTES: usize = 4 << 20;

#[repr(C)]
pub(crate) struct TapeReaderHandle {
    magic: u64,
    /// Borrows `*opened` (which is boxed, so moving the handle moves no
    /// borrowed byte). Always dropped before `opened` is freed (`Drop`).
    reader: Option<TapeReader<'static>>,
    opened: NonNull<OpenedTape>,
    cfg: ReadConfig,
    /// The filter's own lower bound (a seek raises it, never lowers it).
    from: Option<i64>,
    strict: bool,
    segments: u64,
    bytes: u64,
    /// Files that could not be opened or listed: errors known at open.
    listing: Vec<TapeError>,
    /// Errors returned so far (listing first, then the reader's).
    reported: usize,
    /// A hard error of the merge (budget), returned once, then the end.
    fatal: Option<TapeFail>,
    failed: bool,
    /// The reader's current event ended a trades-only batch without being
    /// handed out: the next `step` returns it.
    held: bool,
    events: u64,
    levels: Vec<MaybeUninit<floxlog_level>>,
    payloads: Vec<u8>,
    fixups: Vec<Fixup>,
    /// Where the last event returned is.
    last: Option<floxlog_tape_position>,
    /// Each segment's path, NUL-terminated (`floxlog_tape_reader_segment_path`).
    paths: Vec<CString>,
}

/// A pointer of a batch's event to set once the batch's buffers stop
/// moving.
#[derive(Clone, Copy)]
enum Fixup {
    Book {
        at: usize,
        levels: usize,
        bids: usize,
    },
    Pool {
        at: usize,
        offset: usize,
    },
}

// SAFETY: TapeReaderHandle is repr(C) with the u64 magic first.
unsafe impl Opaque for floxlog_tape_reader {
    type Handle = TapeReaderHandle;
    const MAGIC: u64 = TAPE_READER_MAGIC;
    const NULL: &'static str = "r";
    const WRONG: &'static str = "not a floxlog_tape_reader handle";
}

impl Drop for TapeReaderHandle {
    fn drop(&mut self) {
        // The reader borrows the opened tape: it goes first.
        self.reader = None;
        // SAFETY: `opened` came from `Box::into_raw` in `new` and nothing
        // borrows it any more.
        drop(unsafe { Box::from_raw(self.opened.as_ptr()) });
    }
}

impl Default for floxlog_tape_filter {
    fn default() -> Self {
        floxlog_tape_filter {
            from_ns: 0,
            to_ns: 0,
            has_from: 0,
            has_to: 0,
            types: 0,
            symbol_ids: core::ptr::null(),
            symbol_id_count: 0,
            symbol_names: core::ptr::null(),
            symbol_name_count: 0,
        }
    }
}

impl Default for floxlog_tape_read_options {
    fn default() -> Self {
        floxlog_tape_read_options {
            filter: floxlog_tape_filter::default(),
            order: FLOXLOG_ORDER_TIME,
            verify_crc: 1,
            skip_unknown_types: 0,
            strict: 0,
            ignore_manifest: 0,
            reorder_window: DEFAULT_REORDER_WINDOW,
            reorder_bytes: DEFAULT_REORDER_BYTES as u64,
        }
    }
}

/// Every event type bit a filter may hold.
const TYPE_BITS: u32 = 0b11_1110;

impl TapeReaderHandle {
    /// Lists and maps the tape, resolves the filter, starts the reader.
    fn new(inputs: &[PathBuf], o: &floxlog_tape_read_options) -> TapeResult<TapeReaderHandle> {
        let order = match o.order {
            FLOXLOG_ORDER_TIME => Order::Time,
            FLOXLOG_ORDER_FILE => Order::File,
            _ => return Err(Fail::invalid("order is not a FLOXLOG_ORDER_* value").into()),
        };
        let f = &o.filter;
        if f.types & !TYPE_BITS != 0 {
            return Err(Fail::invalid("filter types has bits of no FLOXLOG_EVENT_* type").into());
        }
        let tape = Tape::open(
            inputs,
            OpenOptions {
                ignore_manifest: o.ignore_manifest != 0,
            },
        )?;
        // SAFETY: the caller promises `symbol_id_count` ids.
        let ids = unsafe { slice_in(f.symbol_ids, f.symbol_id_count, "opts->filter.symbol_ids") }?;
        // SAFETY: the caller promises `symbol_name_count` string pointers.
        let name_ptrs = unsafe {
            slice_in(
                f.symbol_names,
                f.symbol_name_count,
                "opts->filter.symbol_names",
            )
        }?;
        let mut names = Vec::with_capacity(name_ptrs.len());
        for p in name_ptrs {
            // SAFETY: the caller promises NUL-terminated strings.
            names.push(unsafe { str_in(*p, "a filter symbol name is NULL or not UTF-8") }?);
        }
        let symbols = match (tape.symbol_ids(&names)?, ids.is_empty()) {
            (None, true) => None,
            (named, _) => {
                let mut v = named.unwrap_or_default();
                v.extend_from_slice(ids);
                v.sort_unstable();
                v.dedup();
                Some(v)
            }
        };
        let types = (f.types != 0).then(|| core::array::from_fn(|t| f.types & (1 << t) != 0));
        let from = (f.has_from != 0).then_some(f.from_ns);
        let cfg = ReadConfig {
            order,
            filter: Filter {
                from,
                to: (f.has_to != 0).then_some(f.to_ns),
                symbols,
                types,
            },
            reorder_window: o.reorder_window,
            reorder_bytes: usize::try_from(o.reorder_bytes).unwrap_or(usize::MAX),
            read: ReadOptions {
                verify_crc: o.verify_crc != 0,
                unknown_types: if o.skip_unknown_types != 0 {
                    UnknownTypes::Skip
                } else {
                    UnknownTypes::Reject
                },
                ..ReadOptions::default()
            },
        };
        // Listed segments that cannot be read are data the reader lacks.
        let mut listing: Vec<TapeError> = tape
            .unread()
            .map(|f| {
                let mut e = TapeError::input(f.path.as_deref(), f.message.clone());
                e.offset = f.offset;
                e.hint = f.hint.clone();
                e
            })
            .collect();
        let segments = tape.segments.len() as u64;
        let paths = tape
            .segments
            .iter()
            .map(|s| CString::new(s.path.as_os_str().as_bytes()).unwrap_or_default())
            .collect();
        let opened = OpenedTape::open(tape);
        listing.extend(opened.open_errors.iter().cloned());
        let bytes = opened.total_bytes();
        let mut h = TapeReaderHandle {
            magic: TAPE_READER_MAGIC,
            reader: None,
            opened: NonNull::from(Box::leak(Box::new(opened))),
            cfg,
            from,
            strict: o.strict != 0,
            segments,
            bytes,
            listing,
            reported: 0,
            fatal: None,
            failed: false,
            held: false,
            events: 0,
            levels: Vec::new(),
            payloads: Vec::new(),
            fixups: Vec::new(),
            last: None,
            paths,
        };
        h.restart();
        Ok(h)
    }

    /// A new reader over the opened tape with the current settings.
    fn restart(&mut self) {
        self.reader = None;
        // SAFETY: `opened` is a live box that nothing borrows now (the old
        // reader was dropped above); the new reader's borrow lasts until
        // the next restart or the drop, both of which end it first.
        let opened: &'static mut OpenedTape = unsafe { &mut *self.opened.as_ptr() };
        self.reader = Some(opened.reader(&self.cfg));
        self.reported = 0;
        self.last = None;
        self.fatal = None;
        self.failed = false;
        self.held = false;
    }

    /// The read so far, judged strict or lenient.
    fn outcome(&self) -> Option<ReadOutcome<'_>> {
        let r = self.reader.as_ref()?;
        Some(ReadOutcome::new(r.problems(), self.strict).with_events(self.events))
    }

    /// The errors found so far, in the order they are returned.
    fn errors(&self) -> impl Iterator<Item = TapeError> + '_ {
        let problems = self.outcome().into_iter().flat_map(|o| o.errors());
        self.listing
            .iter()
            .cloned()
            .chain(problems.map(|p| p.to_error()))
    }

    /// The result of a batch call whose loop stopped after `n` events,
    /// `failure` being what stopped it, if anything: `FLOXLOG_OK` when it
    /// got events (the failure is kept for the next call), else `idle` when
    /// given (`FLOXLOG_NOT_TRADE`), else the next error or `FLOXLOG_END`.
    fn end_batch(
        &mut self,
        n: usize,
        failure: Option<TapeFail>,
        idle: Option<floxlog_result>,
    ) -> TapeResult<floxlog_result> {
        if n > 0 {
            if let Some(e) = failure {
                self.fatal = Some(e);
            }
            return Ok(FLOXLOG_OK);
        }
        if let Some(code) = idle {
            return Ok(code);
        }
        match failure.or_else(|| self.next_error()) {
            Some(e) => Err(e),
            None => Ok(FLOXLOG_END),
        }
    }

    /// After the last event: the next unreported error, if any.
    fn next_error(&mut self) -> Option<TapeFail> {
        if let Some(e) = self.fatal.take() {
            return Some(e);
        }
        let e = self.errors().nth(self.reported)?;
        self.reported += 1;
        Some(e.into())
    }

    fn stats(&self) -> floxlog_tape_reader_stats {
        let late = self.reader.as_ref().map_or(0, |r| r.late_events());
        let torn = self.outcome().map_or(0, |o| o.torn_tails());
        floxlog_tape_reader_stats {
            segments: self.segments,
            bytes: self.bytes,
            events: self.events,
            late_events: late,
            torn_tails: torn,
            errors: self.errors().count() as u64 + u64::from(self.fatal.is_some()),
        }
    }
}

/// What a read step found.
enum Step {
    /// An event was written to the caller's slot.
    Event,
    /// No more events: `FLOXLOG_END`, or the next error.
    End,
}

/// Reads the next event into `*out`: book levels into `levels[*used..]`
/// (grown as needed) and, when `copy_payload`, pool payloads copied into
/// `payloads`; fixups record where those pointers must point.
///
/// # Safety
/// `out` non-NULL, aligned, writable.
unsafe fn step(
    h: &mut TapeReaderHandle,
    out: *mut floxlog_event,
    slot: usize,
    used: &mut usize,
    copy_payload: bool,
) -> Result<Step, TapeFail> {
    if h.failed {
        return Ok(Step::End);
    }
    let TapeReaderHandle {
        reader,
        levels,
        payloads,
        fixups,
        held,
        ..
    } = h;
    let Some(r) = reader.as_mut() else {
        return Ok(Step::End);
    };
    let next = if std::mem::take(held) {
        r.current()
    } else {
        r.next_item()
    };
    let item = match next {
        Ok(Some(it)) => it,
        Ok(None) => return Ok(Step::End),
        Err(e) => {
            h.failed = true;
            return Err(merge_failure(e));
        }
    };
    let ev = &item.event;
    let last = position_of(item.segment, item.position);
    if let Event::Book(b) = ev {
        let total = b.bids.len() + b.asks.len();
        let end = *used + total;
        if levels.len() < end {
            levels.resize(end, MaybeUninit::uninit());
        }
        let mut scratch = LevelScratch::from_slots(&mut levels[*used..end]);
        // SAFETY: `out` is the caller's writable slot; the scratch fits.
        let _ = unsafe { write_event(ev, out, &mut scratch) };
        fixups.push(Fixup::Book {
            at: slot,
            levels: *used,
            bids: b.bids.len(),
        });
        *used = end;
    } else {
        let mut none = LevelScratch::from_slots(&mut []);
        // SAFETY: as above; only books use the scratch.
        let _ = unsafe { write_event(ev, out, &mut none) };
        if let (Event::PoolState(p), true) = (ev, copy_payload) {
            fixups.push(Fixup::Pool {
                at: slot,
                offset: payloads.len(),
            });
            payloads.extend_from_slice(p.payload);
        }
    }
    h.events += 1;
    h.last = Some(last);
    Ok(Step::Event)
}

/// The merge's one usage error is its memory bound.
fn merge_failure(e: TapeError) -> TapeFail {
    match e.kind {
        TapeErrorKind::Usage => TapeFail::Coded(FLOXLOG_CAPACITY_EXCEEDED, Box::new(e)),
        _ => e.into(),
    }
}

/// Where an event is (its segment and position), in the C form.
fn position_of(segment: usize, p: Position) -> floxlog_tape_position {
    floxlog_tape_position {
        segment: segment as u64,
        offset: p.offset,
        in_block: p.in_block.unwrap_or(0),
        has_in_block: u8::from(p.in_block.is_some()),
    }
}

/// Points the events' level and payload pointers at the handle's buffers,
/// which no longer move.
///
/// # Safety
/// `events` must hold the slots the fixups name, written by `step`.
unsafe fn apply_fixups(h: &mut TapeReaderHandle, events: *mut floxlog_event) {
    let lv = h.levels.as_ptr() as *const floxlog_level;
    let pl = h.payloads.as_ptr();
    for f in h.fixups.drain(..) {
        match f {
            Fixup::Book { at, levels, bids } => {
                // SAFETY: slot `at` holds a book written by `step`; the
                // offsets are inside `levels` (at most one past its end).
                unsafe {
                    let b = addr_of_mut!((*events.add(at)).data.book);
                    let base = lv.wrapping_add(levels);
                    addr_of_mut!((*b).bids).write(base);
                    addr_of_mut!((*b).asks).write(base.wrapping_add(bids));
                }
            }
            Fixup::Pool { at, offset } => {
                // SAFETY: slot `at` holds a pool state written by `step`.
                unsafe {
                    let p = addr_of_mut!((*events.add(at)).data.pool_state);
                    addr_of_mut!((*p).payload).write(pl.wrapping_add(offset));
                }
            }
        }
    }
}

/// Fills `*opts` with the defaults: time order, every event, CRCs checked,
/// unknown types rejected, torn tails tolerated, manifest trusted, 65536
/// events (ignored) and 256 MiB of ordering room.
///
/// # Safety
/// `opts` must be writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_read_options_default(
    opts: *mut floxlog_tape_read_options,
) -> floxlog_result {
    // SAFETY: forwarded caller promise; the pointer is checked.
    unsafe {
        crate::boundary::output(core::ptr::null_mut(), opts, "opts", || {
            Ok(floxlog_tape_read_options::default())
        })
    }
}

/// # Safety
/// As `floxlog_tape_reader_open_paths`.
unsafe fn open_inputs(
    inputs: TapeResult<Vec<PathBuf>>,
    opts: *const floxlog_tape_read_options,
    reader: *mut *mut floxlog_tape_reader,
) -> TapeResult<floxlog_result> {
    check_out(reader, "reader")?;
    let inputs = inputs?;
    let o = if opts.is_null() {
        floxlog_tape_read_options::default()
    } else {
        // SAFETY: non-NULL; the caller's promise.
        *unsafe { in_ref(opts, "opts") }?
    };
    let h = TapeReaderHandle::new(&inputs, &o)?;
    // SAFETY: checked above.
    unsafe { put(reader, into_c::<floxlog_tape_reader>(h)) };
    Ok(FLOXLOG_OK)
}

/// Opens a tape for reading and sets `*reader`: `path` is a tape directory
/// (flox layout, `<created_ns>.floxlog`, or spec layout, `series-NNNNNN.bin`
/// with `manifest.json`) or one segment file. `opts` NULL means the
/// defaults. Segments are memory-mapped, never copied whole; the reader
/// holds at most the orderings of the segments it reads at one time in
/// time order (`reorder_bytes`), one LZ4 block scratch (the tape's largest
/// block) and a small cache of decompressed blocks.
///
/// A segment another process truncates while it is read is an error
/// (`FLOXLOG_TRUNCATED`, "the file shrank while it was being read"), not
/// a `SIGBUS`: the first map installs a `SIGBUS` handler that acts only on
/// faults inside floxlog's own maps and hands any other to the handler
/// installed before it (or the default action). A host that installs its
/// own `SIGBUS` handler later should chain to the one it replaces; one that
/// wants no handler of ours sets `FLOXLOG_SIGBUS_GUARD=0` in the
/// environment (a truncation then kills the process, as with any map).
///
/// Fails only when the tape cannot be listed (missing path, unreadable or
/// out-of-tape manifest: `FLOXLOG_BAD_MANIFEST`) or the options are wrong.
/// Damage inside segments does not fail the open: the reader returns every
/// good event, then the errors (see `floxlog_tape_reader_next`).
///
/// # Safety
/// `path` a NUL-terminated path; `opts` NULL or valid (its filter's
/// arrays too); `reader` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_open(
    path: *const c_char,
    opts: *const floxlog_tape_read_options,
    reader: *mut *mut floxlog_tape_reader,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: the caller's promise.
        let p = unsafe { path_in(path, "path is NULL or empty") }.map_err(Into::into);
        // SAFETY: forwarded caller promises.
        unsafe { open_inputs(p.map(|p| vec![p]), opts, reader) }
    })
}

/// `floxlog_tape_reader_open` over several inputs (`count` paths, each a
/// tape directory or a segment file), read as one tape: merged by time,
/// or in file order one input after another.
///
/// # Safety
/// `paths` valid for `count` NUL-terminated paths; otherwise as
/// `floxlog_tape_reader_open`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_open_paths(
    paths: *const *const c_char,
    count: usize,
    opts: *const floxlog_tape_read_options,
    reader: *mut *mut floxlog_tape_reader,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        let inputs = (|| {
            if count == 0 {
                return Err(Fail::invalid("no paths given").into());
            }
            // SAFETY: the caller promises `count` pointers.
            let ps = unsafe { slice_in(paths, count, "paths") }?;
            ps.iter()
                // SAFETY: the caller promises NUL-terminated strings.
                .map(|p| unsafe { path_in(*p, "a path is NULL or empty") }.map_err(Into::into))
                .collect::<TapeResult<Vec<_>>>()
        })();
        // SAFETY: forwarded caller promises.
        unsafe { open_inputs(inputs, opts, reader) }
    })
}

/// Reads the next event into `*event`.
///
/// Returns `FLOXLOG_OK` with an event; after the last event, each error
/// found (a damaged segment: its file and byte offset; a listed file that
/// could not be opened) is returned once, in order, and then `FLOXLOG_END`
/// for good. So every good event of every segment comes before any error,
/// and a loop `while ((rc = floxlog_tape_reader_next(...)) == FLOXLOG_OK)`
/// ends with `rc` = the first error or `FLOXLOG_END`.
///
/// What `*event` points at (book levels, pool state payloads) belongs to
/// the reader and stays valid until the next call on it.
///
/// # Safety
/// `r` a live handle; `event` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_next(
    r: *mut floxlog_tape_reader,
    event: *mut floxlog_event,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(event, "event")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        h.fixups.clear();
        let mut used = 0;
        // SAFETY: `event` checked above.
        match unsafe { step(h, event, 0, &mut used, false) }? {
            Step::Event => {
                // SAFETY: slot 0 was written by `step`.
                unsafe { apply_fixups(h, event) };
                Ok(FLOXLOG_OK)
            }
            Step::End => match h.next_error() {
                Some(e) => Err(e),
                None => Ok(FLOXLOG_END),
            },
        }
    })
}

/// Reads up to `cap` events into `events[0..cap)` and sets `*count`: the
/// batch form of `floxlog_tape_reader_next`. Returns `FLOXLOG_OK` with
/// `*count >= 1`; after the last event, the errors one per call with
/// `*count == 0`, then `FLOXLOG_END` with `*count == 0`. A batch also ends
/// early once it holds about 4 MiB of book levels and pool payloads.
/// `*count` is written on every return.
///
/// Levels and payloads of the batch's events belong to the reader and stay
/// valid until the next call on it.
///
/// # Safety
/// `r` a live handle; `events` valid for `cap` writable events; `count`
/// writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_next_batch(
    r: *mut floxlog_tape_reader,
    events: *mut floxlog_event,
    cap: usize,
    count: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = tape_boundary(err, || {
        // SAFETY: the caller promises `cap` writable events.
        let out = unsafe { batch_slots(count, events, cap, "events") }?;
        let base = out.as_mut_ptr() as *mut floxlog_event;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        h.fixups.clear();
        h.payloads.clear();
        let mut used = 0usize;
        let mut end_error = None;
        while n < cap {
            // SAFETY: n < cap: inside the caller's events.
            match unsafe { step(h, base.add(n), n, &mut used, true) } {
                Ok(Step::Event) => n += 1,
                Ok(Step::End) => break,
                Err(e) => {
                    end_error = Some(e);
                    break;
                }
            }
            if used * core::mem::size_of::<floxlog_level>() + h.payloads.len() > BATCH_BYTES {
                break;
            }
        }
        // SAFETY: the first `n` slots were written by `step`.
        unsafe { apply_fixups(h, base) };
        h.end_batch(n, end_error, None)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(count, n) };
    rc
}

/// Reads up to `cap` consecutive trades into `trades[0..cap)` and sets
/// `*count`: the fast path for trade tapes, one boundary crossing per batch
/// and each trade written straight into the caller's array.
///
/// The batch stops before the first event of another type, which is kept:
/// it is the next event `floxlog_tape_reader_next` or `_next_batch`
/// returns. Returns `FLOXLOG_OK` with `*count >= 1`; `FLOXLOG_NOT_TRADE`
/// with `*count == 0` when the next event is not a trade (read it with the
/// general call, then come back); after the last event, the errors one per
/// call and then `FLOXLOG_END`, as `floxlog_tape_reader_next_batch` does,
/// with `*count == 0`. `*count` is written on every return.
///
/// # Safety
/// `r` a live handle; `trades` valid for `cap` writable trades; `count`
/// writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_next_trades(
    r: *mut floxlog_tape_reader,
    trades: *mut floxlog_trade,
    cap: usize,
    count: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = tape_boundary(err, || {
        // SAFETY: the caller promises `cap` writable trades.
        let out = unsafe { batch_slots(count, trades, cap, "trades") }?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        if h.held {
            return Ok(FLOXLOG_NOT_TRADE);
        }
        let mut end_error = None;
        if let (false, Some(r)) = (h.failed, h.reader.as_mut()) {
            let (run, done) = r.next_trades(&mut TradeSlots(out));
            if let Err(e) = done {
                h.failed = true;
                end_error = Some(merge_failure(e));
            }
            n = run.count;
            h.held = run.declined;
            h.events += n as u64;
            if let Some((segment, p)) = run.last {
                h.last = Some(position_of(segment, p));
            }
        }
        let idle = h.held.then_some(FLOXLOG_NOT_TRADE);
        h.end_batch(n, end_error, idle)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(count, n) };
    rc
}

/// Positions the reader at timestamp `ts`: the following calls return the
/// events with `exchange_ts_ns >= ts` that the filter keeps, in the
/// reader's order, as a reader opened with that lower bound would (seeking
/// back works too; errors found are returned again). Sorted segments start
/// at their proven index entry; others are scanned from their start.
///
/// # Safety
/// `r` a live handle; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_seek(
    r: *mut floxlog_tape_reader,
    ts: i64,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        h.cfg.filter.from = Some(h.from.map_or(ts, |f| f.max(ts)));
        h.restart();
        Ok(FLOXLOG_OK)
    })
}

/// Sets `*stats` to what the reader has done so far (`events` counts
/// every event returned since the open, across seeks).
///
/// # Safety
/// `r` a live handle; `stats` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_get_stats(
    r: *mut floxlog_tape_reader,
    stats: *mut floxlog_tape_reader_stats,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { get(r, stats, "stats", |h| h.stats()) }
}

/// Sets `*pos` to where the last event returned (by `_next`, or the last of
/// a batch) is: its segment's number and byte offset. `FLOXLOG_END` (and
/// `*pos` untouched) before the first event and after a seek.
///
/// # Safety
/// `r` a live handle; `pos` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_position(
    r: *mut floxlog_tape_reader,
    pos: *mut floxlog_tape_position,
) -> floxlog_result {
    crate::boundary::boundary(core::ptr::null_mut(), || {
        check_out(pos, "pos")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        match h.last {
            Some(p) => {
                // SAFETY: checked above.
                unsafe { put(pos, p) };
                Ok(FLOXLOG_OK)
            }
            None => Ok(FLOXLOG_END),
        }
    })
}

/// Sets `*path` to the path of segment number `segment` of the tape
/// (NUL-terminated, owned by the reader until it is freed);
/// `FLOXLOG_INVALID_INPUT` past the last segment.
///
/// # Safety
/// `r` a live handle; `path` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_segment_path(
    r: *mut floxlog_tape_reader,
    segment: u64,
    path: *mut *const c_char,
) -> floxlog_result {
    crate::boundary::boundary(core::ptr::null_mut(), || {
        check_out(path, "path")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(r) }?;
        let p = usize::try_from(segment)
            .ok()
            .and_then(|i| h.paths.get(i))
            .ok_or(Fail::invalid("no segment of that number"))?;
        // SAFETY: checked above.
        unsafe { put(path, p.as_ptr()) };
        Ok(FLOXLOG_OK)
    })
}

/// Releases the reader and unmaps the tape; every pointer it handed out
/// dies with it. NULL is a no-op.
///
/// # Safety
/// `r` NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_reader_free(r: *mut floxlog_tape_reader) {
    // SAFETY: forwarded caller promise.
    unsafe { free(r) }
}
