//! The read session's read-ahead of trades (`Events`) changes
//! nothing a caller sees: the same tape read by the same random mix of
//! `_next`, `_next_batch`, `_next_trades`, `_seek`, `_get_stats` and
//! `_position` calls gives, call for call, the same codes, events,
//! positions, stats and errors as a handle that never reads ahead. Tapes:
//! rotated, uncompressed and LZ4, trades with pool states between them,
//! damaged in the middle of a segment and cut short at the end; read in
//! both orders, with and without filters.

// Options are set field by field, as C callers set them.
#![allow(clippy::field_reassign_with_default)]

use crate::codec::types::*;
use crate::consts::*;
use crate::error::floxlog_result::{self, *};
use crate::handle::handle;
use crate::tape::error::{floxlog_tape_error, zeroed_error};
use crate::tape::reader::*;
use crate::tape::writer::*;
use core::ffi::CStr;
use core::mem::MaybeUninit;
use std::ffi::CString;
use std::path::{Path, PathBuf};

fn cpath(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

fn trade(i: u64) -> floxlog_trade {
    floxlog_trade {
        // A step back every fifth trade: the segments are not Sorted (as
        // the reference profile's), so a time filter or a seek does not make
        // the read check the flag event by event (which reads per event).
        exchange_ts_ns: 1_000_000 + (i as i64) * 10 - if i % 5 == 4 { 25 } else { 0 },
        recv_ts_ns: 2_000_000 + i as i64,
        price_raw: 100_0000_0000 + i as i64,
        qty_raw: 1_0000_0000,
        trade_id: i,
        symbol_id: (i % 3) as u32 + 1,
        side: (i % 2) as u8,
        instrument: 0,
        exchange_id: 3,
    }
}

/// Writes `n` events, a pool state after every `pool_every`-th trade
/// (never when 0), in segments of at most `max_segment_bytes`; returns the
/// segment files in tape order.
fn write_tape(
    dir: &Path,
    n: u64,
    pool_every: u64,
    max_segment_bytes: u64,
    lz4: bool,
) -> Vec<PathBuf> {
    let mut cfg = floxlog_tape_writer_config::default();
    cfg.max_segment_bytes = max_segment_bytes;
    cfg.segment.index_interval = 16;
    if lz4 {
        cfg.segment.compression = FLOXLOG_COMPRESSION_LZ4;
    }
    let (mut w, mut err) = (core::ptr::null_mut(), zeroed_error());
    let d = cpath(dir);
    let payload = [7u8; 5];
    // SAFETY: valid pointers throughout.
    unsafe {
        assert_eq!(
            floxlog_tape_writer_open(d.as_ptr(), &cfg, &mut w, &mut err),
            FLOXLOG_OK
        );
        for i in 0..n {
            assert_eq!(
                floxlog_tape_writer_append_trade(w, &trade(i), &mut err),
                FLOXLOG_OK
            );
            if pool_every > 0 && i % pool_every == pool_every - 1 {
                let ps = floxlog_pool_state {
                    exchange_ts_ns: 1_000_000 + (i as i64) * 10 + 1,
                    recv_ts_ns: i as i64,
                    symbol_id: 2,
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
    let mut segs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "floxlog"))
        .collect();
    segs.sort();
    segs
}

/// Deterministic call choices.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn error_text(rc: floxlog_result, e: &floxlog_tape_error) -> String {
    if rc == FLOXLOG_OK || rc == FLOXLOG_END || rc == FLOXLOG_NOT_TRADE {
        return String::new();
    }
    // SAFETY: the library NUL-terminates its texts.
    let (file, message) = unsafe {
        (
            CStr::from_ptr(e.file.as_ptr()).to_string_lossy(),
            CStr::from_ptr(e.message.as_ptr()).to_string_lossy(),
        )
    };
    format!(
        " err {} at {:?} {file}: {message}",
        e.code,
        (e.has_offset, e.offset)
    )
}

/// One event as the transcript shows it.
fn show(ev: &floxlog_event) -> String {
    // SAFETY: the kind says which member is written.
    unsafe {
        match ev.kind {
            FLOXLOG_EVENT_TRADE => format!("T{:?}", ev.data.trade),
            FLOXLOG_EVENT_POOL_STATE => {
                let p = ev.data.pool_state;
                let bytes = core::slice::from_raw_parts(p.payload, p.payload_len);
                format!("P{}/{:?}", p.exchange_ts_ns, bytes)
            }
            k => format!("kind {k}"),
        }
    }
}

/// Reads the tape at `path` with `o` through `seed`'s mix of calls until
/// the end has been returned twice; `ahead` false reads without the
/// read-ahead. Returns one line per call: what it returned, then the
/// stats and the position.
fn transcript(path: &Path, o: &floxlog_tape_reader_options, seed: u64, ahead: bool) -> Vec<String> {
    let (mut r, mut err) = (core::ptr::null_mut(), zeroed_error());
    let p = cpath(path);
    // SAFETY: valid pointers.
    let rc = unsafe { floxlog_tape_reader_open(p.as_ptr(), o, &mut r, &mut err) };
    assert_eq!(rc, FLOXLOG_OK);
    // SAFETY: a live handle, used by nothing else meanwhile.
    unsafe { handle(r) }.unwrap().set_read_ahead(ahead);
    let mut rng = Rng(seed);
    let mut lines = Vec::new();
    let mut ends = 0;
    let mut evs = vec![MaybeUninit::<floxlog_event>::uninit(); 300];
    let mut trs = vec![floxlog_trade::default(); 700];
    // Runs of the same kind of call (so that long runs of `_next` hand out
    // whole read-ahead runs), switched at random.
    let mut choice = rng.below(100);
    while ends < 2 && lines.len() < 100_000 {
        let mut err = zeroed_error();
        let mut n = 0usize;
        if rng.below(30) == 0 {
            choice = rng.below(100);
        }
        // SAFETY: valid pointers, arrays of the sizes given.
        let line = unsafe {
            if choice < 55 {
                let rc = floxlog_tape_reader_next(r, evs[0].as_mut_ptr(), &mut err);
                let got = if rc == FLOXLOG_OK {
                    show(evs[0].assume_init_ref())
                } else {
                    String::new()
                };
                if rc == FLOXLOG_END {
                    ends += 1;
                }
                format!("next {rc:?} {got}{}", error_text(rc, &err))
            } else if choice < 70 {
                let cap = [1, 3, 300][rng.below(3) as usize];
                let rc =
                    floxlog_tape_reader_next_batch(r, evs[0].as_mut_ptr(), cap, &mut n, &mut err);
                if rc == FLOXLOG_END {
                    ends += 1;
                }
                let got: Vec<String> = evs[..n].iter().map(|e| show(e.assume_init_ref())).collect();
                format!("batch {cap}: {rc:?} {n} {got:?}{}", error_text(rc, &err))
            } else if choice < 97 {
                let cap = [1, 5, 700][rng.below(3) as usize];
                let rc =
                    floxlog_tape_reader_next_trades(r, trs.as_mut_ptr(), cap, &mut n, &mut err);
                if rc == FLOXLOG_END {
                    ends += 1;
                }
                let ids: Vec<u64> = trs[..n].iter().map(|t| t.trade_id).collect();
                format!("trades {cap}: {rc:?} {ids:?}{}", error_text(rc, &err))
            } else {
                let ts = 1_000_000 + rng.below(4_000) as i64 * 10;
                let rc = floxlog_tape_reader_seek(r, ts, &mut err);
                format!("seek {ts}: {rc:?}{}", error_text(rc, &err))
            }
        };
        let mut st = floxlog_tape_reader_stats::default();
        let mut pos = floxlog_tape_position::default();
        // SAFETY: live handle, valid pointers.
        let (src, prc) = unsafe {
            (
                floxlog_tape_reader_get_stats(r, &mut st),
                floxlog_tape_reader_position(r, &mut pos),
            )
        };
        lines.push(format!(
            "{line} | stats {src:?} {st:?} | position {prc:?} {pos:?}"
        ));
    }
    // SAFETY: live handle.
    unsafe { floxlog_tape_reader_free(r) };
    lines
}

/// Compares the two reads of every option set and seed.
fn same_with_and_without(
    path: &Path,
    what: &str,
    opts: &[floxlog_tape_reader_options],
    seeds: u64,
) {
    for (k, o) in opts.iter().enumerate() {
        let mut calls = 0;
        for seed in 1..=seeds {
            let seed = seed * 0x9E37_79B9 + k as u64;
            let want = transcript(path, o, seed, false);
            let got = transcript(path, o, seed, true);
            calls += want.len();
            for (i, (w, g)) in want.iter().zip(&got).enumerate() {
                assert_eq!(g, w, "{what}, options #{k}, seed {seed}: call {i} differs");
            }
            assert_eq!(got.len(), want.len(), "{what}, options #{k}, seed {seed}");
        }
        assert!(calls > 50, "{what} #{k}: {calls} calls prove little");
    }
}

fn options() -> Vec<floxlog_tape_reader_options> {
    let mut v = Vec::new();
    for order in [FLOXLOG_ORDER_FILE, FLOXLOG_ORDER_TIME] {
        let mut o = floxlog_tape_reader_options::default();
        o.order = order;
        v.push(o);
        // Trades only: every trade kept, the pool states dropped.
        o.filter.types = 1 << FLOXLOG_EVENT_TRADE;
        v.push(o);
        o.filter.types = 0;
        o.filter.has_from = 1;
        o.filter.from_ns = 1_000_000 + 1234 * 10;
        o.filter.has_to = 1;
        o.filter.to_ns = 1_000_000 + 4321 * 10;
        v.push(o);
    }
    v
}

#[test]
fn reading_ahead_changes_no_call_on_whole_tapes() {
    for lz4 in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let segs = write_tape(d.path(), 5000, 97, 64 << 10, lz4);
        assert!(segs.len() >= 3, "rotated: {}", segs.len());
        same_with_and_without(d.path(), &format!("lz4 {lz4}"), &options(), 3);
    }
}

#[test]
fn reading_ahead_changes_no_call_on_damaged_tapes() {
    for lz4 in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let segs = write_tape(d.path(), 5000, 211, 64 << 10, lz4);
        assert!(segs.len() >= 3, "rotated: {}", segs.len());
        // A flipped byte in the middle of the second segment (inside a
        // frame, or an LZ4 block), and the last segment cut short inside
        // a frame: events before each come first, then the errors.
        let mut b = std::fs::read(&segs[1]).unwrap();
        let mid = b.len() / 2;
        b[mid] ^= 0x5a;
        std::fs::write(&segs[1], &b).unwrap();
        let last = segs.last().unwrap();
        let len = std::fs::metadata(last).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(last).unwrap();
        f.set_len(len - 1000 - 7).unwrap();
        drop(f);
        same_with_and_without(d.path(), &format!("damaged, lz4 {lz4}"), &options(), 4);
    }
}

/// The reference read is the old one: reading ahead is really off in it and
/// on in the other (else the comparisons above compare a read with itself).
#[test]
fn the_reference_read_does_not_read_ahead() {
    let d = tempfile::tempdir().unwrap();
    write_tape(d.path(), 2000, 0, 1 << 30, false);
    let mut o = floxlog_tape_reader_options::default();
    o.order = FLOXLOG_ORDER_FILE;
    for ahead in [false, true] {
        let (mut r, mut err) = (core::ptr::null_mut(), zeroed_error());
        let p = cpath(d.path());
        let mut ev = MaybeUninit::<floxlog_event>::uninit();
        // SAFETY: valid pointers; a live handle used by nothing else.
        let held = unsafe {
            assert_eq!(
                floxlog_tape_reader_open(p.as_ptr(), &o, &mut r, &mut err),
                FLOXLOG_OK
            );
            handle(r).unwrap().set_read_ahead(ahead);
            assert_eq!(
                floxlog_tape_reader_next(r, ev.as_mut_ptr(), &mut err),
                FLOXLOG_OK
            );
            let held = handle(r).unwrap().cursor().unwrap().held_trades();
            floxlog_tape_reader_free(r);
            held
        };
        assert_eq!(held > 0, ahead, "trades held after one call: {held}");
    }
}
