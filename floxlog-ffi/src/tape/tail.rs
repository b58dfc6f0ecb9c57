//! `floxlog_tape_tail`: the events of a tape as its writer appends them,
//! in file order, across rotations and writer restarts (the `floxlog`
//! crate's `Tail`, which `floxlog cat --follow` runs too).

use crate::boundary::{batch_slots, check_out, check_slice, in_ref, put, put_if_usable};
use crate::codec::event::{write_event, LevelScratch};
use crate::codec::records::TradeSlots;
use crate::codec::types::*;
use crate::error::{floxlog_result, Fail};
use crate::handle::{free, handle, into_c, opaque};
use crate::tape::error::{floxlog_tape_error, path_in, tape_boundary, TapeResult};
use core::ffi::c_char;
use core::mem::MaybeUninit;
use floxlog::tape::{
    Tail, TailNext, TailOptions, TailPosition, TailStart, TailTrades, WaitStrategy,
};
use floxlog_core::Event;
use floxlog_result::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `floxlog_tape_tail_options.start`: from the tape's first event.
pub const FLOXLOG_TAIL_START_BEGINNING: u8 = 0;
/// `floxlog_tape_tail_options.start`: after the events the tape holds at open
/// (new events only).
pub const FLOXLOG_TAIL_START_END: u8 = 1;
/// `floxlog_tape_tail_options.start`: at the saved position in
/// `floxlog_tape_tail_options.position` (bytes `floxlog_tape_tail_position`
/// wrote): each series of the tape resumes after the last event handed
/// out from it, a series the position does not name at its first event.
pub const FLOXLOG_TAIL_START_POSITION: u8 = 2;

/// A buffer of this many bytes holds the saved position of every tape
/// this library's writers make (the flox layout, or the spec layout's
/// four series). A tape with more, or longer-named, series needs more:
/// `floxlog_tape_tail_position` says how much.
pub const FLOXLOG_TAIL_POSITION_MAX: usize = 256;

/// `floxlog_tape_tail_options.wait`: sleep until the writer publishes (the
/// default). A journal writer wakes its sleeping tailers (a futex on the
/// tape's wake page, Linux; no system call on its append path while none
/// sleeps); with the default writer, or elsewhere, sleep between polls,
/// from 10 us doubling up to 10 ms.
pub const FLOXLOG_TAIL_WAIT_BLOCKING: u8 = 0;
/// `floxlog_tape_tail_options.wait`: spin a while, then yield the CPU between
/// polls.
pub const FLOXLOG_TAIL_WAIT_SPIN_YIELD: u8 = 1;
/// `floxlog_tape_tail_options.wait`: poll without pause (lowest latency; keeps
/// a core busy while waiting).
pub const FLOXLOG_TAIL_WAIT_BUSY_SPIN: u8 = 2;

/// How a tailer reads and waits. Get the defaults with
/// `floxlog_tape_tail_options_default` (what a NULL `opts` means: from the
/// beginning, CRCs checked, blocking wait).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct floxlog_tape_tail_options {
    /// `FLOXLOG_TAIL_START_*` (default beginning).
    pub start: u8,
    /// Non-zero: check every frame's CRC32 (default 1).
    pub verify_crc: u8,
    /// Non-zero: skip frames of types 1.0 does not define; zero (default):
    /// such a frame is an error.
    pub skip_unknown_types: u8,
    /// `FLOXLOG_TAIL_WAIT_*` (default blocking).
    pub wait: u8,
    /// With `FLOXLOG_TAIL_START_POSITION`: the saved position's bytes, as
    /// `floxlog_tape_tail_position` wrote them (read during
    /// `floxlog_tape_tail_open` only; the caller keeps ownership).
    /// Otherwise ignored (NULL by default).
    pub position: *const u8,
    /// Bytes at `position`.
    pub position_len: usize,
    /// How long to wait, in nanoseconds, for a writer to start or come
    /// back when none holds the tape and it was not closed: a writer that
    /// does within this time is followed, and only after it does
    /// `floxlog_tape_tail_next` return `FLOXLOG_WRITER_GONE` (a call's own
    /// timeout ending first returns `FLOXLOG_TIMEOUT`). The time counts
    /// across calls, from the first look that found no writer. Default
    /// `FLOXLOG_TAIL_WRITER_WAIT_NS` (2 s); 0: at once; negative: for ever.
    pub writer_wait_ns: i64,
}

/// `floxlog_tape_tail_options.writer_wait_ns`'s default: 2 s.
pub const FLOXLOG_TAIL_WRITER_WAIT_NS: i64 = 2_000_000_000;

impl Default for floxlog_tape_tail_options {
    fn default() -> Self {
        floxlog_tape_tail_options {
            start: FLOXLOG_TAIL_START_BEGINNING,
            verify_crc: 1,
            skip_unknown_types: 0,
            wait: FLOXLOG_TAIL_WAIT_BLOCKING,
            position: core::ptr::null(),
            position_len: 0,
            writer_wait_ns: FLOXLOG_TAIL_WRITER_WAIT_NS,
        }
    }
}

/// Opaque live tailer handle (see `floxlog_tape_tail_open`). Use one
/// handle from one thread at a time; it may move between threads. A call
/// made while another thread is inside a call on the same handle returns
/// `FLOXLOG_BUSY` and does nothing.
pub struct floxlog_tape_tail {
    _private: [u8; 0],
}

const TAIL_MAGIC: u64 = 0x4c49_4154_4150_4c46; // "FLPATAIL"

#[repr(C)]
pub(crate) struct TailHandle {
    magic: u64,
    /// Set while a call is inside (see `claim`).
    busy: AtomicBool,
    tail: Tail,
    /// Book levels of the last event returned.
    levels: Vec<MaybeUninit<floxlog_level>>,
}

opaque!(floxlog_tape_tail => TailHandle, magic TAIL_MAGIC, null "t");

#[cfg(test)]
impl TailHandle {
    pub(crate) fn busy_for_tests(&self) -> &AtomicBool {
        &self.busy
    }
}

/// # Safety
/// With `FLOXLOG_TAIL_START_POSITION`, `o.position` must be NULL or point
/// at `o.position_len` readable bytes.
unsafe fn tail_options(o: &floxlog_tape_tail_options) -> TapeResult<TailOptions> {
    let start = match o.start {
        FLOXLOG_TAIL_START_BEGINNING => TailStart::Beginning,
        FLOXLOG_TAIL_START_END => TailStart::End,
        FLOXLOG_TAIL_START_POSITION => {
            check_slice(o.position, o.position_len, "opts->position")?;
            if o.position.is_null() {
                return Err(Fail::null("opts->position").into());
            }
            // SAFETY: checked non-NULL; the caller promises `position_len`
            // readable bytes.
            let bytes = unsafe { core::slice::from_raw_parts(o.position, o.position_len) };
            TailStart::At(TailPosition::from_bytes(bytes)?)
        }
        _ => return Err(Fail::invalid("start is not a FLOXLOG_TAIL_START_* value").into()),
    };
    let wait = match o.wait {
        FLOXLOG_TAIL_WAIT_BLOCKING => WaitStrategy::Blocking,
        FLOXLOG_TAIL_WAIT_SPIN_YIELD => WaitStrategy::SpinThenYield,
        FLOXLOG_TAIL_WAIT_BUSY_SPIN => WaitStrategy::BusySpin,
        _ => return Err(Fail::invalid("wait is not a FLOXLOG_TAIL_WAIT_* value").into()),
    };
    Ok(TailOptions {
        start,
        skip_crc: o.verify_crc == 0,
        skip_unknown: o.skip_unknown_types != 0,
        wait,
        writer_wait: timeout(o.writer_wait_ns),
    })
}

/// Marks the handle in use until dropped.
struct Claim(*const AtomicBool);

impl Drop for Claim {
    fn drop(&mut self) {
        // SAFETY: points into the handle, which outlives the call that
        // made the claim.
        unsafe { &*self.0 }.store(false, Ordering::Release);
    }
}

/// The handle behind `t`, claimed for this call: `FLOXLOG_BUSY` while
/// another thread is inside a call on it (one atomic exchange).
///
/// # Safety
/// As `handle`.
unsafe fn claim<'a>(t: *mut floxlog_tape_tail) -> Result<(&'a mut TailHandle, Claim), Fail> {
    // SAFETY: forwarded caller promise.
    let h = unsafe { handle(t) }?;
    if h.busy
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return Err(Fail::new(
            FLOXLOG_BUSY,
            "handle in use by another thread (use one tailer handle from one thread at a time)",
        ));
    }
    let c = Claim(&h.busy);
    Ok((h, c))
}

/// `timeout_ns` in the C sense: 0 do not wait, negative no limit.
fn timeout(ns: i64) -> Option<Duration> {
    u64::try_from(ns).ok().map(Duration::from_nanos)
}

/// Fills `*opts` with the defaults: from the beginning, CRCs checked,
/// blocking wait. Returns `FLOXLOG_NULL_POINTER` if `opts` is NULL.
///
/// # Safety
/// `opts` must be NULL or point at a writable `floxlog_tape_tail_options`.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_tail_options_default(
    opts: *mut floxlog_tape_tail_options,
) -> floxlog_result {
    // SAFETY: forwarded caller promise; the pointer is checked.
    unsafe {
        crate::boundary::output(core::ptr::null_mut(), opts, "opts", || {
            Ok(floxlog_tape_tail_options::default())
        })
    }
}

/// Opens a tailer on `path`: a tape directory (either layout; it may hold
/// no segment yet, but must exist) or one segment file. `opts` may be NULL
/// (the defaults). On success `*out` is a handle to release with
/// `floxlog_tape_tail_free`.
///
/// The tailer returns events in file order (segment after segment, each
/// as written), not merged by time. It reads what the writer has
/// published: a half-written frame, or the zero-filled tail of a
/// pre-allocated journal segment, is "nothing yet", never damage.
///
/// Errors: `FLOXLOG_IO_ERROR` (no such directory...), `FLOXLOG_INVALID_INPUT`
/// (a bad option; saved position bytes that are not one, naming the byte
/// offset; a saved position naming a series or segment the tape no longer
/// holds, or an offset outside its segment), `FLOXLOG_NULL_POINTER`
/// (`FLOXLOG_TAIL_START_POSITION` with a NULL `position`), data errors of
/// the starting segments.
///
/// # Safety
/// `path` must be NULL or a NUL-terminated string; `opts` NULL or a valid
/// `floxlog_tape_tail_options`; `out` NULL or writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_tail_open(
    path: *const c_char,
    opts: *const floxlog_tape_tail_options,
    out: *mut *mut floxlog_tape_tail,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(out, "out")?;
        // SAFETY: the caller's promise.
        let p = unsafe { path_in(path, "path is NULL or empty") }?;
        let o = if opts.is_null() {
            floxlog_tape_tail_options::default()
        } else {
            // SAFETY: non-NULL; the caller's promise.
            *unsafe { in_ref(opts, "opts") }?
        };
        // SAFETY: the caller's promise about `o.position`.
        let tail = Tail::open(&p, unsafe { tail_options(&o) }?)?;
        let h = TailHandle {
            magic: TAIL_MAGIC,
            busy: AtomicBool::new(false),
            tail,
            levels: Vec::new(),
        };
        // SAFETY: checked above.
        unsafe { put(out, into_c::<floxlog_tape_tail>(h)) };
        Ok(FLOXLOG_OK)
    })
}

/// The code of a quiet result.
fn quiet(n: TailNext<'_>) -> floxlog_result {
    match n {
        TailNext::Timeout => FLOXLOG_TIMEOUT,
        TailNext::End => FLOXLOG_END,
        _ => FLOXLOG_WRITER_GONE,
    }
}

/// Reads the next event into `*ev`, waiting at most `timeout_ns`
/// nanoseconds for it (0: do not wait; negative: no limit).
///
/// Returns `FLOXLOG_OK` with the event; `FLOXLOG_TIMEOUT` if nothing
/// arrived in time while a writer holds the tape; `FLOXLOG_END` once the
/// writer closed the tape cleanly (no writer holds its lock and every
/// segment is finished) and everything was read; `FLOXLOG_WRITER_GONE` if
/// no writer has held the lock for `floxlog_tape_tail_options.writer_wait_ns`
/// (default 2 s, counted across calls) and the tape was never closed (the
/// writer died, or never started: every event it published was
/// returned); `FLOXLOG_BUSY` if another thread is inside a call on `t`; or
/// an error (damage, naming the segment file and byte offset). Neither
/// `FLOXLOG_END` nor `FLOXLOG_WRITER_GONE` is final: a later call returns
/// the events of a writer restarted on the tape. So a tailer may start
/// before its writer, and with a bounded writer wait never waits for ever
/// on a dead tape.
///
/// An idle poll (`timeout_ns` 0, or each round of a wait) is one load of
/// the next frame's size word; the tape's directory and lock are looked
/// at when a segment finished, the journal writer's wake page says the
/// tape changed, or every 2 ms.
///
/// A book's `bids`/`asks` and a pool state's `payload` point into the
/// handle: valid until the next call on it.
///
/// # Safety
/// `t` must be a live handle or NULL; `ev` NULL or writable; `err` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_tail_next(
    t: *mut floxlog_tape_tail,
    ev: *mut floxlog_event,
    timeout_ns: i64,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(ev, "ev")?;
        // SAFETY: forwarded caller promise.
        let (h, _claim) = unsafe { claim(t) }?;
        let TailHandle { tail, levels, .. } = h;
        let e = match tail.next(timeout(timeout_ns))? {
            TailNext::Event(e) => e,
            other => return Ok(quiet(other)),
        };
        if let Event::Book(b) = &e {
            let total = b.bids.len() + b.asks.len();
            if levels.len() < total {
                levels.resize(total, MaybeUninit::uninit());
            }
        }
        let mut scratch = LevelScratch::from_slots(&mut levels[..]);
        // SAFETY: `ev` checked above; the scratch holds every level.
        let _ = unsafe { write_event(&e, ev, &mut scratch) };
        Ok(FLOXLOG_OK)
    })
}

/// Reads up to `cap` trades into `out[0..*count]`: waits at most
/// `timeout_ns` for the first (as `floxlog_tape_tail_next`), then takes
/// the trades that have arrived, without waiting, stopping before an event
/// of another type.
///
/// Returns `FLOXLOG_OK` with `*count` >= 1; `FLOXLOG_NOT_TRADE` (count 0)
/// when the next event is not a trade (read it with
/// `floxlog_tape_tail_next`); `FLOXLOG_TIMEOUT`, `FLOXLOG_END`,
/// `FLOXLOG_WRITER_GONE` (count 0) as `floxlog_tape_tail_next`; or an
/// error. `*count` is written on every return when `count` is usable.
///
/// # Safety
/// `t` a live handle or NULL; `out` NULL or `cap` writable trades; `count`
/// NULL or writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_tail_next_trades(
    t: *mut floxlog_tape_tail,
    out: *mut floxlog_trade,
    cap: usize,
    count: *mut usize,
    timeout_ns: i64,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    let mut n = 0usize;
    let rc = tape_boundary(err, || -> TapeResult<floxlog_result> {
        // SAFETY: the caller promises `cap` writable trades.
        let slots = unsafe { batch_slots(count, out, cap, "out") }?;
        // SAFETY: forwarded caller promise.
        let (h, _claim) = unsafe { claim(t) }?;
        // Decoded from the segment straight into the caller's array.
        let got = h
            .tail
            .next_trades(&mut TradeSlots(slots), timeout(timeout_ns))?;
        n = match got {
            TailTrades::Trades(k) => k,
            _ => 0,
        };
        Ok(match got {
            TailTrades::Trades(_) => FLOXLOG_OK,
            TailTrades::NotTrade => FLOXLOG_NOT_TRADE,
            TailTrades::Timeout => FLOXLOG_TIMEOUT,
            TailTrades::End => FLOXLOG_END,
            TailTrades::WriterGone => FLOXLOG_WRITER_GONE,
        })
    });
    // SAFETY: the caller's promise.
    unsafe { put_if_usable(count, n) };
    rc
}

/// Saves where the tailer stands: in each series of the tape, after the
/// last event handed out from it (where it started, for a series nothing
/// was handed out from yet), segments named by their `created_ns`. Pass
/// the bytes back in `floxlog_tape_tail_options.position` (with
/// `FLOXLOG_TAIL_START_POSITION`) to resume there: every later event of
/// every series comes once, in its series' order. The bytes are plain
/// data (little-endian, CRC-checked: see the notes): store them anywhere.
///
/// Ownership: the caller owns `buf` (`cap` bytes; `FLOXLOG_TAIL_POSITION_MAX`
/// suffices for every tape this library writes). `*len` receives the
/// position's size on `FLOXLOG_OK` and on `FLOXLOG_BUFFER_TOO_SMALL`
/// (then nothing is written to `buf`). `buf` may be NULL when `cap` is 0,
/// to ask the size.
///
/// # Safety
/// `t` a live handle or NULL; `buf` NULL or `cap` writable bytes; `len`
/// NULL or writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_tail_position(
    t: *mut floxlog_tape_tail,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(len, "len")?;
        if cap > 0 {
            check_out(buf, "buf")?;
        }
        // SAFETY: forwarded caller promise.
        let (h, _claim) = unsafe { claim(t) }?;
        let bytes = h.tail.position().to_bytes()?;
        // SAFETY: checked above.
        unsafe { put(len, bytes.len()) };
        if bytes.len() > cap {
            return Err(Fail::too_small(
                bytes.len() as u64,
                "buf is smaller than the position (see *len)",
            )
            .into());
        }
        // SAFETY: `buf` holds `cap` >= `bytes.len()` writable bytes (the
        // caller's promise), checked non-NULL and aligned above; the
        // handle's bytes cannot overlap caller memory.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, bytes.len()) };
        Ok(FLOXLOG_OK)
    })
}

/// Releases a tailer (NULL is a no-op).
///
/// # Safety
/// `t` must be NULL or a handle from `floxlog_tape_tail_open` not yet
/// freed.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_tail_free(t: *mut floxlog_tape_tail) {
    // SAFETY: forwarded caller promise.
    unsafe { free(t) }
}
