//! The tape writer's health for a recorder's monitoring
//! (`floxlog_tape_writer_get_stats`).

use super::{floxlog_tape_writer, shared};
use crate::boundary::{check_out, put};
use crate::error::floxlog_result;
use crate::tape::error::{floxlog_tape_error, put_str, tape_boundary, FLOXLOG_TAPE_MESSAGE_LEN};
use core::ffi::c_char;
use floxlog_result::*;

/// A tape writer's health (`floxlog_tape_writer_get_stats`). Fields
/// marked "journal" are 0 (or empty) for the default writer.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_tape_writer_stats {
    /// Events accepted by the appends so far.
    pub events_appended: u64,
    /// Events whose bytes the OS has (they survive the process being killed).
    pub events_written: u64,
    /// Events an fsync covered (they survive a power loss too).
    pub events_durable: u64,
    /// Segments closed by this writer.
    pub segments_closed: u64,
    /// Segments open and holding events.
    pub segments_open: u64,
    /// Journal: bytes of disk reserved (`fallocate`) by the live and
    /// prepared segments.
    pub bytes_reserved: u64,
    /// Bytes of the segments written: the closed ones' sizes and (journal)
    /// the live ones' frames.
    pub bytes_used: u64,
    /// Journal: jobs waiting for the background thread.
    pub background_queued: u64,
    /// Journal: ns the oldest waiting job has waited (0: keeping up).
    pub background_lag_ns: u64,
    /// Journal: times the background thread woke from a sleep.
    pub background_wakeups: u64,
    /// Journal: wall-clock ns of the last rotation (0: none yet).
    pub last_rotation_ns: i64,
    /// Journal: wall-clock ns of the background thread's failure (0: none).
    pub last_error_ns: i64,
    /// 1 if `last_error` was cut to fit.
    pub last_error_truncated: u8,
    /// Journal: the background thread's failure, NUL-terminated (empty:
    /// none); appends then fail with it.
    pub last_error: [c_char; FLOXLOG_TAPE_MESSAGE_LEN],
    /// Journal: 1 while a segment ahead could not be reserved (a full
    /// disk, say): appends go on into the segments reserved already and
    /// the reservation is retried with back-off; once those are used up
    /// an append with nowhere to go fails (nothing acknowledged is lost).
    pub low_space: u8,
    /// Journal: reservations of a segment ahead (and rewrites of
    /// manifest.json at a rotation, written again at the next) that
    /// failed so far.
    pub reservation_failures: u64,
    /// Journal: wall-clock ns of the last of them (0: none).
    pub last_reservation_error_ns: i64,
    /// 1 if `last_reservation_error` was cut to fit.
    pub last_reservation_error_truncated: u8,
    /// Journal: the last failed reservation's error, NUL-terminated
    /// (empty: none; kept after space is found).
    pub last_reservation_error: [c_char; FLOXLOG_TAPE_MESSAGE_LEN],
}

/// Fills `*out` with the writer's health: the event counts, segments,
/// bytes reserved and used, the background thread's queue, lag and
/// wake-ups, the last rotation, the last background error and when, the
/// low-space state and the last failed reservation. Safe
/// from any thread, also while other threads append through the writer or
/// its appenders (it waits at most for one append); after close, the
/// counts as of the close.
///
/// # Safety
/// `w` a live handle; `out` writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_get_stats(
    w: *mut floxlog_tape_writer,
    out: *mut floxlog_tape_writer_stats,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(out, "out")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { shared(w) }?.counts.health();
        let mut s = floxlog_tape_writer_stats {
            events_appended: h.appended,
            events_written: h.written,
            events_durable: h.durable,
            segments_closed: h.segments_closed,
            segments_open: h.segments_open,
            bytes_reserved: h.bytes_reserved,
            bytes_used: h.bytes_used,
            background_queued: h.background_queued,
            background_lag_ns: h.background_lag_ns,
            background_wakeups: h.background_wakeups,
            last_rotation_ns: h.last_rotation_ns,
            last_error_ns: h.last_error_ns,
            last_error_truncated: 0,
            last_error: [0; FLOXLOG_TAPE_MESSAGE_LEN],
            low_space: u8::from(h.low_space),
            reservation_failures: h.reservation_failures,
            last_reservation_error_ns: h.last_reservation_error_ns,
            last_reservation_error_truncated: 0,
            last_reservation_error: [0; FLOXLOG_TAPE_MESSAGE_LEN],
        };
        if let Some(e) = &h.last_error {
            s.last_error_truncated = u8::from(put_str(&mut s.last_error, e));
        }
        if let Some(e) = &h.last_reservation_error {
            s.last_reservation_error_truncated =
                u8::from(put_str(&mut s.last_reservation_error, e));
        }
        // SAFETY: checked above.
        unsafe { put(out, s) };
        Ok(FLOXLOG_OK)
    })
}
