//! BookState over small storage fed arbitrary snapshots and deltas (a small
//! price range, so levels collide; negative quantities; sides past
//! capacity), checked step by step against a BTreeMap model: the same
//! levels best-first, or the same error kind at the event's offset and an
//! empty book.
#![no_main]

use arbitrary::Arbitrary;
use floxlog_core::{BookKind, BookState, ErrorKind, Level, Levels};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

#[derive(Arbitrary, Debug)]
struct Input {
    bid_cap: u8,
    ask_cap: u8,
    records: Vec<(bool, Vec<(i8, i8)>, Vec<(i8, i8)>)>,
}

fn levels(v: &[(i8, i8)]) -> Vec<Level> {
    v.iter()
        .map(|&(p, q)| Level {
            price_raw: i64::from(p),
            qty_raw: i64::from(q),
        })
        .collect()
}

/// One side of the model: price to qty.
type Side = BTreeMap<i64, i64>;

fn replace(side: &mut Side, src: &[Level], cap: usize) -> Result<(), ErrorKind> {
    if src.len() > cap {
        return Err(ErrorKind::CapacityExceeded);
    }
    side.clear();
    for l in src {
        if side.insert(l.price_raw, l.qty_raw).is_some() {
            return Err(ErrorKind::MalformedRecord);
        }
    }
    Ok(())
}

fn delta(side: &mut Side, src: &[Level], cap: usize) -> Result<(), ErrorKind> {
    for l in src {
        if l.qty_raw == 0 {
            side.remove(&l.price_raw);
        } else if side.contains_key(&l.price_raw) || side.len() < cap {
            side.insert(l.price_raw, l.qty_raw);
        } else {
            return Err(ErrorKind::CapacityExceeded);
        }
    }
    Ok(())
}

fuzz_target!(|input: Input| {
    let (bid_cap, ask_cap) = (usize::from(input.bid_cap % 9), usize::from(input.ask_cap % 9));
    let (mut bid_store, mut ask_store) = ([Level::default(); 8], [Level::default(); 8]);
    let mut book = BookState::new(&mut bid_store[..bid_cap], &mut ask_store[..ask_cap]);
    let (mut bids, mut asks) = (Side::new(), Side::new());
    for (i, (snapshot, b, a)) in input.records.iter().take(64).enumerate() {
        let (b, a) = (levels(b), levels(a));
        let kind = if *snapshot {
            BookKind::Snapshot
        } else {
            BookKind::Delta
        };
        let at = 64 + 100 * i as u64;
        let want = if b.iter().chain(&a).any(|l| l.qty_raw < 0) {
            Err(ErrorKind::MalformedRecord)
        } else if *snapshot {
            replace(&mut bids, &b, bid_cap).and_then(|()| replace(&mut asks, &a, ask_cap))
        } else {
            delta(&mut bids, &b, bid_cap).and_then(|()| delta(&mut asks, &a, ask_cap))
        };
        let got = book.apply_levels(kind, Levels::Slice(&b), Levels::Slice(&a), at);
        match (got, want) {
            (Ok(()), Ok(())) => {}
            (Err(e), Err(k)) => {
                assert_eq!(e.kind, k, "record {i}");
                assert_eq!(e.offset, at);
                assert_eq!(book.lens(), (0, 0), "a failed record empties the book");
                bids.clear();
                asks.clear();
            }
            (got, want) => panic!("record {i}: got {got:?}, model {want:?}"),
        }
        let model_bids: Vec<Level> = bids
            .iter()
            .rev()
            .map(|(&p, &q)| Level { price_raw: p, qty_raw: q })
            .collect();
        let model_asks: Vec<Level> = asks
            .iter()
            .map(|(&p, &q)| Level { price_raw: p, qty_raw: q })
            .collect();
        assert_eq!(book.bids(), &model_bids[..], "bids after record {i}");
        assert_eq!(book.asks(), &model_asks[..], "asks after record {i}");
    }
});
