//! The batch trade kernels ([`Reader::next_trades`],
//! [`Reader::next_trade_columns`]) against the per-event reader: the same
//! events, error (kind, offset), event count and position, on random mixes
//! of record types, damaged or not, and on the corpus.

mod common;
use common::*;
use floxlog_core::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// The cursor's state after some events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct State {
    events: u64,
    position: Position,
    next_offset: u64,
}

fn state(r: &Reader<'_, '_>) -> State {
    State {
        events: r.events_read(),
        position: r.position(),
        next_offset: r.next_offset(),
    }
}

/// How a whole read went.
#[derive(Debug, PartialEq)]
struct Outcome {
    events: Vec<String>,
    error: Option<Error>,
    end: State,
    needs_more: bool,
}

fn reader<'a, 's>(
    seg: &Segment<'a>,
    opts: ReadOptions,
    seek: Option<i64>,
    scratch: &'s mut [u8],
) -> Reader<'a, 's> {
    let mut r = seg.reader(opts, scratch);
    if let Some(t) = seek {
        let ix = seg.index().ok().flatten();
        r.seek(ix.as_ref(), t);
    }
    r
}

/// Event by event; also the state after each event.
fn per_event(seg: &Segment<'_>, opts: ReadOptions, seek: Option<i64>) -> (Outcome, Vec<State>) {
    let mut scratch = vec![0u8; 1 << 22];
    let mut r = reader(seg, opts, seek, &mut scratch);
    let (mut events, mut states) = (Vec::new(), Vec::new());
    let error = loop {
        match r.next_event() {
            Ok(Some(ev)) => events.push(format!("{ev:?}")),
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
        states.push(state(&r));
    };
    let out = Outcome {
        events,
        error,
        end: state(&r),
        needs_more: r.needs_more(),
    };
    (out, states)
}

/// Owned columns for [`TradeColumns`].
#[derive(Default)]
struct Cols {
    ts: Vec<i64>,
    recv: Vec<i64>,
    price: Vec<i64>,
    qty: Vec<i64>,
    id: Vec<u64>,
    sym: Vec<u32>,
    side: Vec<u8>,
    ins: Vec<u8>,
    ex: Vec<u16>,
}

impl Cols {
    fn new(n: usize) -> Cols {
        Cols {
            ts: vec![0; n],
            recv: vec![0; n],
            price: vec![0; n],
            qty: vec![0; n],
            id: vec![0; n],
            sym: vec![0; n],
            side: vec![0; n],
            ins: vec![0; n],
            ex: vec![0; n],
        }
    }

    /// Columns of `cap` rows (the last one one row longer, so the shortest
    /// sets the capacity).
    fn view(&mut self, cap: usize) -> TradeColumns<'_> {
        TradeColumns {
            exchange_ts_ns: &mut self.ts[..cap],
            recv_ts_ns: &mut self.recv[..cap],
            price_raw: &mut self.price[..cap],
            qty_raw: &mut self.qty[..cap],
            trade_id: &mut self.id[..cap],
            symbol_id: &mut self.sym[..cap],
            side: &mut self.side[..cap],
            instrument: &mut self.ins[..cap],
            exchange_id: &mut self.ex[..cap + 1],
        }
    }

    fn row(&self, i: usize) -> Trade {
        Trade {
            exchange_ts_ns: self.ts[i],
            recv_ts_ns: self.recv[i],
            price_raw: self.price[i],
            qty_raw: self.qty[i],
            trade_id: self.id[i],
            symbol_id: self.sym[i],
            side: self.side[i],
            instrument: self.ins[i],
            exchange_id: self.ex[i],
        }
    }
}

/// Batches of trades (sizes cycling through `caps`, into rows or
/// columns), other types through the per-event call; checks the state
/// after each batch against `states`.
fn batched(
    seg: &Segment<'_>,
    opts: ReadOptions,
    seek: Option<i64>,
    caps: &[usize],
    columns: bool,
    states: &[State],
) -> Outcome {
    let mut scratch = vec![0u8; 1 << 22];
    let mut r = reader(seg, opts, seek, &mut scratch);
    let most = caps.iter().copied().max().unwrap_or(1);
    let mut rows = vec![Trade::default(); most];
    let mut cols = Cols::new(most + 1);
    let mut events = Vec::new();
    let mut caps = caps.iter().copied().cycle();
    let error = loop {
        let cap = caps.next().unwrap_or(1);
        let b = if columns {
            r.next_trade_columns(&mut cols.view(cap))
        } else {
            r.next_trades(&mut rows[..cap])
        };
        assert!(b.count <= cap);
        events.extend((0..b.count).map(|i| {
            let t = if columns { cols.row(i) } else { rows[i] };
            format!("{:?}", Event::Trade(t))
        }));
        let k = events.len();
        if b.count > 0 && !matches!(b.stop, TradeStop::Error(_)) {
            let (got, want) = (state(&r), states[k - 1]);
            assert_eq!((got.events, got.position), (want.events, want.position));
            if b.stop == TradeStop::Full {
                assert_eq!(got.next_offset, want.next_offset, "after {k} events");
            }
        }
        match b.stop {
            TradeStop::Full => assert_eq!(b.count, cap),
            TradeStop::End => break None,
            TradeStop::Error(e) => break Some(e),
            TradeStop::OtherType => match r.next_event() {
                Ok(Some(ev)) => {
                    assert!(!matches!(ev, Event::Trade(_)), "OtherType before a trade");
                    events.push(format!("{ev:?}"));
                }
                Ok(None) => panic!("OtherType at the end"),
                Err(e) => break Some(e),
            },
        }
    };
    let end = state(&r);
    // Done for good, through both calls.
    let again = r.next_trades(&mut rows[..1]);
    assert_eq!((again.count, again.stop), (0, TradeStop::End));
    assert!(matches!(r.next_event(), Ok(None)));
    Outcome {
        events,
        error,
        end,
        needs_more: r.needs_more(),
    }
}

/// Every batched way of reading `data` agrees with the per-event reader.
fn check(data: &[u8], opts: ReadOptions, seek: Option<i64>, caps: &[usize]) {
    let Ok(seg) = Segment::parse(data) else {
        return;
    };
    let (want, states) = per_event(&seg, opts, seek);
    for columns in [false, true] {
        let got = batched(&seg, opts, seek, caps, columns, &states);
        assert_eq!(
            got, want,
            "opts {opts:?} seek {seek:?} caps {caps:?} columns {columns}"
        );
    }
}

const LEVELS: [Level; 3] = [
    Level {
        price_raw: 5,
        qty_raw: 6,
    },
    Level {
        price_raw: 7,
        qty_raw: 8,
    },
    Level {
        price_raw: 9,
        qty_raw: 0,
    },
];
const POOL: [u8; 5] = [1, 2, 3, 4, 5];

/// Event `kind` (mostly trades) at timestamp `ts`.
fn event(kind: u8, ts: i64) -> Event<'static> {
    let sym = (ts % 5) as u32;
    match kind {
        0..=5 => Event::Trade(trade(ts, sym)),
        6 => Event::Book(Book {
            kind: BookKind::Snapshot,
            exchange_ts_ns: ts,
            recv_ts_ns: ts,
            seq: ts,
            symbol_id: sym,
            header_type: 0,
            instrument: 0,
            exchange_id: 1,
            bids: Levels::Slice(&LEVELS[..2]),
            asks: Levels::Slice(&LEVELS[1..]),
        }),
        7 => Event::OptionQuote(OptionQuote {
            exchange_ts_ns: ts,
            symbol_id: sym,
            ..OptionQuote::default()
        }),
        _ => Event::PoolState(PoolState {
            exchange_ts_ns: ts,
            recv_ts_ns: ts,
            symbol_id: sym,
            sub_type: 0,
            venue: 0,
            exchange_id: 1,
            payload: &POOL,
        }),
    }
}

/// Frame offsets of an uncompressed segment's frame area.
fn frames(seg: &[u8]) -> Vec<usize> {
    let mut v = Vec::new();
    let mut at = SegmentHeader::LEN;
    while at + FrameHeader::LEN <= seg.len() {
        let h = FrameHeader::parse(&seg[at..], 0).unwrap();
        let end = at + FrameHeader::LEN + h.size as usize;
        if &seg[at..at + 4] == b"INDX" || h.size < 41 || end > seg.len() {
            break;
        }
        v.push(at);
        at = end;
    }
    v
}

/// Damage to the frame at `at` (uncompressed), or the byte at `at`.
#[derive(Clone, Copy, Debug)]
enum Damage {
    Payload,
    Crc,
    Flags,
    RecVersion,
    UnknownType,
    TypeToBook,
    SizeMinusOne,
    Byte(u8),
}

fn damage(seg: &mut [u8], compressed: bool, pick: prop::sample::Index, d: Damage) {
    let fr = frames(seg);
    if compressed || fr.is_empty() {
        let i = pick.index(seg.len());
        let x = match d {
            Damage::Byte(x) => x,
            _ => 0x40,
        };
        seg[i] ^= x;
        return;
    }
    let at = fr[pick.index(fr.len())];
    match d {
        Damage::Payload => seg[at + FrameHeader::LEN] ^= 1,
        Damage::Crc => seg[at + frame::field::CRC32 + 2] ^= 0x10,
        Damage::Flags => seg[at + frame::field::FLAGS] = 1,
        Damage::RecVersion => seg[at + frame::field::REC_VERSION] = 2,
        Damage::UnknownType => seg[at + frame::field::TYPE] = 9,
        Damage::TypeToBook => seg[at + frame::field::TYPE] = 2,
        Damage::SizeMinusOne => seg[at] = seg[at].wrapping_sub(1),
        Damage::Byte(x) => seg[at + 1 + (x as usize % 40)] ^= x,
    }
}

fn damage_kind() -> impl Strategy<Value = Damage> {
    prop_oneof![
        Just(Damage::Payload),
        Just(Damage::Crc),
        Just(Damage::Flags),
        Just(Damage::RecVersion),
        Just(Damage::UnknownType),
        Just(Damage::TypeToBook),
        Just(Damage::SizeMinusOne),
        (1u8..=255).prop_map(Damage::Byte),
    ]
}

fn caps() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop::sample::select(vec![1usize, 3, 4, 5, 7, 4096]), 1..4)
}

fn opts() -> impl Strategy<Value = ReadOptions> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(crc, skip, tail)| ReadOptions {
        verify_crc: crc,
        unknown_types: if skip {
            UnknownTypes::Skip
        } else {
            UnknownTypes::Reject
        },
        tail,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn batches_match_the_per_event_reader(
        kinds in prop::collection::vec(0u8..9, 0..300),
        lz4 in any::<bool>(),
        interval in 1u16..40,
        index in any::<bool>(),
        hurt in prop::collection::vec((any::<prop::sample::Index>(), damage_kind()), 0..3),
        cut in prop::option::of(any::<prop::sample::Index>()),
        opts in opts(),
        seek in prop::option::of(900i64..1400),
        caps in caps(),
    ) {
        let compressed = lz4 && LZ4_SUPPORTED;
        let events: Vec<Event> = kinds
            .iter()
            .enumerate()
            .map(|(i, &k)| event(k, 1_000 + i as i64 + (i as i64 % 3)))
            .collect();
        let cfg = WriterConfig {
            compression: if compressed { Compression::Lz4 } else { Compression::None },
            create_index: index,
            index_interval: interval,
            ..WriterConfig::default()
        };
        let mut seg = write_all(cfg, &events);
        for (pick, d) in hurt {
            damage(&mut seg, compressed, pick, d);
        }
        if let Some(c) = cut {
            let len = SegmentHeader::LEN + c.index(seg.len() - SegmentHeader::LEN + 1);
            seg.truncate(len);
        }
        check(&seg, opts, seek, &caps);
    }
}

/// Every option combination and a few batch sizes over `data`.
fn check_all_ways(data: &[u8]) {
    for crc in [true, false] {
        for unknown in [UnknownTypes::Reject, UnknownTypes::Skip] {
            for tail in [false, true] {
                let opts = ReadOptions {
                    verify_crc: crc,
                    unknown_types: unknown,
                    tail,
                };
                for caps in [&[1usize][..], &[3, 4, 5], &[7], &[4096]] {
                    check(data, opts, None, caps);
                }
            }
        }
    }
}

/// Segment files under the corpus directory (`FLOXLOG_CONFORMANCE_DIR` or
/// the repository's `conformance/`).
fn corpus_segments() -> Vec<PathBuf> {
    let root = std::env::var_os("FLOXLOG_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance"));
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "floxlog") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn corpus_batches_match_the_per_event_reader() {
    let files = corpus_segments();
    assert!(files.len() >= 10, "corpus not found: {files:?}");
    for p in &files {
        let data = std::fs::read(p).unwrap();
        check_all_ways(&data);
    }
}

#[test]
fn a_batch_stops_before_another_type_and_leaves_it() {
    for compression in codecs() {
        let events: Vec<Event> = [0, 0, 6, 0, 7, 7, 0]
            .iter()
            .enumerate()
            .map(|(i, &k)| event(k, 1_000 + i as i64))
            .collect();
        let cfg = WriterConfig {
            compression,
            index_interval: 3,
            ..WriterConfig::default()
        };
        let seg = write_all(cfg, &events);
        let s = Segment::parse(&seg).unwrap();
        let mut scratch = vec![0u8; 1 << 16];
        let mut r = s.reader(ReadOptions::default(), &mut scratch);
        let mut out = [Trade::default(); 8];
        let b = r.next_trades(&mut out);
        assert_eq!((b.count, b.stop), (2, TradeStop::OtherType));
        assert_eq!(out[1], trade(1_001, 1_001 % 5));
        assert!(matches!(r.next_event(), Ok(Some(Event::Book(_)))));
        let b = r.next_trades(&mut out);
        assert_eq!((b.count, b.stop), (1, TradeStop::OtherType));
        assert_eq!(r.next_trades(&mut out[..0]).stop, TradeStop::Full);
        assert!(matches!(r.next_event(), Ok(Some(Event::OptionQuote(_)))));
        assert_eq!(r.next_trades(&mut out).stop, TradeStop::OtherType);
        assert!(matches!(r.next_event(), Ok(Some(Event::OptionQuote(_)))));
        let b = r.next_trades(&mut out);
        assert_eq!((b.count, b.stop), (1, TradeStop::End));
        assert_eq!(r.events_read(), 7);
    }
}

#[test]
fn a_crc_error_comes_after_the_good_trades_at_its_frame() {
    let events: Vec<Event> = (0..10).map(|i| event(0, 1_000 + i)).collect();
    let mut seg = write_all(WriterConfig::default(), &events);
    let at = frames(&seg)[6];
    seg[at + FrameHeader::LEN + 3] ^= 1;
    let s = Segment::parse(&seg).unwrap();
    let mut r = s.reader(ReadOptions::default(), &mut []);
    let mut out = [Trade::default(); 64];
    let b = r.next_trades(&mut out);
    assert_eq!(b.count, 6);
    let TradeStop::Error(e) = b.stop else {
        panic!("{b:?}")
    };
    assert_eq!((e.kind, e.offset), (ErrorKind::CrcMismatch, at as u64));
    assert_eq!((r.events_read(), r.next_offset()), (6, at as u64));
}
