//! Property tests: arbitrary events round-trip; arbitrary bytes and
//! mutations of valid segments never panic, always end in Ok or a typed
//! error, and never yield an event that was not written.

mod common;
use common::*;
use floxlog_core::*;
use proptest::prelude::*;

/// An event with owned levels / payload, so strategies can produce it.
#[derive(Clone, Debug)]
enum Ev {
    Trade(Trade),
    Book(BookKind, [i64; 3], u32, u8, u8, u16, Vec<Level>, Vec<Level>),
    Quote(OptionQuote),
    Pool(i64, i64, u32, u8, u8, u16, Vec<u8>),
}

impl Ev {
    fn event(&self) -> Event<'_> {
        match self {
            Ev::Trade(t) => Event::Trade(*t),
            Ev::Quote(q) => Event::OptionQuote(*q),
            Ev::Book(kind, [ts, recv, seq], sym, ht, ins, ex, bids, asks) => Event::Book(Book {
                kind: *kind,
                exchange_ts_ns: *ts,
                recv_ts_ns: *recv,
                seq: *seq,
                symbol_id: *sym,
                header_type: *ht,
                instrument: *ins,
                exchange_id: *ex,
                bids: Levels::Slice(bids),
                asks: Levels::Slice(asks),
            }),
            Ev::Pool(ts, recv, sym, sub, venue, ex, payload) => Event::PoolState(PoolState {
                exchange_ts_ns: *ts,
                recv_ts_ns: *recv,
                symbol_id: *sym,
                sub_type: *sub,
                venue: *venue,
                exchange_id: *ex,
                payload,
            }),
        }
    }
}

fn ts() -> impl Strategy<Value = i64> {
    prop_oneof![0i64..1000, any::<i64>()]
}

fn level() -> impl Strategy<Value = Level> {
    (any::<i64>(), any::<i64>()).prop_map(|(price_raw, qty_raw)| Level { price_raw, qty_raw })
}

fn ev() -> impl Strategy<Value = Ev> {
    let trade = (
        ts(),
        any::<i64>(),
        any::<i64>(),
        any::<i64>(),
        any::<u64>(),
        any::<u32>(),
        any::<u8>(),
        any::<u8>(),
        any::<u16>(),
    )
        .prop_map(|(a, b, c, d, e, f, g, h, i)| {
            Ev::Trade(Trade {
                exchange_ts_ns: a,
                recv_ts_ns: b,
                price_raw: c,
                qty_raw: d,
                trade_id: e,
                symbol_id: f,
                side: g,
                instrument: h,
                exchange_id: i,
            })
        });
    let book = (
        any::<bool>(),
        any::<bool>(),
        (ts(), any::<i64>(), any::<i64>()),
        any::<u32>(),
        any::<u8>(),
        any::<u16>(),
        prop::collection::vec(level(), 0..6),
        prop::collection::vec(level(), 0..6),
    )
        .prop_map(|(snap, spec_ty, (t, r, s), sym, ins, ex, bids, asks)| {
            let kind = if snap {
                BookKind::Snapshot
            } else {
                BookKind::Delta
            };
            let ht = if spec_ty {
                kind.frame_type()
            } else {
                kind.flox_header_type()
            };
            Ev::Book(kind, [t, r, s], sym, ht, ins, ex, bids, asks)
        });
    let quote = (
        ts(),
        prop::array::uniform12(any::<i64>()),
        any::<u32>(),
        any::<u8>(),
        any::<u16>(),
    )
        .prop_map(|(t, v, sym, ins, ex)| {
            Ev::Quote(OptionQuote {
                exchange_ts_ns: t,
                recv_ts_ns: v[0],
                mark_price_raw: v[1],
                index_price_raw: v[2],
                underlying_price_raw: v[3],
                iv_raw: v[4],
                bid_price_raw: v[5],
                ask_price_raw: v[6],
                bid_size_raw: v[7],
                ask_size_raw: v[8],
                bid_iv_raw: v[9],
                ask_iv_raw: v[10],
                open_interest_raw: v[11],
                symbol_id: sym,
                instrument: ins,
                exchange_id: ex,
            })
        });
    let pool = (
        ts(),
        any::<i64>(),
        any::<u32>(),
        any::<u8>(),
        any::<u8>(),
        any::<u16>(),
        prop::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(t, r, s, sub, v, ex, p)| Ev::Pool(t, r, s, sub, v, ex, p));
    prop_oneof![4 => trade, 3 => book, 1 => quote, 1 => pool]
}

fn cfg() -> impl Strategy<Value = WriterConfig> {
    (any::<bool>(), any::<bool>(), 1u16..40, any::<bool>()).prop_map(|(z, idx, iv, spec)| {
        WriterConfig {
            compression: if z && LZ4_SUPPORTED {
                Compression::Lz4
            } else {
                Compression::None
            },
            create_index: idx,
            index_interval: iv,
            exchange_id: 1,
            created_ns: 5,
            profile: if spec {
                Profile::Spec
            } else {
                Profile::Reference
            },
        }
    })
}

/// What a reader must return: file order, LZ4 blocks stably sorted.
fn expected(cfg: &WriterConfig, evs: &[Event<'_>]) -> Vec<String> {
    let mut v: Vec<Event> = evs.to_vec();
    if cfg.compression == Compression::Lz4 {
        for chunk in v.chunks_mut(cfg.index_interval as usize) {
            chunk.sort_by_key(|e| e.exchange_ts_ns());
        }
    }
    v.iter()
        .map(|e| {
            // Under the spec profile books come back with header type 2/3.
            let mut e = *e;
            if let (Event::Book(b), Profile::Spec) = (&mut e, cfg.profile) {
                b.header_type = b.kind.frame_type();
            }
            format!("{e:?}")
        })
        .collect()
}

/// Reads with every API path and never panics; returns the events.
fn read_everything(data: &[u8], t: i64) -> Vec<String> {
    let lax = ReadOptions {
        verify_crc: false,
        unknown_types: UnknownTypes::Skip,
        ..ReadOptions::default()
    };
    let _ = read_all(data, lax);
    if let Ok(s) = Segment::parse(data) {
        let ix = s.index().ok().flatten();
        if let Some(ix) = &ix {
            let _ = ix.seek(t);
            let _ = ix.iter().count();
        }
        let mut scratch = vec![0u8; 1 << 16];
        let mut r = s.reader(ReadOptions::default(), &mut scratch);
        r.seek(ix.as_ref(), t);
        while let Ok(Some(_)) = r.next_item() {}
    }
    let (v, _) = read_all(data, ReadOptions::default());
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn events_round_trip(cfg in cfg(), evs in prop::collection::vec(ev(), 0..80)) {
        let events: Vec<Event> = evs.iter().map(Ev::event).collect();
        let seg = write_all(cfg, &events);
        let (got, err) = read_all(&seg, ReadOptions::default());
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, expected(&cfg, &events));
        let s = Segment::parse(&seg).unwrap();
        prop_assert_eq!(s.header().event_count as usize, events.len());
        let ix = s.index().unwrap();
        prop_assert_eq!(ix.is_some(), cfg.create_index && !events.is_empty());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..3000), t in any::<i64>()) {
        read_everything(&bytes, t);
        // The same bytes behind a valid header, to reach frame and block parsing.
        for compressed in [false, LZ4_SUPPORTED] {
            let mut seg = write_all(WriterConfig {
                compression: if compressed { Compression::Lz4 } else { Compression::None },
                create_index: false,
                ..WriterConfig::default()
            }, &[]);
            seg.extend_from_slice(&bytes);
            read_everything(&seg, t);
        }
    }

    #[test]
    fn mutations_yield_a_prefix_or_a_typed_error(
        cfg in cfg(),
        evs in prop::collection::vec(ev(), 1..40),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..2),
        cut in any::<prop::sample::Index>(),
        t in any::<i64>(),
    ) {
        let events: Vec<Event> = evs.iter().map(Ev::event).collect();
        let seg = write_all(cfg, &events);
        let (clean, _) = read_all(&seg, ReadOptions::default());

        let mut bad = seg.clone();
        for (at, x) in &flips {
            let i = at.index(bad.len());
            bad[i] ^= x;
        }
        let got = read_everything(&bad, t);
        prop_assert!(got.len() <= clean.len() && got[..] == clean[..got.len()],
            "a single flip yielded events that were not written");

        let cut = cut.index(seg.len() + 1);
        let got = read_everything(&seg[..cut], t);
        prop_assert!(got.len() <= clean.len() && got[..] == clean[..got.len()]);
    }
}
