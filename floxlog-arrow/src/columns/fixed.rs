//! The raw columns of a record's fixed fields, from its definition: one
//! vector per field of the field's type, filled through the record's
//! visitor, finished into the raw columns, the tail (`symbol`,
//! `exchange_ts`, `recv_ts`) and the decimal twins that
//! [`crate::schema::record_schema`] lists.

use super::{prim, raw_and_decimal, take, ts_pair};
use crate::convert::{raw_to_f64, Prices};
use crate::symbols::Symbols;
use arrow_array::types::{Float64Type, Int64Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{ArrayRef, PrimitiveArray};
use arrow_schema::ArrowError;
use floxlog_core::{FieldRole, FieldType, FieldValue, Fields};
use std::marker::PhantomData;
use std::sync::Arc;

/// One field's values.
enum RawCol {
    I64(Vec<i64>),
    U64(Vec<u64>),
    U32(Vec<u32>),
    U16(Vec<u16>),
    U8(Vec<u8>),
}

impl RawCol {
    fn new(t: FieldType) -> RawCol {
        match t {
            FieldType::I64 => RawCol::I64(Vec::new()),
            FieldType::U64 => RawCol::U64(Vec::new()),
            FieldType::U32 => RawCol::U32(Vec::new()),
            FieldType::U16 => RawCol::U16(Vec::new()),
            FieldType::U8 => RawCol::U8(Vec::new()),
        }
    }

    /// Appends a value the field itself gave (so it fits the column's
    /// type: the narrowing casts are exact).
    #[inline]
    fn push(&mut self, v: FieldValue) {
        let (s, u) = match v {
            FieldValue::Signed(s) => (s, s as u64),
            FieldValue::Unsigned(u) => (u as i64, u),
        };
        match self {
            RawCol::I64(c) => c.push(s),
            RawCol::U64(c) => c.push(u),
            RawCol::U32(c) => c.push(u as u32),
            RawCol::U16(c) => c.push(u as u16),
            RawCol::U8(c) => c.push(u as u8),
        }
    }
}

/// The fixed fields' columns of record type `R`.
pub(super) struct FixedCols<R> {
    cols: Vec<RawCol>,
    rows: usize,
    record: PhantomData<R>,
}

impl<R: Fields> Default for FixedCols<R> {
    fn default() -> Self {
        FixedCols {
            cols: R::FIXED.iter().map(|d| RawCol::new(d.ty)).collect(),
            rows: 0,
            record: PhantomData,
        }
    }
}

impl<R: Fields> FixedCols<R> {
    /// Rows pushed since the last finish.
    pub(super) fn rows(&self) -> usize {
        self.rows
    }

    /// Appends `r`'s fixed fields.
    #[inline]
    pub(super) fn push(&mut self, r: &R) {
        self.rows += 1;
        let mut cols = self.cols.iter_mut();
        r.visit_fixed(|_, v| {
            if let Some(c) = cols.next() {
                c.push(v);
            }
        });
    }

    /// The batch's columns: the raw ones in record order, then `between`
    /// (levels, payload), the tail, and the twins of the fixed-point fields
    /// in the form `prices` says. Leaves the columns empty with room for
    /// `cap` rows.
    pub(super) fn finish(
        &mut self,
        cap: usize,
        symbols: &Symbols,
        between: impl IntoIterator<Item = ArrayRef>,
        prices: Prices,
    ) -> Result<Vec<ArrayRef>, ArrowError> {
        self.rows = 0;
        let mut raws = Vec::with_capacity(self.cols.len());
        let mut decs = Vec::new();
        let (mut symbol, mut ex_ts, mut recv_ts) = (None, None, None);
        for (d, c) in R::FIXED.iter().zip(self.cols.iter_mut()) {
            let raw = match c {
                RawCol::I64(v) => match d.role {
                    FieldRole::Timestamp => {
                        let (raw, ts) = ts_pair(take(v, cap));
                        match d.name {
                            "exchange_ts_ns" => ex_ts = Some(ts),
                            "recv_ts_ns" => recv_ts = Some(ts),
                            _ => {}
                        }
                        raw
                    }
                    FieldRole::Fixed if prices == Prices::Decimal => {
                        let (raw, dec) = raw_and_decimal(take(v, cap))?;
                        decs.push(dec);
                        raw
                    }
                    FieldRole::Fixed => {
                        let raw = PrimitiveArray::<Int64Type>::from(take(v, cap));
                        if prices == Prices::Float {
                            decs.push(Arc::new(raw.unary::<_, Float64Type>(raw_to_f64)));
                        }
                        Arc::new(raw)
                    }
                    _ => prim::<i64, Int64Type>(take(v, cap)),
                },
                RawCol::U64(v) => prim::<u64, UInt64Type>(take(v, cap)),
                RawCol::U32(v) => {
                    let ids = take(v, cap);
                    if d.name == "symbol_id" {
                        symbol = Some(symbols.column(&ids)?);
                    }
                    prim::<u32, UInt32Type>(ids)
                }
                RawCol::U16(v) => prim::<u16, UInt16Type>(take(v, cap)),
                RawCol::U8(v) => prim::<u8, UInt8Type>(take(v, cap)),
            };
            raws.push(raw);
        }
        let missing = |what: &str| {
            ArrowError::SchemaError(format!("record definition has no `{what}` field"))
        };
        raws.extend(between);
        raws.push(symbol.ok_or_else(|| missing("symbol_id"))?);
        raws.push(ex_ts.ok_or_else(|| missing("exchange_ts_ns"))?);
        raws.push(recv_ts.ok_or_else(|| missing("recv_ts_ns"))?);
        raws.extend(decs);
        Ok(raws)
    }
}
