//! `BookState` against a `BTreeMap` model: random snapshot and delta
//! sequences, small price range (so upserts hit existing levels), small
//! capacity (so capacity errors happen).

use std::collections::BTreeMap;

use floxlog_core::{BookKind, BookState, ErrorKind, Level, Levels};
use proptest::prelude::*;

const CAP: usize = 6;

#[derive(Default, Clone)]
struct Model {
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
}

impl Model {
    /// Spec semantics written the plain way; returns the error kind expected.
    fn apply(&mut self, kind: BookKind, bids: &[Level], asks: &[Level]) -> Option<ErrorKind> {
        let r = self.try_apply(kind, bids, asks);
        if r.is_some() {
            *self = Model::default();
        }
        r
    }

    fn try_apply(&mut self, kind: BookKind, bids: &[Level], asks: &[Level]) -> Option<ErrorKind> {
        if bids.iter().chain(asks).any(|l| l.qty_raw < 0) {
            return Some(ErrorKind::MalformedRecord);
        }
        for (map, levels) in [(&mut self.bids, bids), (&mut self.asks, asks)] {
            match kind {
                BookKind::Snapshot => {
                    if levels.len() > CAP {
                        return Some(ErrorKind::CapacityExceeded);
                    }
                    map.clear();
                    for l in levels {
                        if map.insert(l.price_raw, l.qty_raw).is_some() {
                            return Some(ErrorKind::MalformedRecord);
                        }
                    }
                }
                BookKind::Delta => {
                    for l in levels {
                        if l.qty_raw == 0 {
                            map.remove(&l.price_raw);
                        } else if map.contains_key(&l.price_raw) || map.len() < CAP {
                            map.insert(l.price_raw, l.qty_raw);
                        } else {
                            return Some(ErrorKind::CapacityExceeded);
                        }
                    }
                }
            }
        }
        None
    }

    fn bids(&self) -> Vec<Level> {
        let v = self.bids.iter().rev();
        v.map(|(&p, &q)| Level {
            price_raw: p,
            qty_raw: q,
        })
        .collect()
    }

    fn asks(&self) -> Vec<Level> {
        let v = self.asks.iter();
        v.map(|(&p, &q)| Level {
            price_raw: p,
            qty_raw: q,
        })
        .collect()
    }
}

fn level() -> impl Strategy<Value = Level> {
    // Mostly valid quantities, a few zeros and rare negatives.
    (
        0i64..12,
        prop_oneof![20 => 1i64..5, 6 => Just(0i64), 1 => Just(-1i64)],
    )
        .prop_map(|(p, q)| Level {
            price_raw: p,
            qty_raw: q,
        })
}

fn record() -> impl Strategy<Value = (bool, Vec<Level>, Vec<Level>)> {
    (
        prop::bool::weighted(0.2),
        prop::collection::vec(level(), 0..5),
        prop::collection::vec(level(), 0..5),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn matches_btreemap_model(recs in prop::collection::vec(record(), 1..40)) {
        let (mut b, mut a) = ([Level::default(); CAP], [Level::default(); CAP]);
        let mut st = BookState::new(&mut b, &mut a);
        let mut model = Model::default();
        for (i, (snap, bids, asks)) in recs.iter().enumerate() {
            let kind = if *snap { BookKind::Snapshot } else { BookKind::Delta };
            let want = model.apply(kind, bids, asks);
            let got = st.apply_levels(kind, Levels::Slice(bids), Levels::Slice(asks), i as u64);
            match (want, got) {
                (None, Ok(())) => {}
                (Some(k), Err(e)) => {
                    prop_assert_eq!(e.kind, k);
                    prop_assert_eq!(e.offset, i as u64);
                }
                (w, g) => prop_assert!(false, "record {}: model {:?}, state {:?}", i, w, g),
            }
            prop_assert_eq!(st.bids(), &model.bids()[..]);
            prop_assert_eq!(st.asks(), &model.asks()[..]);
        }
    }
}
