//! `floxlog_tape_writer_get_stats` as C calls it: from another thread
//! while the writer appends, and after close; a NULL `out` is refused.

use crate::codec::types::floxlog_trade;
use crate::error::floxlog_result::*;
use crate::tape::error::zeroed_error;
use crate::tape::writer::*;
use std::ffi::CString;

fn stats(w: *mut floxlog_tape_writer) -> floxlog_tape_writer_stats {
    let mut s = core::mem::MaybeUninit::<floxlog_tape_writer_stats>::uninit();
    let mut err = zeroed_error();
    // SAFETY: `w` is live; `s` and `err` writable.
    let rc = unsafe { floxlog_tape_writer_get_stats(w, s.as_mut_ptr(), &mut err) };
    assert_eq!(rc, FLOXLOG_OK);
    // SAFETY: filled on FLOXLOG_OK.
    unsafe { s.assume_init() }
}

/// Sends a handle pointer to another thread (the test keeps it alive).
struct Ptr(*mut floxlog_tape_writer);
// SAFETY: the stats may be read from any thread; the test frees the
// handle after the thread is joined.
unsafe impl Send for Ptr {}

#[test]
fn stats_are_read_from_another_thread_while_the_writer_appends() {
    let d = tempfile::tempdir().unwrap();
    let p = CString::new(d.path().join("t").to_str().unwrap()).unwrap();
    let cfg = floxlog_tape_writer_config {
        journal: 1,
        max_segment_bytes: 64 << 10,
        ..floxlog_tape_writer_config::default()
    };
    let mut w = core::ptr::null_mut();
    let mut err = zeroed_error();
    let n = 4000u64;
    // SAFETY: valid pointers throughout; the handle outlives the thread.
    unsafe {
        assert_eq!(
            floxlog_tape_writer_open(p.as_ptr(), &cfg, &mut w, &mut err),
            FLOXLOG_OK
        );
        let h = Ptr(w);
        let reader = std::thread::spawn(move || {
            let h = h;
            let mut last = stats(h.0);
            while last.events_appended < n {
                let s = stats(h.0);
                assert!(s.events_appended >= last.events_appended);
                assert!(s.events_durable <= s.events_written);
                assert!(s.events_written <= s.events_appended);
                last = s;
            }
            last
        });
        for i in 0..n {
            let t = floxlog_trade {
                exchange_ts_ns: 1_000 + i as i64,
                trade_id: i,
                ..floxlog_trade::default()
            };
            assert_eq!(
                floxlog_tape_writer_append_trade(w, &t, &mut err),
                FLOXLOG_OK
            );
        }
        let seen = reader.join().unwrap();
        assert_eq!(seen.events_appended, n);
        // The segments handed to the background thread are finished.
        assert_eq!(floxlog_tape_writer_sync(w, &mut err), FLOXLOG_OK);
        let live = stats(w);
        assert_eq!(live.background_queued, 0);
        assert!(live.segments_closed >= 2, "{}", live.segments_closed);
        assert_eq!(live.segments_open, 1);
        assert!(live.bytes_reserved > 0 && live.bytes_used > 0);
        assert!(live.last_rotation_ns > 0);
        assert_eq!((live.last_error[0], live.last_error_ns), (0, 0));
        assert_eq!((live.low_space, live.reservation_failures), (0, 0));
        assert_eq!(
            (
                live.last_reservation_error[0],
                live.last_reservation_error_ns
            ),
            (0, 0)
        );
        assert_eq!(
            floxlog_tape_writer_get_stats(w, core::ptr::null_mut(), &mut err),
            FLOXLOG_NULL_POINTER
        );
        assert_eq!(floxlog_tape_writer_close(w, &mut err), FLOXLOG_OK);
        let closed = stats(w);
        assert_eq!((closed.events_appended, closed.events_durable), (n, n));
        floxlog_tape_writer_free(w);
    }
}
