//! A day's events downsampled into [`BUCKETS`] fixed time buckets in one
//! pass: the first event sets the origin and buckets start 1 ms wide;
//! an event past the last bucket doubles the width (pairs of buckets
//! merge), so memory stays fixed whatever the tape's span.

use super::books::TopBooks;
use crate::see::ids::IdTable;
use floxlog_core::{Event, Level};

/// Buckets across the tape's time span.
pub const BUCKETS: usize = 240;
/// Symbols given price, volume and book series (the first seen; the
/// rest are counted only), so memory is bounded however many there are.
pub const MAX_SYMBOLS: usize = 2000;

/// A value per bucket: summed, or the last one seen.
#[derive(Clone, Debug)]
pub struct Series {
    /// Values (NaN: none in that bucket).
    pub v: Vec<f64>,
    sum: bool,
}

impl Series {
    fn new(sum: bool) -> Series {
        Series {
            v: vec![if sum { 0.0 } else { f64::NAN }; BUCKETS],
            sum,
        }
    }

    fn put(&mut self, b: usize, x: f64) {
        if self.sum {
            self.v[b] += x;
        } else {
            self.v[b] = x;
        }
    }

    /// Pairs merge into the first half; the second half empties.
    fn halve(&mut self) {
        for k in 0..BUCKETS / 2 {
            let (a, b) = (self.v[2 * k], self.v[2 * k + 1]);
            self.v[k] = if self.sum {
                a + b
            } else if b.is_nan() {
                a
            } else {
                b
            };
        }
        let empty = if self.sum { 0.0 } else { f64::NAN };
        self.v[BUCKETS / 2..].fill(empty);
    }
}

/// One symbol's series.
#[derive(Clone, Debug)]
pub struct SymbolSeries {
    /// Trades seen.
    pub trades: u64,
    /// Book events seen.
    pub book_events: u64,
    /// Last trade price per bucket (raw / 1e8).
    pub price: Series,
    /// Traded quantity per bucket (raw / 1e8).
    pub volume: Series,
    /// Best ask minus best bid at the bucket's last book event.
    pub spread: Series,
    /// Quantity at the best bid then.
    pub bid_qty: Series,
    /// Quantity at the best ask then.
    pub ask_qty: Series,
    /// Trades of the latest bucket, added in integers and put in `price`
    /// and `volume` when a trade of a later bucket comes, before buckets
    /// merge, and at the end: no float conversion per trade.
    acc: TradeAcc,
}

/// One bucket's trades, not yet in the series.
#[derive(Clone, Copy, Debug, Default)]
struct TradeAcc {
    bucket: usize,
    /// Trades taken (0: nothing to put).
    n: u64,
    last_price: i64,
    qty: i128,
}

impl SymbolSeries {
    fn new() -> SymbolSeries {
        SymbolSeries {
            trades: 0,
            book_events: 0,
            price: Series::new(false),
            volume: Series::new(true),
            spread: Series::new(false),
            bid_qty: Series::new(false),
            ask_qty: Series::new(false),
            acc: TradeAcc::default(),
        }
    }

    /// Takes a trade of bucket `b`.
    fn trade(&mut self, b: usize, price_raw: i64, qty_raw: i64) {
        self.trades += 1;
        if self.acc.bucket != b {
            self.put_trades();
            self.acc.bucket = b;
        }
        self.acc.n += 1;
        self.acc.last_price = price_raw;
        self.acc.qty += i128::from(qty_raw);
    }

    /// Puts the accumulated trades in their bucket.
    fn put_trades(&mut self) {
        let a = std::mem::take(&mut self.acc);
        if a.n > 0 {
            self.price.put(a.bucket, a.last_price as f64 / SCALE);
            self.volume.put(a.bucket, a.qty as f64 / SCALE);
        }
    }

    /// Puts the top of book (best bid, best ask) in bucket `b`.
    pub(super) fn top(&mut self, b: usize, bid: Option<&Level>, ask: Option<&Level>) {
        if let (Some(bid), Some(ask)) = (bid, ask) {
            self.spread
                .put(b, (ask.price_raw - bid.price_raw) as f64 / SCALE);
        }
        if let Some(bid) = bid {
            self.bid_qty.put(b, bid.qty_raw as f64 / SCALE);
        }
        if let Some(ask) = ask {
            self.ask_qty.put(b, ask.qty_raw as f64 / SCALE);
        }
    }

    fn halve(&mut self) {
        self.put_trades();
        for s in [
            &mut self.price,
            &mut self.volume,
            &mut self.spread,
            &mut self.bid_qty,
            &mut self.ask_qty,
        ] {
            s.halve();
        }
    }
}

/// The downsampled tape.
pub struct Buckets {
    /// exchange_ts_ns where bucket 0 starts (`None` before any event).
    pub origin: Option<i64>,
    /// Bucket width, ns.
    pub width: i64,
    /// Events per record type (frame types 1..5) per bucket.
    pub by_type: [Series; 6],
    /// Per symbol (at most [`MAX_SYMBOLS`]); a table by id, since it is
    /// looked up on every event.
    pub symbols: IdTable<SymbolSeries>,
    /// Events of symbols past [`MAX_SYMBOLS`].
    pub untracked: u64,
    /// Those symbols (counted here, so that tracked ones need no second
    /// lookup to be counted).
    others: IdTable<()>,
    /// exchange_ts_ns of the last event.
    pub last_ts: Option<i64>,
    /// The last bucket found: its offsets [from, to) and index, so that
    /// the events of one bucket need no division.
    cur: (i64, i64, usize),
    books: TopBooks,
}

impl Default for Buckets {
    fn default() -> Self {
        Buckets {
            origin: None,
            width: 1_000_000,
            by_type: std::array::from_fn(|_| Series::new(true)),
            symbols: IdTable::default(),
            untracked: 0,
            others: IdTable::default(),
            last_ts: None,
            cur: (0, 0, 0),
            books: TopBooks::default(),
        }
    }
}

const SCALE: f64 = 1e8;

impl Buckets {
    /// The bucket of `ts`, widening the buckets as needed.
    fn bucket(&mut self, ts: i64) -> usize {
        let origin = *self.origin.get_or_insert(ts);
        let off = ts.saturating_sub(origin).max(0);
        if off >= self.cur.0 && off < self.cur.1 {
            return self.cur.2;
        }
        if off / self.width >= BUCKETS as i64 {
            // Queued book events go to the buckets they were pushed for.
            self.books.flush_all(&mut self.symbols);
        }
        while off / self.width >= BUCKETS as i64 {
            self.width = self.width.saturating_mul(2);
            for s in &mut self.by_type {
                s.halve();
            }
            for s in self.symbols.values_mut() {
                s.halve();
            }
        }
        let b = off / self.width;
        let from = b * self.width;
        self.cur = (from, from.saturating_add(self.width), b as usize);
        b as usize
    }

    /// Takes the next event (time order).
    pub fn push(&mut self, ev: &Event<'_>) {
        let ts = ev.exchange_ts_ns();
        self.last_ts = Some(self.last_ts.map_or(ts, |l| l.max(ts)));
        let b = self.bucket(ts);
        let ft = ev.frame_type() as usize;
        if let Some(s) = self.by_type.get_mut(ft) {
            s.put(b, 1.0);
        }
        let sym = ev.symbol_id();
        let s = if self.symbols.len() < MAX_SYMBOLS {
            self.symbols.get_or_insert_with(sym, SymbolSeries::new)
        } else {
            match self.symbols.get_mut(sym) {
                Some(s) => s,
                None => {
                    self.untracked += 1;
                    self.others.get_or_insert_with(sym, || ());
                    return;
                }
            }
        };
        match ev {
            Event::Trade(t) => s.trade(b, t.price_raw, t.qty_raw),
            Event::Book(bk) => {
                s.book_events += 1;
                self.books.push(bk, b, s);
            }
            _ => {}
        }
    }

    /// Applies what is still queued: call after the last event.
    pub fn finish(&mut self) {
        self.books.flush_all(&mut self.symbols);
        for s in self.symbols.values_mut() {
            s.put_trades();
        }
    }

    #[cfg(test)]
    pub(super) fn books_mut(&mut self) -> &mut TopBooks {
        &mut self.books
    }

    /// Events per frame type (index 1..5) over the whole tape: the sums
    /// of counts, exact in a float below 2^53.
    pub fn events_by_type(&self) -> [u64; 6] {
        std::array::from_fn(|i| self.by_type[i].v.iter().sum::<f64>() as u64)
    }

    /// Distinct symbols seen, tracked or not.
    pub fn distinct_symbols(&self) -> usize {
        self.symbols.len() + self.others.len()
    }

    /// Start of bucket `i`, ns.
    pub fn start(&self, i: usize) -> i64 {
        self.origin.unwrap_or(0) + self.width * i as i64
    }

    /// Buckets that hold the span so far.
    pub fn used(&self) -> usize {
        match (self.origin, self.last_ts) {
            (Some(o), Some(l)) => (((l - o) / self.width) as usize + 1).min(BUCKETS),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floxlog_core::Trade;

    fn trade(ts: i64, price: i64) -> Event<'static> {
        Event::Trade(Trade {
            exchange_ts_ns: ts,
            price_raw: price,
            qty_raw: 100_000_000,
            symbol_id: 4,
            ..Trade::default()
        })
    }

    #[test]
    fn buckets_widen_and_keep_sums_and_last_values() {
        let mut b = Buckets::default();
        // 1000 s of one trade a second: the width doubles past 1 ms until
        // 240 buckets cover 1000 s.
        for i in 0..1000i64 {
            b.push(&trade(i * 1_000_000_000, 100 + i));
        }
        b.finish();
        assert!(b.width as i128 * BUCKETS as i128 >= 1_000_000_000_000);
        assert!(b.width < 1_000_000_000_000 / BUCKETS as i64 * 2);
        let s = b.symbols.get(4).unwrap();
        assert_eq!(s.volume.v.iter().sum::<f64>(), 1000.0);
        assert_eq!(b.by_type[1].v.iter().sum::<f64>(), 1000.0);
        let last = b.used() - 1;
        assert_eq!(s.price.v[last], (100 + 999) as f64 / 1e8);
        // Bucket 0 ends with the last trade before its width.
        let in_first = (b.width - 1) / 1_000_000_000;
        assert_eq!(s.price.v[0], (100 + in_first) as f64 / 1e8);
    }
}
