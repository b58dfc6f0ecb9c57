//! The limits the codec states (SECURITY.md, "Limits"), tested at their edges.

mod common;
use common::*;
use floxlog_core::*;

#[test]
fn book_sides_hold_at_most_65535_levels() {
    let many = vec![
        Level {
            price_raw: 1,
            qty_raw: 1
        };
        65_536
    ];
    let book = |n: usize| Book {
        kind: BookKind::Snapshot,
        exchange_ts_ns: 1,
        recv_ts_ns: 1,
        seq: 0,
        symbol_id: 1,
        header_type: 0,
        instrument: 0,
        exchange_id: 0,
        bids: Levels::Slice(&many[..n]),
        asks: Levels::Slice(&many[..n]),
    };
    let mut b = Bufs::new(1 << 22, 0, 0, 4);
    let mut w = SegmentWriter::new(WriterConfig::default(), b.borrow()).unwrap();
    let e = w.append(&Event::Book(book(65_536))).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidInput);
    w.append(&Event::Book(book(65_535)))
        .expect("the deepest book fits");
    let h = w.finish().unwrap();
    let mut seg = w.pending().to_vec();
    seg[..64].copy_from_slice(&h);
    let s = Segment::parse(&seg).unwrap();
    let mut r = s.reader(ReadOptions::default(), &mut []);
    let Some(Event::Book(got)) = r.next_event().unwrap() else {
        panic!("no book")
    };
    assert_eq!((got.bids.len(), got.asks.len()), (65_535, 65_535));
    assert_eq!(got.len(), 40 + 2 * 65_535 * 16);
}

/// A segment past 4 GiB: one pool-state frame of the largest payload a
/// frame can carry (u32::MAX - 32 bytes), then a trade whose offset, in the
/// index and in the reader's positions, is beyond u32.
#[test]
fn segments_larger_than_4_gib_read_and_seek() {
    let payload = vec![0u8; u32::MAX as usize - PoolState::HEADER_LEN];
    let pool = Event::PoolState(PoolState {
        exchange_ts_ns: 10,
        payload: &payload,
        ..PoolState::default()
    });
    let trade = Event::Trade(trade(20, 1));
    let frame_end = 64u64 + 12 + u32::MAX as u64;
    let mut out = vec![0u8; frame_end as usize + 60 + 32 + 2 * 16];
    let mut index = [IndexEntry::default(); 2];
    let cfg = WriterConfig {
        index_interval: 1,
        ..WriterConfig::default()
    };
    let bufs = WriterBuffers {
        out: &mut out,
        block: &mut [],
        slots: &mut [],
        index: &mut index,
    };
    let mut w = SegmentWriter::new(cfg, bufs).unwrap();
    w.append(&pool).unwrap();
    w.append(&trade).unwrap();
    let h = w.finish().unwrap();
    let len = w.pending().len();
    out[..64].copy_from_slice(&h);
    let seg = &out[..len];
    assert!(seg.len() as u64 > 1 << 32);

    let s = Segment::parse(seg).unwrap();
    let ix = s.index().unwrap().unwrap();
    assert_eq!(ix.get(1).unwrap().file_offset, frame_end);
    let mut r = s.reader(ReadOptions::default(), &mut []);
    r.seek(Some(&ix), 15);
    let it = r.next_item().unwrap().unwrap();
    assert_eq!(it.position.offset, frame_end);
    assert_eq!(it.event, trade);
    assert!(r.next_event().unwrap().is_none());

    // A frame claiming more than the data holds is Truncated, with the size
    // it would need: nothing is allocated for it.
    let cut = &seg[..frame_end as usize - 1];
    let s = Segment::parse(cut).unwrap();
    let mut r = s.reader(ReadOptions::default(), &mut []);
    let e = r.next_event().unwrap_err();
    assert_eq!(
        (e.kind, e.offset, e.needed),
        (ErrorKind::Truncated, 64, Some(12 + u32::MAX as u64))
    );
}
