//! Synthetic market data: a busy market of a few symbols, trades and book
//! updates (a snapshot per symbol every second, deltas in between), with a
//! deterministic random walk. Used by `floxlog demo` and for benchmarks.
//!
//! [`mixed_event`] is a second, random-access stream of every record type
//! (trades, book snapshots and deltas, option quotes, pool states) for
//! tests that must know event `i` exactly, such as the crash test.

use crate::owned::{OwnedBook, OwnedEvent, OwnedPoolState};
use floxlog_core::consts::{instrument, pool_sub_type};
use floxlog_core::{Book, BookKind, Event, Level, Levels, OptionQuote, PoolState, Trade};
use std::collections::BTreeMap;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct SynthConfig {
    /// Trades.
    pub trades: u64,
    /// Book deltas (snapshots come on top: one per symbol per second).
    pub book_deltas: u64,
    /// Start of the session, ns.
    pub start_ns: i64,
    /// Length of the session, ns.
    pub duration_ns: i64,
    /// Levels per side in snapshots.
    pub depth: usize,
    /// Exchange tag stamped in the records.
    pub exchange_id: u16,
    /// PRNG seed.
    pub seed: u64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            trades: 60_000,
            book_deltas: 40_000,
            start_ns: 1_714_123_456_000_000_000,
            duration_ns: 5_000_000_000,
            depth: 20,
            exchange_id: 1,
            seed: 0x5eed,
        }
    }
}

/// The symbols of the synthetic market: (id, name, mid price, tick), prices
/// in raw fixed-point (1e8).
pub const SYMBOLS: [(u32, &str, i64, i64); 3] = [
    (1, "BTCUSDT", 65_000 * 100_000_000, 10_000_000),
    (2, "ETHUSDT", 3_200 * 100_000_000, 1_000_000),
    (3, "SOLUSDT", 150 * 100_000_000, 100_000),
];

/// xorshift64*: the small deterministic generator behind [`generate`] and
/// [`mixed_event`], public so that tests can draw reproducible choices of
/// their own (the crash test's seeds and kill delays).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (its low bit set: the state must
    /// never be zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// In `[0, n)` (0 if `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Calls `f` with every event, in timestamp order.
// Long but kept whole: one loop over the session, its state (mids, books,
// sequence numbers) in locals that every branch updates.
pub fn generate<E>(
    cfg: &SynthConfig,
    mut f: impl FnMut(&Event<'_>) -> Result<(), E>,
) -> Result<u64, E> {
    let mut rng = Rng::new(cfg.seed);
    let mut mids: Vec<i64> = SYMBOLS.iter().map(|s| s.2).collect();
    let total = cfg.trades + cfg.book_deltas;
    let step = (cfg.duration_ns / total.max(1) as i64).max(1);
    let (mut trades_left, mut deltas_left) = (cfg.trades, cfg.book_deltas);
    let mut next_snapshot = cfg.start_ns;
    let mut seq = 0i64;
    let mut trade_id = 1u64;
    let mut ts = cfg.start_ns;
    let mut n = 0u64;
    let mut bids = Vec::with_capacity(cfg.depth);
    let mut asks = Vec::with_capacity(cfg.depth);
    // Each symbol's book as replayed (bids, asks: price to qty), and the
    // levels a delta removes from the side it does not add to.
    let mut books: Vec<(BTreeMap<i64, i64>, BTreeMap<i64, i64>)> =
        vec![Default::default(); SYMBOLS.len()];
    let mut removed: Vec<Level> = Vec::new();
    let ex = cfg.exchange_id;
    while trades_left + deltas_left > 0 {
        if ts >= next_snapshot {
            for (i, s) in SYMBOLS.iter().enumerate() {
                bids.clear();
                asks.clear();
                for k in 0..cfg.depth as i64 {
                    let q = (1 + rng.below(500)) as i64 * 1_000_000;
                    bids.push(Level {
                        price_raw: mids[i] - (k + 1) * s.3,
                        qty_raw: q,
                    });
                    asks.push(Level {
                        price_raw: mids[i] + (k + 1) * s.3,
                        qty_raw: q,
                    });
                }
                books[i].0 = bids.iter().map(|l| (l.price_raw, l.qty_raw)).collect();
                books[i].1 = asks.iter().map(|l| (l.price_raw, l.qty_raw)).collect();
                seq += 1;
                f(&Event::Book(book(
                    BookKind::Snapshot,
                    [ts, ts + 150_000, seq],
                    s.0,
                    ex,
                    &bids,
                    &asks,
                )))?;
                n += 1;
            }
            next_snapshot += 1_000_000_000;
        }
        let i = rng.below(SYMBOLS.len() as u64) as usize;
        let (sym, _, _, tick) = SYMBOLS[i];
        // Random walk of the mid, one tick at a time.
        match rng.below(8) {
            0 => mids[i] += tick,
            1 => mids[i] -= tick,
            _ => {}
        }
        let latency = 50_000 + rng.below(400_000) as i64;
        let pick_trade = deltas_left == 0
            || (trades_left > 0 && rng.below(trades_left + deltas_left) < trades_left);
        if pick_trade {
            let side = rng.below(2) as u8;
            let price = if side == 0 {
                mids[i] + tick
            } else {
                mids[i] - tick
            };
            f(&Event::Trade(Trade {
                exchange_ts_ns: ts,
                recv_ts_ns: ts + latency,
                price_raw: price,
                qty_raw: (1 + rng.below(2_000)) as i64 * 100_000,
                trade_id,
                symbol_id: sym,
                side,
                instrument: 1,
                exchange_id: cfg.exchange_id,
            }))?;
            trade_id += 1;
            trades_left -= 1;
        } else {
            let k = 1 + rng.below(cfg.depth.max(1) as u64) as i64;
            let q = if rng.below(5) == 0 {
                0
            } else {
                (1 + rng.below(500)) as i64 * 1_000_000
            };
            let lv = Level {
                price_raw: if rng.below(2) == 0 {
                    mids[i] - k * tick
                } else {
                    mids[i] + k * tick
                },
                qty_raw: q,
            };
            // The mid has walked since older levels were placed: the same
            // delta removes the other side's levels the new one would
            // cross, so the replayed book is never crossed.
            let is_bid = lv.price_raw < mids[i];
            let (bid_side, ask_side) = &mut books[i];
            let (own, other) = if is_bid {
                (bid_side, ask_side)
            } else {
                (ask_side, bid_side)
            };
            removed.clear();
            other.retain(|&p, _| {
                let crossed = if is_bid {
                    p <= lv.price_raw
                } else {
                    p >= lv.price_raw
                };
                if crossed {
                    removed.push(Level {
                        price_raw: p,
                        qty_raw: 0,
                    });
                }
                !crossed
            });
            if q == 0 {
                own.remove(&lv.price_raw);
            } else {
                own.insert(lv.price_raw, q);
            }
            let added = [lv];
            let (b, a): (&[Level], &[Level]) = if is_bid {
                (&added, &removed)
            } else {
                (&removed, &added)
            };
            seq += 1;
            f(&Event::Book(book(
                BookKind::Delta,
                [ts, ts + latency, seq],
                sym,
                ex,
                b,
                a,
            )))?;
            deltas_left -= 1;
        }
        n += 1;
        ts += step;
    }
    Ok(n)
}

fn book<'a>(
    kind: BookKind,
    t: [i64; 3],
    sym: u32,
    ex: u16,
    bids: &'a [Level],
    asks: &'a [Level],
) -> Book<'a> {
    Book {
        kind,
        exchange_ts_ns: t[0],
        recv_ts_ns: t[1],
        seq: t[2],
        symbol_id: sym,
        header_type: kind.flox_header_type(),
        instrument: 1,
        exchange_id: ex,
        bids: Levels::Slice(bids),
        asks: Levels::Slice(asks),
    }
}

/// Start of the [`mixed_event`] stream, ns.
pub const MIXED_START_NS: i64 = 1_714_123_456_000_000_000;

/// Nanoseconds between consecutive [`mixed_event`]s, before jitter.
pub const MIXED_STEP_NS: i64 = 1_000;

/// Largest jitter of a [`mixed_event`] timestamp, ns (either way): events
/// up to 5 positions apart can come out of timestamp order, as in a feed
/// merged from several connections.
pub const MIXED_JITTER_NS: i64 = 2_500;

/// splitmix64: a well-mixed 64-bit hash, to seed one event's generator.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Event `i` of the reproducible mixed stream `seed`: a pure function of
/// `(seed, i)`, so a checker can recompute any event without replaying the
/// stream.
///
/// About 40% trades, 30% book deltas (one level), 5% book snapshots (1 to
/// 10 levels a side), 15% option quotes and 10% pool states (0 to 159
/// payload bytes), so frames range from 44 to a few hundred bytes. The
/// timestamp of event `i` is `MIXED_START_NS + i * MIXED_STEP_NS` plus a
/// jitter of up to `MIXED_JITTER_NS` either way, so timestamps sometimes
/// go backwards (the LZ4 writer's in-block sort then reorders them).
// Long but kept whole: one match arm per record type, a table of the mix.
pub fn mixed_event(seed: u64, i: u64) -> OwnedEvent {
    let mut rng = Rng::new(mix(mix(seed) ^ i));
    let jitter = rng.below(2 * MIXED_JITTER_NS as u64 + 1) as i64 - MIXED_JITTER_NS;
    let ts = MIXED_START_NS + i as i64 * MIXED_STEP_NS + jitter;
    let recv = ts + 50_000 + rng.below(400_000) as i64;
    let (sym, _, mid, tick) = SYMBOLS[rng.below(SYMBOLS.len() as u64) as usize];
    let mid = mid + (rng.below(41) as i64 - 20) * tick;
    let exchange_id = 1;
    match rng.below(100) {
        0..=39 => {
            let side = rng.below(2) as u8;
            OwnedEvent::Trade(Trade {
                exchange_ts_ns: ts,
                recv_ts_ns: recv,
                price_raw: if side == 0 { mid + tick } else { mid - tick },
                qty_raw: (1 + rng.below(2_000)) as i64 * 100_000,
                trade_id: i + 1,
                symbol_id: sym,
                side,
                instrument: instrument::PERP,
                exchange_id,
            })
        }
        40..=74 => {
            let snapshot = rng.below(7) == 0;
            let (kind, depth) = if snapshot {
                (BookKind::Snapshot, 1 + rng.below(10) as i64)
            } else {
                (BookKind::Delta, 1)
            };
            let level = |rng: &mut Rng, k: i64, sign: i64| Level {
                price_raw: mid + sign * k * tick,
                qty_raw: if !snapshot && rng.below(5) == 0 {
                    0
                } else {
                    (1 + rng.below(500)) as i64 * 1_000_000
                },
            };
            let (bids, asks) = if snapshot {
                let b = (1..=depth).map(|k| level(&mut rng, k, -1)).collect();
                let a = (1..=depth).map(|k| level(&mut rng, k, 1)).collect();
                (b, a)
            } else if rng.below(2) == 0 {
                let k = 1 + rng.below(20) as i64;
                (vec![level(&mut rng, k, -1)], Vec::new())
            } else {
                let k = 1 + rng.below(20) as i64;
                (Vec::new(), vec![level(&mut rng, k, 1)])
            };
            let head = Book {
                kind,
                exchange_ts_ns: ts,
                recv_ts_ns: recv,
                seq: i as i64 + 1,
                symbol_id: sym,
                header_type: kind.flox_header_type(),
                instrument: instrument::PERP,
                exchange_id,
                bids: Levels::default(),
                asks: Levels::default(),
            };
            OwnedEvent::Book(OwnedBook { head, bids, asks })
        }
        75..=89 => {
            let mut px = || mid / 20 + rng.below(1_000) as i64 * tick;
            let (mark, index, bid, ask) = (px(), px(), px(), px());
            OwnedEvent::OptionQuote(OptionQuote {
                exchange_ts_ns: ts,
                recv_ts_ns: recv,
                mark_price_raw: mark,
                index_price_raw: index,
                underlying_price_raw: mid,
                iv_raw: rng.below(200_000_000) as i64,
                bid_price_raw: bid,
                ask_price_raw: ask,
                bid_size_raw: rng.below(1_000) as i64 * 1_000_000,
                ask_size_raw: rng.below(1_000) as i64 * 1_000_000,
                bid_iv_raw: rng.below(200_000_000) as i64,
                ask_iv_raw: rng.below(200_000_000) as i64,
                open_interest_raw: rng.below(1 << 40) as i64,
                symbol_id: 1_000 + rng.below(16) as u32,
                instrument: instrument::OPTION,
                exchange_id,
            })
        }
        _ => {
            let sub_type = [
                pool_sub_type::DESCRIPTOR,
                pool_sub_type::CHECKPOINT,
                pool_sub_type::SWAP_DELTA,
                pool_sub_type::LIQUIDITY_DELTA,
            ][rng.below(4) as usize];
            let len = rng.below(160) as usize;
            let payload = (0..len).map(|_| rng.next_u64() as u8).collect();
            let head = PoolState {
                exchange_ts_ns: ts,
                recv_ts_ns: recv,
                symbol_id: 2_000 + rng.below(8) as u32,
                sub_type,
                venue: rng.below(3) as u8,
                exchange_id,
                payload: &[],
            };
            OwnedEvent::PoolState(OwnedPoolState { head, payload })
        }
    }
}

/// flox-style `metadata.json` for the synthetic market.
pub fn metadata(cfg: &SynthConfig, trades: u64, book_updates: u64) -> serde_json::Value {
    let symbols: Vec<serde_json::Value> = SYMBOLS
        .iter()
        .map(|(id, name, _, _)| {
            serde_json::json!({
                "symbol_id": id, "name": name,
                "base_asset": &name[..name.len() - 4], "quote_asset": "USDT",
                "price_precision": 8, "qty_precision": 8
            })
        })
        .collect();
    serde_json::json!({
        "recording_id": "floxlog-demo",
        "description": "synthetic market written by `floxlog demo`",
        "exchange": "demo",
        "exchange_type": "cex",
        "instrument_type": "perpetual",
        "symbols": symbols,
        "has_trades": true,
        "has_book_snapshots": true,
        "has_book_deltas": true,
        "book_depth": cfg.depth,
        "recording_start": crate::time::format_ns(cfg.start_ns),
        "recording_end": crate::time::format_ns(cfg.start_ns + cfg.duration_ns),
        "price_scale": 100_000_000u64,
        "qty_scale": 100_000_000u64,
        "total_trades": trades,
        "total_book_updates": book_updates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_ordered() {
        let cfg = SynthConfig {
            trades: 300,
            book_deltas: 200,
            ..SynthConfig::default()
        };
        let mut a = Vec::new();
        let n = generate(&cfg, |e| -> Result<(), ()> {
            a.push(crate::OwnedEvent::from_event(e));
            Ok(())
        })
        .unwrap();
        assert_eq!(n as usize, a.len());
        let trades = a
            .iter()
            .filter(|e| matches!(e, crate::OwnedEvent::Trade(_)))
            .count();
        assert_eq!(trades, 300);
        assert!(a
            .windows(2)
            .all(|w| w[0].exchange_ts_ns() <= w[1].exchange_ts_ns()));
        let mut b = Vec::new();
        generate(&cfg, |e| -> Result<(), ()> {
            b.push(crate::OwnedEvent::from_event(e));
            Ok(())
        })
        .unwrap();
        assert_eq!(a, b);
    }

    /// Replayed as the spec says (snapshots replace a side, deltas set or
    /// remove a level), every symbol's book stays uncrossed and keeps
    /// levels on both sides after its first snapshot.
    #[test]
    fn replayed_books_are_never_crossed() {
        let cfg = SynthConfig::default();
        let mut books: BTreeMap<u32, [BTreeMap<i64, i64>; 2]> = BTreeMap::new();
        let (mut deltas, mut removals) = (0u64, 0u64);
        generate(&cfg, |e| -> Result<(), String> {
            let Event::Book(b) = e else { return Ok(()) };
            let book = books.entry(b.symbol_id).or_default();
            for (side, levels) in [(0, &b.bids), (1, &b.asks)] {
                if b.kind == BookKind::Snapshot {
                    book[side].clear();
                } else {
                    deltas += 1;
                }
                for l in levels.iter() {
                    if l.qty_raw == 0 {
                        removals += u64::from(book[side].remove(&l.price_raw).is_some());
                    } else {
                        book[side].insert(l.price_raw, l.qty_raw);
                    }
                }
            }
            let (bid, ask) = (book[0].keys().next_back(), book[1].keys().next());
            match (bid, ask) {
                (Some(b_), Some(a_)) if b_ < a_ => Ok(()),
                _ => Err(format!(
                    "book {} at {}: {bid:?} / {ask:?}",
                    b.symbol_id, b.exchange_ts_ns
                )),
            }
        })
        .unwrap();
        assert_eq!(deltas, 2 * cfg.book_deltas);
        // The walk does cross old levels: the removals are exercised.
        assert!(removals > 1_000, "{removals}");
    }

    #[test]
    fn mixed_stream_is_a_function_of_seed_and_position_and_round_trips() {
        let a: Vec<OwnedEvent> = (0..2_000).map(|i| mixed_event(7, i)).collect();
        assert_eq!(a[1234], mixed_event(7, 1234));
        assert_ne!(
            a[..50],
            (0..50).map(|i| mixed_event(8, i)).collect::<Vec<_>>()[..]
        );
        let mut by_type = [0usize; 6];
        let mut backwards = 0;
        for (i, e) in a.iter().enumerate() {
            let ev = e.as_event();
            by_type[ev.frame_type() as usize] += 1;
            let d = ev.exchange_ts_ns() - (MIXED_START_NS + i as i64 * MIXED_STEP_NS);
            assert!(d.abs() <= MIXED_JITTER_NS);
            if i > 0 && ev.exchange_ts_ns() < a[i - 1].exchange_ts_ns() {
                backwards += 1;
            }
            // Every event survives encoding and decoding unchanged.
            let mut frame = vec![0u8; floxlog_core::FrameHeader::LEN + ev.payload_len()];
            floxlog_core::encode_frame(&ev, floxlog_core::Profile::Reference, &mut frame).unwrap();
            let (back, _) =
                floxlog_core::decode_frame(&frame, floxlog_core::FrameOptions::default()).unwrap();
            assert_eq!(OwnedEvent::from_event(&back.unwrap()), *e);
        }
        assert!(by_type[1..].iter().all(|&n| n > 50), "{by_type:?}");
        assert!(backwards > 100, "{backwards}");
    }
}
