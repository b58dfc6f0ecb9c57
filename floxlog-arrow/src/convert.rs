//! Other column types for engines that cannot take the defaults: the
//! `exchange_ts` / `recv_ts` timestamps in microseconds or milliseconds
//! (Spark has no nanoseconds), prices and quantities as float64 or only as
//! the raw integers, and book levels with `price`/`qty` beside their raw
//! fields (as the Python package reads them). The raw `*_ts_ns` and
//! `*_raw` integer columns are never touched, so they stay exact whatever
//! is chosen. The one conversion of every front end (export, Python
//! reads, follow and book samples).

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;
use arrow_array::{
    ArrayRef, ListArray, PrimitiveArray, RecordBatch, StructArray, TimestampMicrosecondArray,
    TimestampMillisecondArray,
};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
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

impl Prices {
    /// The type of a fixed-point twin (`None`: no twin).
    fn data_type(self) -> Option<DataType> {
        match self {
            Prices::Decimal => Some(crate::schema::decimal_type()),
            Prices::Float => Some(DataType::Float64),
            Prices::Raw => None,
        }
    }

    /// The twin of the raw values `raw` (`None`: no twin).
    fn twin(self, raw: &PrimitiveArray<Int64Type>) -> Result<Option<ArrayRef>, ArrowError> {
        Ok(match self {
            Prices::Decimal => Some(Arc::new(
                raw.unary::<_, arrow_array::types::Decimal128Type>(i128::from)
                    .with_precision_and_scale(
                        crate::schema::DECIMAL_PRECISION,
                        crate::schema::DECIMAL_SCALE,
                    )?,
            ) as ArrayRef),
            Prices::Float => Some(Arc::new(
                raw.unary::<_, arrow_array::types::Float64Type>(raw_to_f64),
            ) as ArrayRef),
            Prices::Raw => None,
        })
    }
}

/// A conversion of a record type's table; the default changes nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conversion {
    /// Timestamp unit.
    pub timestamps: Timestamps,
    /// Fixed-point columns.
    pub prices: Prices,
}

/// A [`Conversion`] whose book levels (`bids`, `asks`: lists of
/// `price_raw`, `qty_raw`) also gain `price` and `qty` in the form its
/// prices say (none with [`Prices::Raw`]), as the Python package reads
/// them; a plain [`Conversion`] keeps them raw, as exports write them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WithLevels(pub Conversion);

impl WithLevels {
    /// The schema of converted batches of schema `s`.
    pub fn schema(&self, s: &Schema) -> SchemaRef {
        self.0.schema_of(s, true)
    }

    /// Batch `b` converted.
    pub fn batch(&self, b: &RecordBatch) -> Result<RecordBatch, ArrowError> {
        self.0.batch_of(b, true)
    }
}

/// What happens to one field.
enum Change {
    Keep,
    Drop,
    /// Floor `<name>_ns` (column index) to the unit.
    Time(usize),
    /// `<name>_raw` (column index) as float64.
    Float(usize),
    /// Raw book levels with their price twins added.
    Levels,
}

/// Whether `t` is a list of raw book levels (`price_raw`, `qty_raw`).
fn is_raw_levels(t: &DataType) -> bool {
    let DataType::List(item) = t else {
        return false;
    };
    let DataType::Struct(fields) = item.data_type() else {
        return false;
    };
    let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
    names == ["price_raw", "qty_raw"] && fields.iter().all(|f| f.data_type() == &DataType::Int64)
}

/// The level struct's fields with twins of type `t` (every field
/// nullable, as pyarrow's `struct` makes them).
fn level_fields(t: DataType) -> Fields {
    Fields::from(vec![
        Field::new("price_raw", DataType::Int64, true),
        Field::new("qty_raw", DataType::Int64, true),
        Field::new("price", t.clone(), true),
        Field::new("qty", t, true),
    ])
}

/// The list item of levels with twins of type `t`.
fn level_item(t: DataType) -> Arc<Field> {
    Arc::new(Field::new("item", DataType::Struct(level_fields(t)), false))
}

impl Conversion {
    /// Whether it changes nothing.
    pub fn is_identity(&self) -> bool {
        *self == Conversion::default()
    }

    /// What happens to each field of `s` (`levels`: book levels gain
    /// their twins).
    fn changes(&self, s: &Schema, levels: bool) -> Vec<Change> {
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
                t if levels && self.prices != Prices::Raw && is_raw_levels(t) => Change::Levels,
                _ => Change::Keep,
            })
            .collect()
    }

    /// The schema of converted batches of schema `s`.
    pub fn schema(&self, s: &Schema) -> SchemaRef {
        self.schema_of(s, false)
    }

    /// Batch `b` converted.
    pub fn batch(&self, b: &RecordBatch) -> Result<RecordBatch, ArrowError> {
        self.batch_of(b, false)
    }

    fn schema_of(&self, s: &Schema, levels: bool) -> SchemaRef {
        let (_, unit) = self.timestamps.unit();
        let fields: Vec<Field> = s
            .fields()
            .iter()
            .zip(self.changes(s, levels))
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
                    Change::Levels => {
                        let t = self.prices.data_type()?;
                        Some(Field::new(f.name(), DataType::List(level_item(t)), false))
                    }
                }
            })
            .collect();
        Arc::new(Schema::new_with_metadata(fields, s.metadata().clone()))
    }

    fn batch_of(&self, b: &RecordBatch, levels: bool) -> Result<RecordBatch, ArrowError> {
        let s = b.schema();
        let changes = self.changes(&s, levels);
        if changes.iter().all(|c| matches!(c, Change::Keep)) {
            return Ok(b.clone());
        }
        let (per, _) = self.timestamps.unit();
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(b.num_columns());
        for (i, c) in changes.into_iter().enumerate() {
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
                Change::Float(src) => cols.extend(self.prices.twin(int64_column(b, src)?)?),
                Change::Levels => cols.push(self.levels(b.column(i))?),
            }
        }
        RecordBatch::try_new(self.schema_of(&s, levels), cols)
    }
}

impl Conversion {
    /// Raw levels `col` with `price`/`qty` twins added to each level.
    fn levels(&self, col: &ArrayRef) -> Result<ArrayRef, ArrowError> {
        let bad = || ArrowError::SchemaError("book levels are not a list of raw levels".into());
        let list = col.as_list_opt::<i32>().ok_or_else(bad)?;
        let items = list.values().as_struct_opt().ok_or_else(bad)?;
        let raw = |i: usize| {
            items
                .column(i)
                .as_primitive_opt::<Int64Type>()
                .ok_or_else(bad)
        };
        let (p, q) = (raw(0)?, raw(1)?);
        let (Some(pt), Some(qt), Some(t)) = (
            self.prices.twin(p)?,
            self.prices.twin(q)?,
            self.prices.data_type(),
        ) else {
            return Ok(col.clone());
        };
        let cols = vec![items.column(0).clone(), items.column(1).clone(), pt, qt];
        let st = StructArray::try_new(level_fields(t.clone()), cols, items.nulls().cloned())?;
        Ok(Arc::new(ListArray::try_new(
            level_item(t),
            list.offsets().clone(),
            Arc::new(st),
            list.nulls().cloned(),
        )?))
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

    /// A book batch of two rows: levels `[(price_raw, qty_raw)]` per row.
    fn book_batch(rows: [&[(i64, i64)]; 2]) -> RecordBatch {
        use crate::columns::{Columns, Limits};
        use floxlog_core::{Book, BookKind, Event, Level, Levels};
        let mut c = Columns::new(Limits::rows(100));
        for r in rows {
            let lv: Vec<Level> = r
                .iter()
                .map(|&(price_raw, qty_raw)| Level { price_raw, qty_raw })
                .collect();
            let b = Book {
                kind: BookKind::Snapshot,
                exchange_ts_ns: 1,
                recv_ts_ns: 2,
                seq: 3,
                symbol_id: 4,
                header_type: 0,
                instrument: 0,
                exchange_id: 5,
                bids: Levels::Slice(&lv),
                asks: Levels::Slice(&[]),
            };
            c.push(&Event::Book(b)).unwrap();
        }
        c.finish(RecordType::Book, &crate::symbols::Symbols::none())
            .unwrap()
            .unwrap()
    }

    #[test]
    fn book_levels_gain_price_twins_only_when_asked() {
        let big = (1i64 << 53) + 1;
        let b = book_batch([&[(150_000_000, -3), (big, i64::MIN)], &[]]);
        // An export's conversion leaves the levels raw, whatever the prices.
        let export = Conversion {
            prices: Prices::Float,
            ..Conversion::default()
        };
        assert_eq!(export.batch(&b).unwrap().column(8), b.column(8));
        for prices in [Prices::Decimal, Prices::Float, Prices::Raw] {
            let c = WithLevels(Conversion {
                prices,
                ..Conversion::default()
            });
            let out = c.batch(&b).unwrap();
            assert_eq!(out.schema(), c.schema(&b.schema()));
            let bids = out.column_by_name("bids").unwrap().as_list::<i32>();
            assert_eq!(bids.value_offsets(), &[0, 2, 2]);
            let items = bids.values().as_struct();
            if prices == Prices::Raw {
                assert_eq!(items.num_columns(), 2);
                continue;
            }
            let names: Vec<&str> = items.column_names();
            assert_eq!(names, ["price_raw", "qty_raw", "price", "qty"]);
            let raw = items.column(0).as_primitive::<Int64Type>();
            assert_eq!(raw.values().to_vec(), vec![150_000_000, big]);
            let (p, q) = (items.column(2), items.column(3));
            match prices {
                Prices::Decimal => {
                    let p = p.as_primitive::<arrow_array::types::Decimal128Type>();
                    let q = q.as_primitive::<arrow_array::types::Decimal128Type>();
                    assert_eq!(p.value_as_string(0), "1.50000000");
                    assert_eq!(p.value(1), i128::from(big));
                    assert_eq!(q.value(1), i128::from(i64::MIN));
                    assert_eq!(q.value_as_string(0), "-0.00000003");
                }
                _ => {
                    let p = p.as_primitive::<arrow_array::types::Float64Type>();
                    assert_eq!(p.values().to_vec(), vec![1.5, raw_to_f64(big)]);
                    let q = q.as_primitive::<arrow_array::types::Float64Type>();
                    assert_eq!(q.value(0).to_bits(), raw_to_f64(-3).to_bits());
                }
            }
        }
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
