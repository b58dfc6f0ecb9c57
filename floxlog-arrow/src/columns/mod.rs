//! Column builders: events pushed straight from the core's zero-copy views
//! into plain vectors, which become Arrow buffers without a copy when a
//! batch is finished. The timestamp columns share the buffers of the raw
//! `*_ts_ns` columns; the decimal columns are the raw integers widened.

use crate::convert::{Conversion, Prices};
use crate::schema::{level_fields, level_item_field, RecordType, DECIMAL_PRECISION, DECIMAL_SCALE};
use crate::symbols::Symbols;
use arrow_array::types::{Decimal128Type, Int64Type};
use arrow_array::{
    ArrayRef, BinaryArray, ListArray, PrimitiveArray, RecordBatch, StringArray, StructArray,
};
use arrow_buffer::{ArrowNativeType, Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, SchemaRef};
use fixed::FixedCols;
use floxlog_core::{Book, BookKind, Event, Levels, OptionQuote, PoolState, TradeColumns};
use std::sync::Arc;
use trade::TradeCols;

mod fixed;
pub(crate) mod fresh;
mod trade;

/// When a batch is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Rows per batch.
    pub rows: usize,
    /// Book levels (bids and asks together) per batch.
    pub levels: usize,
    /// Pool-state payload bytes per batch.
    pub payload_bytes: usize,
}

impl Limits {
    /// Rows per batch, with the default level and payload bounds (4 Mi
    /// levels, 64 MiB of payload: list and binary offsets are `i32`, and a
    /// batch stays a bounded amount of memory however large its rows).
    pub fn rows(rows: usize) -> Limits {
        Limits {
            rows: rows.max(1),
            levels: 1 << 22,
            payload_bytes: 64 << 20,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::rows(DEFAULT_ROWS)
    }
}

/// Default rows per batch.
pub const DEFAULT_ROWS: usize = 1 << 16;

/// Most trades one room given to the batch kernel holds: a run's columns
/// (about 90 bytes a trade with the decimal twins widened from it) stay in
/// the core's cache until the twins and the reader's timestamp track have
/// read them back.
const HOT_ROWS: usize = 1 << 12;

fn prim<T: ArrowNativeType, A>(v: Vec<T>) -> ArrayRef
where
    PrimitiveArray<A>: From<Vec<T>> + arrow_array::Array + 'static,
    A: arrow_array::ArrowPrimitiveType<Native = T>,
{
    Arc::new(PrimitiveArray::<A>::from(v))
}

/// The raw `i64` column and its `timestamp[ns, UTC]` twin over one buffer.
fn ts_pair(v: Vec<i64>) -> (ArrayRef, ArrayRef) {
    trade::ts_pair(ScalarBuffer::from(v))
}

/// The raw `i64` column and its `decimal128(38, 8)` twin.
fn raw_and_decimal(v: Vec<i64>) -> Result<(ArrayRef, ArrayRef), ArrowError> {
    let wide: Vec<i128> = v.iter().map(|&x| i128::from(x)).collect();
    let dec = PrimitiveArray::<Decimal128Type>::new(ScalarBuffer::from(wide), None)
        .with_precision_and_scale(DECIMAL_PRECISION, DECIMAL_SCALE)?;
    Ok((prim::<i64, Int64Type>(v), Arc::new(dec)))
}

/// The schema of `rt`'s batches with price twins in the form `prices`.
fn twin_schema(rt: RecordType, prices: Prices) -> SchemaRef {
    match prices {
        Prices::Decimal => rt.schema(),
        _ => Conversion {
            prices,
            ..Conversion::default()
        }
        .schema(&rt.schema()),
    }
}

fn take<T>(v: &mut Vec<T>, cap: usize) -> Vec<T> {
    std::mem::replace(v, Vec::with_capacity(cap))
}

/// One side's levels: list offsets and the two struct fields.
struct LevelCols {
    offsets: Vec<i32>,
    price: Vec<i64>,
    qty: Vec<i64>,
}

impl Default for LevelCols {
    fn default() -> Self {
        LevelCols {
            offsets: vec![0],
            price: Vec::new(),
            qty: Vec::new(),
        }
    }
}

impl LevelCols {
    #[inline]
    fn push(&mut self, l: &Levels<'_>) {
        for lv in l.iter() {
            self.price.push(lv.price_raw);
            self.qty.push(lv.qty_raw);
        }
        // The batch ends long before i32 overflows (Limits::levels).
        let end = i32::try_from(self.price.len()).unwrap_or(i32::MAX);
        self.offsets.push(end);
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let price = prim::<i64, Int64Type>(std::mem::take(&mut self.price));
        let qty = prim::<i64, Int64Type>(std::mem::take(&mut self.qty));
        let values = StructArray::try_new(level_fields(), vec![price, qty], None)?;
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        Ok(Arc::new(ListArray::try_new(
            level_item_field(),
            offsets,
            Arc::new(values),
            None,
        )?))
    }
}

/// Book snapshots and deltas.
#[derive(Default)]
struct BookCols {
    snapshot: Vec<bool>,
    head: FixedCols<Book<'static>>,
    bids: LevelCols,
    asks: LevelCols,
}

impl BookCols {
    fn push(&mut self, b: &Book<'_>) {
        self.snapshot.push(b.kind == BookKind::Snapshot);
        self.head.push(&b.without_levels());
        self.bids.push(&b.bids);
        self.asks.push(&b.asks);
    }

    fn levels(&self) -> usize {
        self.bids.price.len() + self.asks.price.len()
    }

    fn finish(&mut self, cap: usize, symbols: &Symbols) -> Result<RecordBatch, ArrowError> {
        let kind: ArrayRef = Arc::new(StringArray::from_iter_values(
            take(&mut self.snapshot, cap)
                .iter()
                .map(|&s| if s { "snapshot" } else { "delta" }),
        ));
        let levels = [self.bids.finish()?, self.asks.finish()?];
        let mut cols = vec![kind];
        // No fixed-point field in a book's head: its levels stay raw here.
        cols.extend(self.head.finish(cap, symbols, levels, Prices::Decimal)?);
        RecordBatch::try_new(RecordType::Book.schema(), cols)
    }
}

/// Option quotes.
#[derive(Default)]
struct OptionCols(FixedCols<OptionQuote>);

impl OptionCols {
    fn push(&mut self, q: &OptionQuote) {
        self.0.push(q);
    }

    fn finish(
        &mut self,
        cap: usize,
        symbols: &Symbols,
        prices: Prices,
    ) -> Result<RecordBatch, ArrowError> {
        let cols = self.0.finish(cap, symbols, [], prices)?;
        RecordBatch::try_new(twin_schema(RecordType::OptionQuote, prices), cols)
    }
}

/// Pool states.
struct PoolCols {
    head: FixedCols<PoolState<'static>>,
    offsets: Vec<i32>,
    bytes: Vec<u8>,
}

impl Default for PoolCols {
    fn default() -> Self {
        PoolCols {
            head: FixedCols::default(),
            offsets: vec![0],
            bytes: Vec::new(),
        }
    }
}

impl PoolCols {
    /// Fails only for a payload the `i32` offsets of one batch cannot
    /// hold (the caller finishes the batch first when one would not fit).
    fn push(&mut self, p: &PoolState<'_>) -> Result<(), &'static str> {
        let end = self
            .bytes
            .len()
            .checked_add(p.payload.len())
            .and_then(|e| i32::try_from(e).ok())
            .ok_or("pool state payload too large for one Arrow batch (over 2 GiB)")?;
        self.bytes.extend_from_slice(p.payload);
        self.offsets.push(end);
        self.head.push(&p.without_payload());
        Ok(())
    }

    fn finish(&mut self, cap: usize, symbols: &Symbols) -> Result<RecordBatch, ArrowError> {
        let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(
            &mut self.offsets,
            vec![0],
        )));
        let payload: ArrayRef = Arc::new(BinaryArray::try_new(
            offsets,
            Buffer::from_vec(std::mem::take(&mut self.bytes)),
            None,
        )?);
        // No fixed-point field in a pool state.
        let cols = self.head.finish(cap, symbols, [payload], Prices::Decimal)?;
        RecordBatch::try_new(RecordType::PoolState.schema(), cols)
    }
}

/// Builders for every record type.
pub struct Columns {
    limits: Limits,
    /// Rows at which the current trade batch is full: `limits.rows`, or
    /// (for a whole table, [`Columns::growing`]) a bound that doubles with
    /// every full batch up to it.
    trade_bound: usize,
    growing: bool,
    trade: TradeCols,
    book: BookCols,
    option: OptionCols,
    pool: PoolCols,
    prices: Prices,
}

impl Columns {
    /// Empty builders that report full at `limits`.
    pub fn new(limits: Limits) -> Columns {
        Columns {
            limits,
            trade_bound: limits.rows,
            growing: false,
            trade: TradeCols::default(),
            book: BookCols::default(),
            option: OptionCols::default(),
            pool: PoolCols::default(),
            prices: Prices::Decimal,
        }
    }

    /// The builders with the price twins of fixed-point fields (`price`,
    /// `qty`, ...) in the form `prices` says, built from the raw values as
    /// they come (no decimal built to be dropped); book levels stay raw
    /// (see [`crate::WithLevels`]).
    pub fn with_prices(self, prices: Prices) -> Columns {
        Columns {
            trade: TradeCols::with_prices(prices),
            prices,
            ..self
        }
    }

    /// Builders for a read kept whole (a table): trade batches of
    /// [`DEFAULT_ROWS`] at first, each full one doubling the next up to
    /// `limits.rows`. So a long run of trades goes into a few large
    /// columns (mapped in huge pages, see `fresh.rs`) and a short one into
    /// small ones; the caller slices them into batches of the size it
    /// wants (zero-copy).
    pub fn growing(limits: Limits) -> Columns {
        Columns {
            trade_bound: limits.rows.min(DEFAULT_ROWS),
            growing: true,
            ..Columns::new(limits)
        }
    }

    /// Slots a trade column starts with: the batch bound, but never more
    /// than the default for a streamed batch (`rows` is the caller's
    /// bound, not what the read holds: rows = 2^34 must not allocate).
    fn first_cap(&self) -> usize {
        if self.growing {
            self.trade_bound
        } else {
            self.limits.rows.min(DEFAULT_ROWS)
        }
    }

    /// Rows held for `rt`.
    pub fn len(&self, rt: RecordType) -> usize {
        match rt {
            RecordType::Trade => self.trade.len(),
            RecordType::Book => self.book.head.rows(),
            RecordType::OptionQuote => self.option.0.rows(),
            RecordType::PoolState => self.pool.head.rows(),
        }
    }

    /// Whether no rows are held for any type.
    pub fn is_empty(&self) -> bool {
        RecordType::ALL.iter().all(|&rt| self.len(rt) == 0)
    }

    /// Room for up to `want` more trades of the current batch (never past
    /// its row bound) as the core's per-field column slices, for the batch
    /// trade kernel to fill; [`Columns::trades_stored`] then keeps the
    /// first `n`.
    pub fn trade_room(&mut self, want: usize) -> TradeColumns<'_> {
        let len = self.trade.len();
        let room = want.min(HOT_ROWS).min(self.trade_bound.saturating_sub(len));
        let first = self.first_cap();
        self.trade.room(room, first)
    }

    /// The kernel stored `n` trades in the room [`Columns::trade_room`]
    /// gave; returns the trade table when its batch is now full.
    pub fn trades_stored(&mut self, n: usize) -> Option<RecordType> {
        self.trade.stored(n);
        (self.trade.len() >= self.trade_bound).then_some(RecordType::Trade)
    }

    /// Adds an event; returns its table when that batch is now full.
    /// Fails only for a pool-state payload over 2 GiB.
    #[inline]
    pub fn push(&mut self, ev: &Event<'_>) -> Result<Option<RecordType>, &'static str> {
        let l = &self.limits;
        Ok(match ev {
            Event::Trade(t) => {
                self.trade.push(t, self.first_cap());
                (self.trade.len() >= self.trade_bound).then_some(RecordType::Trade)
            }
            Event::Book(b) => {
                self.book.push(b);
                (self.book.head.rows() >= l.rows || self.book.levels() >= l.levels)
                    .then_some(RecordType::Book)
            }
            Event::OptionQuote(q) => {
                self.option.push(q);
                (self.option.0.rows() >= l.rows).then_some(RecordType::OptionQuote)
            }
            Event::PoolState(p) => {
                self.pool.push(p)?;
                (self.pool.head.rows() >= l.rows || self.pool.bytes.len() >= l.payload_bytes)
                    .then_some(RecordType::PoolState)
            }
        })
    }

    /// The rows held for `rt` as a batch (`None` when there are none); the
    /// builder starts over.
    pub fn finish(
        &mut self,
        rt: RecordType,
        symbols: &Symbols,
    ) -> Result<Option<RecordBatch>, ArrowError> {
        if self.len(rt) == 0 {
            return Ok(None);
        }
        match rt {
            RecordType::Trade => {
                if self.growing && self.trade.len() >= self.trade_bound {
                    self.trade_bound = (self.trade_bound * 2).min(self.limits.rows);
                }
                self.trade.finish(symbols)
            }
            // Rarer types start small and grow.
            RecordType::Book => self.book.finish(0, symbols),
            RecordType::OptionQuote => self.option.finish(0, symbols, self.prices),
            RecordType::PoolState => self.pool.finish(0, symbols),
        }
        .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{TimestampNanosecondType, UInt64Type};
    use arrow_array::Array;
    use floxlog_core::{Level, Trade};

    fn trade(i: i64) -> Trade {
        Trade {
            exchange_ts_ns: 1_000 + i,
            recv_ts_ns: 2_000 + i,
            price_raw: 12_345_678_900 + i,
            qty_raw: -5,
            trade_id: u64::MAX - i as u64,
            symbol_id: 7,
            side: 1,
            instrument: 2,
            exchange_id: 300,
        }
    }

    #[test]
    fn decimal_twins_follow_the_raw_values_by_kernel_runs_and_by_event() {
        let mut c = Columns::growing(Limits::rows(1 << 20));
        let mut want = Vec::new();
        let mut next = 0i64;
        for round in 0..3 {
            // A run as the kernel stores it: fewer than the room given.
            let n = 3000 + round;
            let cols = c.trade_room(n + 10);
            assert!(cols.price_raw.len() >= n);
            for k in 0..n {
                let t = trade(next);
                cols.price_raw[k] = t.price_raw * if k % 2 == 0 { 1 } else { -1 };
                cols.qty_raw[k] = i64::MIN + next;
                cols.exchange_ts_ns[k] = t.exchange_ts_ns;
                want.push((cols.price_raw[k], cols.qty_raw[k]));
                next += 1;
            }
            assert_eq!(c.trades_stored(n), None);
            // Then events one by one.
            for _ in 0..3 {
                let t = trade(next);
                want.push((t.price_raw, t.qty_raw));
                c.push(&Event::Trade(t)).unwrap();
                next += 1;
            }
        }
        let b = c
            .finish(RecordType::Trade, &Symbols::none())
            .unwrap()
            .unwrap();
        assert_eq!(b.num_rows(), want.len());
        let col = |name: &str| b.column_by_name(name).unwrap().clone();
        let (pr, qr) = (col("price_raw"), col("qty_raw"));
        let (pd, qd) = (col("price"), col("qty"));
        let (pr, qr) = (
            pr.as_primitive::<Int64Type>(),
            qr.as_primitive::<Int64Type>(),
        );
        let (pd, qd) = (
            pd.as_primitive::<Decimal128Type>(),
            qd.as_primitive::<Decimal128Type>(),
        );
        for (i, &(p, q)) in want.iter().enumerate() {
            assert_eq!((pr.value(i), qr.value(i)), (p, q), "row {i}");
            assert_eq!(
                (pd.value(i), qd.value(i)),
                (i128::from(p), i128::from(q)),
                "row {i}"
            );
        }
    }

    #[test]
    fn twins_built_as_asked_are_the_conversion_of_the_decimal_build() {
        use crate::convert::{Conversion, Prices};
        use floxlog_core::OptionQuote;
        for prices in [Prices::Float, Prices::Raw] {
            let mut dec = Columns::new(Limits::rows(1000));
            let mut asked = Columns::new(Limits::rows(1000)).with_prices(prices);
            for c in [&mut dec, &mut asked] {
                // A run as the kernel stores it, then events one by one.
                let cols = c.trade_room(10);
                for k in 0..10 {
                    let t = trade(k as i64);
                    cols.exchange_ts_ns[k] = t.exchange_ts_ns;
                    cols.recv_ts_ns[k] = t.recv_ts_ns;
                    cols.price_raw[k] = (1 << 53) + 1 - k as i64;
                    cols.qty_raw[k] = -(k as i64) * 7;
                    cols.trade_id[k] = t.trade_id;
                    cols.symbol_id[k] = t.symbol_id;
                    cols.side[k] = t.side;
                    cols.instrument[k] = t.instrument;
                    cols.exchange_id[k] = t.exchange_id;
                }
                assert_eq!(c.trades_stored(10), None);
                for i in 0..5 {
                    c.push(&Event::Trade(trade(i))).unwrap();
                }
                let q = OptionQuote {
                    mark_price_raw: -7,
                    iv_raw: (1 << 60) + 3,
                    ..OptionQuote::default()
                };
                c.push(&Event::OptionQuote(q)).unwrap();
            }
            let conv = Conversion {
                prices,
                ..Conversion::default()
            };
            for rt in [RecordType::Trade, RecordType::OptionQuote] {
                let whole = dec.finish(rt, &Symbols::none()).unwrap().unwrap();
                let got = asked.finish(rt, &Symbols::none()).unwrap().unwrap();
                assert_eq!(got, conv.batch(&whole).unwrap(), "{rt:?} {prices:?}");
            }
        }
    }

    #[test]
    fn trades_fill_batches_of_the_row_limit() {
        let mut c = Columns::new(Limits::rows(3));
        let syms = Symbols::from_pairs(vec![(7, "BTC".into())]);
        let mut full = Vec::new();
        for i in 0..7 {
            full.push(c.push(&Event::Trade(trade(i))).unwrap());
        }
        // Full from the third row on, until the caller finishes the batch.
        assert_eq!(full.iter().position(|f| f.is_some()), Some(2));
        assert!(full[2..].iter().all(|f| *f == Some(RecordType::Trade)));
        let b = c.finish(RecordType::Trade, &syms).unwrap().unwrap();
        assert_eq!(b.num_rows(), 7);
        assert_eq!(b.schema(), RecordType::Trade.schema());
        let price = b
            .column_by_name("price")
            .unwrap()
            .as_primitive::<Decimal128Type>();
        assert_eq!(price.value_as_string(0), "123.45678900");
        assert_eq!(
            b.column_by_name("qty")
                .unwrap()
                .as_primitive::<Decimal128Type>()
                .value_as_string(0),
            "-0.00000005"
        );
        let ts = b
            .column_by_name("exchange_ts")
            .unwrap()
            .as_primitive::<TimestampNanosecondType>();
        assert_eq!(ts.value(6), 1_006);
        assert_eq!(
            b.column_by_name("trade_id")
                .unwrap()
                .as_primitive::<UInt64Type>()
                .value(0),
            u64::MAX
        );
        assert!(c.finish(RecordType::Trade, &syms).unwrap().is_none());
    }

    #[test]
    fn books_hold_levels_as_lists_of_structs() {
        let mut c = Columns::new(Limits::rows(100));
        let bids = [
            Level {
                price_raw: 10,
                qty_raw: 1,
            },
            Level {
                price_raw: 9,
                qty_raw: 2,
            },
        ];
        let b = Book {
            kind: BookKind::Delta,
            exchange_ts_ns: 5,
            recv_ts_ns: 6,
            seq: 3,
            symbol_id: 1,
            header_type: 1,
            instrument: 0,
            exchange_id: 2,
            bids: Levels::Slice(&bids),
            asks: Levels::Slice(&[]),
        };
        c.push(&Event::Book(b)).unwrap();
        c.push(&Event::Book(Book {
            kind: BookKind::Snapshot,
            bids: Levels::Slice(&[]),
            ..b
        }))
        .unwrap();
        let batch = c
            .finish(RecordType::Book, &Symbols::none())
            .unwrap()
            .unwrap();
        assert_eq!(batch.schema(), RecordType::Book.schema());
        let kind = batch.column_by_name("kind").unwrap().as_string::<i32>();
        assert_eq!((kind.value(0), kind.value(1)), ("delta", "snapshot"));
        let bids = batch.column_by_name("bids").unwrap().as_list::<i32>();
        assert_eq!(bids.value_offsets(), &[0, 2, 2]);
        let lv = bids.values().as_struct();
        let p = lv.column(0).as_primitive::<Int64Type>();
        assert_eq!(p.values(), &[10, 9]);
        assert!(batch.column_by_name("symbol").unwrap().is_null(0));
    }

    #[test]
    fn levels_and_payload_bytes_bound_a_batch() {
        let mut c = Columns::new(Limits {
            rows: 1000,
            levels: 3,
            payload_bytes: 4,
        });
        let lv = [Level::default(); 2];
        let b = Book {
            kind: BookKind::Snapshot,
            exchange_ts_ns: 0,
            recv_ts_ns: 0,
            seq: 0,
            symbol_id: 0,
            header_type: 0,
            instrument: 0,
            exchange_id: 0,
            bids: Levels::Slice(&lv),
            asks: Levels::Slice(&[]),
        };
        assert_eq!(c.push(&Event::Book(b)).unwrap(), None);
        assert_eq!(c.push(&Event::Book(b)).unwrap(), Some(RecordType::Book));
        let p = PoolState {
            payload: &[1, 2, 3],
            ..PoolState::default()
        };
        assert_eq!(c.push(&Event::PoolState(p)).unwrap(), None);
        assert_eq!(
            c.push(&Event::PoolState(p)).unwrap(),
            Some(RecordType::PoolState)
        );
        let batch = c
            .finish(RecordType::PoolState, &Symbols::none())
            .unwrap()
            .unwrap();
        let pay = batch.column_by_name("payload").unwrap().as_binary::<i32>();
        assert_eq!(pay.value(1), &[1, 2, 3]);
    }
}
