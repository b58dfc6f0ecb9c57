//! Issue 23, items 5 and 6, through the C ABI: every message it hands out
//! names its own functions and settings (never a CLI flag or command),
//! pointer errors name the argument and the fault, the book appends derive
//! the header type byte, the clock hook's values are checked, a refused
//! append leaves no empty segment, and recover backs up only a changed
//! body.

// Options are set field by field, as C callers set them.
#![allow(clippy::field_reassign_with_default)]

use crate::codec::types::*;
use crate::codec::writer::floxlog_writer_config;
use crate::error::floxlog_result::{self, *};
use crate::tape::error::{floxlog_tape_error, zeroed_error};
use crate::tape::ops::*;
use crate::tape::reader::*;
use crate::tape::writer::*;
use core::ffi::{c_char, c_void, CStr};
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// The CLI's spellings a C caller must never be shown: a flag (`--word`)
/// or a `floxlog <command>` hint. Returns the offending part.
pub(crate) fn cli_spelling(s: &str) -> Option<String> {
    let b = s.as_bytes();
    for i in 0..b.len().saturating_sub(2) {
        if b[i] == b'-' && b[i + 1] == b'-' && b[i + 2].is_ascii_lowercase() {
            return Some(s[i..].chars().take(24).collect());
        }
    }
    const COMMANDS: [&str; 13] = [
        "recover",
        "reindex",
        "manifest",
        "verify",
        "cat",
        "inspect",
        "export",
        "convert",
        "encode",
        "book",
        "diff",
        "demo",
        "conformance",
    ];
    let mut rest = s;
    while let Some(at) = rest.find("floxlog ") {
        let after = &rest[at + "floxlog ".len()..];
        if let Some(c) = COMMANDS.iter().find(|c| after.starts_with(*c)) {
            return Some(format!("floxlog {c}"));
        }
        rest = after;
    }
    None
}

fn check(what: &str, s: &str) {
    assert!(
        cli_spelling(s).is_none(),
        "{what} names the CLI ({:?}): {s}",
        cli_spelling(s)
    );
}

fn cpath(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

fn text(a: &[c_char]) -> String {
    // SAFETY: the library NUL-terminates its texts.
    unsafe { CStr::from_ptr(a.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

fn trade(i: i64) -> floxlog_trade {
    floxlog_trade {
        exchange_ts_ns: 1_000 + i,
        trade_id: i as u64,
        symbol_id: 1,
        ..Default::default()
    }
}

/// A clock that hands out `values` in turn (the last one forever).
struct Clock {
    values: Vec<i64>,
    next: usize,
}

unsafe extern "C" fn list_clock(ctx: *mut c_void) -> i64 {
    // SAFETY: the tests pass a live `Clock`.
    let c = unsafe { &mut *(ctx as *mut Clock) };
    let v = c.values[c.next.min(c.values.len() - 1)];
    c.next += 1;
    v
}

fn open(dir: &Path, cfg: &floxlog_tape_writer_config) -> *mut floxlog_tape_writer {
    let mut w = core::ptr::null_mut();
    let mut err = zeroed_error();
    // SAFETY: valid pointers.
    let rc = unsafe { floxlog_tape_writer_open(cpath(dir).as_ptr(), cfg, &mut w, &mut err) };
    assert_eq!(rc, FLOXLOG_OK, "{}", text(&err.message));
    w
}

fn append(w: *mut floxlog_tape_writer, t: &floxlog_trade) -> (floxlog_result, floxlog_tape_error) {
    let mut err = zeroed_error();
    // SAFETY: a live handle and a valid trade.
    let rc = unsafe { floxlog_tape_writer_append_trade(w, t, &mut err) };
    if rc != FLOXLOG_OK {
        check("append error", &text(&err.message));
    }
    (rc, err)
}

fn close(w: *mut floxlog_tape_writer) {
    let mut err = zeroed_error();
    // SAFETY: a live handle, freed once.
    unsafe {
        assert_eq!(
            floxlog_tape_writer_close(w, &mut err),
            FLOXLOG_OK,
            "{}",
            text(&err.message)
        );
        floxlog_tape_writer_free(w);
    }
}

fn files(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (n, e.metadata().unwrap().len())
        })
        .collect();
    v.sort();
    v
}

fn segments(dir: &Path) -> Vec<(String, u64)> {
    files(dir)
        .into_iter()
        .filter(|(n, _)| n.ends_with(".floxlog"))
        .collect()
}

/// Verifies `path`; returns the code, the error text, and every finding's
/// text and hint.
fn verify(path: &Path, opts: &floxlog_verify_options) -> (floxlog_result, String, Vec<String>) {
    unsafe extern "C" fn collect(f: *const floxlog_finding, ctx: *mut c_void) {
        // SAFETY: the test passes a Vec; the finding lives for the call.
        let (v, f) = unsafe { (&mut *(ctx as *mut Vec<String>), &*f) };
        for p in [f.text, f.hint, f.message] {
            if !p.is_null() {
                // SAFETY: the library's NUL-terminated strings.
                v.push(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
            }
        }
    }
    let mut found: Vec<String> = Vec::new();
    let mut sum = floxlog_verify_summary::default();
    let mut err = zeroed_error();
    // SAFETY: valid pointers.
    let rc = unsafe {
        floxlog_tape_verify(
            cpath(path).as_ptr(),
            opts,
            Some(collect),
            &mut found as *mut _ as *mut c_void,
            &mut sum,
            &mut err,
        )
    };
    let msg = if rc == FLOXLOG_OK {
        String::new()
    } else {
        text(&err.message)
    };
    (rc, msg, found)
}

/// Reads every event of `path`; returns the final code and error text.
fn read_all(path: &Path, opts: &floxlog_tape_reader_options) -> (floxlog_result, String) {
    let mut r = core::ptr::null_mut();
    let mut err = zeroed_error();
    // SAFETY: valid pointers.
    let rc = unsafe { floxlog_tape_reader_open(cpath(path).as_ptr(), opts, &mut r, &mut err) };
    if rc != FLOXLOG_OK {
        return (rc, text(&err.message));
    }
    loop {
        let mut ev = core::mem::MaybeUninit::<floxlog_event>::uninit();
        // SAFETY: a live handle.
        let rc = unsafe { floxlog_tape_reader_next(r, ev.as_mut_ptr(), &mut err) };
        if rc != FLOXLOG_OK {
            // SAFETY: live handle.
            unsafe { floxlog_tape_reader_free(r) };
            let msg = if rc == FLOXLOG_END {
                String::new()
            } else {
                text(&err.message)
            };
            return (rc, msg);
        }
    }
}

/// A finished tape of `n` uncompressed trades (60-byte frames), one
/// segment unless `max` cuts it, clocked from 1.
fn tape(dir: &Path, n: i64, max: u64) -> Vec<PathBuf> {
    let mut clock = Clock {
        values: (1..1000).collect(),
        next: 0,
    };
    let mut cfg = floxlog_tape_writer_config::default();
    cfg.max_segment_bytes = max;
    cfg.segment.index_interval = 4;
    cfg.clock_ns = Some(list_clock);
    cfg.clock_ctx = &mut clock as *mut Clock as *mut c_void;
    let w = open(dir, &cfg);
    for i in 0..n {
        assert_eq!(append(w, &trade(i)).0, FLOXLOG_OK);
    }
    close(w);
    segments(dir).iter().map(|(s, _)| dir.join(s)).collect()
}

/// `floxlog_book b = {0};`
fn zero_book() -> floxlog_book {
    floxlog_book {
        exchange_ts_ns: 0,
        recv_ts_ns: 0,
        seq: 0,
        symbol_id: 0,
        header_type: 0,
        instrument: 0,
        exchange_id: 0,
        bids: core::ptr::null(),
        bid_count: 0,
        asks: core::ptr::null(),
        ask_count: 0,
    }
}

#[test]
fn pointer_errors_name_the_argument_and_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    let w = open(d.path(), &floxlog_tape_writer_config::default());
    // A misaligned trade: was "trade is NULL".
    let buf = [0u64; 16];
    let odd = (buf.as_ptr() as *const u8).wrapping_add(1) as *const floxlog_trade;
    let mut err = zeroed_error();
    // SAFETY: the pointer is refused before it is read.
    let rc = unsafe { floxlog_tape_writer_append_trade(w, odd, &mut err) };
    assert_eq!(rc, FLOXLOG_MISALIGNED);
    let m = text(&err.message);
    assert!(m.contains("`trade` is misaligned"), "{m}");
    // SAFETY: NULL is checked.
    let rc = unsafe { floxlog_tape_writer_append_trade(w, core::ptr::null(), &mut err) };
    assert_eq!(rc, FLOXLOG_NULL_POINTER);
    assert_eq!(text(&err.message), "`trade` is NULL");
    // NULL bids with a count: was only "book levels pointer".
    let mut b = zero_book();
    b.bid_count = 5;
    // SAFETY: the NULL pointer is refused before it is read.
    let rc = unsafe { floxlog_tape_writer_append_book_snapshot(w, &b, &mut err) };
    assert_eq!(rc, FLOXLOG_NULL_POINTER);
    assert_eq!(text(&err.message), "`book->bids` is NULL with a count of 5");
    b.bid_count = 0;
    b.ask_count = 70_000;
    let lv = [floxlog_level::default()];
    b.asks = lv.as_ptr();
    // SAFETY: refused on the count before the pointer is read.
    let rc = unsafe { floxlog_tape_writer_append_book_snapshot(w, &b, &mut err) };
    assert_eq!(rc, FLOXLOG_INVALID_INPUT);
    assert!(text(&err.message).contains("book->ask_count"));
    // The handle itself.
    // SAFETY: NULL is checked.
    let rc =
        unsafe { floxlog_tape_writer_append_trade(core::ptr::null_mut(), &trade(0), &mut err) };
    assert_eq!(rc, FLOXLOG_NULL_POINTER);
    assert_eq!(text(&err.message), "`w` is NULL");
    // The codec-level error text too.
    let mut e = crate::error::floxlog_error {
        code: 0,
        in_block: 0,
        offset: 0,
        needed: 0,
        has_in_block: 0,
        has_needed: 0,
        what: [0; crate::error::FLOXLOG_WHAT_LEN],
    };
    let mut wo = core::ptr::null_mut();
    // SAFETY: a misaligned config pointer is refused before it is read.
    let rc = unsafe {
        crate::codec::writer::floxlog_writer_new(
            (buf.as_ptr() as *const u8).wrapping_add(1) as *const floxlog_writer_config,
            core::ptr::null(),
            &mut wo,
            &mut e,
        )
    };
    assert_eq!(rc, FLOXLOG_MISALIGNED);
    assert!(
        text(&e.what).contains("`cfg` is misaligned"),
        "{}",
        text(&e.what)
    );
    close(w);
}

#[test]
fn book_appends_derive_the_header_type_byte_and_name_a_contradiction() {
    let d = tempfile::tempdir().unwrap();
    let w = open(d.path(), &floxlog_tape_writer_config::default());
    let mut err = zeroed_error();
    let lv = [floxlog_level {
        price_raw: 5,
        qty_raw: 1,
    }];
    // Zero-initialised, as a C caller's `floxlog_book b = {0}`: was refused
    // "at byte 132: ... book header type byte contradicts the book kind".
    let mut b = zero_book();
    b.exchange_ts_ns = 10;
    b.asks = lv.as_ptr();
    b.ask_count = 1;
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(
            floxlog_tape_writer_append_book_snapshot(w, &b, &mut err),
            FLOXLOG_OK
        );
        assert_eq!(
            floxlog_tape_writer_append_book_delta(w, &b, &mut err),
            FLOXLOG_OK,
            "{}",
            text(&err.message)
        );
        b.header_type = 2; // a snapshot's byte on a delta
        assert_eq!(
            floxlog_tape_writer_append_book_delta(w, &b, &mut err),
            FLOXLOG_INVALID_INPUT
        );
    }
    let m = text(&err.message);
    assert!(m.contains("`header_type`") && !m.contains("at byte"), "{m}");
    assert_eq!((err.has_offset, err.has_file), (0, 0));
    check("book error", &m);
    close(w);
    // The delta reads back as a delta stored with flox's byte 1.
    let mut o = floxlog_tape_reader_options::default();
    o.order = FLOXLOG_ORDER_FILE;
    let mut r = core::ptr::null_mut();
    let mut kinds = Vec::new();
    // SAFETY: valid pointers; the event is read only after OK.
    unsafe {
        assert_eq!(
            floxlog_tape_reader_open(cpath(d.path()).as_ptr(), &o, &mut r, &mut err),
            FLOXLOG_OK
        );
        let mut ev = core::mem::MaybeUninit::<floxlog_event>::uninit();
        while floxlog_tape_reader_next(r, ev.as_mut_ptr(), &mut err) == FLOXLOG_OK {
            let ev = ev.assume_init_ref();
            kinds.push((ev.kind, ev.data.book.header_type));
        }
        floxlog_tape_reader_free(r);
    }
    assert_eq!(
        kinds,
        [
            (crate::consts::FLOXLOG_EVENT_BOOK_SNAPSHOT, 0),
            (crate::consts::FLOXLOG_EVENT_BOOK_DELTA, 1)
        ]
    );
}

#[test]
fn clock_values_are_checked_and_the_writer_stays_usable() {
    let d = tempfile::tempdir().unwrap();
    // -1 (was `-1.floxlog`), then 5, then i64::MAX at the rotation (was a
    // writer failing every later append), then 10.
    let mut clock = Clock {
        values: vec![-1, 5, i64::MAX, 10],
        next: 0,
    };
    let mut cfg = floxlog_tape_writer_config::default();
    cfg.max_segment_bytes = 64 + 2 * 60; // two trades a segment
    cfg.clock_ns = Some(list_clock);
    cfg.clock_ctx = &mut clock as *mut Clock as *mut c_void;
    let w = open(d.path(), &cfg);
    let (rc, err) = append(w, &trade(0));
    assert_eq!(rc, FLOXLOG_INVALID_INPUT);
    let m = text(&err.message);
    assert!(
        m.contains("-1 is negative") && m.contains("`clock_ns`"),
        "{m}"
    );
    assert!(segments(d.path()).is_empty(), "{:?}", files(d.path()));
    assert_eq!(append(w, &trade(0)).0, FLOXLOG_OK);
    assert_eq!(append(w, &trade(1)).0, FLOXLOG_OK);
    // The third trade rotates; the clock's i64::MAX leaves no later name.
    let (rc, err) = append(w, &trade(2));
    assert_eq!(rc, FLOXLOG_INVALID_INPUT);
    let m = text(&err.message);
    assert!(m.contains("i64::MAX") && m.contains("`clock_ns`"), "{m}");
    // Usable: the next append asks the clock again.
    assert_eq!(append(w, &trade(2)).0, FLOXLOG_OK);
    close(w);
    let names: Vec<String> = segments(d.path()).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["10.floxlog", "5.floxlog"]);
    let (rc, msg, _) = verify(d.path(), &floxlog_verify_options::default());
    assert_eq!(rc, FLOXLOG_OK, "{msg}");
}

#[test]
fn a_refused_append_after_a_rotation_leaves_no_header_only_segment() {
    let d = tempfile::tempdir().unwrap();
    let mut cfg = floxlog_tape_writer_config::default();
    cfg.max_segment_bytes = 64 + 2 * 60;
    let w = open(d.path(), &cfg);
    assert_eq!(append(w, &trade(0)).0, FLOXLOG_OK);
    assert_eq!(append(w, &trade(1)).0, FLOXLOG_OK);
    // A book big enough to rotate, whose header byte contradicts a delta.
    let lv = [floxlog_level::default(); 8];
    let mut b = zero_book();
    b.bids = lv.as_ptr();
    b.bid_count = lv.len();
    b.header_type = 0x7f;
    let mut err = zeroed_error();
    // SAFETY: valid pointers.
    let rc = unsafe { floxlog_tape_writer_append_book_delta(w, &b, &mut err) };
    assert_eq!(rc, FLOXLOG_INVALID_INPUT);
    assert_eq!(segments(d.path()).len(), 1, "{:?}", files(d.path()));
    close(w);
    assert!(
        files(d.path()).iter().all(|(_, len)| *len != 64),
        "{:?}",
        files(d.path())
    );
    let (rc, msg, _) = verify(d.path(), &floxlog_verify_options::default());
    assert_eq!(rc, FLOXLOG_OK, "{msg}");
}

fn recover(path: &Path) -> (floxlog_result, floxlog_recover_summary, String) {
    let mut rs = floxlog_recover_summary::default();
    let mut err = zeroed_error();
    // SAFETY: valid pointers.
    let rc = unsafe {
        floxlog_tape_recover(
            cpath(path).as_ptr(),
            core::ptr::null(),
            None,
            core::ptr::null_mut(),
            &mut rs,
            &mut err,
        )
    };
    let m = if rc == FLOXLOG_OK {
        String::new()
    } else {
        text(&err.message)
    };
    check("recover error", &m);
    (rc, rs, m)
}

#[test]
fn recover_keeps_a_backup_only_when_the_body_changed() {
    // An abandoned writer's segment: placeholder header, whole frames.
    let d = tempfile::tempdir().unwrap();
    let live = d.path().join("live");
    let mut cfg = floxlog_tape_writer_config::default();
    cfg.durability = FLOXLOG_DURABILITY_FLUSH;
    let w = open(&live, &cfg);
    for i in 0..10 {
        assert_eq!(append(w, &trade(i)).0, FLOXLOG_OK);
    }
    let (name, _) = segments(&live).remove(0);
    let abandoned = d.path().join("abandoned");
    std::fs::create_dir(&abandoned).unwrap();
    std::fs::copy(live.join(&name), abandoned.join(&name)).unwrap();
    close(w);
    let torn = d.path().join("torn");
    std::fs::create_dir(&torn).unwrap();
    let mut bytes = std::fs::read(abandoned.join(&name)).unwrap();
    bytes.extend_from_slice(&[1, 2, 3]);
    std::fs::write(torn.join(&name), &bytes).unwrap();

    let (rc, rs, m) = recover(&abandoned);
    assert_eq!(rc, FLOXLOG_OK, "{m}");
    assert_eq!((rs.rewritten, rs.events_kept), (1, 10));
    assert!(
        files(&abandoned)
            .iter()
            .all(|(n, _)| !n.contains(".damaged")),
        "only the header changed: no backup, {:?}",
        files(&abandoned)
    );
    let (rc, rs, m) = recover(&torn);
    assert_eq!(rc, FLOXLOG_OK, "{m}");
    assert_eq!((rs.rewritten, rs.events_kept), (1, 10));
    assert!(
        files(&torn).iter().any(|(n, _)| n.ends_with(".damaged")),
        "bytes were dropped: a backup, {:?}",
        files(&torn)
    );
}

#[test]
fn every_message_through_the_c_abi_names_no_cli_flag_or_command() {
    let d = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    let mut note = |what: &str, s: String| {
        check(what, &s);
        seen.push(s);
    };
    let ro = floxlog_tape_reader_options::default();
    // A missing path.
    note("missing", read_all(&d.path().join("nope"), &ro).1);
    // A manifest that is not JSON: rebuild it, or set ignore_manifest.
    let t1 = d.path().join("t1");
    tape(&t1, 8, 1 << 20);
    std::fs::write(t1.join("manifest.json"), b"{").unwrap();
    let (rc, m) = read_all(&t1, &ro);
    assert_eq!(rc, FLOXLOG_BAD_MANIFEST);
    assert!(m.contains("set `ignore_manifest`"), "{m}");
    note("bad manifest", m);
    // Damage: a CRC, a torn tail (strict), an unknown record type, a bad
    // index; each read and verified.
    let t2 = d.path().join("t2");
    let seg = tape(&t2, 40, 1 << 20).remove(0);
    let good = std::fs::read(&seg).unwrap();
    let mut crc = good.clone();
    crc[64 + 3 * 60 + 20] ^= 0xff;
    let mut unknown = good.clone();
    unknown[64 + 5 * 60 + 8] = 200; // frame type byte (the CRC covers the payload)
    let mut index = good.clone();
    let n = index.len();
    index[n - 3] ^= 0xff;
    let torn = good[..64 + 7 * 60 + 10].to_vec();
    let mut strict = ro;
    strict.strict = 1;
    let mut file_order = ro;
    file_order.order = FLOXLOG_ORDER_FILE;
    for (name, bytes, want) in [
        ("crc", &crc, "`floxlog_tape_recover`"),
        ("unknown", &unknown, "set `skip_unknown_types`"),
        ("index", &index, ""),
        ("torn", &torn, "`floxlog_tape_recover`"),
    ] {
        std::fs::write(&seg, bytes).unwrap();
        for o in [&strict, &file_order] {
            let (rc, m) = read_all(&t2, o);
            if rc != FLOXLOG_END && name != "index" {
                assert!(m.contains(want), "{name}: {m}");
            }
            note(name, m);
        }
        let mut vo = floxlog_verify_options::default();
        vo.strict = 1;
        let (_, m, found) = verify(&t2, &vo);
        note(name, m);
        for f in found {
            note(name, f);
        }
    }
    std::fs::write(&seg, &good).unwrap();
    // Manifest findings: a size that disagrees, an unlisted segment.
    std::fs::write(t2.join("99999.floxlog"), &good).unwrap();
    let mut bigger = good.clone();
    bigger.extend_from_slice(&good[64..124]);
    std::fs::write(&seg, &bigger).unwrap();
    let (_, m, found) = verify(&t2, &floxlog_verify_options::default());
    assert!(found.iter().any(|f| f.contains("manifest")), "{found:?}");
    note("manifest findings", m);
    for f in found {
        note("manifest findings", f);
    }
    // The merge bound: was "raise --reorder-bytes ..., or read with
    // --file-order".
    // An unsorted segment (timestamps step back now and then) is ordered
    // in memory: 16 bytes an event do not fit in 16.
    let t3 = d.path().join("t3");
    let w = open(&t3, &floxlog_tape_writer_config::default());
    for i in 0..200 {
        let mut t = trade(i);
        t.exchange_ts_ns = if i % 2 == 0 { 1000 + i } else { 900 + i };
        assert_eq!(append(w, &t).0, FLOXLOG_OK);
    }
    close(w);
    let mut tight = ro;
    tight.reorder_bytes = 16;
    let (rc, m) = read_all(&t3, &tight);
    assert_ne!(rc, FLOXLOG_END, "the bound holds");
    assert!(
        m.contains("`reorder_bytes`") && m.contains("`FLOXLOG_ORDER_FILE`"),
        "{m}"
    );
    note("reorder bound", m);
    // Recover refusals: a file shorter than a header.
    let t4 = d.path().join("t4");
    std::fs::create_dir(&t4).unwrap();
    std::fs::write(t4.join("1.floxlog"), b"FLOX\x01\x00").unwrap();
    note("recover short", recover(&t4).2);
    note(
        "verify short",
        verify(&t4, &floxlog_verify_options::default()).1,
    );
    assert!(
        seen.iter().filter(|s| !s.is_empty()).count() >= 12,
        "{seen:#?}"
    );
}
