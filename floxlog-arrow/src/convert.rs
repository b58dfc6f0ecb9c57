//! Other column types for engines that cannot take the defaults: the
//! `exchange_ts` / `recv_ts` timestamps in microseconds or milliseconds
//! (Spark has no nanoseconds), prices and quantities as float64 or only as
//! the raw integers. The raw `*_ts_ns` and `*_raw` integer columns are
//! never touched, so they stay exact whatever is chosen.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;
use arrow_array::{
    ArrayRef, Float64Array, PrimitiveArray, RecordBatch, TimestampMicrosecondArray,
    TimestampMillisecondArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};
use std::sync::Arc;

/// The unit of the timestamp columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timestamps {
    /// `timestamp[ns, UTC]` (the default).
    #[default]
    Ns,
    /// `timestamp[us, UTC]`, floored.
    Us,
    /// `timestamp[ms, UTC]`, floored.
    Ms,
}

impl Timestamps {
    /// Nanoseconds per unit, and the Arrow unit.
    fn unit(self) -> (i64, TimeUnit) {
        match self {
            Timestamps::Ns => (1, TimeUnit::Nanosecond),
            Timestamps::Us => (1_000, TimeUnit::Microsecond),
            Timestamps::Ms => (1_000_000, TimeUnit::Millisecond),
        }
    }
}

/// The fixed-point columns (`price`, `qty`, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Prices {
    /// Exact `decimal128(38, 8)` (the default).
    #[default]
    Decimal,
    /// float64: `raw / 1e8`, rounded once.
    Float,
    /// None: only the raw integer columns.
    Raw,
}

/// A conversion of a record type's table; the default changes nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conversion {
    /// Timestamp unit.
    pub timestamps: Timestamps,
    /// Fixed-point columns.
    pub prices: Prices,
}

/// What happens to one field.
enum Change {
    Keep,
    Drop,
    /// Floor `<name>_ns` (column index) to the unit.
    Time(usize),
    /// `<name>_raw` (column index) as float64.
    Float(usize),
}

impl Conversion {
    /// Whether it changes nothing.
    pub fn is_identity(&self) -> bool {
        *self == Conversion::default()
    }

    fn changes(&self, s: &Schema) -> Vec<Change> {
        let raw = |name: &str, suffix: &str| s.index_of(&format!("{name}{suffix}")).ok();
        s.fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::Timestamp(TimeUnit::Nanosecond, _)
                    if self.timestamps != Timestamps::Ns =>
                {
                    raw(f.name(), "_ns").map_or(Change::Keep, Change::Time)
                }
                DataType::Decimal128(..) => match (self.prices, raw(f.name(), "_raw")) {
                    (Prices::Float, Some(i)) => Change::Float(i),
                    (Prices::Raw, Some(_)) => Change::Drop,
                    _ => Change::Keep,
                },
                _ => Change::Keep,
            })
            .collect()
    }

    /// The schema of converted batches of schema `s`.
    pub fn schema(&self, s: &Schema) -> SchemaRef {
        let (_, unit) = self.timestamps.unit();
        let fields: Vec<Field> = s
            .fields()
            .iter()
            .zip(self.changes(s))
            .filter_map(|(f, c)| {
                let f = f.as_ref().clone();
                match c {
                    Change::Keep => Some(f),
                    Change::Drop => None,
                    Change::Time(_) => {
                        let tz = match f.data_type() {
                            DataType::Timestamp(_, tz) => tz.clone(),
                            _ => None,
                        };
                        Some(f.with_data_type(DataType::Timestamp(unit, tz)))
                    }
                    Change::Float(_) => Some(f.with_data_type(DataType::Float64)),
                }
            })
            .collect();
        Arc::new(Schema::new_with_metadata(fields, s.metadata().clone()))
    }

    /// Batch `b` converted.
    pub fn batch(&self, b: &RecordBatch) -> Result<RecordBatch, ArrowError> {
        if self.is_identity() {
            return Ok(b.clone());
        }
        let s = b.schema();
        let (per, _) = self.timestamps.unit();
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(b.num_columns());
        for (i, c) in self.changes(&s).into_iter().enumerate() {
            match c {
                Change::Keep => cols.push(b.column(i).clone()),
                Change::Drop => {}
                Change::Time(src) => {
                    let tz = match s.field(i).data_type() {
                        DataType::Timestamp(_, tz) => tz.clone(),
                        _ => None,
                    };
                    let raw = int64_column(b, src)?;
                    // Floored, not truncated: a time before 1970 falls in
                    // the unit it is in.
                    let v = raw.unary::<_, Int64Type>(|t| t.div_euclid(per));
                    let (vals, nulls) = (v.values().clone(), v.nulls().cloned());
                    cols.push(match self.timestamps {
                        Timestamps::Ms => Arc::new(
                            TimestampMillisecondArray::new(vals, nulls).with_timezone_opt(tz),
                        ),
                        _ => Arc::new(
                            TimestampMicrosecondArray::new(vals, nulls).with_timezone_opt(tz),
                        ),
                    });
                }
                Change::Float(src) => {
                    let raw = int64_column(b, src)?;
                    let v: Float64Array = raw.unary(raw_to_f64);
                    cols.push(Arc::new(v));
                }
            }
        }
        RecordBatch::try_new(self.schema(&s), cols)
    }
}

/// Column `i` of `b` as the `int64` column a conversion reads from.
fn int64_column(b: &RecordBatch, i: usize) -> Result<&PrimitiveArray<Int64Type>, ArrowError> {
    b.column(i).as_primitive_opt::<Int64Type>().ok_or_else(|| {
        ArrowError::SchemaError(format!("{} is not int64", b.schema_ref().field(i).name()))
    })
}

/// `raw / 1e8` correctly rounded (one rounding) for every int64: exact
/// division of an exact double up to 2^53, past that through the decimal
/// text (whose parse rounds once).
pub fn raw_to_f64(raw: i64) -> f64 {
    const EXACT: u64 = 1 << 53;
    if raw.unsigned_abs() <= EXACT {
        return raw as f64 / 1e8;
    }
    let a = raw.unsigned_abs();
    let sign = if raw < 0 { "-" } else { "" };
    format!("{sign}{}.{:08}", a / 100_000_000, a % 100_000_000)
        .parse()
        .unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::RecordType;
    use arrow_array::Int64Array;

    #[test]
    fn float_is_rounded_once() {
        for raw in [
            0,
            1,
            -1,
            150_000_000,
            i64::MAX,
            i64::MIN,
            (1 << 53) + 1,
            -(1 << 60) - 7,
        ] {
            let want: f64 = format!("{}e-8", raw).parse().unwrap();
            assert_eq!(raw_to_f64(raw).to_bits(), want.to_bits(), "{raw}");
        }
    }

    #[test]
    fn schema_of_each_choice() {
        let s = RecordType::Trade.schema();
        let c = Conversion {
            timestamps: Timestamps::Us,
            prices: Prices::Raw,
        };
        let out = c.schema(&s);
        assert!(out.index_of("price").is_err() && out.index_of("price_raw").is_ok());
        assert_eq!(
            out.field_with_name("exchange_ts").unwrap().data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        let f = Conversion {
            prices: Prices::Float,
            ..Conversion::default()
        };
        assert_eq!(
            f.schema(&s).field_with_name("qty").unwrap().data_type(),
            &DataType::Float64
        );
        assert_eq!(Conversion::default().schema(&s), s);
    }

    #[test]
    fn batch_floors_times() {
        let s = Arc::new(Schema::new(vec![
            Field::new("exchange_ts_ns", DataType::Int64, false),
            Field::new(
                "exchange_ts",
                DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
                false,
            ),
        ]));
        let ns = Int64Array::from(vec![-1, 0, 1_999_999, -1_000_001]);
        let b = RecordBatch::try_new(
            s,
            vec![
                Arc::new(ns.clone()),
                Arc::new(
                    arrow_array::TimestampNanosecondArray::from(ns.values().to_vec())
                        .with_timezone("UTC"),
                ),
            ],
        )
        .unwrap();
        let c = Conversion {
            timestamps: Timestamps::Ms,
            ..Conversion::default()
        };
        let out = c.batch(&b).unwrap();
        let ms = out
            .column(1)
            .as_primitive::<arrow_array::types::TimestampMillisecondType>();
        assert_eq!(ms.values().to_vec(), vec![-1, 0, 1, -2]);
        assert_eq!(out.column(0).as_ref(), b.column(0).as_ref());
    }
}
