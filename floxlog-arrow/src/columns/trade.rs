//! Trade columns: the bulk of most tapes, filled by the core's batch trade
//! kernel straight into their zero-filled slots ([`Fresh`]).

use super::fresh::{mapped, Fresh};
use crate::schema::{RecordType, DECIMAL_PRECISION, DECIMAL_SCALE};
use crate::symbols::Symbols;
use arrow_array::types::{
    Decimal128Type, Int64Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{ArrayRef, PrimitiveArray, RecordBatch, TimestampNanosecondArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::ArrowError;
use floxlog_core::{Trade, TradeColumns};
use std::sync::Arc;

/// The raw `i64` column and its `timestamp[ns, UTC]` twin over one buffer.
pub(super) fn ts_pair(b: ScalarBuffer<i64>) -> (ArrayRef, ArrayRef) {
    let raw: ArrayRef = Arc::new(PrimitiveArray::<Int64Type>::new(b.clone(), None));
    let ts: ArrayRef = Arc::new(TimestampNanosecondArray::new(b, None).with_timezone("UTC"));
    (raw, ts)
}

/// The raw `i64` column and its `decimal128(38, 8)` twin.
fn raw_and_decimal(v: &mut Fresh<i64>) -> Result<(ArrayRef, ArrayRef), ArrowError> {
    let wide = mapped(v.as_slice(), i128::from).take_buffer();
    let dec = PrimitiveArray::<Decimal128Type>::new(wide, None)
        .with_precision_and_scale(DECIMAL_PRECISION, DECIMAL_SCALE)?;
    let raw = PrimitiveArray::<Int64Type>::new(v.take_buffer(), None);
    Ok((Arc::new(raw), Arc::new(dec)))
}

/// Trades.
#[derive(Default)]
pub(super) struct TradeCols {
    ex: Fresh<i64>,
    recv: Fresh<i64>,
    price: Fresh<i64>,
    qty: Fresh<i64>,
    trade_id: Fresh<u64>,
    symbol_id: Fresh<u32>,
    side: Fresh<u8>,
    instrument: Fresh<u8>,
    exchange_id: Fresh<u16>,
}

impl TradeCols {
    /// Rows held.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.ex.len()
    }

    /// Slots for at least `rows` rows in every column (`first`: how many
    /// a column that has none yet starts with).
    fn reserve(&mut self, rows: usize, first: usize) {
        if rows <= self.ex.cap() {
            return;
        }
        let cap = if self.ex.cap() == 0 {
            rows.max(first)
        } else {
            rows
        };
        self.ex.reserve_total(cap);
        self.recv.reserve_total(cap);
        self.price.reserve_total(cap);
        self.qty.reserve_total(cap);
        self.trade_id.reserve_total(cap);
        self.symbol_id.reserve_total(cap);
        self.side.reserve_total(cap);
        self.instrument.reserve_total(cap);
        self.exchange_id.reserve_total(cap);
    }

    #[inline]
    pub(super) fn push(&mut self, t: &Trade, first: usize) {
        if self.len() == self.ex.cap() {
            self.reserve(self.len() + 1, first);
        }
        self.ex.push(t.exchange_ts_ns);
        self.recv.push(t.recv_ts_ns);
        self.price.push(t.price_raw);
        self.qty.push(t.qty_raw);
        self.trade_id.push(t.trade_id);
        self.symbol_id.push(t.symbol_id);
        self.side.push(t.side);
        self.instrument.push(t.instrument);
        self.exchange_id.push(t.exchange_id);
    }

    /// `n` slots after the rows, in every column, for the kernel (no
    /// zeroing: they are zero-filled or hold values the kernel
    /// overwrites, and only what [`TradeCols::set_len`] keeps is read).
    pub(super) fn room(&mut self, n: usize, first: usize) -> TradeColumns<'_> {
        self.reserve(self.len() + n, first);
        TradeColumns {
            exchange_ts_ns: self.ex.room(n),
            recv_ts_ns: self.recv.room(n),
            price_raw: self.price.room(n),
            qty_raw: self.qty.room(n),
            trade_id: self.trade_id.room(n),
            symbol_id: self.symbol_id.room(n),
            side: self.side.room(n),
            instrument: self.instrument.room(n),
            exchange_id: self.exchange_id.room(n),
        }
    }

    /// Keeps `len` rows.
    pub(super) fn set_len(&mut self, len: usize) {
        self.ex.set_len(len);
        self.recv.set_len(len);
        self.price.set_len(len);
        self.qty.set_len(len);
        self.trade_id.set_len(len);
        self.symbol_id.set_len(len);
        self.side.set_len(len);
        self.instrument.set_len(len);
        self.exchange_id.set_len(len);
    }

    /// The rows as a batch; the columns start over with no slots.
    pub(super) fn finish(&mut self, symbols: &Symbols) -> Result<RecordBatch, ArrowError> {
        let symbol = symbols.column(self.symbol_id.as_slice())?;
        let (ex, ex_ts) = ts_pair(self.ex.take_buffer());
        let (recv, recv_ts) = ts_pair(self.recv.take_buffer());
        let (price, price_dec) = raw_and_decimal(&mut self.price)?;
        let (qty, qty_dec) = raw_and_decimal(&mut self.qty)?;
        let cols: Vec<ArrayRef> = vec![
            ex,
            recv,
            price,
            qty,
            Arc::new(PrimitiveArray::<UInt64Type>::new(
                self.trade_id.take_buffer(),
                None,
            )),
            Arc::new(PrimitiveArray::<UInt32Type>::new(
                self.symbol_id.take_buffer(),
                None,
            )),
            Arc::new(PrimitiveArray::<UInt8Type>::new(
                self.side.take_buffer(),
                None,
            )),
            Arc::new(PrimitiveArray::<UInt8Type>::new(
                self.instrument.take_buffer(),
                None,
            )),
            Arc::new(PrimitiveArray::<UInt16Type>::new(
                self.exchange_id.take_buffer(),
                None,
            )),
            symbol,
            ex_ts,
            recv_ts,
            price_dec,
            qty_dec,
        ];
        RecordBatch::try_new(RecordType::Trade.schema(), cols)
    }
}
