//! Trade columns: the bulk of most tapes, filled by the core's batch trade
//! kernel straight into their zero-filled slots ([`Fresh`]).

use super::fresh::{mapped, Fresh, Plain};
use crate::schema::{RecordType, DECIMAL_PRECISION, DECIMAL_SCALE};
use crate::symbols::Symbols;
use arrow_array::types::{
    Decimal128Type, Int64Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
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

/// The raw `i64` column and its `decimal128(38, 8)` twin.
fn raw_and_decimal(v: &mut Fresh<i64>) -> Result<(ArrayRef, ArrayRef), ArrowError> {
    let wide = mapped(v.as_slice(), i128::from).take_buffer();
    let dec = PrimitiveArray::<Decimal128Type>::new(wide, None)
        .with_precision_and_scale(DECIMAL_PRECISION, DECIMAL_SCALE)?;
    let raw = PrimitiveArray::<Int64Type>::new(v.take_buffer(), None);
    Ok((Arc::new(raw), Arc::new(dec)))
}

/// A trade field's column type: its Arrow raw column, and the twin its
/// role gives it (a timestamp or a decimal, `i64` fields only).
pub(super) trait TradeValue: Plain {
    /// The raw column and, for a timestamp or fixed-point field, its twin.
    fn finish(
        v: &mut Fresh<Self>,
        role: FieldRole,
    ) -> Result<(ArrayRef, Option<ArrayRef>), ArrowError>;
}

macro_rules! unsigned_value {
    ($($t:ty => $arrow:ty),*) => {$(
        impl TradeValue for $t {
            fn finish(v: &mut Fresh<$t>, _: FieldRole) -> Result<(ArrayRef, Option<ArrayRef>), ArrowError> {
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
    ) -> Result<(ArrayRef, Option<ArrayRef>), ArrowError> {
        Ok(match role {
            FieldRole::Timestamp => {
                let (raw, ts) = ts_pair(v.take_buffer());
                (raw, Some(ts))
            }
            FieldRole::Fixed => {
                let (raw, dec) = raw_and_decimal(v)?;
                (raw, Some(dec))
            }
            FieldRole::Plain | FieldRole::Optional => (
                Arc::new(PrimitiveArray::<Int64Type>::new(v.take_buffer(), None)),
                None,
            ),
        })
    }
}

/// [`TradeCols`] from the trade's field list: one [`Fresh`] column per
/// field, named as the field (the first one's length is the row count).
macro_rules! trade_cols {
    (
        $(#[doc = $d0:literal])* $f0:ident $F0:ident: $t0:ident @ $o0:literal, $r0:ident;
        $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*
    ) => {
        /// Trades.
        #[derive(Default)]
        pub(super) struct TradeCols {
            $f0: Fresh<$t0>,
            $( $f: Fresh<$t>, )*
        }

        impl TradeCols {
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
            }

            #[inline]
            pub(super) fn push(&mut self, t: &Trade, first: usize) {
                if self.len() == self.$f0.cap() {
                    self.reserve(self.len() + 1, first);
                }
                self.$f0.push(t.$f0);
                $( self.$f.push(t.$f); )*
            }

            /// `n` slots after the rows, in every column, for the kernel (no
            /// zeroing: they are zero-filled or hold values the kernel
            /// overwrites, and only what [`TradeCols::set_len`] keeps is read).
            pub(super) fn room(&mut self, n: usize, first: usize) -> TradeColumns<'_> {
                self.reserve(self.len() + n, first);
                TradeColumns {
                    $f0: self.$f0.room(n),
                    $( $f: self.$f.room(n), )*
                }
            }

            /// Keeps `len` rows.
            pub(super) fn set_len(&mut self, len: usize) {
                self.$f0.set_len(len);
                $( self.$f.set_len(len); )*
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
                add(TradeValue::finish(&mut self.$f0, FieldRole::$r0)?, FieldRole::$r0);
                $( add(TradeValue::finish(&mut self.$f, FieldRole::$role)?, FieldRole::$role); )*
                raw.push(symbol);
                raw.extend(stamps);
                raw.extend(decimals);
                RecordBatch::try_new(RecordType::Trade.schema(), raw)
            }
        }
    };
}
floxlog_core::trade_fields!(trade_cols);
