//! The Arrow schema of each record type.
//!
//! Raw columns carry the names and integer types of the conformance
//! corpus's JSON fields. Beside them: `exchange_ts` and `recv_ts` as
//! `Timestamp(Nanosecond, "UTC")` (the same nanoseconds), the fixed-point
//! quantities as `Decimal128(38, 8)` (the raw `i64` is the decimal's
//! unscaled value: exact, never a float), and `symbol`, the name from the
//! tape's `metadata.json` (null where the tape has none), dictionary
//! encoded (`dictionary<int32, utf8>`: a few names repeated millions of
//! times cost four bytes a row, and Parquet, DuckDB and pandas read it as
//! a string or categorical column).

use arrow_schema::{DataType, Field, Fields as ArrowFields, Schema, SchemaRef, TimeUnit};
use floxlog_core::{Book, FieldRole, FieldType, Fields, Level, OptionQuote, PoolState, Trade};
use std::sync::Arc;

/// Precision of the decimal columns.
pub const DECIMAL_PRECISION: u8 = 38;
/// Scale of the decimal columns: the format's fixed point is 1e-8.
pub const DECIMAL_SCALE: i8 = 8;

/// A record type as a table. Book snapshots and deltas share one table
/// with a `kind` column (`"snapshot"` / `"delta"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordType {
    /// Frame type 1.
    Trade,
    /// Frame types 2 (snapshot) and 3 (delta).
    Book,
    /// Frame type 4.
    OptionQuote,
    /// Frame type 5.
    PoolState,
}

impl RecordType {
    /// Every record type.
    pub const ALL: [RecordType; 4] = [
        RecordType::Trade,
        RecordType::Book,
        RecordType::OptionQuote,
        RecordType::PoolState,
    ];

    /// Table name: `trade`, `book`, `option_quote`, `pool_state`.
    pub fn name(self) -> &'static str {
        match self {
            RecordType::Trade => "trade",
            RecordType::Book => "book",
            RecordType::OptionQuote => "option_quote",
            RecordType::PoolState => "pool_state",
        }
    }

    /// The frame types of this table (index = frame type), as
    /// [`floxlog::tape::Filter::types`] takes them.
    pub fn type_mask(self) -> [bool; 6] {
        let mut m = [false; 6];
        match self {
            RecordType::Trade => m[1] = true,
            RecordType::Book => {
                m[2] = true;
                m[3] = true;
            }
            RecordType::OptionQuote => m[4] = true,
            RecordType::PoolState => m[5] = true,
        }
        m
    }

    /// The table of frame type `t`, if it is one of 1.0's.
    pub fn of_frame_type(t: u8) -> Option<RecordType> {
        match t {
            1 => Some(RecordType::Trade),
            2 | 3 => Some(RecordType::Book),
            4 => Some(RecordType::OptionQuote),
            5 => Some(RecordType::PoolState),
            _ => None,
        }
    }

    /// The record type named `name`: the table names above, plus the
    /// plural and short forms `trades`, `books`, `book_snapshot`,
    /// `book_delta`, `option`, `options`, `option_quotes`, `pool`,
    /// `pools`, `pool_states` (case-insensitive).
    pub fn from_name(name: &str) -> Option<RecordType> {
        match name.trim().to_ascii_lowercase().as_str() {
            "trade" | "trades" => Some(RecordType::Trade),
            "book" | "books" | "book_snapshot" | "book_delta" => Some(RecordType::Book),
            "option_quote" | "option_quotes" | "option" | "options" => {
                Some(RecordType::OptionQuote)
            }
            "pool_state" | "pool_states" | "pool" | "pools" => Some(RecordType::PoolState),
            _ => None,
        }
    }

    /// The record type whose raw columns a schema carries, told by a
    /// column only that table has: the trade's first plain field no other
    /// table has, `bids`, `mark_price_raw`, `payload`.
    pub fn of_schema(schema: &Schema) -> Option<RecordType> {
        let has = |n: &str| schema.index_of(n).is_ok();
        let found: Vec<RecordType> = [
            (RecordType::Trade, trade_only_column()),
            (RecordType::Book, "bids"),
            (RecordType::OptionQuote, "mark_price_raw"),
            (RecordType::PoolState, "payload"),
        ]
        .into_iter()
        .filter(|(_, c)| has(c))
        .map(|(t, _)| t)
        .collect();
        match found.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// The raw fields whose definition says 0 means unknown (writers may
    /// leave them out).
    pub fn optional_fields(self) -> Vec<&'static str> {
        let fields = match self {
            RecordType::Trade => Trade::FIXED,
            RecordType::OptionQuote => OptionQuote::FIXED,
            RecordType::Book => Book::FIXED,
            RecordType::PoolState => PoolState::FIXED,
        };
        fields
            .iter()
            .filter(|d| d.role == FieldRole::Optional)
            .map(|d| d.name)
            .collect()
    }

    /// The Arrow schema of this table.
    pub fn schema(self) -> SchemaRef {
        match self {
            RecordType::Trade => trade_schema(),
            RecordType::Book => book_schema(),
            RecordType::OptionQuote => option_quote_schema(),
            RecordType::PoolState => pool_state_schema(),
        }
    }
}

/// The first trade column no other table has, not a fixed-point one: it tells a trade
/// table. Not a fixed-point one: a table may carry its decimal twin
/// instead.
fn trade_only_column() -> &'static str {
    // (The doc above: a table may carry a fixed-point column's decimal
    // twin instead.)
    let others = [book_schema(), option_quote_schema(), pool_state_schema()];
    Trade::FIXED
        .iter()
        .filter(|d| d.role != FieldRole::Fixed)
        .map(|d| d.name)
        .find(|n| others.iter().all(|s| s.index_of(n).is_err()))
        .unwrap_or("")
}

/// `Timestamp(Nanosecond, Some("UTC"))`.
pub fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
}

/// `Dictionary(Int32, Utf8)`: the symbol name column.
pub fn symbol_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// `Decimal128(38, 8)`.
pub fn decimal_type() -> DataType {
    DataType::Decimal128(DECIMAL_PRECISION, DECIMAL_SCALE)
}

fn f(name: &str, t: DataType) -> Field {
    Field::new(name, t, false)
}

/// The fields every table ends with (before its decimals): the symbol
/// name and the two timestamps.
fn tail() -> [Field; 3] {
    [
        Field::new("symbol", symbol_type(), true),
        f("exchange_ts", timestamp_type()),
        f("recv_ts", timestamp_type()),
    ]
}

/// One book level: `struct<price_raw: int64, qty_raw: int64>`.
pub fn level_fields() -> ArrowFields {
    ArrowFields::from_iter(raw_fields::<Level>())
}

/// The list item field of `bids` / `asks`.
pub fn level_item_field() -> Arc<Field> {
    Arc::new(Field::new("item", DataType::Struct(level_fields()), false))
}

fn levels_type() -> DataType {
    DataType::List(level_item_field())
}

/// The Arrow type of a record field's raw column.
pub fn raw_type(t: FieldType) -> DataType {
    match t {
        FieldType::I64 => DataType::Int64,
        FieldType::U64 => DataType::UInt64,
        FieldType::U32 => DataType::UInt32,
        FieldType::U16 => DataType::UInt16,
        FieldType::U8 => DataType::UInt8,
    }
}

/// The raw columns of a record's fixed fields, in record order.
fn raw_fields<R: Fields>() -> impl Iterator<Item = Field> {
    R::FIXED.iter().map(|d| f(d.name, raw_type(d.ty)))
}

/// A fixed-layout record's table, from its definition: the raw columns in
/// record order, the tail columns (`tail`), then a decimal twin of each fixed-point
/// field (its name without `_raw`).
pub fn record_schema<R: Fields>() -> SchemaRef {
    let mut v: Vec<Field> = raw_fields::<R>().collect();
    v.extend(tail());
    v.extend(
        R::FIXED
            .iter()
            .filter(|d| d.role == FieldRole::Fixed)
            .map(|d| f(d.decimal_name(), decimal_type())),
    );
    Arc::new(Schema::new(v))
}

/// Trades.
pub fn trade_schema() -> SchemaRef {
    record_schema::<Trade>()
}

/// Book snapshots and deltas: `kind`, the header's fields, the levels.
pub fn book_schema() -> SchemaRef {
    let mut v = vec![f("kind", DataType::Utf8)];
    v.extend(raw_fields::<Book>());
    v.extend([f("bids", levels_type()), f("asks", levels_type())]);
    v.extend(tail());
    Arc::new(Schema::new(v))
}

/// Option quotes.
pub fn option_quote_schema() -> SchemaRef {
    record_schema::<OptionQuote>()
}

/// Pool states: the header's fields, then `payload`, the opaque venue
/// payload.
pub fn pool_state_schema() -> SchemaRef {
    let mut v: Vec<Field> = raw_fields::<PoolState>().collect();
    v.push(f("payload", DataType::Binary));
    v.extend(tail());
    Arc::new(Schema::new(v))
}
