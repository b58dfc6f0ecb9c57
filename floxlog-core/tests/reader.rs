//! Reader behaviour through the public API: seeking, options, limits, and
//! where it stops on damage.

mod common;
use common::*;
use floxlog_core::*;

fn trades(n: i64, step: i64) -> Vec<Event<'static>> {
    (0..n)
        .map(|i| Event::Trade(trade(1_000 + i * step, 1)))
        .collect()
}

fn first_ts_after_seek(seg: &[u8], t: i64) -> Option<i64> {
    let s = Segment::parse(seg).unwrap();
    let ix = s.index().unwrap();
    let mut scratch = vec![0u8; 1 << 20];
    let mut r = s.reader(ReadOptions::default(), &mut scratch);
    r.seek(ix.as_ref(), t);
    r.next_event().unwrap().map(|e| e.exchange_ts_ns())
}

#[test]
fn seek_finds_the_first_event_at_or_after_t() {
    let events = trades(1000, 10); // ts 1000, 1010, ..., 10990
    for compression in codecs() {
        let cfg = WriterConfig {
            compression,
            index_interval: if compression == Compression::Lz4 {
                64
            } else {
                7
            },
            ..WriterConfig::default()
        };
        let seg = write_all(cfg, &events);
        assert_eq!(first_ts_after_seek(&seg, 0), Some(1000));
        assert_eq!(first_ts_after_seek(&seg, 1000), Some(1000));
        assert_eq!(first_ts_after_seek(&seg, 5001), Some(5010));
        assert_eq!(first_ts_after_seek(&seg, 5010), Some(5010));
        assert_eq!(first_ts_after_seek(&seg, 10990), Some(10990));
        assert_eq!(first_ts_after_seek(&seg, 10991), None);
    }
}

#[test]
fn index_seek_picks_the_last_entry_strictly_before_t() {
    let events = trades(100, 10);
    let seg = write_all(
        WriterConfig {
            index_interval: 10,
            ..WriterConfig::default()
        },
        &events,
    );
    let s = Segment::parse(&seg).unwrap();
    let ix = s.index().unwrap().unwrap();
    assert_eq!(ix.len(), 10);
    assert!(ix.is_monotonic());
    // Entries every 10 events: ts 1000, 1100, ..., 1900.
    assert_eq!(ix.seek(999), None);
    assert_eq!(ix.seek(1000), None, "nothing strictly before 1000");
    assert_eq!(ix.seek(1001).unwrap().file_offset, 64);
    assert_eq!(ix.seek(1100).unwrap().file_offset, 64);
    assert_eq!(ix.seek(1101).unwrap().file_offset, 64 + 10 * 60);
    assert_eq!(ix.seek(i64::MAX).unwrap().file_offset, 64 + 90 * 60);
    assert_eq!(ix.header().first_ts_ns, 1000);
    assert_eq!(ix.header().last_ts_ns, 1900);
}

#[test]
fn seek_into_a_run_of_equal_timestamps_starts_before_the_run() {
    let events: Vec<Event> = (0..30)
        .map(|i| Event::Trade(trade(if i < 25 { 7 } else { 9 }, 1)))
        .collect();
    let seg = write_all(
        WriterConfig {
            index_interval: 5,
            ..WriterConfig::default()
        },
        &events,
    );
    let s = Segment::parse(&seg).unwrap();
    let ix = s.index().unwrap().unwrap();
    // Entries at events 0, 5, ..., 25: ts 7 (x5) then 9.
    assert_eq!(ix.seek(7), None);
    assert_eq!(ix.seek(8).unwrap().file_offset, 64 + 20 * 60);
    assert_eq!(ix.seek(9).unwrap().file_offset, 64 + 20 * 60);
    let mut r = s.reader(ReadOptions::default(), &mut []);
    r.seek(Some(&ix), 7);
    let mut n = 0;
    while r.next_event().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 30);
}

/// The case a "largest entry <= t" seek gets wrong: 4, 5, 5, 6 indexed
/// every 2 events puts an entry on the second 5.
#[test]
fn seek_never_skips_events_equal_to_t_before_an_entry() {
    let events: Vec<Event> = [4i64, 5, 5, 6]
        .iter()
        .map(|&t| Event::Trade(trade(t, 1)))
        .collect();
    for compression in codecs() {
        let cfg = WriterConfig {
            compression,
            index_interval: 2,
            ..WriterConfig::default()
        };
        let seg = write_all(cfg, &events);
        let s = Segment::parse(&seg).unwrap();
        let ix = s.index().unwrap();
        let mut scratch = vec![0u8; 1024];
        let mut r = s.reader(ReadOptions::default(), &mut scratch);
        r.seek(ix.as_ref(), 5);
        let mut got = Vec::new();
        while let Some(ev) = r.next_event().unwrap() {
            got.push(ev.exchange_ts_ns());
        }
        assert_eq!(got, vec![5, 5, 6], "{compression:?}");
    }
}

#[test]
fn crc_checks_can_be_turned_off() {
    let mut seg = write_all(WriterConfig::default(), &trades(3, 1));
    seg[64 + 12 + 20] ^= 0x40; // inside the first trade's price
    let (got, err) = read_all(&seg, ReadOptions::default());
    assert_eq!(got.len(), 0);
    assert_eq!(
        err.map(|e| (e.kind, e.offset)),
        Some((ErrorKind::CrcMismatch, 64))
    );
    let lax = ReadOptions {
        verify_crc: false,
        ..ReadOptions::default()
    };
    let (got, err) = read_all(&seg, lax);
    assert_eq!((got.len(), err), (3, None));
}

/// A segment with a frame of type 9 between two trades.
fn with_unknown_frame() -> Vec<u8> {
    let cfg = WriterConfig {
        create_index: false,
        ..WriterConfig::default()
    };
    let mut seg = write_all(cfg, &trades(1, 1));
    let payload = [0xabu8; 8];
    let mut h = [0u8; 12];
    FrameHeader {
        size: 8,
        crc32: crc32::crc32(&payload),
        frame_type: 9,
        rec_version: 1,
        flags: 0,
    }
    .emit(&mut h);
    seg.extend_from_slice(&h);
    seg.extend_from_slice(&payload);
    let mut buf = [0u8; 60];
    encode_frame(&Event::Trade(trade(5, 1)), Profile::Reference, &mut buf).unwrap();
    seg.extend_from_slice(&buf);
    seg
}

#[test]
fn unknown_types_are_an_error_unless_skipping_is_asked_for() {
    let seg = with_unknown_frame();
    let (got, err) = read_all(&seg, ReadOptions::default());
    assert_eq!(got.len(), 1);
    assert_eq!(
        err.map(|e| (e.kind, e.offset)),
        Some((ErrorKind::UnknownRecordType, 124))
    );
    let skip = ReadOptions {
        unknown_types: UnknownTypes::Skip,
        ..ReadOptions::default()
    };
    let (got, err) = read_all(&seg, skip);
    assert_eq!((got.len(), err), (2, None));
}

#[cfg(feature = "lz4")]
#[test]
fn lz4_block_larger_than_scratch_is_an_error_not_an_allocation() {
    let cfg = WriterConfig {
        compression: Compression::Lz4,
        index_interval: 100,
        ..WriterConfig::default()
    };
    let seg = write_all(cfg, &trades(100, 1));
    let s = Segment::parse(&seg).unwrap();
    let mut scratch = vec![0u8; 5999];
    let mut r = s.reader(ReadOptions::default(), &mut scratch);
    let e = r.next_event().unwrap_err();
    assert_eq!(
        (e.kind, e.offset, e.needed),
        (ErrorKind::BufferTooSmall, 64, Some(6000))
    );
    assert!(
        r.next_event().unwrap().is_none(),
        "the cursor ends after an error"
    );
}

#[test]
fn truncation_anywhere_yields_every_complete_event_then_truncated() {
    let events = trades(20, 1);
    let cfg = WriterConfig {
        create_index: false,
        ..WriterConfig::default()
    };
    let seg = write_all(cfg, &events);
    for cut in 64..seg.len() {
        let (got, err) = read_all(&seg[..cut], ReadOptions::default());
        let complete = (cut - 64) / 60;
        assert_eq!(got, debug_all(&events[..complete]), "cut {cut}");
        match err {
            None => assert_eq!((cut - 64) % 60, 0),
            Some(e) => assert_eq!(
                (e.kind, e.offset),
                (ErrorKind::Truncated, (64 + complete * 60) as u64)
            ),
        }
    }
    for cut in 0..64 {
        let (_, err) = read_all(&seg[..cut], ReadOptions::default());
        assert_eq!(
            err.map(|e| (e.kind, e.offset)),
            Some((ErrorKind::Truncated, 0))
        );
    }
}

#[test]
fn a_lost_index_offset_does_not_stop_reading() {
    for compression in codecs() {
        let cfg = WriterConfig {
            compression,
            index_interval: 10,
            ..WriterConfig::default()
        };
        let mut seg = write_all(cfg, &trades(50, 1));
        let off = SegmentHeader::parse(&seg).unwrap().index_offset;
        seg[40..48].copy_from_slice(&(off + 3).to_le_bytes());
        let s = Segment::parse(&seg).unwrap();
        assert!(s.index_lost());
        assert_eq!(s.index().unwrap_err().kind, ErrorKind::BadIndex);
        let (got, err) = read_all(&seg, ReadOptions::default());
        assert_eq!((got.len(), err), (50, None), "{compression:?}");
    }
}

#[test]
fn header_checks_report_offset_zero() {
    let seg = write_all(WriterConfig::default(), &trades(1, 1));
    let cases: [(usize, u8, ErrorKind); 6] = [
        (0, b'X', ErrorKind::BadMagic),
        (4, 2, ErrorKind::UnsupportedVersion),
        (6, 0x10, ErrorKind::UnknownFlags),
        (6, 0x04, ErrorKind::Encrypted),
        (60, 1, ErrorKind::ReservedNonzero),
        (48, 2, ErrorKind::UnknownCompression),
    ];
    for (at, v, kind) in cases {
        let mut bad = seg.clone();
        bad[at] = v;
        let e = Segment::parse(&bad).unwrap_err();
        assert_eq!((e.kind, e.offset), (kind, 0));
    }
}

#[test]
fn errors_display_kind_offset_and_cause() {
    let e = Error::new(
        ErrorKind::CrcMismatch,
        12852,
        "frame payload does not match its CRC32",
    )
    .in_block(24);
    let s = e.to_string();
    assert_eq!(s, "crc_mismatch at byte 12852 (+24 inside the decompressed block): frame payload does not match its CRC32");
    for k in ErrorKind::ALL {
        assert_eq!(ErrorKind::from_name(k.as_str()), Some(k));
    }
}

#[cfg(feature = "lz4")]
#[test]
fn items_expose_raw_frames_and_positions() {
    let cfg = WriterConfig {
        compression: Compression::Lz4,
        index_interval: 2,
        ..WriterConfig::default()
    };
    let seg = write_all(cfg, &trades(3, 1));
    let s = Segment::parse(&seg).unwrap();
    let mut scratch = vec![0u8; 1024];
    let mut r = s.reader(ReadOptions::default(), &mut scratch);
    let mut pos = Vec::new();
    while let Some(it) = r.next_item().unwrap() {
        assert_eq!(it.frame.header.size, 48);
        assert_eq!(it.frame.event(it.position.offset).unwrap(), it.event);
        pos.push((it.position.offset, it.position.in_block));
    }
    assert_eq!(pos[0], (64, Some(0)));
    assert_eq!(pos[1], (64, Some(60)));
    assert_eq!(pos[2].1, Some(0));
    assert!(pos[2].0 > 64);
}

/// A compressed segment: header with the Compressed flag, one block of
/// garbage. With LZ4 compiled out it must be refused, never read as empty.
#[test]
fn compressed_segments_are_never_read_as_empty() {
    let h = SegmentHeader {
        version: 1,
        flags: segment_header::flags::COMPRESSED,
        compression: 1,
        ..SegmentHeader::default()
    };
    let mut seg = h.to_bytes().to_vec();
    let mut bh = [0u8; 16];
    BlockHeader {
        magic: MAGIC_BLOCK,
        compressed_size: 4,
        original_size: 60,
        event_count: 1,
        flags: 0,
    }
    .emit(&mut bh);
    seg.extend_from_slice(&bh);
    seg.extend_from_slice(&[0xff; 4]);
    let (got, err) = read_all(&seg, ReadOptions::default());
    assert!(got.is_empty());
    let e = err.expect("an error, not an empty read");
    let want = if LZ4_SUPPORTED {
        ErrorKind::DecompressionFailed
    } else {
        ErrorKind::Lz4Unsupported
    };
    assert_eq!((e.kind, e.offset), (want, 64));
    if !LZ4_SUPPORTED {
        let mut b = Bufs::big();
        let cfg = WriterConfig {
            compression: Compression::Lz4,
            ..WriterConfig::default()
        };
        let e = SegmentWriter::new(cfg, b.borrow()).err().unwrap();
        assert_eq!(e.kind, ErrorKind::Lz4Unsupported);
    }
}

/// What a recorder leaves on disk while it writes: the placeholder header,
/// every frame or block emitted so far, then (closing) the trailer, and
/// last the final header. Returns the bytes before the final header and
/// the final header.
fn growing_segment(cfg: WriterConfig, events: &[Event<'_>]) -> (Vec<u8>, [u8; 64]) {
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(cfg, b.borrow()).unwrap();
    for e in events {
        w.append(e).unwrap();
    }
    let h = w.finish().unwrap();
    (w.pending().to_vec(), h)
}

/// Reads what `data[..len]` holds from `from` in tail mode: the events'
/// Debug forms and where to resume.
fn tail_from(data: &[u8], from: u64, scratch: &mut [u8]) -> (Vec<String>, u64, bool) {
    let seg = Segment::parse(data).unwrap();
    let opts = ReadOptions {
        tail: true,
        ..ReadOptions::default()
    };
    let mut r = seg.reader_at(from, opts, scratch).unwrap();
    let mut got = Vec::new();
    while let Some(ev) = r
        .next_event()
        .expect("tail mode never fails on a growing segment")
    {
        got.push(format!("{ev:?}"));
    }
    (got, r.next_offset(), r.needs_more())
}

#[test]
fn tailing_a_growing_segment_resumes_where_it_stopped_and_never_errs() {
    let events: Vec<Event> = (0..40).map(|i| Event::Trade(trade(1000 + i, 1))).collect();
    for compression in codecs() {
        let cfg = WriterConfig {
            compression,
            index_interval: 7,
            ..WriterConfig::default()
        };
        let (bytes, final_header) = growing_segment(cfg, &events);
        let mut scratch = vec![0u8; 1 << 16];
        // The file grows a few bytes at a time; each poll resumes at the
        // offset the last one reported.
        let (mut got, mut at) = (Vec::new(), 64u64);
        for len in (64..=bytes.len()).step_by(5).chain([bytes.len()]) {
            let (more, next, needs_more) = tail_from(&bytes[..len], at, &mut scratch);
            assert!(next <= len as u64);
            assert!(
                needs_more || next == len as u64,
                "{compression:?} len {len}"
            );
            got.extend(more);
            at = next;
        }
        // The trailer is written but not the final header: still "more".
        assert_eq!(got, debug_all(&events), "{compression:?}");
        let (more, _, needs_more) = tail_from(&bytes, at, &mut scratch);
        assert!(
            more.is_empty() && needs_more,
            "{compression:?}: trailer before the header"
        );
        // Closed: the final header ends the frames at the index.
        let mut closed = bytes.clone();
        closed[..64].copy_from_slice(&final_header);
        let (more, _, needs_more) = tail_from(&closed, at, &mut scratch);
        assert!(
            more.is_empty() && !needs_more,
            "{compression:?}: closed segment"
        );
    }
}

#[test]
fn without_tail_a_torn_segment_is_truncated() {
    let events: Vec<Event> = (0..10).map(|i| Event::Trade(trade(1000 + i, 1))).collect();
    let (bytes, _) = growing_segment(WriterConfig::default(), &events);
    let torn = &bytes[..64 + 60 * 3 + 20];
    let (got, err) = read_all(torn, ReadOptions::default());
    assert_eq!(got.len(), 3);
    let e = err.unwrap();
    assert_eq!((e.kind, e.offset), (ErrorKind::Truncated, 64 + 180));
}

#[test]
fn reader_at_refuses_offsets_outside_the_frame_area() {
    let seg = write_all(WriterConfig::default(), &[Event::Trade(trade(1, 1))]);
    let s = Segment::parse(&seg).unwrap();
    for bad in [0, 63, s.frames_end() + 1] {
        let e = s
            .reader_at(bad, ReadOptions::default(), &mut [])
            .err()
            .unwrap();
        assert_eq!(e.kind, ErrorKind::InvalidInput, "offset {bad}");
    }
    let mut r = s.reader_at(124, ReadOptions::default(), &mut []).unwrap();
    assert!(
        r.next_event().unwrap().is_none(),
        "124 is the end of the frames"
    );
}

#[test]
fn block_walk_and_scratch_len_follow_the_block_headers() {
    if !LZ4_SUPPORTED {
        return;
    }
    let events: Vec<Event> = (0..25).map(|i| Event::Trade(trade(1000 + i, 1))).collect();
    let cfg = WriterConfig {
        compression: Compression::Lz4,
        index_interval: 10,
        ..WriterConfig::default()
    };
    let seg = write_all(cfg, &events);
    let s = Segment::parse(&seg).unwrap();
    let blocks: Vec<Block> = s.blocks().map(|b| b.unwrap()).collect();
    let counts: Vec<u16> = blocks.iter().map(|b| b.header.event_count).collect();
    assert_eq!(counts, [10, 10, 5]);
    assert_eq!(blocks[0].offset, 64);
    assert_eq!(blocks[2].end(), s.frames_end());
    assert_eq!(s.scratch_len(), 600, "ten 60-byte frames");
    let mut scratch = vec![0u8; 600];
    assert_eq!(blocks[1].decompress(&mut scratch).unwrap().len(), 600);
}

/// A segment whose pool state payload holds a complete, CRC-valid trade
/// frame (ts 100), and whose index entry for the last real trade (ts 200)
/// is forged to point at that fake frame with ts 40, with the index CRC
/// recomputed: a seek to 50 picks it.
fn segment_with_forged_index_entry() -> (Vec<u8>, u64) {
    let mut fake = [0u8; 60];
    let n = encode_frame(&Event::Trade(trade(100, 9)), Profile::Reference, &mut fake).unwrap();
    assert_eq!(n, 60);
    let pool = PoolState {
        exchange_ts_ns: 2,
        payload: &fake,
        ..PoolState::default()
    };
    let events = [
        Event::Trade(trade(1, 1)),
        Event::PoolState(pool),
        Event::Trade(trade(3, 1)),
        Event::Trade(trade(200, 1)),
    ];
    let cfg = WriterConfig {
        index_interval: 1,
        ..WriterConfig::default()
    };
    let mut seg = write_all(cfg, &events);
    let h = SegmentHeader::parse(&seg).unwrap();
    let ix = h.index_offset as usize;
    // The fake frame starts after the pool frame header (12) and the pool
    // record header (32): 64 + 60 (first trade) + 12 + 32.
    let fake_at: u64 = 64 + 60 + 12 + 32;
    let last = ix + 32 + 3 * 16;
    seg[last..last + 8].copy_from_slice(&40i64.to_le_bytes());
    seg[last + 8..last + 16].copy_from_slice(&fake_at.to_le_bytes());
    // A careful forger keeps the header's range in step with the entries.
    seg[ix + 24..ix + 32].copy_from_slice(&40i64.to_le_bytes());
    let crc = crc32::crc32(&seg[ix + 32..ix + 32 + 4 * 16]);
    seg[ix + 12..ix + 16].copy_from_slice(&crc.to_le_bytes());
    (seg, fake_at)
}

#[test]
fn a_forged_index_entry_is_never_a_seek_target() {
    let (seg, fake_at) = segment_with_forged_index_entry();
    let s = Segment::parse(&seg).unwrap();
    // Structurally the index is fine: its CRC matches.
    let mut unproven = s.index_unproven().unwrap().unwrap();
    assert_eq!(unproven.get(3).unwrap().file_offset, fake_at);
    // Proving it finds the entry is not on the frame chain.
    let e = s.index().unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::BadIndex, s.frames_end()));
    // A seek with the unproven index starts at the first frame: the first
    // event at or after 50 is the real trade at 200, never the fake 100.
    let mut r = s.reader(ReadOptions::default(), &mut []);
    r.seek(Some(&unproven), 50);
    let ev = r.next_event().unwrap().unwrap();
    assert_eq!(ev.exchange_ts_ns(), 200);
    // Trusting the index (the documented opt-out) is what the attack needs.
    unproven.trust();
    let mut r = s.reader(ReadOptions::default(), &mut []);
    r.seek(Some(&unproven), 50);
    let ev = r.next_event().unwrap().unwrap();
    assert_eq!((ev.exchange_ts_ns(), ev.symbol_id()), (100, 9));
}

#[test]
fn the_frame_chain_reaches_real_boundaries_never_a_forged_one() {
    let (seg, fake_at) = segment_with_forged_index_entry();
    let s = Segment::parse(&seg).unwrap();
    let first = SegmentHeader::LEN as u64;
    let ix = s.index_unproven().unwrap().unwrap();
    // The real frames: the first three entries.
    let real: Vec<u64> = (0..3).map(|i| ix.get(i).unwrap().file_offset).collect();
    for (k, &at) in real.iter().enumerate() {
        assert!(s.chain_reaches(first, at), "entry {k} at {at}");
        assert!(s.chain_reaches(at, at));
    }
    assert!(s.chain_reaches(real[0], real[2]));
    assert!(s.chain_reaches(first, s.frames_end()));
    // The fake frame inside the pool state's payload: never on the chain,
    // from any real boundary before it.
    for &from in &real[..2] {
        assert!(!s.chain_reaches(from, fake_at), "from {from}");
    }
    assert!(!s.chain_reaches(first, s.frames_end() + 1));
}

#[test]
fn an_index_entry_with_a_wrong_timestamp_is_not_proven() {
    let events: Vec<Event> = (0..10).map(|i| Event::Trade(trade(10 * i, 1))).collect();
    let cfg = WriterConfig {
        index_interval: 2,
        ..WriterConfig::default()
    };
    let mut seg = write_all(cfg, &events);
    assert!(Segment::parse(&seg)
        .unwrap()
        .index()
        .unwrap()
        .unwrap()
        .is_proven());
    let ix = SegmentHeader::parse(&seg).unwrap().index_offset as usize;
    // Entry 2 (ts 40) claims 5: a seek to 30 would start past 30.
    seg[ix + 32 + 32..ix + 32 + 40].copy_from_slice(&5i64.to_le_bytes());
    let crc = crc32::crc32(&seg[ix + 32..ix + 32 + 5 * 16]);
    seg[ix + 12..ix + 16].copy_from_slice(&crc.to_le_bytes());
    let s = Segment::parse(&seg).unwrap();
    assert_eq!(s.index().unwrap_err().kind, ErrorKind::BadIndex);
    let ix = s.index_unproven().unwrap().unwrap();
    let mut r = s.reader(ReadOptions::default(), &mut []);
    r.seek(Some(&ix), 30);
    assert_eq!(r.next_event().unwrap().unwrap().exchange_ts_ns(), 30);
}

/// An unfinished segment (placeholder header, frames) followed by `zeros`.
fn unfinished_with_zeros(n: i64, zeros: usize) -> (Vec<u8>, usize) {
    let cfg = WriterConfig {
        create_index: false,
        ..WriterConfig::default()
    };
    let full = write_all(cfg, &trades(n, 10));
    // Without the final header: the placeholder the writer starts with.
    let mut seg = SegmentWriter::new(
        cfg,
        WriterBuffers {
            out: &mut [0u8; 64],
            block: &mut [],
            slots: &mut [],
            index: &mut [],
        },
    )
    .unwrap()
    .pending()
    .to_vec();
    seg.extend_from_slice(&full[64..]);
    let end = seg.len();
    seg.resize(end + zeros, 0);
    (seg, end)
}

/// A journal's zero tail ends the frames with `Truncated` (the torn-tail
/// kind) naming it, at the first zero frame position; tailing, it is "not
/// yet"; a non-zero byte further on than an unpublished frame can reach is
/// damage again.
#[test]
fn a_zero_tail_ends_the_frames() {
    let (seg, end) = unfinished_with_zeros(50, 200_000);
    let s = Segment::parse(&seg).unwrap();
    let mut r = s.reader(ReadOptions::default(), &mut []);
    let mut n = 0;
    let e = loop {
        match r.next_event() {
            Ok(Some(_)) => n += 1,
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    assert_eq!(n, 50);
    assert_eq!(
        (e.kind, e.offset, e.what),
        (ErrorKind::Truncated, end as u64, reader::ZERO_TAIL)
    );
    let tail = ReadOptions {
        tail: true,
        ..ReadOptions::default()
    };
    let mut r = s.reader(tail, &mut []);
    while r.next_event().unwrap().is_some() {}
    assert!(r.needs_more());
    assert_eq!(r.next_offset(), end as u64);

    // A frame the writer left without its size (whole but for it, or
    // only its payload): still the end.
    let frame = seg[64..124].to_vec();
    for from in [4, 12] {
        let mut half = seg.clone();
        half[end + from..end + 60].copy_from_slice(&frame[from..]);
        let s = Segment::parse(&half).unwrap();
        let mut r = s.reader(ReadOptions::default(), &mut []);
        let e = loop {
            match r.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("no error"),
                Err(e) => break e,
            }
        };
        assert_eq!(
            (e.offset, e.what),
            (end as u64, reader::ZERO_TAIL),
            "from {from}"
        );
    }

    // A stray byte far past the zeros' start: damage.
    let mut bad = seg.clone();
    let last = bad.len() - 1;
    bad[last] = 1;
    let s = Segment::parse(&bad).unwrap();
    let mut r = s.reader(ReadOptions::default(), &mut []);
    let e = loop {
        match r.next_event() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    assert_eq!(e.kind, ErrorKind::UnsupportedRecordVersion);
}

/// `defer_size`: the same bytes but for each frame's size field, left 0.
#[test]
fn deferred_sizes_leave_only_the_size_fields_zero() {
    let cfg = WriterConfig::default();
    let events = trades(20, 10);
    let want = write_all(cfg, &events);
    let mut out = vec![0u8; 1 << 16];
    let mut index = vec![IndexEntry::default(); 4];
    let mut w = SegmentWriter::new(
        cfg,
        WriterBuffers {
            out: &mut out,
            block: &mut [],
            slots: &mut [],
            index: &mut index,
        },
    )
    .unwrap();
    w.defer_size(true);
    let mut at = Vec::new();
    for e in &events {
        at.push(w.segment_bytes() as usize);
        w.append(e).unwrap();
    }
    let end = w.segment_bytes() as usize;
    let mut got = w.pending()[..end].to_vec();
    for &a in &at {
        assert_eq!(got[a..a + 4], [0; 4]);
        got[a..a + 4].copy_from_slice(&want[a..a + 4]);
    }
    assert_eq!(got[64..], want[64..end]);
}
