//! Writer behaviour through the public API: buffers that run out, empty
//! segments, profiles, LZ4 grouping, and the header/trailer it hands back.

mod common;
use common::*;
use floxlog_core::*;

fn trades(n: i64) -> Vec<Event<'static>> {
    (0..n)
        .map(|i| Event::Trade(trade(1_000 + i, (i % 5) as u32)))
        .collect()
}

#[cfg(feature = "lz4")]
fn lz4(interval: u16) -> WriterConfig {
    WriterConfig {
        compression: Compression::Lz4,
        index_interval: interval,
        created_ns: 42,
        ..WriterConfig::default()
    }
}

#[cfg(feature = "lz4")]
#[test]
fn empty_segments_have_no_index_and_lz4_ones_are_sorted() {
    let plain = write_all(WriterConfig::default(), &[]);
    assert_eq!(plain.len(), 64);
    let h = SegmentHeader::parse(&plain).unwrap();
    assert_eq!((h.flags, h.event_count, h.index_offset), (0, 0, 0));

    let z = write_all(lz4(10), &[]);
    assert_eq!(z.len(), 64);
    let h = SegmentHeader::parse(&z).unwrap();
    assert_eq!(
        h.flags,
        segment_header::flags::COMPRESSED | segment_header::flags::SORTED
    );
    assert_eq!(h.compression, 1);
}

/// Drains through a small output buffer whenever the writer asks, and
/// checks the result is byte-identical to a one-shot write.
fn drained(cfg: WriterConfig, events: &[Event<'_>], out_len: usize) -> Vec<u8> {
    let mut b = Bufs::new(out_len, 1 << 20, 1 << 12, 1 << 10);
    let mut w = SegmentWriter::new(cfg, b.borrow()).unwrap();
    let mut file = Vec::new();
    for e in events {
        match w.append(e) {
            Ok(()) => {}
            Err(err) if err.kind == ErrorKind::BufferTooSmall => {
                let before = w.stats();
                file.extend_from_slice(w.pending());
                let n = w.pending().len();
                w.consume(n);
                assert_eq!(w.stats().events, before.events, "nothing lost or added");
                w.append(e).expect("retry after draining");
            }
            Err(err) => panic!("{err}"),
        }
    }
    let header = loop {
        match w.finish() {
            Ok(h) => break h,
            Err(err) if err.kind == ErrorKind::BufferTooSmall => {
                file.extend_from_slice(w.pending());
                let n = w.pending().len();
                w.consume(n);
            }
            Err(err) => panic!("{err}"),
        }
    };
    file.extend_from_slice(w.pending());
    file[..64].copy_from_slice(&header);
    file
}

#[test]
fn small_output_buffers_lose_nothing() {
    let events = trades(500);
    #[cfg(feature = "lz4")]
    let lz4_case = (lz4(64), &[4400usize, 5000, 9000][..]);
    #[cfg(not(feature = "lz4"))]
    let lz4_case = (WriterConfig::default(), &[200usize][..]);
    // An LZ4 block (64 trades, 3840 bytes before compression) must fit the
    // output whole (with lz4_flex's worst-case bound, 4260 bytes here); frames
    // need only their own size.
    for (cfg, sizes) in [
        (WriterConfig::default(), &[64usize, 100, 1000, 5000][..]),
        lz4_case,
    ] {
        let whole = write_all(cfg, &events);
        for &out_len in sizes {
            assert_eq!(drained(cfg, &events, out_len), whole, "out_len {out_len}");
        }
    }
}

#[test]
fn too_small_output_reports_what_it_needs() {
    let mut b = Bufs::new(64 + 59, 0, 0, 4);
    let mut w = SegmentWriter::new(WriterConfig::default(), b.borrow()).unwrap();
    let e = w.append(&Event::Trade(trade(1, 1))).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BufferTooSmall);
    assert_eq!(e.needed, Some(64 + 60));
    assert_eq!(e.offset, 64);
    assert_eq!(w.stats().events, 0);
    // One byte short: still refused; the pending header is untouched.
    assert_eq!(w.pending().len(), 64);

    let mut tiny = [0u8; 63];
    let err = SegmentWriter::new(
        WriterConfig::default(),
        WriterBuffers {
            out: &mut tiny,
            block: &mut [],
            slots: &mut [],
            index: &mut [],
        },
    )
    .err()
    .unwrap();
    assert_eq!(
        (err.kind, err.needed),
        (ErrorKind::BufferTooSmall, Some(64))
    );
}

#[test]
fn full_index_refuses_the_event_and_keeps_the_segment_valid() {
    let cfg = WriterConfig {
        index_interval: 10,
        ..WriterConfig::default()
    };
    let mut b = Bufs::new(1 << 16, 0, 0, 2);
    let mut w = SegmentWriter::new(cfg, b.borrow()).unwrap();
    let events = trades(25);
    for e in &events[..20] {
        w.append(e).unwrap();
    }
    let err = w.append(&events[20]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::IndexFull);
    let h = w.finish().unwrap();
    let mut seg = w.pending().to_vec();
    seg[..64].copy_from_slice(&h);
    assert_eq!(seg, write_all(cfg, &events[..20]));
    let (got, err) = read_all(&seg, ReadOptions::default());
    assert_eq!((got.len(), err), (20, None));
}

#[test]
fn finished_writer_refuses_more() {
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(WriterConfig::default(), b.borrow()).unwrap();
    w.append(&Event::Trade(trade(1, 1))).unwrap();
    w.finish().unwrap();
    assert!(w.is_finished());
    assert_eq!(w.finish().unwrap_err().kind, ErrorKind::Finished);
    assert_eq!(
        w.append(&Event::Trade(trade(2, 1))).unwrap_err().kind,
        ErrorKind::Finished
    );
    assert_eq!(w.flush_block().unwrap_err().kind, ErrorKind::Finished);
}

#[cfg(feature = "lz4")]
#[test]
fn bad_configurations_are_refused() {
    let mut b = Bufs::big();
    let cfg = WriterConfig {
        index_interval: 0,
        ..WriterConfig::default()
    };
    assert_eq!(
        SegmentWriter::new(cfg, b.borrow()).err().unwrap().kind,
        ErrorKind::InvalidInput
    );
    let mut b = Bufs::new(1 << 16, 1 << 16, 9, 4);
    let e = SegmentWriter::new(lz4(10), b.borrow()).err().unwrap();
    assert_eq!((e.kind, e.needed), (ErrorKind::BufferTooSmall, Some(10)));
}

#[cfg(feature = "lz4")]
#[test]
fn block_scratch_full_then_flush_block_keeps_everything() {
    // Scratch for 3 trade frames (60 bytes each) per block.
    let mut b = Bufs::new(1 << 16, 2 * 180, 16, 16);
    let mut w = SegmentWriter::new(lz4(16), b.borrow()).unwrap();
    let events = trades(10);
    let mut flushed = 0;
    for e in &events {
        if let Err(err) = w.append(e) {
            assert_eq!(err.kind, ErrorKind::BufferTooSmall);
            w.flush_block().unwrap();
            flushed += 1;
            w.append(e).unwrap();
        }
    }
    assert_eq!(flushed, 3);
    let h = w.finish().unwrap();
    let mut seg = w.pending().to_vec();
    seg[..64].copy_from_slice(&h);
    let (got, err) = read_all(&seg, ReadOptions::default());
    assert_eq!(err, None);
    assert_eq!(got, debug_all(&events));
    let s = Segment::parse(&seg).unwrap();
    assert_eq!(s.index().unwrap().unwrap().len(), 4);
}

#[cfg(feature = "lz4")]
#[test]
fn lz4_blocks_are_sorted_stably_and_indexed_by_first_handed_event() {
    // Timestamps out of order inside a block; equal timestamps keep order.
    let ts = [5, 3, 3, 9, 1, 20, 20, 11];
    let events: Vec<Event> = ts
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            Event::Trade(Trade {
                exchange_ts_ns: t,
                trade_id: i as u64,
                ..Trade::default()
            })
        })
        .collect();
    let seg = write_all(lz4(4), &events);
    let (got, err) = read_all(&seg, ReadOptions::default());
    assert_eq!(err, None);
    // Block 0 = [5,3,3,9] -> [3(1),3(2),5(0),9(3)]; block 1 = [1,20,20,11] -> [1(4),11(7),20(5),20(6)].
    let want: Vec<Event> = [1usize, 2, 0, 3, 4, 7, 5, 6]
        .iter()
        .map(|&i| events[i])
        .collect();
    assert_eq!(got, debug_all(&want));
    let s = Segment::parse(&seg).unwrap();
    let h = s.header();
    assert!(
        !h.has(segment_header::flags::SORTED),
        "block 1 starts below block 0's max"
    );
    assert_eq!(
        (h.first_event_ns, h.last_event_ns),
        (5, 11),
        "reference: first and last handed in"
    );
    let ix = s.index().unwrap().unwrap();
    let e: Vec<i64> = ix.iter().map(|e| e.timestamp_ns).collect();
    assert_eq!(e, vec![5, 1]);
}

#[test]
fn reference_profile_rejects_contradicting_book_type_and_spec_profile_rewrites_it() {
    let bids = [Level {
        price_raw: 10,
        qty_raw: 1,
    }];
    let mut book = Book {
        kind: BookKind::Snapshot,
        exchange_ts_ns: 1,
        recv_ts_ns: 2,
        seq: 3,
        symbol_id: 4,
        header_type: 1,
        instrument: 0,
        exchange_id: 0,
        bids: Levels::Slice(&bids),
        asks: Levels::Slice(&[]),
    };
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(WriterConfig::default(), b.borrow()).unwrap();
    assert_eq!(
        w.append(&Event::Book(book)).unwrap_err().kind,
        ErrorKind::InvalidInput
    );
    assert_eq!(w.stats().events, 0);

    book.header_type = 0;
    let spec = WriterConfig {
        profile: Profile::Spec,
        ..WriterConfig::default()
    };
    let seg = write_all(spec, &[Event::Book(book)]);
    let s = Segment::parse(&seg).unwrap();
    let mut r = s.reader(ReadOptions::default(), &mut []);
    let Some(Event::Book(got)) = r.next_event().unwrap() else {
        panic!("no book")
    };
    assert_eq!(got.header_type, 2, "spec profile stores the frame type");
    assert_eq!(got.bids, Levels::Slice(&bids));
}

#[test]
fn spec_profile_counts_symbols_sets_sorted_and_uses_min_max() {
    let spec = WriterConfig {
        profile: Profile::Spec,
        ..WriterConfig::default()
    };
    let sorted = trades(50);
    let h = SegmentHeader::parse(&write_all(spec, &sorted)).unwrap();
    assert_eq!(h.symbol_count, 5);
    assert!(h.has(segment_header::flags::SORTED));
    let r = SegmentHeader::parse(&write_all(WriterConfig::default(), &sorted)).unwrap();
    assert!(
        !r.has(segment_header::flags::SORTED),
        "reference never flags uncompressed"
    );
    assert_eq!(r.symbol_count, 0);

    let mixed: Vec<Event> = [7i64, 3, 9, 0]
        .iter()
        .map(|&t| Event::Trade(trade(t, 1)))
        .collect();
    let h = SegmentHeader::parse(&write_all(spec, &mixed)).unwrap();
    assert!(!h.has(segment_header::flags::SORTED));
    assert_eq!((h.first_event_ns, h.last_event_ns), (0, 9));
    let r = SegmentHeader::parse(&write_all(WriterConfig::default(), &mixed)).unwrap();
    assert_eq!((r.first_event_ns, r.last_event_ns), (7, 0));
}

#[test]
fn spec_profile_symbol_table_has_a_stated_capacity() {
    let spec = WriterConfig {
        profile: Profile::Spec,
        ..WriterConfig::default()
    };
    let mut b = Bufs::new(1 << 20, 0, 0, 1 << 10);
    let mut w = SegmentWriter::new(spec, b.borrow()).unwrap();
    for s in 0..SYMBOL_CAPACITY as u32 {
        w.append(&Event::Trade(trade(1, s))).unwrap();
    }
    let e = w.append(&Event::Trade(trade(1, u32::MAX))).unwrap_err();
    assert_eq!(e.kind, ErrorKind::SymbolCapacity);
    w.append(&Event::Trade(trade(1, 0)))
        .expect("known symbols still fit");
    let h = SegmentHeader::parse(&w.finish().unwrap()).unwrap();
    assert_eq!(h.symbol_count as usize, SYMBOL_CAPACITY);
}

#[cfg(feature = "lz4")]
#[test]
fn current_header_tracks_emitted_lz4_blocks_only() {
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(lz4(4), b.borrow()).unwrap();
    for e in &trades(6) {
        w.append(e).unwrap();
    }
    let h = w.current_header();
    assert_eq!(h.event_count, 4);
    assert_eq!(h.flags, segment_header::flags::COMPRESSED);
    assert_eq!(w.stats().events, 6);
    let mut p = Bufs::big();
    let mut w = SegmentWriter::new(WriterConfig::default(), p.borrow()).unwrap();
    w.append(&trades(1)[0]).unwrap();
    assert_eq!(w.current_header().event_count, 0, "reference placeholder");
}

#[test]
fn append_raw_copies_valid_frames_and_refuses_others() {
    let src = write_all(WriterConfig::default(), &trades(3));
    let s = Segment::parse(&src).unwrap();
    let mut r = s.reader(ReadOptions::default(), &mut []);
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(
        WriterConfig {
            created_ns: 0,
            ..WriterConfig::default()
        },
        b.borrow(),
    )
    .unwrap();
    while let Some(it) = r.next_item().unwrap() {
        w.append_raw(it.frame.header.frame_type, it.frame.payload)
            .unwrap();
    }
    assert_eq!(
        w.append_raw(9, &[0; 48]).unwrap_err().kind,
        ErrorKind::InvalidInput
    );
    assert_eq!(
        w.append_raw(1, &[0; 47]).unwrap_err().kind,
        ErrorKind::InvalidInput
    );
    let h = w.finish().unwrap();
    let mut out = w.pending().to_vec();
    out[..64].copy_from_slice(&h);
    assert_eq!(out, src);
}

/// Encoded frames appended as they are make the segment their events make
/// (uncompressed and LZ4, pool states of odd lengths among trades); a
/// frame that is not the event given, or one the profile refuses, is
/// refused and nothing appended.
#[test]
fn append_frame_writes_what_append_writes() {
    let payloads: Vec<u8> = (0..64).collect();
    let evs = mixed(&payloads);
    let cfgs = [
        WriterConfig::default(),
        #[cfg(feature = "lz4")]
        lz4(16),
    ];
    for cfg in cfgs {
        let want = write_all(cfg, &evs);
        let mut b = Bufs::big();
        let mut w = SegmentWriter::new(cfg, b.borrow()).unwrap();
        for e in &evs {
            let mut f = vec![0u8; 12 + e.payload_len()];
            encode_frame(e, cfg.profile, &mut f).unwrap();
            let (decoded, n) = decode_frame(&f, FrameOptions::default()).unwrap();
            assert_eq!(n, f.len());
            w.append_frame(&f, &decoded.unwrap()).unwrap();
        }
        let before = w.stats().events;
        let mut f = vec![0u8; 60];
        encode_frame(&evs[0], cfg.profile, &mut f).unwrap();
        let other = Event::Trade(trade(7, 7));
        let e = w.append_frame(&f[..59], &other).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidInput);
        assert_eq!(w.stats().events, before, "nothing appended");
        let h = w.finish().unwrap();
        let mut out = w.pending().to_vec();
        out[..64].copy_from_slice(&h);
        assert!(out == want, "{:?}", cfg.compression);
    }
}

#[test]
fn frames_round_trip_standalone() {
    let payload = [1u8, 2, 3];
    let evs = [
        Event::Trade(trade(5, 6)),
        Event::OptionQuote(OptionQuote {
            exchange_ts_ns: 9,
            iv_raw: -4,
            symbol_id: 2,
            ..OptionQuote::default()
        }),
        Event::PoolState(PoolState {
            exchange_ts_ns: 3,
            sub_type: 2,
            payload: &payload,
            ..PoolState::default()
        }),
    ];
    for ev in evs {
        let mut buf = [0u8; 256];
        let n = encode_frame(&ev, Profile::Reference, &mut buf).unwrap();
        assert_eq!(n, 12 + ev.payload_len());
        let (got, used) = decode_frame(&buf[..n], FrameOptions::default()).unwrap();
        assert_eq!((got, used), (Some(ev), n));
        let short = encode_frame(&ev, Profile::Reference, &mut buf[..n - 1]).unwrap_err();
        assert_eq!(
            (short.kind, short.needed),
            (ErrorKind::BufferTooSmall, Some(n as u64))
        );
        let t = decode_frame(&buf[..n - 1], FrameOptions::default()).unwrap_err();
        assert_eq!(t.kind, ErrorKind::Truncated);
        buf[n - 1] ^= 0xff;
        let c = decode_frame(&buf[..n], FrameOptions::default()).unwrap_err();
        assert_eq!(c.kind, ErrorKind::CrcMismatch);
        let unchecked = FrameOptions {
            verify_crc: false,
            ..FrameOptions::default()
        };
        assert!(decode_frame(&buf[..n], unchecked).is_ok());
    }
}

#[test]
fn rotation_test_matches_the_reference_rule() {
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(WriterConfig::default(), b.borrow()).unwrap();
    let ev = Event::Trade(trade(1, 1));
    assert!(
        !w.would_exceed(&ev, 10),
        "an empty segment always takes one event"
    );
    w.append(&ev).unwrap();
    assert_eq!(w.segment_bytes(), 124);
    assert!(!w.would_exceed(&ev, 184));
    assert!(w.would_exceed(&ev, 183));
}

/// Trades with pool states of every payload length from 0 to 40 among
/// them, so the CRC lanes of one batch have unequal lengths.
fn mixed(payloads: &[u8]) -> Vec<Event<'_>> {
    let mut v = Vec::new();
    for i in 0..300i64 {
        v.push(Event::Trade(trade(1_000 + i, (i % 3) as u32)));
        if i % 7 == 3 {
            let len = (i as usize * 5) % 41;
            v.push(Event::PoolState(PoolState {
                exchange_ts_ns: 1_000 + i,
                recv_ts_ns: 2_000 + i,
                symbol_id: 1,
                sub_type: 1,
                venue: 0,
                exchange_id: 2,
                payload: &payloads[..len],
            }));
        }
    }
    v
}

/// Writes `events` with `append_batch` in batches of `batch`, draining a
/// small output whenever the writer asks, as `drained` does one by one.
fn drained_batches(
    cfg: WriterConfig,
    events: &[Event<'_>],
    out_len: usize,
    batch: usize,
) -> Vec<u8> {
    let mut b = Bufs::new(out_len, 1 << 20, 1 << 12, 1 << 10);
    let mut w = SegmentWriter::new(cfg, b.borrow()).unwrap();
    let mut file = Vec::new();
    let mut i = 0;
    while i < events.len() {
        let end = (i + batch).min(events.len());
        let (n, r) = w.append_batch(&events[i..end]);
        i += n;
        match r {
            Ok(()) => assert_eq!(i, end),
            Err(err) if err.kind == ErrorKind::BufferTooSmall => {
                // Draining must make room: a writer that asks with nothing
                // pending would loop here for ever.
                assert!(n > 0 || !w.pending().is_empty(), "{err}");
                file.extend_from_slice(w.pending());
                let k = w.pending().len();
                w.consume(k);
            }
            Err(err) => panic!("{err}"),
        }
    }
    let header = w.finish().unwrap();
    file.extend_from_slice(w.pending());
    file[..64].copy_from_slice(&header);
    file
}

#[test]
fn batches_write_the_bytes_single_appends_write() {
    let payloads: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37)).collect();
    let events = mixed(&payloads);
    let cfgs = [
        WriterConfig::default(),
        WriterConfig {
            profile: Profile::Spec,
            ..WriterConfig::default()
        },
        #[cfg(feature = "lz4")]
        lz4(16),
    ];
    for cfg in cfgs {
        let whole = write_all(cfg, &events);
        let (read, err) = read_all(&whole, ReadOptions::default());
        assert!(err.is_none(), "{err:?}");
        assert_eq!(read, debug_all(&events));
        for batch in [1, 3, 4, 5, 64, 1000] {
            // An LZ4 block (16 events here) must fit the output whole.
            for out_len in [4096, 1 << 20] {
                assert_eq!(
                    drained_batches(cfg, &events, out_len, batch),
                    whole,
                    "{:?} batch {batch} out {out_len}",
                    cfg.compression
                );
            }
        }
    }
}

#[test]
fn a_batch_that_fails_midway_keeps_what_it_appended_whole() {
    // Index room for 3 entries every 4 events: event 12 is refused.
    let cfg = WriterConfig {
        index_interval: 4,
        ..WriterConfig::default()
    };
    let events = trades(20);
    let mut b = Bufs::new(1 << 16, 0, 0, 3);
    let mut w = SegmentWriter::new(cfg, b.borrow()).unwrap();
    let (n, r) = w.append_batch(&events);
    assert_eq!(n, 12);
    assert_eq!(r.unwrap_err().kind, ErrorKind::IndexFull);
    let batched = w.pending().to_vec();

    let mut b1 = Bufs::new(1 << 16, 0, 0, 3);
    let mut w1 = SegmentWriter::new(cfg, b1.borrow()).unwrap();
    for e in &events[..12] {
        w1.append(e).unwrap();
    }
    assert_eq!(
        w1.append(&events[12]).unwrap_err().kind,
        ErrorKind::IndexFull
    );
    assert_eq!(batched, w1.pending(), "sealed: every CRC as one by one");
    assert_eq!(w.stats(), w1.stats());
}

/// Deferred LZ4 blocks: sealed by `append`, their scratch taken, compressed
/// with `compress_block` and placed two blocks late give the segment
/// compressing in place gives (unsorted blocks included); the writer
/// refuses to stage over an untaken scratch, to seal past MAX_UNPLACED, to
/// place the wrong bytes, and to finish with blocks unplaced.
#[cfg(feature = "lz4")]
#[test]
fn deferred_blocks_placed_late_write_the_same_segment() {
    let evs: Vec<Event<'static>> = (0..1000i64)
        .map(|i| Event::Trade(trade(1_000 + (i * 7919) % 300 + i, (i % 5) as u32)))
        .collect();
    let want = write_all(lz4(16), &evs);
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(lz4(16), b.borrow()).unwrap();
    w.defer_blocks(true);
    let mut queue = std::collections::VecDeque::new();
    for (i, e) in evs.iter().enumerate() {
        w.append(e).unwrap();
        let Some(sb) = w.sealed() else {
            continue;
        };
        // Taking the scratch: a copy here (the writer stages over its own).
        let st = w.storage_mut();
        let (mut blk, mut sl) = (st.block.to_vec(), st.slots.to_vec());
        assert!(w.append(&evs[i]).is_err(), "staged over an untaken scratch");
        w.release_sealed();
        let mut out = vec![0u8; sb.out_bound()];
        let n = compress_block(&mut blk, &mut sl, sb, &mut out, 0).unwrap();
        out.truncate(n);
        assert!(w.place_block(&out[..n - 1]).is_err(), "a cut block placed");
        queue.push_back(out);
        if w.unplaced() > 2 {
            assert!(w.finish().is_err(), "finished with blocks unplaced");
            w.place_block(&queue.pop_front().unwrap()).unwrap();
        }
    }
    while let Some(bytes) = queue.pop_front() {
        w.place_block(&bytes).unwrap();
    }
    assert_eq!(w.unplaced(), 0);
    assert!(
        w.place_block(&want[64..200]).is_err(),
        "nothing left to place"
    );
    let h = w.finish().unwrap();
    let mut got = w.pending().to_vec();
    got[..64].copy_from_slice(&h);
    assert!(got == want, "deferred blocks wrote other bytes");

    // No ninth sealed block while eight wait.
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(lz4(1), b.borrow()).unwrap();
    w.defer_blocks(true);
    for e in &evs[..MAX_UNPLACED] {
        w.append(e).unwrap();
        w.release_sealed();
    }
    let err = w.append(&evs[MAX_UNPLACED]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::BufferTooSmall);
}

/// `new_in` builds the same writer as `new` in the caller's slot (same
/// bytes out), and on a refused configuration leaves the slot unwritten.
#[test]
fn new_in_writes_what_new_writes_and_leaves_the_slot_on_error() {
    use core::mem::MaybeUninit;
    let events = trades(25);
    let cfg = WriterConfig {
        index_interval: 10,
        created_ns: 7,
        ..WriterConfig::default()
    };
    let mut b = Bufs::big();
    let mut slot = MaybeUninit::uninit();
    let w = SegmentWriter::new_in(&mut slot, cfg, b.borrow()).expect("new_in");
    for e in &events {
        w.append(e).expect("append");
    }
    let h = w.finish().expect("finish");
    let mut v = w.pending().to_vec();
    v[..64].copy_from_slice(&h);
    assert_eq!(v, write_all(cfg, &events));

    let (mut keep, mut short, mut zero) = (Bufs::big(), Bufs::new(63, 0, 0, 4), Bufs::big());
    let mut slot = MaybeUninit::new(SegmentWriter::new(cfg, keep.borrow()).expect("new"));
    let e = SegmentWriter::new_in(&mut slot, cfg, short.borrow())
        .err()
        .expect("too small");
    assert_eq!((e.kind, e.needed), (ErrorKind::BufferTooSmall, Some(64)));
    let bad = WriterConfig {
        index_interval: 0,
        ..cfg
    };
    let e = SegmentWriter::new_in(&mut slot, bad, zero.borrow())
        .err()
        .expect("interval 0");
    assert_eq!(e.kind, ErrorKind::InvalidInput);
    // SAFETY: MaybeUninit::new initialised the slot; a failed new_in does
    // not write it, which is what this reads back.
    let kept = unsafe { slot.assume_init_ref() };
    assert_eq!((kept.stats().events, kept.pending().len()), (0, 64));
}
