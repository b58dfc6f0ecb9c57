//! The writer fed arbitrary events, settings and buffer sizes, drained
//! through a small output buffer; what went in must come out (LZ4 blocks
//! stably sorted by timestamp), and the segment must verify.
#![no_main]

use arbitrary::Arbitrary;
use floxlog_core::*;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Ev {
    Trade(i64, i64, i64, u64, u32, u8),
    Book(bool, i64, i64, u32, Vec<(i64, i64)>, Vec<(i64, i64)>),
    Quote(i64, [i64; 12], u32),
    Pool(i64, u8, Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Input {
    lz4: bool,
    create_index: bool,
    interval: u8,
    spec: bool,
    out_len: u16,
    block_len: u16,
    index_len: u8,
    events: Vec<Ev>,
}

fn levels(v: &[(i64, i64)]) -> Vec<Level> {
    v.iter()
        .map(|&(price_raw, qty_raw)| Level { price_raw, qty_raw })
        .collect()
}

fuzz_target!(|inp: Input| {
    let owned: Vec<(Ev, Vec<Level>, Vec<Level>)> = inp
        .events
        .into_iter()
        .map(|e| {
            let (b, a) = match &e {
                Ev::Book(_, _, _, _, b, a) => (levels(b), levels(a)),
                _ => (Vec::new(), Vec::new()),
            };
            (e, b, a)
        })
        .collect();
    let events: Vec<Event> = owned
        .iter()
        .map(|(e, bids, asks)| match e {
            Ev::Trade(ts, p, q, id, sym, side) => Event::Trade(Trade {
                exchange_ts_ns: *ts,
                price_raw: *p,
                qty_raw: *q,
                trade_id: *id,
                symbol_id: *sym,
                side: *side,
                ..Trade::default()
            }),
            Ev::Book(snap, ts, seq, sym, _, _) => {
                let kind = if *snap {
                    BookKind::Snapshot
                } else {
                    BookKind::Delta
                };
                Event::Book(Book {
                    kind,
                    exchange_ts_ns: *ts,
                    recv_ts_ns: 0,
                    seq: *seq,
                    symbol_id: *sym,
                    header_type: kind.flox_header_type(),
                    instrument: 0,
                    exchange_id: 0,
                    bids: Levels::Slice(bids),
                    asks: Levels::Slice(asks),
                })
            }
            Ev::Quote(ts, v, sym) => Event::OptionQuote(OptionQuote {
                exchange_ts_ns: *ts,
                mark_price_raw: v[0],
                open_interest_raw: v[11],
                symbol_id: *sym,
                ..OptionQuote::default()
            }),
            Ev::Pool(ts, sub, payload) => Event::PoolState(PoolState {
                exchange_ts_ns: *ts,
                sub_type: *sub,
                payload,
                ..PoolState::default()
            }),
        })
        .collect();

    let interval = inp.interval.max(1) as u16;
    let cfg = WriterConfig {
        compression: if inp.lz4 {
            Compression::Lz4
        } else {
            Compression::None
        },
        create_index: inp.create_index,
        index_interval: interval,
        profile: if inp.spec {
            Profile::Spec
        } else {
            Profile::Reference
        },
        ..WriterConfig::default()
    };
    let mut out = vec![0u8; 64 + inp.out_len as usize];
    let mut block = vec![0u8; inp.block_len as usize];
    let mut slots = vec![BlockSlot::EMPTY; interval as usize];
    let mut index = vec![IndexEntry::default(); inp.index_len as usize];
    let bufs = WriterBuffers {
        out: &mut out,
        block: &mut block,
        slots: &mut slots,
        index: &mut index,
    };
    let Ok(mut w) = SegmentWriter::new(cfg, bufs) else {
        return;
    };
    let mut file = Vec::new();
    let mut accepted = Vec::new();
    let mut blocks: Vec<usize> = Vec::new(); // accepted-event counts at each early flush
    for ev in &events {
        let mut tries = 0;
        loop {
            tries += 1;
            match w.append(ev) {
                Ok(()) => {
                    accepted.push(*ev);
                    break;
                }
                Err(e) if e.kind == ErrorKind::BufferTooSmall && tries < 4 => {
                    file.extend_from_slice(w.pending());
                    let n = w.pending().len();
                    w.consume(n);
                    if tries >= 2 && w.flush_block().is_ok() {
                        blocks.push(accepted.len());
                    }
                }
                Err(_) => break, // refused: not written, nothing else lost
            }
        }
    }
    let header = loop {
        match w.finish() {
            Ok(h) => break h,
            Err(e) if e.kind == ErrorKind::BufferTooSmall && !w.pending().is_empty() => {
                file.extend_from_slice(w.pending());
                let n = w.pending().len();
                w.consume(n);
            }
            Err(_) => return, // trailer larger than the whole buffer
        }
    };
    file.extend_from_slice(w.pending());
    file[..64].copy_from_slice(&header);

    // Expected order: per block (interval events, or up to an early flush),
    // stable by timestamp.
    let mut want: Vec<Event> = accepted.clone();
    if inp.lz4 {
        let mut start = 0;
        let mut cuts = blocks.clone();
        cuts.push(usize::MAX);
        let mut ci = 0;
        while start < want.len() {
            let mut end = (start + interval as usize).min(want.len());
            while cuts[ci] <= start {
                ci += 1;
            }
            end = end.min(cuts[ci]);
            want[start..end].sort_by_key(|e| e.exchange_ts_ns());
            start = end;
        }
    }
    let seg = Segment::parse(&file).expect("writer output parses");
    assert_eq!(seg.header().event_count as usize, accepted.len());
    let _ = seg.index().expect("writer index verifies");
    let mut scratch = vec![0u8; 1 << 17];
    let mut r = seg.reader(ReadOptions::default(), &mut scratch);
    let mut i = 0;
    while let Some(ev) = r.next_event().expect("writer output reads") {
        let mut w = want[i];
        if let (Event::Book(b), Profile::Spec) = (&mut w, cfg.profile) {
            b.header_type = b.kind.frame_type();
        }
        assert_eq!(format!("{ev:?}"), format!("{w:?}"));
        i += 1;
    }
    assert_eq!(i, want.len());
});
