//! Trade columns: the bulk of most tapes, filled by the core's batch trade
//! kernel straight into their zero-filled slots ([`Fresh`]). The decimal
//! twins of the fixed-point fields are widened from each run the kernel
//! stores while it is still in cache, into columns reserved with the raw
//! ones (a pass over the finished batch read it back from memory). Float
//! twins (`Prices::Float`) are made from the finished raw column, none
//! with `Prices::Raw`: nothing is widened then.

use super::fresh::{Fresh, Plain};
use super::twin_schema;
use crate::convert::{raw_to_f64, Prices};
use crate::schema::{RecordType, DECIMAL_PRECISION, DECIMAL_SCALE};
use crate::symbols::Symbols;
use arrow_array::types::{
    Decimal128Type, Float64Type, Int64Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{ArrayRef, PrimitiveArray, RecordBatch, TimestampNanosecondArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::ArrowError;
use floxlog_core::{FieldRole, Trade, TradeColumns};
use std::sync::Arc;

/// The raw `i64` column and its `timestamp[ns, UTC]` twin over one buffer.
pub(super) fn ts_pair(b: ScalarBuffer<i64>) -> (ArrayRef, ArrayRef) {
    let raw: ArrayRef = Arc::new(PrimitiveArray::<Int64Type>::new(b.clone(), None));
    let ts: ArrayRef = Arc::new(TimestampNanosecondArray::new(b, None).with_timezone("UTC"));
    (raw, ts)
}

/// The raw `i64` column and its `decimal128(38, 8)` twin (`wide`: the
/// same values widened).
fn raw_and_decimal(
    v: &mut Fresh<i64>,
    wide: &mut Fresh<i128>,
) -> Result<(ArrayRef, ArrayRef), ArrowError> {
    let dec = PrimitiveArray::<Decimal128Type>::new(wide.take_buffer(), None)
        .with_precision_and_scale(DECIMAL_PRECISION, DECIMAL_SCALE)?;
    let raw = PrimitiveArray::<Int64Type>::new(v.take_buffer(), None);
    Ok((Arc::new(raw), Arc::new(dec)))
}

/// A trade field's column type: its Arrow raw column, and the twin its
/// role gives it (a timestamp, or a fixed-point field's price twin, `i64`
/// fields only).
pub(super) trait TradeValue: Plain + Into<i128> {
    /// The raw column and, for a timestamp or fixed-point field, its twin
    /// (a fixed-point field's in the form `prices` says: a decimal from
    /// `wide`, its values widened, or a float).
    fn finish(
        v: &mut Fresh<Self>,
        role: FieldRole,
        wide: Option<&mut Fresh<i128>>,
        prices: Prices,
    ) -> Result<(ArrayRef, Option<ArrayRef>), ArrowError>;
}

macro_rules! unsigned_value {
    ($($t:ty => $arrow:ty),*) => {$(
        impl TradeValue for $t {
            fn finish(
                v: &mut Fresh<$t>,
                _: FieldRole,
                _: Option<&mut Fresh<i128>>,
                _: Prices,
            ) -> Result<(ArrayRef, Option<ArrayRef>), ArrowError> {
                Ok((Arc::new(PrimitiveArray::<$arrow>::new(v.take_buffer(), None)), None))
            }
        }
    )*};
}
unsigned_value!(u64 => UInt64Type, u32 => UInt32Type, u16 => UInt16Type, u8 => UInt8Type);

impl TradeValue for i64 {
    fn finish(
        v: &mut Fresh<i64>,
        role: FieldRole,
        wide: Option<&mut Fresh<i128>>,
        prices: Prices,
    ) -> Result<(ArrayRef, Option<ArrayRef>), ArrowError> {
        Ok(match (role, wide) {
            (FieldRole::Timestamp, _) => {
                let (raw, ts) = ts_pair(v.take_buffer());
                (raw, Some(ts))
            }
            (FieldRole::Fixed, _) if prices != Prices::Decimal => {
                let raw = PrimitiveArray::<Int64Type>::new(v.take_buffer(), None);
                let float = (prices == Prices::Float)
                    .then(|| Arc::new(raw.unary::<_, Float64Type>(raw_to_f64)) as ArrayRef);
                (Arc::new(raw), float)
            }
            (FieldRole::Fixed, Some(wide)) => {
                let (raw, dec) = raw_and_decimal(v, wide)?;
                (raw, Some(dec))
            }
            // A fixed-point field always has its wide column (TradeCols
            // keeps one per such field); without one, the values widened
            // here.
            (FieldRole::Fixed, None) => {
                let mut wide = Fresh::default();
                widen(&mut wide, v.as_slice());
                let (raw, dec) = raw_and_decimal(v, &mut wide)?;
                (raw, Some(dec))
            }
            (FieldRole::Plain | FieldRole::Optional, _) => (
                Arc::new(PrimitiveArray::<Int64Type>::new(v.take_buffer(), None)),
                None,
            ),
        })
    }
}

/// Appends `values` widened to `wide`.
#[inline]
fn widen<T: Copy + Into<i128>>(wide: &mut Fresh<i128>, values: &[T]) {
    let at = wide.len();
    for (d, &s) in wide.room(values.len()).iter_mut().zip(values) {
        *d = s.into();
    }
    wide.set_len(at + values.len());
}

/// Whether a field of this role has a decimal twin.
const fn is_fixed(role: FieldRole) -> bool {
    matches!(role, FieldRole::Fixed)
}

/// [`TradeCols`] from the trade's field list: one [`Fresh`] column per
/// field, named as the field (the first one's length is the row count),
/// and one `i128` column per fixed-point field (`wide`, in field order).
macro_rules! trade_cols {
    (
        $(#[doc = $d0:literal])* $f0:ident $F0:ident: $t0:ident @ $o0:literal, $r0:ident;
        $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*
    ) => {
        /// Fixed-point fields of a trade.
        const FIXED: usize =
            is_fixed(FieldRole::$r0) as usize $( + is_fixed(FieldRole::$role) as usize )*;

        /// Trades.
        #[derive(Default)]
        pub(super) struct TradeCols {
            $f0: Fresh<$t0>,
            $( $f: Fresh<$t>, )*
            /// The fixed-point fields widened (their decimal twins), as
            /// many rows as the raw columns; empty unless `prices` is
            /// decimal.
            wide: [Fresh<i128>; FIXED],
            /// The form of the price twins.
            prices: Prices,
        }

        impl TradeCols {
            /// Empty columns whose price twins take the form `prices`.
            pub(super) fn with_prices(prices: Prices) -> TradeCols {
                TradeCols {
                    prices,
                    ..TradeCols::default()
                }
            }

            /// Rows held.
            #[inline]
            pub(super) fn len(&self) -> usize {
                self.$f0.len()
            }

            /// Slots for at least `rows` rows in every column (`first`: how
            /// many a column that has none yet starts with).
            fn reserve(&mut self, rows: usize, first: usize) {
                if rows <= self.$f0.cap() {
                    return;
                }
                let cap = if self.$f0.cap() == 0 {
                    rows.max(first)
                } else {
                    rows
                };
                self.$f0.reserve_total(cap);
                $( self.$f.reserve_total(cap); )*
                if self.prices == Prices::Decimal {
                    for w in &mut self.wide {
                        w.reserve_total(cap);
                    }
                }
            }

            #[inline]
            pub(super) fn push(&mut self, t: &Trade, first: usize) {
                if self.len() == self.$f0.cap() {
                    self.reserve(self.len() + 1, first);
                }
                let at = self.len();
                self.$f0.push(t.$f0);
                $( self.$f.push(t.$f); )*
                self.widen_from(at);
            }

            /// The rows from `from` on, of each fixed-point field, widened
            /// into its `wide` column (which holds `from` rows).
            #[inline]
            fn widen_from(&mut self, from: usize) {
                if self.prices != Prices::Decimal {
                    return;
                }
                let mut wide = self.wide.iter_mut();
                if is_fixed(FieldRole::$r0) {
                    if let (Some(w), Some(v)) = (wide.next(), self.$f0.as_slice().get(from..)) {
                        widen(w, v);
                    }
                }
                $(
                    if is_fixed(FieldRole::$role) {
                        if let (Some(w), Some(v)) = (wide.next(), self.$f.as_slice().get(from..)) {
                            widen(w, v);
                        }
                    }
                )*
            }

            /// `n` slots after the rows, in every column, for the kernel (no
            /// zeroing: they are zero-filled or hold values the kernel
            /// overwrites, and only what [`TradeCols::stored`] keeps is read).
            pub(super) fn room(&mut self, n: usize, first: usize) -> TradeColumns<'_> {
                self.reserve(self.len() + n, first);
                TradeColumns {
                    $f0: self.$f0.room(n),
                    $( $f: self.$f.room(n), )*
                }
            }

            /// Keeps the first `n` of the `room` slots after the rows
            /// (written by the kernel), their decimal twins widened now,
            /// while they are in cache.
            pub(super) fn stored(&mut self, n: usize) {
                let at = self.len();
                let len = at + n;
                self.$f0.set_len(len);
                $( self.$f.set_len(len); )*
                self.widen_from(at);
            }

            /// The rows as a batch (the schema's order: raw columns, symbol,
            /// timestamps, decimals); the columns start over with no slots.
            pub(super) fn finish(&mut self, symbols: &Symbols) -> Result<RecordBatch, ArrowError> {
                let symbol = symbols.column(self.symbol_id.as_slice())?;
                let mut raw = Vec::new();
                let (mut stamps, mut decimals) = (Vec::new(), Vec::new());
                let mut add = |(r, twin): (ArrayRef, Option<ArrayRef>), role: FieldRole| {
                    raw.push(r);
                    match (twin, role) {
                        (Some(t), FieldRole::Timestamp) => stamps.push(t),
                        (Some(t), _) => decimals.push(t),
                        (None, _) => {}
                    }
                };
                let p = self.prices;
                let mut wide = self.wide.iter_mut();
                let w = if is_fixed(FieldRole::$r0) { wide.next() } else { None };
                add(TradeValue::finish(&mut self.$f0, FieldRole::$r0, w, p)?, FieldRole::$r0);
                $(
                    let w = if is_fixed(FieldRole::$role) { wide.next() } else { None };
                    add(TradeValue::finish(&mut self.$f, FieldRole::$role, w, p)?, FieldRole::$role);
                )*
                raw.push(symbol);
                raw.extend(stamps);
                raw.extend(decimals);
                RecordBatch::try_new(twin_schema(RecordType::Trade, p), raw)
            }
        }
    };
}
floxlog_core::trade_fields!(trade_cols);
