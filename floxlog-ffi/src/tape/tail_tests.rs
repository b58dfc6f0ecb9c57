//! The tailer handle as C calls it: one thread at a time (a second
//! thread's call is refused, not run), and the writer wait option.

use crate::codec::types::floxlog_event;
use crate::error::floxlog_result::*;
use crate::tape::error::{floxlog_tape_error, zeroed_error};
use crate::tape::tail::*;
use floxlog::core::{Event, Trade};
use floxlog::tape::{Durability, TapeWriter, TapeWriterConfig};
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::atomic::Ordering;

fn open(dir: &Path, writer_wait_ns: i64) -> *mut floxlog_tape_tail {
    let p = CString::new(dir.to_str().unwrap()).unwrap();
    let o = floxlog_tape_tail_options {
        writer_wait_ns,
        ..floxlog_tape_tail_options::default()
    };
    let mut t = core::ptr::null_mut();
    let mut err = zeroed_error();
    // SAFETY: valid pointers for the call.
    let rc = unsafe { floxlog_tape_tail_open(p.as_ptr(), &o, &mut t, &mut err) };
    assert_eq!(rc, FLOXLOG_OK);
    t
}

fn next(t: *mut floxlog_tape_tail, timeout_ns: i64) -> crate::error::floxlog_result {
    let mut ev = MaybeUninit::<floxlog_event>::zeroed();
    let mut err: floxlog_tape_error = zeroed_error();
    // SAFETY: `t` is a live handle; `ev` and `err` writable.
    unsafe { floxlog_tape_tail_next(t, ev.as_mut_ptr(), timeout_ns, &mut err) }
}

/// Sends a handle pointer to another thread (the test keeps it alive).
struct Ptr(*mut floxlog_tape_tail);
// SAFETY: the handle may move between threads; the test frees it after
// the thread is joined.
unsafe impl Send for Ptr {}

/// While one thread waits inside `floxlog_tape_tail_next`, a call from
/// another thread on the same handle returns `FLOXLOG_BUSY` at once and
/// takes nothing: the waiting call gets the event.
#[test]
fn a_second_thread_on_one_tailer_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    let cfg = TapeWriterConfig {
        journal: true,
        durability: Durability::None,
        max_segment_bytes: 1 << 20,
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(&dir, cfg).unwrap();
    let t = open(&dir, -1);
    let p = Ptr(t);
    let waiter = std::thread::spawn(move || {
        let p = p;
        next(p.0, 60_000_000_000)
    });
    // SAFETY: `t` is a live handle of this type.
    let h = unsafe { crate::handle::handle(t) }.unwrap();
    while !h.busy_for_tests().load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    assert_eq!(next(t, 0), FLOXLOG_BUSY);
    let mut buf = [0u8; FLOXLOG_TAIL_POSITION_MAX];
    let mut len = 0usize;
    let mut err = zeroed_error();
    // SAFETY: valid pointers.
    let rc =
        unsafe { floxlog_tape_tail_position(t, buf.as_mut_ptr(), buf.len(), &mut len, &mut err) };
    assert_eq!(rc, FLOXLOG_BUSY);
    w.append(&Event::Trade(Trade {
        trade_id: 1,
        ..Trade::default()
    }))
    .unwrap();
    assert_eq!(waiter.join().unwrap(), FLOXLOG_OK);
    // Free again: the next call runs.
    assert_eq!(next(t, 0), FLOXLOG_TIMEOUT);
    w.close().unwrap();
    // SAFETY: a live handle, freed once.
    unsafe { floxlog_tape_tail_free(t) };
}

/// No writer: a call timeout shorter than the writer wait returns
/// `FLOXLOG_TIMEOUT`; with a writer wait of 0, `FLOXLOG_WRITER_GONE`.
#[test]
fn the_writer_wait_comes_before_writer_gone() {
    let d = tempfile::tempdir().unwrap();
    let t = open(d.path(), FLOXLOG_TAIL_WRITER_WAIT_NS);
    assert_eq!(next(t, 0), FLOXLOG_TIMEOUT);
    assert_eq!(next(t, 5_000_000), FLOXLOG_TIMEOUT);
    // SAFETY: a live handle, freed once.
    unsafe { floxlog_tape_tail_free(t) };
    let t = open(d.path(), 0);
    assert_eq!(next(t, -1), FLOXLOG_WRITER_GONE);
    // SAFETY: a live handle, freed once.
    unsafe { floxlog_tape_tail_free(t) };
}
