//! `floxlog_tape_writer`: a tape on disk from C, on the tape writer the
//! CLI uses (segment files, rotation, durability, the tape lock, final
//! headers, index and manifest at close).

use crate::boundary::{check_out, in_ref, put, put_if_usable, slice_in};
use crate::chunks::append_in_chunks;
use crate::error::floxlog_result;
use crate::error::Fail;
use crate::event::{book_in, event_in, pool_state_in};
use crate::handle::{free, get, handle, into_c, Opaque};
use crate::records::config_in;
use crate::tape_error::{floxlog_tape_error, path_in, str_in, tape_boundary, TapeFail};
use crate::types::*;
use core::ffi::{c_char, c_void};
use floxlog::tape::{Durability, Layout, TapeWriter, TapeWriterConfig};
use floxlog_core::{BookKind, Event, OptionQuote, Trade, WriterConfig};
use floxlog_result::*;

/// Tape layout: flox's, `<created_ns>.floxlog` segments of every event type
/// in one series (default).
pub const FLOXLOG_LAYOUT_FLOX: u8 = 0;
/// Tape layout: the spec's, one series per event family
/// (`trades-000000.bin`, `book-000000.bin`...).
pub const FLOXLOG_LAYOUT_SPEC: u8 = 1;

/// Durability: never fsync; write in 1 MiB chunks, in the background.
/// When an append returns, its event is in the writer's memory (an
/// encoder buffer, or queued for the I/O thread): a kill loses what is not
/// yet `written_events` (at most about 4 MiB: the chunk being filled and
/// three queued), a power loss anything not `durable_events` (0 unless
/// `floxlog_tape_writer_sync` is called). See `floxlog_tape_writer_config`.
pub const FLOXLOG_DURABILITY_NONE: u8 = 0;
/// Durability: hand every event (LZ4: every block) to the OS at once, so
/// that followers see it; never fsync. When an append returns, `write(2)`
/// of its event (LZ4: of every finished block) has returned: a kill loses
/// nothing appended but an unfinished LZ4 block; a power loss loses what
/// is not `durable_events`.
pub const FLOXLOG_DURABILITY_FLUSH: u8 = 1;
/// Durability: write and fsync after every LZ4 block (uncompressed: every
/// `index_interval` events), in the background: when an append returns
/// the write and fsync are queued, not done; `written_events` and
/// `durable_events` say what they covered so far.
pub const FLOXLOG_DURABILITY_SYNC_EVERY_BLOCK: u8 = 2;
/// Durability: write and fsync every `sync_every_n` events, in the
/// background (as `SYNC_EVERY_BLOCK`).
pub const FLOXLOG_DURABILITY_SYNC_EVERY_N: u8 = 3;
/// Durability: write in 1 MiB chunks in the background, fsync each
/// segment when it is closed (default), also in the background: a kill
/// loses what is not `written_events`, a power loss what is not
/// `durable_events` (the events of the segments closed and fsynced).
pub const FLOXLOG_DURABILITY_SYNC_ON_CLOSE: u8 = 4;

/// A clock for `created_ns`: nanoseconds since the Unix epoch. Called with
/// `clock_ctx`, exactly once per segment the writer opens, on the thread
/// that calls the append that opens it. It must not unwind (a C++
/// exception escaping it aborts the process).
pub type floxlog_clock_fn = Option<unsafe extern "C" fn(ctx: *mut c_void) -> i64>;

/// Tape writer settings. Get the defaults with
/// `floxlog_tape_writer_config_default`, then change what you need.
///
/// What has happened when an append returns, by durability policy:
///
/// | policy | the event, when the append returns | a kill loses | a power loss loses |
/// |---|---|---|---|
/// | `NONE` | encoded in memory; written in 1 MiB chunks by the I/O thread | what is not `written_events` | what is not `durable_events` (0 without `floxlog_tape_writer_sync`) |
/// | `FLUSH` | `write(2)` returned (LZ4: for every finished block) | an unfinished LZ4 block only | what is not `durable_events` |
/// | `SYNC_EVERY_BLOCK`, `SYNC_EVERY_N` | encoded; write and fsync queued at the block / every n events | what is not `written_events` | what is not `durable_events` |
/// | `SYNC_ON_CLOSE` (default) | encoded; written in chunks in the background | what is not `written_events` | what is not `durable_events` (closed, fsynced segments) |
///
/// LZ4 events staged in an unfinished block are in memory under every
/// policy. Where LZ4 blocks are compressed: under `FLUSH`,
/// `SYNC_EVERY_BLOCK` and `SYNC_EVERY_N`, in the append that fills the
/// block (which then writes it, or queues its write and fsync); under
/// `NONE` and `SYNC_ON_CLOSE`, on the writer's compressor thread (the same
/// bytes), so a full block is in memory,
/// being compressed, when its last append returns, and goes to the I/O
/// thread at one of the writer's next calls (`floxlog_tape_writer_flush`,
/// `_sync` and `_close` wait for it). There an append waits for the
/// compressor only when four blocks of its segment are being compressed,
/// and near the end of a segment (the rotation after the block that
/// reaches `max_segment_bytes` needs their exact sizes).
/// `floxlog_tape_writer_written_events` counts events whose
/// `write(2)` returned (they survive a kill of the process: readers and
/// `floxlog_tape_recover` find them), `floxlog_tape_writer_durable_events`
/// those fsynced with their directory entry (they survive a power loss);
/// `floxlog_tape_writer_progress` reads both at once. The counts advance at
/// the writer's own calls.
///
/// An append waits only when three 1 MiB chunks are already queued for
/// the I/O thread (the disk is slower than the appends), and under `FLUSH`
/// for its own `write(2)`. Rotation does not wait on the appending thread
/// (except under `FLUSH`, which has no background thread and closes,
/// opens and renames segments, and rewrites `manifest.json`, in the
/// append that rotates): the append that rotates encodes the closed
/// segment's index trailer and hands it over; the next segment's file is
/// created ahead by the I/O thread (the first segment, and one opened
/// before the spare file is ready, are created by the append itself);
/// the closed segment's final header, its fsyncs (syncing policies) and
/// the `manifest.json` rewrite run on a background finisher thread, the
/// manifest rewritten once for all the segments closed meanwhile, so its
/// cost does not grow on the appending thread with the number of
/// segments. A new segment is renamed into place (visible to readers)
/// only once the segments closed before it are finished, so a kill leaves
/// at most the last segment of each series unfinished; its events are
/// counted written from then on. `floxlog_tape_writer_flush`, `_sync` and
/// `_close` wait for everything.
///
/// File order of an LZ4 segment (the reference profile's, as the flox
/// reference writes it; this writer does the same under the spec
/// profile): the events of each block sorted by `exchange_ts_ns` (stable:
/// ties keep append order), blocks in append order (the `Sorted` header
/// flag is set only when no block starts before the previous block's
/// latest event). A file-order read of such a segment is not append order
/// when events arrive out of time order within a block. Uncompressed
/// segments keep append order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_tape_writer_config {
    /// Segment settings: compression, index interval (LZ4: events per
    /// block), index on/off, exchange id, profile. Its `created_ns` is not
    /// used: the clock below stamps each segment.
    pub segment: floxlog_writer_config,
    /// `FLOXLOG_LAYOUT_*` (default flox).
    pub layout: u8,
    /// `FLOXLOG_DURABILITY_*` (default `SYNC_ON_CLOSE`).
    pub durability: u8,
    /// Non-zero: keep `manifest.json` up to date (default 1).
    pub write_manifest: u8,
    /// Non-zero: journal mode (default 0; uncompressed segments only, LZ4
    /// is refused with `FLOXLOG_INVALID_INPUT`). Each segment is a
    /// pre-allocated file mapped shared; an append encodes its frame
    /// straight into the mapping and publishes it by writing the frame's
    /// size field last (release ordering), with no system call, lock or
    /// allocation; a background thread prepares the next segment and
    /// finalises the previous one, so a rotation does not wait on I/O.
    /// When an append returns, under every durability, its event is in the
    /// page cache, visible to readers of the file, and survives the process
    /// being killed (`written_events` counts it); `NONE` and `FLUSH` do
    /// nothing more (a power loss may lose what `floxlog_tape_writer_sync`
    /// did not cover); `SYNC_EVERY_N` and `SYNC_EVERY_BLOCK` ask the
    /// background thread for an fsync every n (every `index_interval`)
    /// events, run within about a millisecond (`durable_events` counts
    /// what it covered); `SYNC_ON_CLOSE` fsyncs each segment when it is
    /// finalised. A killed writer leaves its live segment unfinished, ending
    /// in zeros up to the pre-allocated size (readers take them as the end
    /// of the data; `floxlog recover` cuts them off), maybe the next,
    /// prepared segment with no event, and hidden temporary files (such as
    /// `.journal-first-N.tmp`, a series' first segment reserved at open)
    /// that `floxlog_tape_recover` removes. `clock_ns` is not used: segments
    /// are stamped with the wall clock when prepared. After close each
    /// segment is byte for byte what the default writer writes. Set it after
    /// `floxlog_tape_writer_config_default` (it sits in what was padding,
    /// so the struct's size is unchanged).
    pub journal: u8,
    /// Events between fsyncs for `FLOXLOG_DURABILITY_SYNC_EVERY_N` (at
    /// least 1).
    pub sync_every_n: u32,
    /// Rotate before a segment would grow past this many bytes
    /// (uncompressed: before the frame that would cross it, as the flox
    /// reference does; LZ4: after the block that crosses it). Default
    /// 256 MiB.
    pub max_segment_bytes: u64,
    /// Also rotate when an event's timestamp enters a new span of this many
    /// nanoseconds, aligned to the epoch (3600e9: hourly segments); 0 (the
    /// default) rotates by size only.
    pub rotate_every_ns: i64,
    /// Source of each segment's `created_ns` (which also names flox-layout
    /// segments); NULL (default) reads `CLOCK_REALTIME`. The values are
    /// made strictly increasing across the tape's segments.
    pub clock_ns: floxlog_clock_fn,
    /// Passed to `clock_ns`.
    pub clock_ctx: *mut c_void,
    /// Non-zero: continue the tape already in `dir`, if any, after its last
    /// segment, instead of refusing it (default 0). A recorder restarted
    /// after a crash keeps one tape: before anything is appended, the
    /// segments the killed writer left open are recovered, as
    /// `floxlog_tape_recover` would (every complete event kept, the torn
    /// tail dropped, the original kept as `<name>.damaged` when bytes are
    /// dropped), and `manifest.json` lists every segment; new segments
    /// follow the last one. A segment that cannot be recovered (its header
    /// itself is invalid) makes `floxlog_tape_writer_open` fail with the
    /// code of the damage (e.g. `FLOXLOG_BAD_MAGIC`), `err` naming the
    /// file and byte offset; a tape of the other layout fails with
    /// `FLOXLOG_INVALID_INPUT`. On an empty or missing
    /// directory it starts a new tape. The writer's counts are of its own
    /// events. Journal mode resumes too.
    pub resume: u8,
}

// `journal` took the byte of padding after `write_manifest`: the fields
// after it, and the struct's size, are where they were.
const _: () = {
    use core::mem::offset_of;
    assert!(
        offset_of!(floxlog_tape_writer_config, journal)
            == offset_of!(floxlog_tape_writer_config, write_manifest) + 1
    );
    assert!(
        offset_of!(floxlog_tape_writer_config, sync_every_n)
            == offset_of!(floxlog_tape_writer_config, journal) + 1
    );
};

/// Opaque tape writer handle (see `floxlog_tape_writer_open`). Use one
/// handle from one thread at a time; it may move between threads.
pub struct floxlog_tape_writer {
    _private: [u8; 0],
}

const TAPE_WRITER_MAGIC: u64 = 0x5752_4550_4154_4c46; // "FLTAPEWR"

#[repr(C)]
pub(crate) struct TapeWriterHandle {
    magic: u64,
    /// `None` once closed.
    w: Option<TapeWriter>,
    /// Counts at close, reported after it.
    written: u64,
    durable: u64,
    /// The durability policy fsyncs at close.
    syncs: bool,
}

// SAFETY: TapeWriterHandle is repr(C) with the u64 magic first.
unsafe impl Opaque for floxlog_tape_writer {
    type Handle = TapeWriterHandle;
    const MAGIC: u64 = TAPE_WRITER_MAGIC;
    const NULL: &'static str = "w";
    const WRONG: &'static str = "not a floxlog_tape_writer handle";
}

impl TapeWriterHandle {
    fn open(&mut self) -> Result<&mut TapeWriter, Fail> {
        self.w
            .as_mut()
            .ok_or(Fail::new(FLOXLOG_FINISHED, "the tape writer is closed"))
    }
}

/// The caller's clock, callable from Rust.
struct CClock {
    f: unsafe extern "C" fn(*mut c_void) -> i64,
    ctx: *mut c_void,
}

// SAFETY: the clock is only called from inside the writer's calls, on the
// caller's thread, one call at a time (the handle is used from one thread
// at a time); the header says so. Its context travels with the handle.
unsafe impl Send for CClock {}

impl CClock {
    fn now(&self) -> i64 {
        // SAFETY: a function pointer the caller gave for this purpose,
        // with its context.
        unsafe { (self.f)(self.ctx) }
    }
}

impl Default for floxlog_tape_writer_config {
    fn default() -> Self {
        let d = TapeWriterConfig::default();
        floxlog_tape_writer_config {
            segment: (&WriterConfig::default()).into(),
            layout: FLOXLOG_LAYOUT_FLOX,
            durability: FLOXLOG_DURABILITY_SYNC_ON_CLOSE,
            write_manifest: u8::from(d.write_manifest),
            journal: u8::from(d.journal),
            sync_every_n: 1,
            max_segment_bytes: d.max_segment_bytes,
            rotate_every_ns: 0,
            clock_ns: None,
            clock_ctx: core::ptr::null_mut(),
            resume: 0,
        }
    }
}

fn tape_config_in(c: &floxlog_tape_writer_config) -> Result<TapeWriterConfig, Fail> {
    let layout = match c.layout {
        FLOXLOG_LAYOUT_FLOX => Layout::Flox,
        FLOXLOG_LAYOUT_SPEC => Layout::Spec,
        _ => return Err(Fail::invalid("layout is not a FLOXLOG_LAYOUT_* value")),
    };
    let durability = match c.durability {
        FLOXLOG_DURABILITY_NONE => Durability::None,
        FLOXLOG_DURABILITY_FLUSH => Durability::Flush,
        FLOXLOG_DURABILITY_SYNC_EVERY_BLOCK => Durability::SyncEveryBlock,
        FLOXLOG_DURABILITY_SYNC_EVERY_N if c.sync_every_n == 0 => {
            return Err(Fail::invalid("sync_every_n is 0"))
        }
        FLOXLOG_DURABILITY_SYNC_EVERY_N => Durability::SyncEveryN(c.sync_every_n),
        FLOXLOG_DURABILITY_SYNC_ON_CLOSE => Durability::SyncOnClose,
        _ => {
            return Err(Fail::invalid(
                "durability is not a FLOXLOG_DURABILITY_* value",
            ))
        }
    };
    if c.rotate_every_ns < 0 {
        return Err(Fail::invalid("rotate_every_ns is negative"));
    }
    if c.max_segment_bytes == 0 {
        return Err(Fail::invalid("max_segment_bytes is 0"));
    }
    Ok(TapeWriterConfig {
        layout,
        segment: config_in(&c.segment)?,
        max_segment_bytes: c.max_segment_bytes,
        rotate_every_ns: (c.rotate_every_ns > 0).then_some(c.rotate_every_ns),
        durability,
        created_ns: None,
        write_manifest: c.write_manifest != 0,
        resume: c.resume != 0,
        journal: c.journal != 0,
    })
}

/// Fills `*cfg` with the defaults: flox layout, uncompressed, index every
/// 1000 events, reference profile, 256 MiB segments, fsync at segment
/// close, manifest on, wall clock, no resume.
///
/// # Safety
/// `cfg` must be writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_config_default(
    cfg: *mut floxlog_tape_writer_config,
) -> floxlog_result {
    // SAFETY: forwarded caller promise; the pointer is checked.
    unsafe {
        crate::boundary::output(core::ptr::null_mut(), cfg, "cfg", || {
            Ok(floxlog_tape_writer_config::default())
        })
    }
}

/// Starts a tape in directory `dir` (created if missing; it must not hold a
/// tape already, unless `cfg->resume`: then the tape there is continued)
/// and sets `*writer`. `cfg` NULL means the defaults.
///
/// The writer takes the tape's lock (`.floxlog.lock`, flock): a second
/// writer, `recover` or `reindex` on the same directory is refused with
/// `FLOXLOG_TAPE_LOCKED` until this one is closed or its process dies.
/// Segment files appear on the first event of each; a process killed at
/// any point leaves a tape `floxlog_tape_recover` (or `floxlog recover`)
/// completes, keeping every event the writer reported written.
///
/// # Safety
/// `dir` a NUL-terminated path; `cfg` NULL or valid; `writer` writable;
/// `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_open(
    dir: *const c_char,
    cfg: *const floxlog_tape_writer_config,
    writer: *mut *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(writer, "writer")?;
        // SAFETY: the caller's promise.
        let dir = unsafe { path_in(dir, "dir is NULL or empty") }?;
        let c = if cfg.is_null() {
            floxlog_tape_writer_config::default()
        } else {
            // SAFETY: non-NULL; the caller's promise.
            *unsafe { in_ref(cfg, "cfg") }?
        };
        let tcfg = tape_config_in(&c)?;
        let syncs = !matches!(tcfg.durability, Durability::None | Durability::Flush);
        let mut w = TapeWriter::create(&dir, tcfg)?;
        if let Some(f) = c.clock_ns {
            let clock = CClock {
                f,
                ctx: c.clock_ctx,
            };
            w.set_clock(Box::new(move || clock.now()));
        }
        let h = TapeWriterHandle {
            magic: TAPE_WRITER_MAGIC,
            w: Some(w),
            written: 0,
            durable: 0,
            syncs,
        };
        // SAFETY: checked above.
        unsafe { put(writer, into_c::<floxlog_tape_writer>(h)) };
        Ok(FLOXLOG_OK)
    })
}

/// Appends one event through `ev` (which reads the caller's struct).
///
/// # Safety
/// `w` NULL or a live handle.
unsafe fn append_with<'e>(
    w: *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
    ev: impl FnOnce() -> Result<Event<'e>, Fail>,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        let ev = ev()?;
        h.open()?.append(&ev)?;
        Ok(FLOXLOG_OK)
    })
}

/// Appends a trade. On error the event was not written and everything
/// before it is intact.
///
/// # Safety
/// `w` a live handle; `trade` valid; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_trade(
    w: *mut floxlog_tape_writer,
    trade: *const floxlog_trade,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe { append_with(w, err, || Ok(Event::Trade(in_ref(trade, "trade")?.into()))) }
}

/// The body of the two book appends.
///
/// # Safety
/// As `floxlog_tape_writer_append_book_snapshot`.
unsafe fn append_book(
    w: *mut floxlog_tape_writer,
    book: *const floxlog_book,
    kind: BookKind,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        append_with(w, err, || {
            Ok(Event::Book(book_in(in_ref(book, "book")?, kind)?))
        })
    }
}

/// Appends a book snapshot (levels read from `book->bids`/`asks` during
/// the call).
///
/// # Safety
/// `w` a live handle; `book` valid with its level pointers; `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_book_snapshot(
    w: *mut floxlog_tape_writer,
    book: *const floxlog_book,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_book(w, book, BookKind::Snapshot, err) }
}

/// Appends a book delta (levels with quantity 0 remove a price).
///
/// # Safety
/// As `floxlog_tape_writer_append_book_snapshot`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_book_delta(
    w: *mut floxlog_tape_writer,
    book: *const floxlog_book,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_book(w, book, BookKind::Delta, err) }
}

/// Appends an option quote.
///
/// # Safety
/// `w` a live handle; `quote` valid; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_option_quote(
    w: *mut floxlog_tape_writer,
    quote: *const floxlog_option_quote,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        append_with(w, err, || {
            Ok(Event::OptionQuote(OptionQuote::from(in_ref(
                quote, "quote",
            )?)))
        })
    }
}

/// Appends a pool state (payload copied during the call).
///
/// # Safety
/// `w` a live handle; `pool` valid with its payload pointer; `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_pool_state(
    w: *mut floxlog_tape_writer,
    pool: *const floxlog_pool_state,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; pointers are checked.
    unsafe {
        append_with(w, err, || {
            Ok(Event::PoolState(pool_state_in(in_ref(pool, "pool")?)?))
        })
    }
}

/// Appends `count` items in order; `*appended` gets how many were written
/// on every return.
///
/// # Safety
/// `w` NULL or a live handle; `items` valid for `count`; `appended`
/// writable if usable.
unsafe fn append_many<'a, T: 'a>(
    w: *mut floxlog_tape_writer,
    items: *const T,
    count: usize,
    what: &'static str,
    appended: *mut usize,
    err: *mut floxlog_tape_error,
    ev: impl Fn(&'a T) -> Result<Event<'a>, Fail>,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = tape_boundary(err, || {
        check_out(appended, "appended")?;
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, items) = unsafe { (handle(w)?, slice_in(items, count, what)?) };
        let tw = h.open()?;
        let (done, r) = append_in_chunks(items, ev, |evs| {
            let (k, r) = tw.append_batch(evs);
            (k, r.map_err(TapeFail::from))
        });
        n = done;
        r?;
        Ok(FLOXLOG_OK)
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(appended, n) };
    rc
}

/// Appends `count` events of any kind in order: the batch form, one call
/// for many events. Stops at the first event that fails and returns its
/// error; `*appended` receives how many were written, on every return.
///
/// # Safety
/// `w` a live handle; `events` valid for `count` events (their members'
/// pointers too; NULL only with 0); `appended` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_events(
    w: *mut floxlog_tape_writer,
    events: *const floxlog_event,
    count: usize,
    appended: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { append_many(w, events, count, "events", appended, err, |e| event_in(e)) }
}

/// Appends `count` trades in order, with the progress rule of
/// `floxlog_tape_writer_append_events`.
///
/// # Safety
/// `w` a live handle; `trades` valid for `count` trades (NULL only with 0);
/// `appended` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_append_trades(
    w: *mut floxlog_tape_writer,
    trades: *const floxlog_trade,
    count: usize,
    appended: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        append_many(w, trades, count, "trades", appended, err, |t| {
            Ok(Event::Trade(Trade::from(t)))
        })
    }
}

/// Sets the flox-style `metadata.json` written at close (a JSON object,
/// e.g. `{"exchange":"binance","symbols":[{"symbol_id":1,"name":"BTCUSDT"}]}`,
/// flox's `metadata.json`);
/// readers then accept symbol names in filters.
///
/// # Safety
/// `w` a live handle; `json` a NUL-terminated UTF-8 string; `err` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_set_metadata(
    w: *mut floxlog_tape_writer,
    json: *const c_char,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promises; pointers are checked.
        let (h, text) = unsafe { (handle(w)?, str_in(json, "json is NULL or not UTF-8")?) };
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|_| Fail::invalid("metadata is not valid JSON"))?;
        if !v.is_object() {
            return Err(Fail::invalid("metadata is not a JSON object").into());
        }
        h.open()?.set_metadata(v);
        Ok(FLOXLOG_OK)
    })
}

/// Hands every encoded byte to the OS and waits for it: afterwards
/// `floxlog_tape_writer_written_events` counts every event appended, except
/// LZ4 events staged in a block that is not full yet (blocks are never cut
/// short: that would change the file).
///
/// # Safety
/// `w` a live handle; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_flush(
    w: *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        h.open()?.flush()?;
        Ok(FLOXLOG_OK)
    })
}

/// `floxlog_tape_writer_flush`, then fsyncs every open segment and the
/// directory entries: afterwards durable events = written events.
///
/// # Safety
/// `w` a live handle; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_sync(
    w: *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        h.open()?.sync()?;
        Ok(FLOXLOG_OK)
    })
}

/// Sets `*out` to the events whose bytes the OS has (they survive the
/// process being killed): with the flox layout, the first `*out` events
/// appended. To read it with the durable count, use
/// `floxlog_tape_writer_progress` (one consistent pair).
///
/// # Safety
/// `w` a live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_written_events(
    w: *mut floxlog_tape_writer,
    out: *mut u64,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        get(w, out, "out", |h| {
            h.w.as_ref().map_or(h.written, TapeWriter::written_events)
        })
    }
}

/// Sets `*out` to the events fsynced with their directory entries (they
/// survive a power loss too), counted like the written events. Grows at
/// the fsyncs of the durability policy, at `floxlog_tape_writer_sync` and
/// at close.
///
/// # Safety
/// `w` a live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_durable_events(
    w: *mut floxlog_tape_writer,
    out: *mut u64,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        get(w, out, "out", |h| {
            h.w.as_ref().map_or(h.durable, TapeWriter::durable_events)
        })
    }
}

/// Sets `*written` and `*durable` together, as one consistent pair
/// (`*durable <= *written`): the two counts of
/// `floxlog_tape_writer_written_events` and `_durable_events`, which the
/// writer's background I/O thread advances, so two separate calls may see
/// different moments.
///
/// # Safety
/// `w` a live handle; `written` and `durable` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_progress(
    w: *mut floxlog_tape_writer,
    written: *mut u64,
    durable: *mut u64,
) -> floxlog_result {
    crate::boundary::boundary(core::ptr::null_mut(), || {
        check_out(written, "written")?;
        check_out(durable, "durable")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        // Durable first: both only grow, and durable never passes written.
        let (d, wr) = match h.w.as_ref() {
            Some(tw) => {
                let d = tw.durable_events();
                (d, tw.written_events().max(d))
            }
            None => (h.durable, h.written),
        };
        // SAFETY: both checked above.
        unsafe {
            put(written, wr);
            put(durable, d);
        }
        Ok(FLOXLOG_OK)
    })
}

/// Finishes the tape: every open segment gets its index trailer and final
/// header, then the manifest (and metadata.json) is written, fsynced as the
/// durability policy says, and the lock released. The handle stays valid
/// for the counters and must still be freed; appends then fail with
/// `FLOXLOG_FINISHED`. On error the tape is left as a killed writer would
/// leave it (recoverable); a second close returns `FLOXLOG_FINISHED`.
///
/// # Safety
/// `w` a live handle; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_close(
    w: *mut floxlog_tape_writer,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(w) }?;
        let tw =
            h.w.take()
                .ok_or(Fail::new(FLOXLOG_FINISHED, "the tape writer is closed"))?;
        h.written = tw.written_events();
        h.durable = tw.durable_events();
        let before = tw.stats().events;
        tw.close()?;
        // Closing writes what was staged: everything appended is written;
        // it is durable unless the policy never fsyncs.
        h.written = before;
        if h.syncs {
            h.durable = before;
        }
        Ok(FLOXLOG_OK)
    })
}

/// Releases the handle. A writer not yet closed is closed first, and its
/// errors are lost: call `floxlog_tape_writer_close` to see them. NULL is
/// a no-op.
///
/// # Safety
/// `w` NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_free(w: *mut floxlog_tape_writer) {
    // SAFETY: forwarded caller promise.
    unsafe { free(w) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_values_are_checked() {
        let mut c = floxlog_tape_writer_config::default();
        assert!(tape_config_in(&c).is_ok());
        c.layout = 9;
        assert!(tape_config_in(&c).is_err());
        c.layout = FLOXLOG_LAYOUT_SPEC;
        c.durability = FLOXLOG_DURABILITY_SYNC_EVERY_N;
        c.sync_every_n = 0;
        assert!(tape_config_in(&c).is_err());
        c.sync_every_n = 10;
        assert_eq!(
            tape_config_in(&c).unwrap().durability,
            Durability::SyncEveryN(10)
        );
        c.rotate_every_ns = -1;
        assert!(tape_config_in(&c).is_err());
    }
}
