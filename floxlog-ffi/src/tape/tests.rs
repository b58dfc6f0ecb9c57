//! The tape-level exports called as C would call them: a tape written
//! through `floxlog_tape_writer` reads back through `floxlog_tape_reader`
//! (both orders, filters, seek, batches), and the failures carry code,
//! file and offset.

// Options are set field by field, as C callers set them.
#![allow(clippy::field_reassign_with_default)]

use crate::codec::types::*;
use crate::consts::*;
use crate::error::floxlog_result::{self, *};
use crate::tape::error::{floxlog_tape_error, zeroed_error};
use crate::tape::ops::*;
use crate::tape::reader::*;
use crate::tape::writer::*;
use core::ffi::{c_char, c_void, CStr};
use std::ffi::CString;
use std::path::Path;

fn cpath(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

fn text(a: &[c_char]) -> String {
    // SAFETY: the library NUL-terminates its texts.
    unsafe { CStr::from_ptr(a.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

fn trade(i: u64) -> floxlog_trade {
    floxlog_trade {
        // Two symbols whose timestamps interleave out of append order.
        exchange_ts_ns: 1_000_000 + (i as i64) * 10 - if i.is_multiple_of(2) { 5 } else { 0 },
        recv_ts_ns: 2_000_000 + i as i64,
        price_raw: 100_0000_0000 + i as i64,
        qty_raw: 1_0000_0000,
        trade_id: i,
        symbol_id: (i % 2) as u32 + 1,
        side: (i % 2) as u8,
        instrument: 0,
        exchange_id: 3,
    }
}

unsafe extern "C" fn fixed_clock(ctx: *mut c_void) -> i64 {
    // SAFETY: the tests pass a pointer to a live i64 counter.
    let n = unsafe { &mut *(ctx as *mut i64) };
    *n += 1;
    1_700_000_000_000_000_000 + *n
}

/// Writes `n` trades to `dir` with the given rotation size; returns how
/// often the clock was called.
fn write_tape(dir: &Path, n: u64, max_segment_bytes: u64, lz4: bool) -> i64 {
    let mut calls = 0i64;
    let mut cfg = floxlog_tape_writer_config::default();
    cfg.max_segment_bytes = max_segment_bytes;
    cfg.segment.index_interval = 16;
    if lz4 {
        cfg.segment.compression = FLOXLOG_COMPRESSION_LZ4;
    }
    cfg.clock_ns = Some(fixed_clock);
    cfg.clock_ctx = &mut calls as *mut i64 as *mut c_void;
    let mut w = core::ptr::null_mut();
    let mut err = zeroed_error();
    let d = cpath(dir);
    // SAFETY: valid pointers throughout.
    unsafe {
        assert_eq!(
            floxlog_tape_writer_open(d.as_ptr(), &cfg, &mut w, &mut err),
            FLOXLOG_OK,
            "{}",
            text(&err.message)
        );
        let trades: Vec<floxlog_trade> = (0..n).map(trade).collect();
        let (first, rest) = trades.split_at(1);
        assert_eq!(
            floxlog_tape_writer_append_trade(w, &first[0], &mut err),
            FLOXLOG_OK
        );
        let mut appended = 0usize;
        assert_eq!(
            floxlog_tape_writer_append_trades(
                w,
                rest.as_ptr(),
                rest.len(),
                &mut appended,
                &mut err
            ),
            FLOXLOG_OK
        );
        assert_eq!(appended, rest.len());
        let (mut pw, mut pd) = (0u64, 0u64);
        assert_eq!(
            floxlog_tape_writer_progress(w, &mut pw, &mut pd),
            FLOXLOG_OK
        );
        assert!(pd <= pw && pw <= n);
        assert_eq!(floxlog_tape_writer_flush(w, &mut err), FLOXLOG_OK);
        let mut written = 0u64;
        assert_eq!(
            floxlog_tape_writer_written_events(w, &mut written),
            FLOXLOG_OK
        );
        if !lz4 {
            assert_eq!(written, n);
        }
        assert_eq!(floxlog_tape_writer_close(w, &mut err), FLOXLOG_OK);
        assert_eq!(
            floxlog_tape_writer_written_events(w, &mut written),
            FLOXLOG_OK
        );
        assert_eq!(written, n);
        let mut durable = 0u64;
        assert_eq!(
            floxlog_tape_writer_durable_events(w, &mut durable),
            FLOXLOG_OK
        );
        assert_eq!(
            durable, n,
            "SYNC_ON_CLOSE: everything is durable after close"
        );
        let (mut pw, mut pd) = (0u64, 0u64);
        assert_eq!(
            floxlog_tape_writer_progress(w, &mut pw, &mut pd),
            FLOXLOG_OK
        );
        assert_eq!((pw, pd), (n, n));
        // Appending after close is refused; the second close too.
        assert_eq!(
            floxlog_tape_writer_append_trade(w, &first[0], &mut err),
            FLOXLOG_FINISHED
        );
        assert_eq!(floxlog_tape_writer_close(w, &mut err), FLOXLOG_FINISHED);
        floxlog_tape_writer_free(w);
    }
    calls
}

fn open_reader(path: &Path, opts: &floxlog_tape_reader_options) -> *mut floxlog_tape_reader {
    let mut r = core::ptr::null_mut();
    let mut err = zeroed_error();
    let p = cpath(path);
    // SAFETY: valid pointers.
    let rc = unsafe { floxlog_tape_reader_open(p.as_ptr(), opts, &mut r, &mut err) };
    assert_eq!(rc, FLOXLOG_OK, "{}", text(&err.message));
    r
}

/// Reads every event (one call each); returns the trade ids and the final
/// code.
fn read_ids(r: *mut floxlog_tape_reader) -> (Vec<u64>, floxlog_result, floxlog_tape_error) {
    let mut ids = Vec::new();
    let mut err = zeroed_error();
    loop {
        let mut ev = core::mem::MaybeUninit::<floxlog_event>::uninit();
        // SAFETY: valid pointers.
        let rc = unsafe { floxlog_tape_reader_next(r, ev.as_mut_ptr(), &mut err) };
        if rc != FLOXLOG_OK {
            return (ids, rc, err);
        }
        // SAFETY: written on OK.
        let ev = unsafe { ev.assume_init() };
        assert_eq!(ev.kind, FLOXLOG_EVENT_TRADE);
        // SAFETY: the kind says trade.
        ids.push(unsafe { ev.data.trade.trade_id });
    }
}

#[test]
fn a_rotated_tape_reads_back_in_both_orders() {
    for lz4 in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let n = 1000;
        let calls = write_tape(d.path(), n, 8 << 10, lz4);
        let segs: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".floxlog"))
            .collect();
        assert!(segs.len() > 3, "rotated: {segs:?}");
        assert_eq!(calls as usize, segs.len(), "one clock call per segment");
        for s in &segs {
            let ns: i64 = s.trim_end_matches(".floxlog").parse().unwrap();
            assert!(ns > 1_700_000_000_000_000_000 && ns <= 1_700_000_000_000_000_000 + calls);
        }

        let mut o = floxlog_tape_reader_options::default();
        o.order = FLOXLOG_ORDER_FILE;
        let r = open_reader(d.path(), &o);
        let (ids, rc, _) = read_ids(r);
        assert_eq!(rc, FLOXLOG_END);
        assert_eq!(ids, (0..n).collect::<Vec<_>>());
        let mut st = floxlog_tape_reader_stats::default();
        // SAFETY: valid pointers.
        unsafe {
            assert_eq!(floxlog_tape_reader_get_stats(r, &mut st), FLOXLOG_OK);
            floxlog_tape_reader_free(r);
        }
        assert_eq!(
            (st.events, st.errors, st.segments),
            (n, 0, segs.len() as u64)
        );

        // Time order: by timestamp, ties (none here) stable.
        let r = open_reader(d.path(), &floxlog_tape_reader_options::default());
        let (ids, rc, _) = read_ids(r);
        assert_eq!(rc, FLOXLOG_END);
        let mut want: Vec<u64> = (0..n).collect();
        want.sort_by_key(|i| trade(*i).exchange_ts_ns);
        assert_eq!(ids, want);

        // Seek: the events at or after the target, in time order.
        let target = trade(500).exchange_ts_ns;
        let mut err = zeroed_error();
        // SAFETY: valid pointers.
        let rc = unsafe { floxlog_tape_reader_seek(r, target, &mut err) };
        assert_eq!(rc, FLOXLOG_OK);
        let (ids, _, _) = read_ids(r);
        let want: Vec<u64> = want
            .into_iter()
            .filter(|i| trade(*i).exchange_ts_ns >= target)
            .collect();
        assert_eq!(ids, want);
        // SAFETY: live handle.
        unsafe { floxlog_tape_reader_free(r) };
    }
}

#[test]
fn filters_and_batches() {
    let d = tempfile::tempdir().unwrap();
    write_tape(d.path(), 300, 4 << 10, false);
    let ids = [2u32];
    let mut o = floxlog_tape_reader_options::default();
    o.order = FLOXLOG_ORDER_FILE;
    o.filter.symbol_ids = ids.as_ptr();
    o.filter.symbol_id_count = 1;
    o.filter.has_to = 1;
    o.filter.to_ns = trade(100).exchange_ts_ns;
    o.filter.types = 1 << FLOXLOG_EVENT_TRADE;
    let r = open_reader(d.path(), &o);
    let mut got = Vec::new();
    let mut evs = vec![core::mem::MaybeUninit::<floxlog_event>::uninit(); 7];
    let mut err = zeroed_error();
    loop {
        let mut count = 99usize;
        // SAFETY: valid pointers.
        let rc = unsafe {
            floxlog_tape_reader_next_batch(
                r,
                evs.as_mut_ptr() as *mut floxlog_event,
                evs.len(),
                &mut count,
                &mut err,
            )
        };
        if rc == FLOXLOG_END {
            assert_eq!(count, 0);
            break;
        }
        assert_eq!(rc, FLOXLOG_OK);
        assert!((1..=7).contains(&count));
        for e in &evs[..count] {
            // SAFETY: the first `count` are written, all trades.
            got.push(unsafe { e.assume_init_ref().data.trade.trade_id });
        }
    }
    // SAFETY: live handle.
    unsafe { floxlog_tape_reader_free(r) };
    let want: Vec<u64> = (0..300)
        .filter(|i| {
            trade(*i).symbol_id == 2 && trade(*i).exchange_ts_ns < trade(100).exchange_ts_ns
        })
        .collect();
    assert_eq!(got, want);

    // A type filter that keeps nothing of this tape; a bad bit is refused.
    o.filter.types = 1 << FLOXLOG_EVENT_BOOK_DELTA;
    let r = open_reader(d.path(), &o);
    let (ids, rc, _) = read_ids(r);
    assert!(ids.is_empty() && rc == FLOXLOG_END);
    // SAFETY: live handle.
    unsafe { floxlog_tape_reader_free(r) };
    o.filter.types = 1 << 9;
    let mut r = core::ptr::null_mut();
    let p = cpath(d.path());
    // SAFETY: valid pointers.
    let rc = unsafe { floxlog_tape_reader_open(p.as_ptr(), &o, &mut r, &mut err) };
    assert_eq!(rc, FLOXLOG_INVALID_INPUT);
    assert!(r.is_null());
}

#[test]
fn damage_comes_after_every_good_event_with_file_and_offset() {
    let d = tempfile::tempdir().unwrap();
    write_tape(d.path(), 200, 1 << 20, false);
    let seg = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "floxlog"))
        .unwrap();
    // Flip a payload byte of frame 50 (64-byte header, 60-byte trade frames).
    let mut bytes = std::fs::read(&seg).unwrap();
    let frame50 = 64 + 50 * 60;
    bytes[frame50 + 20] ^= 0xff;
    std::fs::write(&seg, &bytes).unwrap();
    let mut o = floxlog_tape_reader_options::default();
    o.order = FLOXLOG_ORDER_FILE;
    let r = open_reader(d.path(), &o);
    let (ids, rc, err) = read_ids(r);
    assert_eq!(ids, (0..50).collect::<Vec<_>>());
    assert_eq!(rc, FLOXLOG_CRC_MISMATCH);
    // The last event returned: frame 49 of segment 0, and that segment's
    // path.
    let mut pos = floxlog_tape_position::default();
    let mut path = core::ptr::null();
    // SAFETY: valid pointers; the path lives as long as the reader.
    unsafe {
        assert_eq!(floxlog_tape_reader_position(r, &mut pos), FLOXLOG_OK);
        assert_eq!(
            floxlog_tape_reader_segment_path(r, pos.segment, &mut path),
            FLOXLOG_OK
        );
        assert_eq!(
            CStr::from_ptr(path).to_str().unwrap(),
            seg.to_str().unwrap()
        );
        assert_eq!(
            floxlog_tape_reader_segment_path(r, 1, &mut path),
            FLOXLOG_INVALID_INPUT
        );
    }
    assert_eq!(
        (pos.segment, pos.offset, pos.has_in_block),
        (0, 64 + 49 * 60, 0)
    );
    assert_eq!(err.code, FLOXLOG_CRC_MISMATCH as u32);
    assert_eq!((err.has_offset, err.offset), (1, frame50 as u64));
    assert_eq!(text(&err.file), seg.to_str().unwrap());
    assert!(
        text(&err.message).contains("crc_mismatch"),
        "{}",
        text(&err.message)
    );
    // The error is returned once; then the end.
    let (more, rc, _) = read_ids(r);
    assert!(more.is_empty());
    assert_eq!(rc, FLOXLOG_END);
    // SAFETY: live handle.
    unsafe { floxlog_tape_reader_free(r) };

    // verify reports it through the callback and fails.
    unsafe extern "C" fn collect(f: *const floxlog_finding, ctx: *mut c_void) {
        // SAFETY: the test passes a Vec; the finding lives for the call.
        let (v, f) = unsafe { (&mut *(ctx as *mut Vec<(u32, String)>), &*f) };
        // SAFETY: the library's NUL-terminated string.
        let kind = unsafe { CStr::from_ptr(f.kind) }
            .to_string_lossy()
            .into_owned();
        v.push((f.severity, kind));
    }
    let mut found: Vec<(u32, String)> = Vec::new();
    let mut sum = floxlog_verify_summary::default();
    let mut err = zeroed_error();
    let p = cpath(d.path());
    // SAFETY: valid pointers.
    let rc = unsafe {
        floxlog_tape_verify(
            p.as_ptr(),
            core::ptr::null(),
            Some(collect),
            &mut found as *mut _ as *mut c_void,
            &mut sum,
            &mut err,
        )
    };
    assert_eq!(rc, FLOXLOG_VERIFY_FAILED);
    assert_eq!(sum.passed, 0);
    assert!(sum.errors >= 1);
    assert!(found.contains(&(FLOXLOG_SEVERITY_ERROR, "crc_mismatch".to_string())));
    assert_eq!(text(&err.file), seg.to_str().unwrap());

    // recover keeps the 50 good events; then verify passes.
    let o = floxlog_recover_options {
        no_backup: 1,
        ..Default::default()
    };
    let mut rs = floxlog_recover_summary::default();
    // SAFETY: valid pointers.
    let rc = unsafe {
        floxlog_tape_recover(
            p.as_ptr(),
            &o,
            None,
            core::ptr::null_mut(),
            &mut rs,
            &mut err,
        )
    };
    assert_eq!(rc, FLOXLOG_OK, "{}", text(&err.message));
    assert_eq!((rs.rewritten, rs.events_kept), (1, 50));
    // SAFETY: valid pointers.
    let rc = unsafe {
        floxlog_tape_verify(
            p.as_ptr(),
            core::ptr::null(),
            None,
            core::ptr::null_mut(),
            &mut sum,
            &mut err,
        )
    };
    assert_eq!(rc, FLOXLOG_OK, "{}", text(&err.message));
}

#[test]
fn inspect_gives_the_cli_json_and_the_totals() {
    let d = tempfile::tempdir().unwrap();
    write_tape(d.path(), 100, 1 << 20, false);
    let p = cpath(d.path());
    let mut i = core::ptr::null_mut();
    let mut err = zeroed_error();
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(
            floxlog_tape_inspect(p.as_ptr(), core::ptr::null(), &mut i, &mut err),
            FLOXLOG_OK
        );
        let mut s = floxlog_tape_summary::default();
        assert_eq!(floxlog_inspection_summary(i, &mut s), FLOXLOG_OK);
        assert_eq!((s.segments, s.events, s.events_by_type[1]), (1, 100, 100));
        assert_eq!(s.has_time_range, 1);
        assert_eq!(s.failed, 0);
        let (mut ids, mut n) = (core::ptr::null(), 0usize);
        assert_eq!(floxlog_inspection_symbols(i, &mut ids, &mut n), FLOXLOG_OK);
        assert_eq!(core::slice::from_raw_parts(ids, n), &[1, 2]);
        let (mut json, mut len) = (core::ptr::null(), 0usize);
        assert_eq!(floxlog_inspection_json(i, &mut json, &mut len), FLOXLOG_OK);
        let text = CStr::from_ptr(json).to_str().unwrap();
        assert_eq!(text.len(), len);
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(v["total"]["events"], 100);
        floxlog_inspection_free(i);
    }
}

#[test]
fn a_second_writer_is_refused_with_the_lock_named() {
    let d = tempfile::tempdir().unwrap();
    let p = cpath(d.path());
    let (mut a, mut b) = (core::ptr::null_mut(), core::ptr::null_mut());
    let mut err = zeroed_error();
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(
            floxlog_tape_writer_open(p.as_ptr(), core::ptr::null(), &mut a, &mut err),
            FLOXLOG_OK
        );
        assert_eq!(
            floxlog_tape_writer_open(p.as_ptr(), core::ptr::null(), &mut b, &mut err),
            FLOXLOG_TAPE_LOCKED
        );
        assert!(b.is_null());
        assert!(text(&err.file).ends_with(".floxlog.lock"));
        assert!(text(&err.message).contains("hint:"));
        // Freed without close: closed on the way (an empty tape).
        floxlog_tape_writer_free(a);
        // NULL and wrong handles are errors, not crashes.
        let t = trade(0);
        assert_eq!(
            floxlog_tape_writer_append_trade(core::ptr::null_mut(), &t, &mut err),
            FLOXLOG_NULL_POINTER
        );
        assert_eq!(
            floxlog_tape_writer_open(core::ptr::null(), core::ptr::null(), &mut a, &mut err),
            FLOXLOG_NULL_POINTER
        );
        let mut r = core::ptr::null_mut();
        let missing = cpath(&d.path().join("nope"));
        assert_eq!(
            floxlog_tape_reader_open(missing.as_ptr(), core::ptr::null(), &mut r, &mut err),
            FLOXLOG_IO_ERROR
        );
        assert!(text(&err.file).ends_with("nope"));
    }
}

/// Reads with `floxlog_tape_reader_next_trades` (batches of `cap`), taking
/// any other event with `floxlog_tape_reader_next`; returns the events as
/// (kind, trade id or timestamp), the final code and the error.
fn read_with_trade_batches(
    r: *mut floxlog_tape_reader,
    cap: usize,
) -> (Vec<(u32, i64)>, floxlog_result, floxlog_tape_error) {
    let mut got = Vec::new();
    let mut out = vec![floxlog_trade::default(); cap];
    let mut err = zeroed_error();
    loop {
        let mut n = 99usize;
        // SAFETY: valid pointers.
        let rc =
            unsafe { floxlog_tape_reader_next_trades(r, out.as_mut_ptr(), cap, &mut n, &mut err) };
        match rc {
            FLOXLOG_OK => {
                assert!((1..=cap).contains(&n));
                got.extend(
                    out[..n]
                        .iter()
                        .map(|t| (FLOXLOG_EVENT_TRADE, t.trade_id as i64)),
                );
            }
            FLOXLOG_NOT_TRADE => {
                assert_eq!(n, 0);
                let mut ev = core::mem::MaybeUninit::<floxlog_event>::uninit();
                // SAFETY: valid pointers.
                let rc = unsafe { floxlog_tape_reader_next(r, ev.as_mut_ptr(), &mut err) };
                assert_eq!(rc, FLOXLOG_OK);
                // SAFETY: written on OK; every kind starts with its timestamp.
                let ev = unsafe { ev.assume_init() };
                assert_ne!(ev.kind, FLOXLOG_EVENT_TRADE);
                // SAFETY: the kind says pool state.
                got.push((ev.kind, unsafe { ev.data.pool_state.exchange_ts_ns }));
            }
            _ => {
                assert_eq!(n, 0);
                return (got, rc, err);
            }
        }
    }
}

#[test]
fn trade_batches_read_what_single_calls_read() {
    for lz4 in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let n = 1000;
        write_tape(d.path(), n, 8 << 10, lz4);
        for order in [FLOXLOG_ORDER_FILE, FLOXLOG_ORDER_TIME] {
            let mut o = floxlog_tape_reader_options::default();
            o.order = order;
            let r = open_reader(d.path(), &o);
            let (want, rc, _) = read_ids(r);
            assert_eq!(rc, FLOXLOG_END);
            // SAFETY: live handle.
            unsafe { floxlog_tape_reader_free(r) };
            for cap in [1, 7, 4096] {
                let r = open_reader(d.path(), &o);
                let (got, rc, _) = read_with_trade_batches(r, cap);
                assert_eq!(rc, FLOXLOG_END);
                let ids: Vec<u64> = got.iter().map(|(_, id)| *id as u64).collect();
                assert_eq!(ids, want, "lz4 {lz4} order {order} cap {cap}");
                let mut st = floxlog_tape_reader_stats::default();
                let mut pos = floxlog_tape_position::default();
                // SAFETY: live handle, valid pointers.
                unsafe {
                    assert_eq!(floxlog_tape_reader_get_stats(r, &mut st), FLOXLOG_OK);
                    assert_eq!(floxlog_tape_reader_position(r, &mut pos), FLOXLOG_OK);
                    floxlog_tape_reader_free(r);
                }
                assert_eq!(st.events, n);
                assert!(pos.offset >= 64);
            }
        }
    }
}

#[test]
fn trade_batches_keep_other_events_and_end_with_the_damage() {
    let d = tempfile::tempdir().unwrap();
    let mut cfg = floxlog_tape_writer_config::default();
    cfg.segment.index_interval = 16;
    let mut w = core::ptr::null_mut();
    let mut err = zeroed_error();
    let p = cpath(d.path());
    let payload = [5u8; 9];
    // SAFETY: valid pointers throughout.
    unsafe {
        assert_eq!(
            floxlog_tape_writer_open(p.as_ptr(), &cfg, &mut w, &mut err),
            FLOXLOG_OK
        );
        for i in 0..40u64 {
            assert_eq!(
                floxlog_tape_writer_append_trade(w, &trade(i), &mut err),
                FLOXLOG_OK
            );
            if i % 13 == 12 {
                let ps = floxlog_pool_state {
                    exchange_ts_ns: 7_000 + i as i64,
                    recv_ts_ns: 0,
                    symbol_id: 1,
                    sub_type: 1,
                    venue: 0,
                    exchange_id: 0,
                    payload: payload.as_ptr(),
                    payload_len: payload.len(),
                };
                assert_eq!(
                    floxlog_tape_writer_append_pool_state(w, &ps, &mut err),
                    FLOXLOG_OK
                );
            }
        }
        assert_eq!(floxlog_tape_writer_close(w, &mut err), FLOXLOG_OK);
        floxlog_tape_writer_free(w);
    }
    let mut o = floxlog_tape_reader_options::default();
    o.order = FLOXLOG_ORDER_FILE;
    let r = open_reader(d.path(), &o);
    let (got, rc, _) = read_with_trade_batches(r, 5);
    // SAFETY: live handle.
    unsafe { floxlog_tape_reader_free(r) };
    assert_eq!(rc, FLOXLOG_END);
    let mut want = Vec::new();
    for i in 0..40i64 {
        want.push((FLOXLOG_EVENT_TRADE, i));
        if i % 13 == 12 {
            want.push((FLOXLOG_EVENT_POOL_STATE, 7_000 + i));
        }
    }
    assert_eq!(got, want);

    // Damage trade 30's payload: the good events come first, then the
    // CRC error with the file and the frame's offset.
    let seg = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "floxlog"))
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    // 30 trades and 2 pool states before it (no padding: pool frames are
    // 12 + 32 + payload bytes).
    let pool_frame = 12 + floxlog_core::PoolState::HEADER_LEN + payload.len();
    let at = 64 + 30 * 60 + 2 * pool_frame;
    bytes[at + 12 + 3] ^= 0x40;
    std::fs::write(&seg, &bytes).unwrap();
    let r = open_reader(d.path(), &o);
    let (got, rc, err) = read_with_trade_batches(r, 8);
    // SAFETY: live handle.
    unsafe { floxlog_tape_reader_free(r) };
    assert_eq!(rc, FLOXLOG_CRC_MISMATCH);
    assert_eq!(got, want[..32]);
    assert_eq!((err.has_offset, err.offset), (1, at as u64));
    assert_eq!(text(&err.file), seg.to_str().unwrap());
}

/// Writes `n` trades through the C writer, journal mode or not, with the
/// test clock; returns the tape's files (but the lock) with their bytes.
fn write_trades_c(dir: &Path, n: u64, journal: bool) -> Vec<(String, Vec<u8>)> {
    let mut calls = 0i64;
    let mut cfg = floxlog_tape_writer_config::default();
    cfg.max_segment_bytes = 4096;
    cfg.segment.index_interval = 16;
    cfg.journal = u8::from(journal);
    cfg.clock_ns = Some(fixed_clock);
    cfg.clock_ctx = &mut calls as *mut i64 as *mut c_void;
    let mut w = core::ptr::null_mut();
    let mut err = zeroed_error();
    let d = cpath(dir);
    // SAFETY: valid pointers throughout.
    unsafe {
        assert_eq!(
            floxlog_tape_writer_open(d.as_ptr(), &cfg, &mut w, &mut err),
            FLOXLOG_OK,
            "{}",
            text(&err.message)
        );
        for i in 0..n {
            assert_eq!(
                floxlog_tape_writer_append_trade(w, &trade(i), &mut err),
                FLOXLOG_OK
            );
        }
        if journal {
            // Every returned append is in the page cache.
            let mut written = 0u64;
            assert_eq!(
                floxlog_tape_writer_written_events(w, &mut written),
                FLOXLOG_OK
            );
            assert_eq!(written, n);
        }
        assert_eq!(floxlog_tape_writer_close(w, &mut err), FLOXLOG_OK);
        floxlog_tape_writer_free(w);
    }
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| !n.contains("lock"))
        .map(|name| {
            let b = std::fs::read(dir.join(&name)).unwrap();
            (name, b)
        })
        .collect();
    v.sort();
    v
}

/// `journal` in the C config: the same segments, byte for byte, as the
/// default writer's (the clock stamps them alike); LZ4 is refused as an
/// invalid input.
#[test]
fn the_c_journal_writes_the_default_writers_bytes() {
    let t = tempfile::tempdir().unwrap();
    let a = write_trades_c(&t.path().join("a"), 1000, false);
    let b = write_trades_c(&t.path().join("b"), 1000, true);
    assert!(a.len() > 5, "rotated: {}", a.len());
    assert!(a == b, "the journal's files differ");

    let mut cfg = floxlog_tape_writer_config::default();
    cfg.journal = 1;
    cfg.segment.compression = FLOXLOG_COMPRESSION_LZ4;
    let (mut w, mut err) = (core::ptr::null_mut(), zeroed_error());
    let d = cpath(&t.path().join("lz4"));
    // SAFETY: valid pointers.
    let r = unsafe { floxlog_tape_writer_open(d.as_ptr(), &cfg, &mut w, &mut err) };
    assert_eq!(r, FLOXLOG_INVALID_INPUT, "{}", text(&err.message));
    assert!(
        text(&err.message).contains("journal mode"),
        "{}",
        text(&err.message)
    );
    assert!(w.is_null());
}
