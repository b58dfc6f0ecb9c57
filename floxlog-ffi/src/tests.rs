//! Rust-side tests of the C ABI: the same calls a C program makes, checked
//! against floxlog-core used directly. (The C and C++ suites in c-tests/
//! cover the same ground from the other side of the boundary.)

use crate::boundary::{boundary, FfiResult};
use crate::*;
use core::cell::{Cell, RefCell};
use core::ffi::{c_char, c_void, CStr};
use core::mem::MaybeUninit;
use core::ptr::{null, null_mut};
use floxlog_core::{Event, SegmentWriter, Trade, WriterBuffers, WriterConfig};
use floxlog_result::*;

// The reader's index calls (tests/).
mod reader_index;

/// Which constructor `writer_new` and `reader_new` call: `_new` (boxed)
/// or `_init` (caller storage). Every test here runs in both forms
/// (`each_form`), so the codec's tests cover both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    New,
    Init,
}

thread_local! {
    static FORM: Cell<Form> = const { Cell::new(Form::New) };
    /// Storage of the handles made in the `Init` form, released after each
    /// run of a test (`_free` only ends such handles).
    static STORAGE: RefCell<Vec<Box<[u64]>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `test` with each constructor form.
fn each_form(test: fn()) {
    for f in [Form::New, Form::Init] {
        FORM.set(f);
        test();
        STORAGE.with_borrow_mut(Vec::clear);
    }
    FORM.set(Form::New);
}

/// Fresh handle storage of `bytes` bytes, 8-byte aligned.
fn storage(bytes: usize) -> (*mut c_void, usize) {
    let mut b = vec![0u64; bytes.div_ceil(8)].into_boxed_slice();
    let p = b.as_mut_ptr() as *mut c_void;
    STORAGE.with_borrow_mut(|s| s.push(b));
    (p, bytes)
}

/// `floxlog_writer_new`, or `floxlog_writer_init` over fresh storage.
unsafe fn writer_new(
    cfg: *const floxlog_writer_config,
    bufs: *const floxlog_writer_buffers,
    out: *mut *mut floxlog_writer,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: forwarded caller promises; the storage lives until the run
    // of the test ends.
    unsafe {
        match FORM.get() {
            Form::New => floxlog_writer_new(cfg, bufs, out, err),
            Form::Init => {
                let (p, n) = storage(FLOXLOG_WRITER_STORAGE_BYTES);
                floxlog_writer_init(p, n, cfg, bufs, out, err)
            }
        }
    }
}

/// `floxlog_reader_new`, or `floxlog_reader_init` over fresh storage.
#[allow(clippy::too_many_arguments)]
unsafe fn reader_new(
    data: *const u8,
    len: usize,
    opts: *const floxlog_reader_options,
    scratch: *mut u8,
    scratch_len: usize,
    out: *mut *mut floxlog_reader,
    err: *mut floxlog_error,
) -> floxlog_result {
    // SAFETY: as `writer_new`.
    unsafe {
        match FORM.get() {
            Form::New => floxlog_reader_new(data, len, opts, scratch, scratch_len, out, err),
            Form::Init => {
                let (p, n) = storage(FLOXLOG_READER_STORAGE_BYTES);
                floxlog_reader_init(p, n, data, len, opts, scratch, scratch_len, out, err)
            }
        }
    }
}

fn trade(i: i64) -> floxlog_trade {
    floxlog_trade {
        exchange_ts_ns: 1_000 + i,
        recv_ts_ns: 2_000 + i,
        price_raw: 10_125_000_000 + i,
        qty_raw: 50_000_000,
        trade_id: i as u64,
        symbol_id: 7,
        side: (i % 2) as u8,
        instrument: 1,
        exchange_id: 3,
    }
}

fn no_err() -> floxlog_error {
    floxlog_error {
        code: 0,
        in_block: 0,
        offset: 0,
        needed: 0,
        has_in_block: 0,
        has_needed: 0,
        what: [0; FLOXLOG_WHAT_LEN],
    }
}

fn what(e: &floxlog_error) -> String {
    e.what
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8 as char)
        .collect()
}

/// Owns the buffers of one writer.
struct Bufs {
    out: Vec<u8>,
    block: Vec<u8>,
    index: Vec<floxlog_index_entry>,
}

impl Bufs {
    fn new(out: usize, block: usize, index: usize) -> Bufs {
        Bufs {
            out: vec![0; out],
            block: vec![0; block],
            index: vec![floxlog_index_entry::default(); index],
        }
    }
    fn c(&mut self) -> floxlog_writer_buffers {
        floxlog_writer_buffers {
            out: self.out.as_mut_ptr(),
            out_len: self.out.len(),
            block: self.block.as_mut_ptr(),
            block_len: self.block.len(),
            index: self.index.as_mut_ptr(),
            index_capacity: self.index.len(),
        }
    }
}

fn config(compression: u8, interval: u16) -> floxlog_writer_config {
    let mut c = MaybeUninit::<floxlog_writer_config>::uninit();
    // SAFETY: valid out pointer.
    let rc = unsafe { floxlog_writer_config_default(c.as_mut_ptr()) };
    assert_eq!(rc, FLOXLOG_OK);
    // SAFETY: initialised by the call above.
    let mut c = unsafe { c.assume_init() };
    c.compression = compression;
    c.index_interval = interval;
    c.created_ns = 1_700_000_000_000_000_000;
    c
}

fn new_writer(cfg: &floxlog_writer_config, b: &mut Bufs) -> *mut floxlog_writer {
    let mut w = null_mut();
    let bufs = b.c();
    let mut e = no_err();
    // SAFETY: valid pointers; buffers outlive the writer in every test.
    let r = unsafe { writer_new(cfg, &bufs, &mut w, &mut e) };
    assert_eq!(r, FLOXLOG_OK, "{}", what(&e));
    w
}

/// Finishes and returns the whole segment (nothing was drained before).
fn finish(w: *mut floxlog_writer) -> Vec<u8> {
    let mut header = [0u8; 64];
    // SAFETY: live handle and valid buffers.
    unsafe {
        assert_eq!(
            floxlog_writer_finish(w, header.as_mut_ptr(), 64, null_mut()),
            FLOXLOG_OK
        );
        let (mut p, mut n) = (null(), 0usize);
        assert_eq!(floxlog_writer_pending(w, &mut p, &mut n), FLOXLOG_OK);
        let mut v = core::slice::from_raw_parts(p, n).to_vec();
        v[..64].copy_from_slice(&header);
        floxlog_writer_free(w);
        v
    }
}

/// The same trades through floxlog-core directly.
fn core_segment(cfg: WriterConfig, trades: &[floxlog_trade]) -> Vec<u8> {
    let mut out = vec![0u8; 1 << 20];
    let mut block = vec![0u8; 1 << 20];
    let mut slots = vec![floxlog_core::BlockSlot::EMPTY; cfg.index_interval as usize];
    let mut index = vec![floxlog_core::IndexEntry::default(); 64];
    let mut w = SegmentWriter::new(
        cfg,
        WriterBuffers {
            out: &mut out,
            block: &mut block,
            slots: &mut slots,
            index: &mut index,
        },
    )
    .unwrap();
    for t in trades {
        w.append(&Event::Trade(Trade::from(t))).unwrap();
    }
    let h = w.finish().unwrap();
    let mut v = w.pending().to_vec();
    v[..64].copy_from_slice(&h);
    v
}

/// `floxlog_result_name` as a `&str`.
fn name(code: u32) -> &'static str {
    // SAFETY: a static NUL-terminated string.
    unsafe { CStr::from_ptr(floxlog_result_name(code)) }
        .to_str()
        .unwrap()
}

#[test]
fn result_codes_follow_the_corpus_kinds() {
    // The first fifteen core kinds are the corpus kinds in README order.
    for (i, k) in floxlog_core::ErrorKind::ALL.iter().take(15).enumerate() {
        let code = floxlog_result::from_kind(*k);
        assert_eq!(code as u32, 100 + i as u32, "{k}");
        assert_eq!(name(code as u32), k.as_str());
    }
    // Every core kind has its own code, none of them INTERNAL.
    let mut seen = std::collections::HashSet::new();
    for k in floxlog_core::ErrorKind::ALL {
        let c = floxlog_result::from_kind(k);
        assert_ne!(c, FLOXLOG_INTERNAL);
        assert!(seen.insert(c as u32));
        assert_eq!(name(c as u32), k.as_str());
    }
    // Every code round-trips through its number and has a distinct name.
    let mut names = std::collections::HashSet::new();
    for c in floxlog_result::ALL {
        assert_eq!(floxlog_result::from_u32(c as u32), Some(c));
        assert!(names.insert(name(c as u32)));
    }
    assert_eq!(name(12345), "unknown");
}

#[test]
fn strerror_copies_all_or_nothing() {
    let mut buf = [0x55 as c_char; FLOXLOG_MESSAGE_MAX];
    let mut n = 0usize;
    // SAFETY: valid buffers.
    unsafe {
        let r = floxlog_strerror(
            FLOXLOG_CRC_MISMATCH as u32,
            buf.as_mut_ptr(),
            buf.len(),
            &mut n,
        );
        assert_eq!(r, FLOXLOG_OK);
        let s = core::ffi::CStr::from_ptr(buf.as_ptr()).to_str().unwrap();
        assert_eq!(s, "crc_mismatch: a frame payload does not match its CRC32");
        assert_eq!(n, s.len());
        // One byte short of message + NUL: nothing written.
        let mut small = [0x55 as c_char; 64];
        let mut m = 999usize;
        let r = floxlog_strerror(
            FLOXLOG_CRC_MISMATCH as u32,
            small.as_mut_ptr(),
            s.len(),
            &mut m,
        );
        assert_eq!(r, FLOXLOG_BUFFER_TOO_SMALL);
        assert_eq!(m, 999);
        assert!(small.iter().all(|&c| c == 0x55));
        let r = floxlog_strerror(
            FLOXLOG_CRC_MISMATCH as u32,
            small.as_mut_ptr(),
            s.len() + 1,
            &mut m,
        );
        assert_eq!(r, FLOXLOG_OK);
        assert_eq!(m, s.len());
        assert_eq!(
            floxlog_strerror(1, null_mut(), 10, &mut m),
            FLOXLOG_NULL_POINTER
        );
        assert_eq!(
            floxlog_strerror(1, buf.as_mut_ptr(), 10, null_mut()),
            FLOXLOG_NULL_POINTER
        );
        // Every code's message fits FLOXLOG_MESSAGE_MAX.
        for c in floxlog_result::ALL {
            assert_eq!(
                floxlog_strerror(c as u32, buf.as_mut_ptr(), buf.len(), &mut n),
                FLOXLOG_OK
            );
        }
        assert_eq!(
            floxlog_strerror(4242, buf.as_mut_ptr(), buf.len(), &mut n),
            FLOXLOG_OK
        );
        let s = core::ffi::CStr::from_ptr(buf.as_ptr()).to_str().unwrap();
        assert!(s.contains("4242"), "{s}");
    }
}

fn ffi_writer_matches_core_writer_bytes_in_one_form() {
    let trades: Vec<floxlog_trade> = (0..250).map(trade).collect();
    for (compression, interval) in [
        (FLOXLOG_COMPRESSION_NONE, 10),
        (FLOXLOG_COMPRESSION_LZ4, 100),
    ] {
        let cfg = config(compression, interval);
        let mut b = Bufs::new(1 << 20, 1 << 20, 64);
        let w = new_writer(&cfg, &mut b);
        for t in &trades {
            // SAFETY: live handle, valid trade.
            let rc = unsafe { floxlog_writer_append_trade(w, t, null_mut()) };
            assert_eq!(rc, FLOXLOG_OK);
        }
        let ours = finish(w);
        let core_cfg = WriterConfig {
            compression: if compression == FLOXLOG_COMPRESSION_LZ4 {
                floxlog_core::Compression::Lz4
            } else {
                floxlog_core::Compression::None
            },
            index_interval: interval,
            created_ns: cfg.created_ns,
            ..WriterConfig::default()
        };
        assert_eq!(ours, core_segment(core_cfg, &trades));
    }
}

/// Writes one event of each kind and reads them back through the ABI.
fn every_event_kind_round_trips_in_one_form() {
    let bids = [
        floxlog_level {
            price_raw: 100,
            qty_raw: 1,
        },
        floxlog_level {
            price_raw: 99,
            qty_raw: 2,
        },
    ];
    let asks = [floxlog_level {
        price_raw: 101,
        qty_raw: 3,
    }];
    let book = floxlog_book {
        exchange_ts_ns: 5,
        recv_ts_ns: 6,
        seq: 42,
        symbol_id: 9,
        header_type: 0,
        instrument: 1,
        exchange_id: 2,
        bids: bids.as_ptr(),
        bid_count: 2,
        asks: asks.as_ptr(),
        ask_count: 1,
    };
    let delta = floxlog_book {
        header_type: 1,
        bids: null(),
        bid_count: 0,
        ..book
    };
    let quote = floxlog_option_quote {
        exchange_ts_ns: 7,
        mark_price_raw: -1,
        open_interest_raw: i64::MAX,
        symbol_id: u32::MAX,
        instrument: 3,
        exchange_id: 65535,
        ..Default::default()
    };
    let payload = [1u8, 2, 3, 4, 5];
    let pool = floxlog_pool_state {
        exchange_ts_ns: 8,
        recv_ts_ns: 9,
        symbol_id: 1,
        sub_type: 2,
        venue: 3,
        exchange_id: 4,
        payload: payload.as_ptr(),
        payload_len: payload.len(),
    };
    for compression in [FLOXLOG_COMPRESSION_NONE, FLOXLOG_COMPRESSION_LZ4] {
        let cfg = config(compression, 2);
        let mut b = Bufs::new(1 << 16, 1 << 16, 16);
        let w = new_writer(&cfg, &mut b);
        // Timestamps ascend, so LZ4's in-block sort keeps this order.
        let t = floxlog_trade {
            exchange_ts_ns: 1,
            ..trade(1)
        };
        // SAFETY: live handle and valid events.
        unsafe {
            assert_eq!(floxlog_writer_append_trade(w, &t, null_mut()), FLOXLOG_OK);
            assert_eq!(
                floxlog_writer_append_book_snapshot(w, &book, null_mut()),
                FLOXLOG_OK
            );
            assert_eq!(
                floxlog_writer_append_book_delta(w, &delta, null_mut()),
                FLOXLOG_OK
            );
            assert_eq!(
                floxlog_writer_append_option_quote(w, &quote, null_mut()),
                FLOXLOG_OK
            );
            assert_eq!(
                floxlog_writer_append_pool_state(w, &pool, null_mut()),
                FLOXLOG_OK
            );
        }
        let seg = finish(w);
        let mut scratch = vec![0u8; 1 << 16];
        let mut r = null_mut();
        // SAFETY: valid buffers that outlive the reader.
        unsafe {
            assert_eq!(
                reader_new(
                    seg.as_ptr(),
                    seg.len(),
                    null(),
                    scratch.as_mut_ptr(),
                    scratch.len(),
                    &mut r,
                    null_mut()
                ),
                FLOXLOG_OK
            );
            let mut levels = [floxlog_level::default(); 8];
            let mut ev = MaybeUninit::<floxlog_event>::uninit();
            let mut next = |ev: &mut MaybeUninit<floxlog_event>| {
                floxlog_reader_next(
                    r,
                    ev.as_mut_ptr(),
                    levels.as_mut_ptr(),
                    levels.len(),
                    null_mut(),
                )
            };
            assert_eq!(next(&mut ev), FLOXLOG_OK);
            let e = ev.assume_init();
            assert_eq!(e.kind, FLOXLOG_EVENT_TRADE);
            assert_eq!(e.data.trade, t);

            assert_eq!(next(&mut ev), FLOXLOG_OK);
            let e = ev.assume_init();
            assert_eq!(e.kind, FLOXLOG_EVENT_BOOK_SNAPSHOT);
            let b2 = e.data.book;
            assert_eq!(
                (b2.seq, b2.header_type, b2.bid_count, b2.ask_count),
                (42, 0, 2, 1)
            );
            assert_eq!(core::slice::from_raw_parts(b2.bids, 2), &bids);
            assert_eq!(core::slice::from_raw_parts(b2.asks, 1), &asks);

            assert_eq!(next(&mut ev), FLOXLOG_OK);
            let e = ev.assume_init();
            assert_eq!(e.kind, FLOXLOG_EVENT_BOOK_DELTA);
            let d = e.data.book;
            assert_eq!((d.header_type, d.bid_count, d.ask_count), (1, 0, 1));
            assert!(!d.bids.is_null());
            assert_eq!(*d.asks, asks[0]);

            assert_eq!(next(&mut ev), FLOXLOG_OK);
            let e = ev.assume_init();
            assert_eq!(e.kind, FLOXLOG_EVENT_OPTION_QUOTE);
            assert_eq!(e.data.option_quote, quote);

            assert_eq!(next(&mut ev), FLOXLOG_OK);
            let e = ev.assume_init();
            assert_eq!(e.kind, FLOXLOG_EVENT_POOL_STATE);
            let p = e.data.pool_state;
            assert_eq!((p.sub_type, p.venue, p.exchange_id), (2, 3, 4));
            assert_eq!(
                core::slice::from_raw_parts(p.payload, p.payload_len),
                &payload
            );

            assert_eq!(next(&mut ev), FLOXLOG_END);
            assert_eq!(next(&mut ev), FLOXLOG_END);
            let mut n = 0u64;
            assert_eq!(floxlog_reader_events_read(r, &mut n), FLOXLOG_OK);
            assert_eq!(n, 5);
            floxlog_reader_free(r);
        }
    }
}

fn short_level_scratch_keeps_the_event_in_one_form() {
    let bids = [floxlog_level {
        price_raw: 1,
        qty_raw: 1,
    }; 3];
    let book = floxlog_book {
        exchange_ts_ns: 1,
        recv_ts_ns: 1,
        seq: 1,
        symbol_id: 1,
        header_type: 0,
        instrument: 0,
        exchange_id: 0,
        bids: bids.as_ptr(),
        bid_count: 3,
        asks: null(),
        ask_count: 0,
    };
    let cfg = config(FLOXLOG_COMPRESSION_LZ4, 4);
    let mut b = Bufs::new(1 << 14, 1 << 14, 4);
    let w = new_writer(&cfg, &mut b);
    // SAFETY: live handle, valid event.
    unsafe {
        assert_eq!(
            floxlog_writer_append_book_snapshot(w, &book, null_mut()),
            FLOXLOG_OK
        )
    };
    let seg = finish(w);
    let mut scratch = vec![0u8; 4096];
    let mut r = null_mut();
    // SAFETY: valid buffers that outlive the reader.
    unsafe {
        assert_eq!(
            reader_new(
                seg.as_ptr(),
                seg.len(),
                null(),
                scratch.as_mut_ptr(),
                scratch.len(),
                &mut r,
                null_mut()
            ),
            FLOXLOG_OK
        );
        let mut levels = [floxlog_level::default(); 3];
        let mut ev = MaybeUninit::<floxlog_event>::uninit();
        let mut e = no_err();
        assert_eq!(
            floxlog_reader_next(r, ev.as_mut_ptr(), levels.as_mut_ptr(), 2, &mut e),
            FLOXLOG_BUFFER_TOO_SMALL
        );
        assert_eq!((e.has_needed, e.needed), (1, 3));
        assert_eq!(
            floxlog_reader_next(r, ev.as_mut_ptr(), null_mut(), 0, &mut e),
            FLOXLOG_BUFFER_TOO_SMALL
        );
        assert_eq!(
            floxlog_reader_next(r, ev.as_mut_ptr(), levels.as_mut_ptr(), 3, &mut e),
            FLOXLOG_OK
        );
        let bk = ev.assume_init().data.book;
        assert_eq!(bk.bid_count, 3);
        assert_eq!(core::slice::from_raw_parts(bk.bids, 3), &bids);
        assert_eq!(
            floxlog_reader_next(r, ev.as_mut_ptr(), levels.as_mut_ptr(), 3, &mut e),
            FLOXLOG_END
        );
        floxlog_reader_free(r);
    }
}

fn null_and_bad_pointers_are_error_codes_in_one_form() {
    let mut e = no_err();
    let cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
    let mut b = Bufs::new(4096, 0, 4);
    let mut w = null_mut();
    // SAFETY: every call passes NULL or valid pointers; the point is that
    // the NULLs are reported.
    unsafe {
        assert_eq!(
            writer_new(null(), &b.c(), &mut w, &mut e),
            FLOXLOG_NULL_POINTER
        );
        assert_eq!(e.code, FLOXLOG_NULL_POINTER as u32);
        assert_eq!(
            writer_new(&cfg, null(), &mut w, &mut e),
            FLOXLOG_NULL_POINTER
        );
        assert_eq!(
            writer_new(&cfg, &b.c(), null_mut(), &mut e),
            FLOXLOG_NULL_POINTER
        );
        let mut nb = b.c();
        nb.out = null_mut();
        assert_eq!(writer_new(&cfg, &nb, &mut w, &mut e), FLOXLOG_NULL_POINTER);
        let mut nb = b.c();
        nb.index = null_mut();
        assert_eq!(writer_new(&cfg, &nb, &mut w, &mut e), FLOXLOG_NULL_POINTER);
        // Misaligned index storage.
        let mut nb = b.c();
        nb.index = (b.out.as_mut_ptr() as usize + 4096 + 1) as *mut floxlog_index_entry;
        nb.index = ((nb.index as usize) | 1) as *mut floxlog_index_entry;
        assert_eq!(writer_new(&cfg, &nb, &mut w, &mut e), FLOXLOG_MISALIGNED);
        // Overlapping buffers.
        let mut nb = b.c();
        nb.block = b.out.as_mut_ptr().add(100);
        nb.block_len = 10;
        assert_eq!(writer_new(&cfg, &nb, &mut w, &mut e), FLOXLOG_INVALID_INPUT);
        // 63 bytes of output: one byte too small for the header.
        let mut nb = b.c();
        nb.out_len = 63;
        assert_eq!(
            writer_new(&cfg, &nb, &mut w, &mut e),
            FLOXLOG_BUFFER_TOO_SMALL
        );
        assert_eq!(e.needed, 64);
        let mut bad = cfg;
        bad.compression = 7;
        assert_eq!(
            writer_new(&bad, &b.c(), &mut w, &mut e),
            FLOXLOG_INVALID_INPUT
        );
        bad = cfg;
        bad.index_interval = 0;
        assert_eq!(
            writer_new(&bad, &b.c(), &mut w, &mut e),
            FLOXLOG_INVALID_INPUT
        );
        assert!(w.is_null(), "no handle on failure");

        let w = new_writer(&cfg, &mut b);
        assert_eq!(
            floxlog_writer_append_trade(w, null(), &mut e),
            FLOXLOG_NULL_POINTER
        );
        assert_eq!(
            floxlog_writer_append_trade(null_mut(), &trade(0), &mut e),
            FLOXLOG_NULL_POINTER
        );
        // A NULL error pointer is fine.
        assert_eq!(
            floxlog_writer_append_trade(w, null(), null_mut()),
            FLOXLOG_NULL_POINTER
        );
        // Level count over the limit, NULL levels with a count.
        let mut bk = floxlog_book {
            exchange_ts_ns: 0,
            recv_ts_ns: 0,
            seq: 0,
            symbol_id: 0,
            header_type: 0,
            instrument: 0,
            exchange_id: 0,
            bids: null(),
            bid_count: 1,
            asks: null(),
            ask_count: 0,
        };
        assert_eq!(
            floxlog_writer_append_book_snapshot(w, &bk, &mut e),
            FLOXLOG_NULL_POINTER
        );
        let lv = [floxlog_level::default(); 1];
        bk.bids = lv.as_ptr();
        bk.bid_count = 70_000;
        assert_eq!(
            floxlog_writer_append_book_snapshot(w, &bk, &mut e),
            FLOXLOG_INVALID_INPUT
        );
        bk.bid_count = 1;
        bk.header_type = 1; // a delta's byte on a snapshot
        assert_eq!(
            floxlog_writer_append_book_snapshot(w, &bk, &mut e),
            FLOXLOG_INVALID_INPUT
        );
        let ev = floxlog_event {
            kind: 77,
            data: floxlog_event_data { trade: trade(0) },
        };
        assert_eq!(floxlog_writer_append(w, &ev, &mut e), FLOXLOG_INVALID_INPUT);
        // A reader handle passed as a writer is recognised.
        let seg = finish(new_writer(&cfg, &mut Bufs::new(4096, 0, 4)));
        let mut r = null_mut();
        assert_eq!(
            reader_new(
                seg.as_ptr(),
                seg.len(),
                null(),
                null_mut(),
                0,
                &mut r,
                null_mut()
            ),
            FLOXLOG_OK
        );
        assert_eq!(
            floxlog_writer_append_trade(r as *mut floxlog_writer, &trade(0), &mut e),
            FLOXLOG_INVALID_INPUT
        );
        assert_eq!(what(&e), "not a floxlog_writer handle");
        assert_eq!(
            floxlog_reader_next(r, null_mut(), null_mut(), 0, &mut e),
            FLOXLOG_NULL_POINTER
        );
        floxlog_reader_free(r);
        floxlog_writer_free(w);
        floxlog_writer_free(null_mut());
        floxlog_reader_free(null_mut());
    }
}

fn reader_reports_damage_with_offsets_in_one_form() {
    let cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
    let mut b = Bufs::new(1 << 14, 0, 8);
    let w = new_writer(&cfg, &mut b);
    for i in 0..5 {
        // SAFETY: live handle.
        unsafe {
            assert_eq!(
                floxlog_writer_append_trade(w, &trade(i), null_mut()),
                FLOXLOG_OK
            )
        };
    }
    let mut seg = finish(w);
    // Flip a payload bit of the third frame (frames are 60 bytes from 64).
    seg[64 + 2 * 60 + 12 + 5] ^= 1;
    let mut r = null_mut();
    let mut e = no_err();
    // SAFETY: valid buffers.
    unsafe {
        assert_eq!(
            reader_new(
                seg.as_ptr(),
                seg.len(),
                null(),
                null_mut(),
                0,
                &mut r,
                &mut e
            ),
            FLOXLOG_OK
        );
        let mut ev = MaybeUninit::<floxlog_event>::uninit();
        let mut n = 0;
        let rc = loop {
            let rc = floxlog_reader_next(r, ev.as_mut_ptr(), null_mut(), 0, &mut e);
            if rc != FLOXLOG_OK {
                break rc;
            }
            n += 1;
        };
        assert_eq!((rc, n), (FLOXLOG_CRC_MISMATCH, 2));
        assert_eq!(e.offset, 64 + 2 * 60);
        let mut buf = [0 as c_char; FLOXLOG_MESSAGE_MAX];
        let mut len = 0;
        assert_eq!(
            floxlog_error_format(&e, buf.as_mut_ptr(), buf.len(), &mut len),
            FLOXLOG_OK
        );
        let s = core::ffi::CStr::from_ptr(buf.as_ptr()).to_str().unwrap();
        assert_eq!(
            s,
            "crc_mismatch at byte 184: frame payload does not match its CRC32"
        );
        assert_eq!(
            floxlog_reader_next(r, ev.as_mut_ptr(), null_mut(), 0, &mut e),
            FLOXLOG_END
        );
        floxlog_reader_free(r);

        // A header shorter than 64 bytes, and a NULL segment.
        let mut r = null_mut();
        assert_eq!(
            reader_new(seg.as_ptr(), 63, null(), null_mut(), 0, &mut r, &mut e),
            FLOXLOG_TRUNCATED
        );
        assert_eq!((e.offset, e.needed), (0, 64));
        assert!(r.is_null());
        assert_eq!(
            reader_new(null(), 100, null(), null_mut(), 0, &mut r, &mut e),
            FLOXLOG_NULL_POINTER
        );
    }
}

#[test]
fn frames_encode_and_decode_standalone() {
    let t = trade(3);
    let ev = floxlog_event {
        kind: FLOXLOG_EVENT_TRADE,
        data: floxlog_event_data { trade: t },
    };
    let mut buf = [0u8; 60];
    let mut n = 0usize;
    let mut e = no_err();
    // SAFETY: valid buffers.
    unsafe {
        assert_eq!(
            floxlog_frame_encode(&ev, 0, buf.as_mut_ptr(), 59, &mut n, &mut e),
            FLOXLOG_BUFFER_TOO_SMALL
        );
        assert_eq!(e.needed, 60);
        assert_eq!(
            floxlog_frame_encode(&ev, 9, buf.as_mut_ptr(), 60, &mut n, &mut e),
            FLOXLOG_INVALID_INPUT
        );
        assert_eq!(
            floxlog_frame_encode(&ev, 0, buf.as_mut_ptr(), 60, &mut n, &mut e),
            FLOXLOG_OK
        );
        assert_eq!(n, 60);
        let mut core_buf = [0u8; 60];
        floxlog_core::encode_frame(
            &Event::Trade(Trade { ..Trade::from(&t) }),
            floxlog_core::Profile::Reference,
            &mut core_buf,
        )
        .unwrap();
        assert_eq!(buf, core_buf);
        let mut out = MaybeUninit::<floxlog_event>::uninit();
        let mut used = 0usize;
        assert_eq!(
            floxlog_frame_decode(
                buf.as_ptr(),
                60,
                null(),
                out.as_mut_ptr(),
                null_mut(),
                0,
                &mut used,
                &mut e
            ),
            FLOXLOG_OK
        );
        assert_eq!(used, 60);
        assert_eq!(out.assume_init().data.trade, t);
        assert_eq!(
            floxlog_frame_decode(
                buf.as_ptr(),
                59,
                null(),
                out.as_mut_ptr(),
                null_mut(),
                0,
                &mut used,
                &mut e
            ),
            FLOXLOG_TRUNCATED
        );
        buf[20] ^= 0xff;
        assert_eq!(
            floxlog_frame_decode(
                buf.as_ptr(),
                60,
                null(),
                out.as_mut_ptr(),
                null_mut(),
                0,
                &mut used,
                &mut e
            ),
            FLOXLOG_CRC_MISMATCH
        );
        let opts = floxlog_reader_options {
            verify_crc: 0,
            skip_unknown_types: 0,
        };
        assert_eq!(
            floxlog_frame_decode(
                buf.as_ptr(),
                60,
                &opts,
                out.as_mut_ptr(),
                null_mut(),
                0,
                &mut used,
                &mut e
            ),
            FLOXLOG_OK
        );
        let mut fh = floxlog_frame_header::default();
        assert_eq!(
            floxlog_frame_header_parse(buf.as_ptr(), 60, &mut fh, &mut e),
            FLOXLOG_OK
        );
        assert_eq!((fh.size, fh.frame_type, fh.rec_version), (48, 1, 1));
        assert_eq!(
            floxlog_frame_header_parse(buf.as_ptr(), 11, &mut fh, &mut e),
            FLOXLOG_TRUNCATED
        );
    }
}

fn size_helpers_cover_what_the_writer_checks_in_one_form() {
    // Staging twice the block, 16 bytes of slot per event, 7 to align them.
    assert_eq!(floxlog_block_scratch_len(100, 2), 200 + 32 + 7);
    assert_eq!(floxlog_block_scratch_len(usize::MAX, 1000), usize::MAX);
    assert_eq!(floxlog_index_trailer_len(3), 32 + 48);
    assert_eq!(floxlog_index_entries_needed(1001, 1000), 2);
    assert_eq!(floxlog_lz4_block_len_max(usize::MAX), usize::MAX);
    assert_eq!(floxlog_lz4_block_len_max(usize::MAX / 4), usize::MAX);
    let max_block = u32::MAX as usize;
    assert_eq!(floxlog_lz4_block_len_max(max_block + 1), usize::MAX);
    assert!(floxlog_lz4_block_len_max(max_block) < usize::MAX);
    assert_eq!(
        floxlog_lz4_block_len_max(6000),
        floxlog_core::block::compress_bound(6000) + 16
    );
    // An LZ4 writer given exactly these sizes can emit one full block.
    let cfg = config(FLOXLOG_COMPRESSION_LZ4, 100);
    let frame_bytes = 100 * 60;
    let mut b = Bufs::new(
        64 + floxlog_lz4_block_len_max(frame_bytes),
        floxlog_block_scratch_len(frame_bytes, 100),
        1,
    );
    let w = new_writer(&cfg, &mut b);
    for i in 0..100 {
        // SAFETY: live handle.
        unsafe {
            assert_eq!(
                floxlog_writer_append_trade(w, &trade(i), null_mut()),
                FLOXLOG_OK
            )
        };
    }
    let mut st = floxlog_writer_stats::default();
    // SAFETY: live handle.
    unsafe {
        assert_eq!(floxlog_writer_get_stats(w, &mut st), FLOXLOG_OK);
        floxlog_writer_free(w);
    }
    assert_eq!(
        (st.events, st.events_emitted, st.index_entries),
        (100, 100, 1)
    );
}

#[test]
fn a_panic_becomes_a_code_not_an_unwind() {
    let mut e = no_err();
    let r = boundary(&mut e, || -> FfiResult { panic!("deliberate test panic") });
    assert_eq!(r, FLOXLOG_PANIC);
    assert_eq!(e.code, FLOXLOG_PANIC as u32);
    assert_eq!(what(&e), "a Rust panic was caught at the C boundary");
    // A NULL error pointer is fine there too.
    assert_eq!(
        boundary(null_mut(), || -> FfiResult { panic!("again") }),
        FLOXLOG_PANIC
    );
}

/// In an LZ4 segment a batch ends after a pool state, so its payload (in
/// the block scratch) stays valid until the next call.
/// `trade(i)` as an event.
fn trade_event(i: i64) -> floxlog_event {
    floxlog_event {
        kind: FLOXLOG_EVENT_TRADE,
        data: floxlog_event_data { trade: trade(i) },
    }
}

/// A pool state at `ts` whose payload points at `payload`.
fn pool_event(ts: i64, payload: &[u8]) -> floxlog_event {
    floxlog_event {
        kind: FLOXLOG_EVENT_POOL_STATE,
        data: floxlog_event_data {
            pool_state: floxlog_pool_state {
                exchange_ts_ns: ts,
                recv_ts_ns: 0,
                symbol_id: 1,
                sub_type: 1,
                venue: 0,
                exchange_id: 0,
                payload: payload.as_ptr(),
                payload_len: payload.len(),
            },
        },
    }
}

fn lz4_batches_end_after_a_pool_state_in_one_form() {
    let payload = [9u8; 12];
    let t = trade_event;
    let evs = [t(0), pool_event(1_001, &payload), t(1), t(2)];
    let cfg = config(FLOXLOG_COMPRESSION_LZ4, 2);
    let mut b = Bufs::new(1 << 14, 1 << 14, 4);
    let w = new_writer(&cfg, &mut b);
    let mut done = 0usize;
    // SAFETY: live handle, valid events.
    let rc = unsafe { floxlog_writer_append_events(w, evs.as_ptr(), 4, &mut done, null_mut()) };
    assert_eq!((rc, done), (FLOXLOG_OK, 4));
    let seg = finish(w);
    let mut scratch = vec![0u8; 4096];
    let mut r = null_mut();
    let mut out = [MaybeUninit::<floxlog_event>::uninit(); 10];
    let mut n = 0usize;
    // SAFETY: valid buffers that outlive the reader.
    unsafe {
        let rc = reader_new(
            seg.as_ptr(),
            seg.len(),
            null(),
            scratch.as_mut_ptr(),
            scratch.len(),
            &mut r,
            null_mut(),
        );
        assert_eq!(rc, FLOXLOG_OK);
        let batch = |out: &mut [MaybeUninit<floxlog_event>], n: &mut usize| {
            floxlog_reader_next_batch(
                r,
                out.as_mut_ptr() as *mut floxlog_event,
                out.len(),
                null_mut(),
                0,
                n,
                null_mut(),
            )
        };
        assert_eq!(batch(&mut out, &mut n), FLOXLOG_OK);
        assert_eq!(n, 2);
        let p = out[1].assume_init().data.pool_state;
        assert_eq!(
            core::slice::from_raw_parts(p.payload, p.payload_len),
            &payload
        );
        assert_eq!(batch(&mut out, &mut n), FLOXLOG_OK);
        assert_eq!(n, 2);
        assert_eq!(out[1].assume_init().data.trade, trade(2));
        assert_eq!(batch(&mut out, &mut n), FLOXLOG_END);
        assert_eq!(n, 0);
        floxlog_reader_free(r);
    }
}

/// One `floxlog_reader_next_trades` call into `out`.
///
/// # Safety
/// `r` must be a live handle.
unsafe fn batch(
    r: *mut floxlog_reader,
    out: &mut [floxlog_trade],
    n: &mut usize,
) -> floxlog_result {
    // SAFETY: the caller's promise; `out` is writable.
    unsafe { floxlog_reader_next_trades(r, out.as_mut_ptr(), out.len(), n, null_mut()) }
}

/// A reader over `seg` with `scratch` for LZ4 blocks, for the batch tests.
fn open_reader(seg: &[u8], scratch: &mut [u8]) -> *mut floxlog_reader {
    let mut r = null_mut();
    // SAFETY: valid buffers that outlive the reader (the caller keeps them).
    let rc = unsafe {
        reader_new(
            seg.as_ptr(),
            seg.len(),
            null(),
            scratch.as_mut_ptr(),
            scratch.len(),
            &mut r,
            null_mut(),
        )
    };
    assert_eq!(rc, FLOXLOG_OK);
    r
}

fn trade_batches_stop_before_other_events_and_keep_them_in_one_form() {
    let payload = [7u8; 12];
    let t = trade_event;
    let evs = [
        t(0),
        t(1),
        t(2),
        pool_event(1_002_500, &payload),
        t(3),
        t(4),
    ];
    for compression in [FLOXLOG_COMPRESSION_NONE, FLOXLOG_COMPRESSION_LZ4] {
        let cfg = config(compression, 4);
        let mut b = Bufs::new(1 << 14, 1 << 14, 4);
        let w = new_writer(&cfg, &mut b);
        let mut done = 0usize;
        // SAFETY: live handle, valid events.
        let rc = unsafe {
            floxlog_writer_append_events(w, evs.as_ptr(), evs.len(), &mut done, null_mut())
        };
        assert_eq!((rc, done), (FLOXLOG_OK, evs.len()));
        let seg = finish(w);
        let mut scratch = vec![0u8; 4096];
        let r = open_reader(&seg, &mut scratch);
        let mut out = [floxlog_trade::default(); 10];
        let mut n = 99usize;
        // SAFETY: live handle, valid buffers.
        unsafe {
            assert_eq!(batch(r, &mut out, &mut n), FLOXLOG_OK);
            assert_eq!(n, 3);
            assert_eq!(out[..3], [trade(0), trade(1), trade(2)]);
            // The pool state is kept, not skipped: the batch call says so
            // (twice), and the general call returns it.
            assert_eq!(batch(r, &mut out, &mut n), FLOXLOG_NOT_TRADE);
            assert_eq!(n, 0);
            assert_eq!(batch(r, &mut out, &mut n), FLOXLOG_NOT_TRADE);
            let mut ev = MaybeUninit::<floxlog_event>::uninit();
            assert_eq!(
                floxlog_reader_next(r, ev.as_mut_ptr(), null_mut(), 0, null_mut()),
                FLOXLOG_OK
            );
            let e = ev.assume_init();
            assert_eq!(e.kind, FLOXLOG_EVENT_POOL_STATE);
            let p = e.data.pool_state;
            assert_eq!(p.exchange_ts_ns, 1_002_500);
            assert_eq!(
                core::slice::from_raw_parts(p.payload, p.payload_len),
                &payload
            );
            assert_eq!(batch(r, &mut out, &mut n), FLOXLOG_OK);
            assert_eq!(n, 2);
            assert_eq!(out[..2], [trade(3), trade(4)]);
            assert_eq!(batch(r, &mut out, &mut n), FLOXLOG_END);
            assert_eq!(n, 0);
            let mut read = 0u64;
            assert_eq!(floxlog_reader_events_read(r, &mut read), FLOXLOG_OK);
            assert_eq!(read, 6);
            // Usage errors: NULL count, zero capacity, NULL trades.
            assert_eq!(
                floxlog_reader_next_trades(r, out.as_mut_ptr(), 1, null_mut(), null_mut()),
                FLOXLOG_NULL_POINTER
            );
            assert_eq!(
                floxlog_reader_next_trades(r, out.as_mut_ptr(), 0, &mut n, null_mut()),
                FLOXLOG_INVALID_INPUT
            );
            assert_eq!(
                floxlog_reader_next_trades(r, null_mut(), 4, &mut n, null_mut()),
                FLOXLOG_NULL_POINTER
            );
            floxlog_reader_free(r);
        }
    }
}

fn trade_batches_deliver_every_good_trade_before_the_error_in_one_form() {
    let cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
    let mut b = Bufs::new(1 << 14, 0, 8);
    let w = new_writer(&cfg, &mut b);
    for i in 0..9 {
        // SAFETY: live handle.
        unsafe {
            assert_eq!(
                floxlog_writer_append_trade(w, &trade(i), null_mut()),
                FLOXLOG_OK
            )
        };
    }
    let mut seg = finish(w);
    // Damage the sixth frame's payload: inside the second run of frames
    // whose CRCs the core checks together.
    seg[64 + 5 * 60 + 12 + 7] ^= 0x10;
    let mut scratch = [0u8; 0];
    let r = open_reader(&seg, &mut scratch);
    let mut out = [floxlog_trade::default(); 4];
    let mut n = 0usize;
    let mut e = no_err();
    let mut got = Vec::new();
    // SAFETY: live handle, valid buffers.
    unsafe {
        let rc = loop {
            let rc = floxlog_reader_next_trades(r, out.as_mut_ptr(), out.len(), &mut n, &mut e);
            if rc != FLOXLOG_OK {
                break rc;
            }
            got.extend_from_slice(&out[..n]);
        };
        assert_eq!(rc, FLOXLOG_CRC_MISMATCH);
        assert_eq!(n, 0);
        assert_eq!(e.offset, 64 + 5 * 60);
        assert_eq!(got, (0..5).map(trade).collect::<Vec<_>>());
        assert_eq!(
            floxlog_reader_next_trades(r, out.as_mut_ptr(), out.len(), &mut n, &mut e),
            FLOXLOG_END
        );
        floxlog_reader_free(r);
    }
}

#[test]
fn ffi_writer_matches_core_writer_bytes() {
    each_form(ffi_writer_matches_core_writer_bytes_in_one_form);
}

#[test]
fn every_event_kind_round_trips() {
    each_form(every_event_kind_round_trips_in_one_form);
}

#[test]
fn short_level_scratch_keeps_the_event() {
    each_form(short_level_scratch_keeps_the_event_in_one_form);
}

#[test]
fn null_and_bad_pointers_are_error_codes() {
    each_form(null_and_bad_pointers_are_error_codes_in_one_form);
}

#[test]
fn reader_reports_damage_with_offsets() {
    each_form(reader_reports_damage_with_offsets_in_one_form);
}

#[test]
fn size_helpers_cover_what_the_writer_checks() {
    each_form(size_helpers_cover_what_the_writer_checks_in_one_form);
}

#[test]
fn lz4_batches_end_after_a_pool_state() {
    each_form(lz4_batches_end_after_a_pool_state_in_one_form);
}

#[test]
fn trade_batches_stop_before_other_events_and_keep_them() {
    each_form(trade_batches_stop_before_other_events_and_keep_them_in_one_form);
}

#[test]
fn trade_batches_deliver_every_good_trade_before_the_error() {
    each_form(trade_batches_deliver_every_good_trade_before_the_error_in_one_form);
}

/// Caller storage is checked before anything is built: NULL, misaligned
/// and short storage are errors that leave the buffers untouched; the
/// constants cover the handles; an LZ4 block buffer must hold the slots.
#[test]
fn init_checks_the_storage_and_the_slot_room() {
    let cfg = config(FLOXLOG_COMPRESSION_LZ4, 10);
    let mut b = Bufs::new(4096, floxlog_block_scratch_len(600, 10), 4);
    b.out[0] = 0xAB;
    let mut st = vec![0u64; FLOXLOG_WRITER_STORAGE_BYTES / 8 + 1];
    let base = st.as_mut_ptr() as *mut c_void;
    let (mut w, mut e) = (null_mut(), no_err());
    let need = core::mem::size_of::<crate::codec::writer::WriterHandle>();
    assert!(need <= FLOXLOG_WRITER_STORAGE_BYTES);
    // SAFETY: `st` outlives every handle below; buffers are valid.
    unsafe {
        let init =
            |p: *mut c_void, n: usize, bufs: &floxlog_writer_buffers, w: &mut _, e: &mut _| {
                floxlog_writer_init(p, n, &cfg, bufs, w, e)
            };
        let bufs = b.c();
        assert_eq!(
            init(null_mut(), 1 << 20, &bufs, &mut w, &mut e),
            FLOXLOG_NULL_POINTER
        );
        assert_eq!(what(&e), "`storage` is NULL");
        let odd = (base as *mut u8).add(4) as *mut c_void;
        assert_eq!(
            init(odd, FLOXLOG_WRITER_STORAGE_BYTES, &bufs, &mut w, &mut e),
            FLOXLOG_MISALIGNED
        );
        assert_eq!(
            init(base, need - 1, &bufs, &mut w, &mut e),
            FLOXLOG_BUFFER_TOO_SMALL
        );
        assert_eq!((e.has_needed, e.needed), (1, need as u64));
        // Room for 9 of the 10 slots (the buffer is 8-aligned: no pad).
        let mut short = bufs;
        short.block_len = 9 * 16;
        assert_eq!(
            init(base, FLOXLOG_WRITER_STORAGE_BYTES, &short, &mut w, &mut e),
            FLOXLOG_BUFFER_TOO_SMALL
        );
        assert_eq!(e.needed, 160);
        // Nothing was written by the failed calls (not even the header).
        assert_eq!(b.out[0], 0xAB);
        assert!(w.is_null());
        assert_eq!(
            init(base, need, &bufs, &mut w, &mut e),
            FLOXLOG_OK,
            "{}",
            what(&e)
        );
        assert_eq!(w as *mut c_void, base);
        for i in 0..25 {
            assert_eq!(
                floxlog_writer_append_trade(w, &trade(i), &mut e),
                FLOXLOG_OK
            );
        }
        let seg = finish(w);
        // `_free` ended the handle (its magic) and left the storage alone.
        assert_eq!(st[0], 0);
        assert_eq!(
            floxlog_writer_flush_block(base as *mut floxlog_writer, &mut e),
            FLOXLOG_INVALID_INPUT
        );
        let mut rs = vec![0u64; FLOXLOG_READER_STORAGE_BYTES / 8];
        let mut scratch = vec![0u8; 4096];
        let mut r = null_mut();
        assert!(
            core::mem::size_of::<crate::codec::reader::ReaderHandle>()
                <= FLOXLOG_READER_STORAGE_BYTES
        );
        assert_eq!(
            floxlog_reader_init(
                rs.as_mut_ptr() as *mut c_void,
                FLOXLOG_READER_STORAGE_BYTES,
                seg.as_ptr(),
                seg.len(),
                null(),
                scratch.as_mut_ptr(),
                scratch.len(),
                &mut r,
                &mut e
            ),
            FLOXLOG_OK,
            "{}",
            what(&e)
        );
        let mut ev = trade_event(-1);
        let mut n = 0;
        while floxlog_reader_next(r, &mut ev, null_mut(), 0, &mut e) == FLOXLOG_OK {
            assert_eq!(ev.data.trade.exchange_ts_ns, trade(n).exchange_ts_ns);
            n += 1;
        }
        assert_eq!(n, 25);
        floxlog_reader_free(r);
    }
}
