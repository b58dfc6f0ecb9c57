//! Synthetic market data: a busy market of a few symbols, trades and book
//! updates (a snapshot per symbol every second, deltas in between), with a
//! deterministic random walk. Used by `floxlog demo` and for benchmarks.

use floxlog_core::{Book, BookKind, Event, Level, Levels, Trade};

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

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Calls `f` with every event, in timestamp order.
pub fn generate<E>(
    cfg: &SynthConfig,
    mut f: impl FnMut(&Event<'_>) -> Result<(), E>,
) -> Result<u64, E> {
    let mut rng = Rng(cfg.seed | 1);
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
            let lv = [Level {
                price_raw: if rng.below(2) == 0 {
                    mids[i] - k * tick
                } else {
                    mids[i] + k * tick
                },
                qty_raw: q,
            }];
            let (b, a): (&[Level], &[Level]) = if lv[0].price_raw < mids[i] {
                (&lv, &[])
            } else {
                (&[], &lv)
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
        "recording_start": crate::tape::time::format_ns(cfg.start_ns),
        "recording_end": crate::tape::time::format_ns(cfg.start_ns + cfg.duration_ns),
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
}
