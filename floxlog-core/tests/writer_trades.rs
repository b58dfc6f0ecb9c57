//! The trade batch encoder ([`SegmentWriter::append_trades`]) against the
//! per-event path (`append(&Event::Trade(..))` one by one): the same bytes,
//! stats, final header and errors (kind, offset, count) over random trades,
//! both profiles, index intervals, deferred sizes, and output and index
//! storage that runs out.

mod common;
use common::*;
use floxlog_core::*;
use proptest::prelude::*;

/// What a whole run gave: the segment bytes drained, each error (trades
/// appended before it, kind, offset), the stats after every call, and the
/// final header.
#[derive(Debug, PartialEq)]
struct Run {
    file: Vec<u8>,
    errors: Vec<(usize, ErrorKind, u64)>,
    stats: Vec<WriterStats>,
    header: Option<[u8; 64]>,
}

/// Appends `trades` in calls of `batches` (cycled), by the batch encoder
/// or one by one: an error of a full output drains it and goes on; any
/// other error skips the trade it names.
fn run(
    cfg: WriterConfig,
    defer: bool,
    trades: &[Trade],
    batches: &[usize],
    out: usize,
    index: usize,
    batched: bool,
) -> Run {
    let mut b = Bufs::new(out, 0, 0, index);
    let mut w = SegmentWriter::new(cfg, b.borrow()).unwrap();
    w.defer_size(defer);
    let mut r = Run {
        file: Vec::new(),
        errors: Vec::new(),
        stats: Vec::new(),
        header: None,
    };
    let mut i = 0;
    for &size in batches.iter().cycle() {
        if i >= trades.len() {
            break;
        }
        let part = &trades[i..(i + size.max(1)).min(trades.len())];
        let (n, res) = if batched {
            w.append_trades(part)
        } else {
            let mut n = 0;
            let mut res = Ok(());
            for t in part {
                if let Err(e) = w.append(&Event::Trade(*t)) {
                    res = Err(e);
                    break;
                }
                n += 1;
            }
            (n, res)
        };
        i += n;
        r.stats.push(w.stats());
        if let Err(e) = res {
            r.errors.push((i, e.kind, e.offset));
            if e.kind == ErrorKind::BufferTooSmall && !w.pending().is_empty() {
                r.file.extend_from_slice(w.pending());
                w.consume(w.pending().len());
            } else {
                i += 1;
            }
        }
    }
    loop {
        match w.finish() {
            Ok(h) => {
                r.header = Some(h);
                break;
            }
            Err(e) if e.kind == ErrorKind::BufferTooSmall && !w.pending().is_empty() => {
                r.file.extend_from_slice(w.pending());
                w.consume(w.pending().len());
            }
            Err(e) => {
                r.errors.push((usize::MAX, e.kind, e.offset));
                break;
            }
        }
    }
    r.file.extend_from_slice(w.pending());
    r
}

fn arb_trade() -> impl Strategy<Value = Trade> {
    (
        prop_oneof![Just(0i64), -5i64..5, 1_000i64..1_100, any::<i64>()],
        any::<i64>(),
        0u32..40,
        any::<u64>(),
        any::<u8>(),
    )
        .prop_map(|(ts, p, sym, id, side)| Trade {
            exchange_ts_ns: ts,
            recv_ts_ns: ts.wrapping_add(7),
            price_raw: p,
            qty_raw: p.wrapping_mul(3),
            trade_id: id,
            symbol_id: sym,
            side,
            instrument: side.wrapping_add(1),
            exchange_id: sym as u16,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn batch_encoder_writes_what_single_appends_write(
        trades in prop::collection::vec(arb_trade(), 0..300),
        batches in prop::collection::vec(1usize..40, 1..6),
        spec in any::<bool>(),
        create_index in any::<bool>(),
        interval in 1u16..12,
        defer in any::<bool>(),
        out in prop_oneof![Just(1usize << 16), 64usize..700],
        index in prop_oneof![Just(1usize << 10), 0usize..6],
    ) {
        let cfg = WriterConfig {
            create_index,
            index_interval: interval,
            created_ns: 9,
            exchange_id: 2,
            profile: if spec { Profile::Spec } else { Profile::Reference },
            ..WriterConfig::default()
        };
        let one = run(cfg, defer, &trades, &batches, out, index, false);
        let batch = run(cfg, defer, &trades, &batches, out, index, true);
        prop_assert_eq!(batch, one);
    }
}

/// The spec profile counts at most SYMBOL_CAPACITY symbols: the batch stops
/// at the first trade whose new symbol does not fit, with the per-event
/// error, and goes on with known symbols.
#[test]
fn batch_encoder_stops_at_a_symbol_the_table_cannot_count() {
    let cfg = WriterConfig {
        profile: Profile::Spec,
        ..WriterConfig::default()
    };
    let mut trades: Vec<Trade> = (0..SYMBOL_CAPACITY as i64 + 50)
        .map(|i| trade(1_000 + i, i as u32))
        .collect();
    trades.push(trade(5_000_000, 3));
    let out = 1 << 20;
    let one = run(cfg, false, &trades, &[300, 7], out, 1 << 12, false);
    let batch = run(cfg, false, &trades, &[300, 7], out, 1 << 12, true);
    assert_eq!(one.errors.len(), 50);
    assert_eq!(one.errors[0].1, ErrorKind::SymbolCapacity);
    assert_eq!(batch, one);
}

/// A finished writer, and LZ4 segments, take the per-event path: the same
/// errors and bytes.
#[test]
fn batch_encoder_after_finish_and_under_lz4() {
    let trades: Vec<Trade> = (0..100).map(|i| trade(1_000 + i, 1)).collect();
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(WriterConfig::default(), b.borrow()).unwrap();
    assert_eq!(w.append_trades(&trades[..10]).0, 10);
    w.finish().unwrap();
    let (n, r) = w.append_trades(&trades[10..]);
    assert_eq!((n, r.unwrap_err().kind), (0, ErrorKind::Finished));
    #[cfg(feature = "lz4")]
    {
        let cfg = WriterConfig {
            compression: Compression::Lz4,
            index_interval: 16,
            ..WriterConfig::default()
        };
        let events: Vec<Event<'static>> = trades.iter().map(|t| Event::Trade(*t)).collect();
        let want = write_all(cfg, &events);
        let mut b = Bufs::big();
        let mut w = SegmentWriter::new(cfg, b.borrow()).unwrap();
        assert_eq!(w.append_trades(&trades).0, 100);
        let h = w.finish().unwrap();
        let mut got = w.pending().to_vec();
        got[..64].copy_from_slice(&h);
        assert_eq!(got, want);
    }
}
