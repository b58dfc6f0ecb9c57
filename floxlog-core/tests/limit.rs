//! [`Reader::limit`]: a range `[start, end)` of a segment between frame
//! (or LZ4 block) boundaries reads exactly the events a whole read gives
//! there, event by event and through the batch trade kernel, so ranges
//! read on their own threads put together are the whole read.

mod common;
use common::*;
use floxlog_core::*;

fn events(seg: &Segment<'_>, start: u64, end: u64, kernel: bool) -> Vec<String> {
    let mut scratch = vec![0u8; seg.scratch_len()];
    let mut r = seg
        .reader_at(start, ReadOptions::default(), &mut scratch)
        .unwrap();
    r.limit(end);
    let mut out = Vec::new();
    loop {
        if kernel {
            let mut buf = [Trade::default(); 7];
            let b = r.next_trades(&mut buf);
            out.extend(
                buf[..b.count]
                    .iter()
                    .map(|t| format!("{:?}", Event::Trade(*t))),
            );
            match b.stop {
                TradeStop::Full | TradeStop::OtherType => {}
                TradeStop::End => break,
                TradeStop::Error(e) => panic!("{e:?}"),
            }
        }
        match r.next_event().unwrap() {
            Some(ev) => out.push(format!("{ev:?}")),
            None => break,
        }
    }
    out
}

#[test]
fn ranges_between_boundaries_put_together_are_the_whole_read() {
    let trades: Vec<Trade> = (0..6_000)
        .map(|i| trade(1_000 + i, 1 + (i % 3) as u32))
        .collect();
    let evs: Vec<Event<'_>> = trades.iter().map(|t| Event::Trade(*t)).collect();
    for compression in codecs() {
        let cfg = WriterConfig {
            compression,
            ..WriterConfig::default()
        };
        let data = write_all(cfg, &evs);
        let seg = Segment::parse(&data).unwrap();
        let (whole, err) = read_all(&data, ReadOptions::default());
        assert!(err.is_none());
        // Boundaries: blocks, or every 500th frame.
        let mut cuts: Vec<u64> = if seg.is_compressed() {
            seg.blocks().map(|b| b.unwrap().offset).skip(1).collect()
        } else {
            let mut r = seg.reader(ReadOptions::default(), &mut []);
            let mut v = Vec::new();
            let mut k = 0;
            while r.next_event().unwrap().is_some() {
                k += 1;
                if k % 500 == 0 {
                    v.push(r.next_offset());
                }
            }
            v.pop();
            v
        };
        assert!(cuts.len() >= 2, "{compression:?}: {} cuts", cuts.len());
        cuts.insert(0, SegmentHeader::LEN as u64);
        cuts.push(u64::MAX);
        for kernel in [false, true] {
            let mut got = Vec::new();
            for w in cuts.windows(2) {
                let part = events(&seg, w[0], w[1], kernel);
                assert!(!part.is_empty(), "{compression:?}: empty range {w:?}");
                got.extend(part);
            }
            assert_eq!(got, whole, "{compression:?} kernel {kernel}");
        }
    }
}
