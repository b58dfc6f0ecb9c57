//! Record batches into a tape: each row of a table with the raw columns of
//! [`crate::schema`] becomes one event handed to a [`TapeWriter`].
//!
//! Only the raw columns are read (`exchange_ts_ns`, `price_raw`, ...); the
//! derived ones (timestamps, decimals, `symbol`) are ignored, so a table
//! read from a tape writes back the same events. Types must match the
//! schema exactly (callers cast first; the Python package does) and no raw
//! column may hold a null: a value the tape cannot hold is an error naming
//! the column and row, never a silent zero.

use crate::schema::RecordType;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{Array, ArrowPrimitiveType, PrimitiveArray, RecordBatch};
use floxlog::tape::{TapeError, TapeWriter};
use floxlog_core::{
    Book, BookKind, Event, FieldDesc, FieldType, FieldValue, Fields, Level, Levels, OptionQuote,
    PoolState, Record, Scalar, Trade,
};

fn usage(rt: RecordType, msg: String) -> TapeError {
    TapeError::usage(format!("{} table: {msg}", rt.name()))
}

fn no_nulls(rt: RecordType, name: &str, a: &dyn Array) -> Result<(), TapeError> {
    match a.nulls().and_then(|n| (0..a.len()).find(|&i| n.is_null(i))) {
        Some(row) => Err(usage(rt, format!("column `{name}` is null at row {row}"))),
        None => Ok(()),
    }
}

fn column<'b>(rt: RecordType, b: &'b RecordBatch, name: &str) -> Result<&'b dyn Array, TapeError> {
    let c = b
        .column_by_name(name)
        .ok_or_else(|| usage(rt, format!("no column `{name}`")))?;
    no_nulls(rt, name, c.as_ref())?;
    Ok(c.as_ref())
}

/// The values of a non-null primitive column of exactly type `T`.
fn values<'b, T: ArrowPrimitiveType>(
    rt: RecordType,
    b: &'b RecordBatch,
    name: &str,
) -> Result<&'b [T::Native], TapeError> {
    let c = column(rt, b, name)?;
    let a = c
        .as_any()
        .downcast_ref::<PrimitiveArray<T>>()
        .filter(|_| c.data_type() == &T::DATA_TYPE)
        .ok_or_else(|| {
            usage(
                rt,
                format!(
                    "column `{name}` is {}, expected {}",
                    c.data_type(),
                    T::DATA_TYPE
                ),
            )
        })?;
    Ok(a.values())
}

/// A raw column of a fixed-layout record, typed by its definition.
enum RawCol<'b> {
    I64(&'b [i64]),
    U64(&'b [u64]),
    U32(&'b [u32]),
    U16(&'b [u16]),
    U8(&'b [u8]),
}

impl RawCol<'_> {
    fn get(&self, i: usize) -> Option<FieldValue> {
        match self {
            RawCol::I64(v) => v.get(i).map(|x| x.value()),
            RawCol::U64(v) => v.get(i).map(|x| x.value()),
            RawCol::U32(v) => v.get(i).map(|x| x.value()),
            RawCol::U16(v) => v.get(i).map(|x| x.value()),
            RawCol::U8(v) => v.get(i).map(|x| x.value()),
        }
    }
}

fn raw_col<'b>(rt: RecordType, b: &'b RecordBatch, d: &FieldDesc) -> Result<RawCol<'b>, TapeError> {
    Ok(match d.ty {
        FieldType::I64 => RawCol::I64(values::<Int64Type>(rt, b, d.name)?),
        FieldType::U64 => RawCol::U64(values::<UInt64Type>(rt, b, d.name)?),
        FieldType::U32 => RawCol::U32(values::<UInt32Type>(rt, b, d.name)?),
        FieldType::U16 => RawCol::U16(values::<UInt16Type>(rt, b, d.name)?),
        FieldType::U8 => RawCol::U8(values::<UInt8Type>(rt, b, d.name)?),
    })
}

/// The raw columns of `R`'s fixed fields, by its definition; a field named
/// in `optional` may be absent (`None`).
fn fixed_cols<'b, R: Fields>(
    rt: RecordType,
    b: &'b RecordBatch,
    optional: &[&str],
) -> Result<Vec<Option<RawCol<'b>>>, TapeError> {
    R::FIXED
        .iter()
        .map(|d| {
            if optional.contains(&d.name) && b.column_by_name(d.name).is_none() {
                Ok(None)
            } else {
                raw_col(rt, b, d).map(Some)
            }
        })
        .collect()
}

/// Row `i` of `cols` as `base` (levels or payload already set) with its
/// fixed fields; an absent column's field takes `absent(desc)`.
fn fixed_row<R: Fields>(
    rt: RecordType,
    cols: &[Option<RawCol<'_>>],
    i: usize,
    base: R,
    absent: impl Fn(&FieldDesc) -> Option<FieldValue>,
) -> Result<R, TapeError> {
    base.with_fixed(
        |k, d| {
            match cols.get(k) {
                Some(Some(c)) => c.get(i),
                Some(None) => absent(d),
                None => None,
            }
            .ok_or_else(|| usage(rt, format!("column `{}` has no row {i}", d.name)))
        },
        |d| {
            usage(
                rt,
                format!("column `{}` is out of range at row {i}", d.name),
            )
        },
    )
}

/// Each row of a fixed-layout record's table, by its definition.
fn for_each_record<R: Record + Fields>(
    rt: RecordType,
    b: &RecordBatch,
    f: &mut dyn FnMut(R) -> Result<(), TapeError>,
) -> Result<u64, TapeError> {
    let cols = fixed_cols::<R>(rt, b, &[])?;
    let n = b.num_rows();
    for i in 0..n {
        f(fixed_row(rt, &cols, i, R::default(), |_| None)?)?;
    }
    Ok(n as u64)
}

/// What receives each row's event.
pub type EventSink<'s> = dyn FnMut(&Event<'_>) -> Result<(), TapeError> + 's;

/// Appends every row of `batch` (a `rt` table) to `w`; returns the rows
/// written. On an error the rows before it have been appended.
pub fn append_batch(
    w: &mut TapeWriter,
    rt: RecordType,
    batch: &RecordBatch,
) -> Result<u64, TapeError> {
    for_each_event(rt, batch, &mut |ev| w.append(ev))
}

/// Hands each row of `batch` (a `rt` table), in order, to `f` as an event
/// (borrowing the batch's level and payload buffers); returns the rows.
pub fn for_each_event(
    rt: RecordType,
    batch: &RecordBatch,
    f: &mut EventSink<'_>,
) -> Result<u64, TapeError> {
    let b = batch;
    match rt {
        RecordType::Trade => return for_each_record::<Trade>(rt, b, &mut |t| f(&Event::Trade(t))),
        RecordType::OptionQuote => {
            return for_each_record::<OptionQuote>(rt, b, &mut |q| f(&Event::OptionQuote(q)))
        }
        RecordType::Book => append_books(f, b)?,
        RecordType::PoolState => {
            let cols = fixed_cols::<PoolState>(rt, b, &[])?;
            let c = column(rt, b, "payload")?;
            let payload = c.as_binary_opt::<i32>().ok_or_else(|| {
                usage(
                    rt,
                    format!("column `payload` is {}, expected Binary", c.data_type()),
                )
            })?;
            for i in 0..b.num_rows() {
                let base = PoolState {
                    payload: payload.value(i),
                    ..PoolState::default()
                };
                f(&Event::PoolState(fixed_row(rt, &cols, i, base, |_| None)?))?;
            }
        }
    }
    Ok(b.num_rows() as u64)
}

/// One side's levels: `list<struct<price_raw: int64, qty_raw: int64>>`.
struct Sides<'b> {
    offsets: &'b [i32],
    price: &'b [i64],
    qty: &'b [i64],
}

impl Sides<'_> {
    fn levels(&self, row: usize, out: &mut Vec<Level>) {
        out.clear();
        let (s, e) = (self.offsets[row] as usize, self.offsets[row + 1] as usize);
        out.extend((s..e).map(|k| Level {
            price_raw: self.price[k],
            qty_raw: self.qty[k],
        }));
    }
}

fn sides<'b>(b: &'b RecordBatch, name: &str) -> Result<Sides<'b>, TapeError> {
    let rt = RecordType::Book;
    let c = column(rt, b, name)?;
    let bad = || {
        usage(
            rt,
            format!(
                "column `{name}` is {}, expected List(Struct(price_raw Int64, qty_raw Int64))",
                c.data_type()
            ),
        )
    };
    let list = c.as_list_opt::<i32>().ok_or_else(bad)?;
    let st = list.values().as_struct_opt().ok_or_else(bad)?;
    let field = |f: &str| -> Result<&'b [i64], TapeError> {
        let a = st.column_by_name(f).ok_or_else(bad)?;
        no_nulls(rt, &format!("{name}.{f}"), a.as_ref())?;
        Ok(a.as_primitive_opt::<Int64Type>().ok_or_else(bad)?.values())
    };
    let price = field("price_raw")?;
    let qty = field("qty_raw")?;
    // A sliced struct array (offset > 0) is indexed through the list's
    // offsets into its children as they are: keep it simple and exact.
    if st.offset() != 0 || st.null_count() != 0 {
        return Err(bad());
    }
    Ok(Sides {
        offsets: list.value_offsets(),
        price,
        qty,
    })
}

fn append_books(f: &mut EventSink<'_>, b: &RecordBatch) -> Result<(), TapeError> {
    let rt = RecordType::Book;
    // Without `header_type`, a book's is the flox type byte of its kind.
    let cols = fixed_cols::<Book>(rt, b, &["header_type"])?;
    let header_type = match b.column_by_name("header_type") {
        Some(_) => Some(values::<UInt8Type>(rt, b, "header_type")?),
        None => None,
    };
    let kind = match b.column_by_name("kind") {
        Some(c) => {
            no_nulls(rt, "kind", c.as_ref())?;
            Some(c.as_string_opt::<i32>().ok_or_else(|| {
                usage(
                    rt,
                    format!("column `kind` is {}, expected Utf8", c.data_type()),
                )
            })?)
        }
        None => None,
    };
    let bids = sides(b, "bids")?;
    let asks = sides(b, "asks")?;
    let (mut bl, mut al) = (Vec::new(), Vec::new());
    for i in 0..b.num_rows() {
        let k = match (kind, header_type) {
            (Some(k), _) => match k.value(i) {
                "snapshot" => BookKind::Snapshot,
                "delta" => BookKind::Delta,
                other => {
                    return Err(usage(
                        rt,
                        format!("`kind` is `{other}` at row {i} (snapshot or delta)"),
                    ))
                }
            },
            (None, Some(h)) => match h[i] {
                0 | 2 => BookKind::Snapshot,
                1 | 3 => BookKind::Delta,
                other => {
                    return Err(usage(
                        rt,
                        format!("`header_type` {other} at row {i} is neither a snapshot (0, 2) nor a delta (1, 3); add a `kind` column"),
                    ))
                }
            },
            (None, None) => {
                return Err(usage(
                    rt,
                    "needs a `kind` column (snapshot/delta) or `header_type`".into(),
                ))
            }
        };
        bids.levels(i, &mut bl);
        asks.levels(i, &mut al);
        let base = Book {
            kind: k,
            bids: Levels::Slice(&bl),
            asks: Levels::Slice(&al),
            ..Book::default()
        };
        let book = fixed_row(rt, &cols, i, base, |d| {
            (d.name == "header_type").then(|| k.flox_header_type().value())
        })?;
        f(&Event::Book(book))?;
    }
    Ok(())
}
