//! The tables' schemas, pinned: column names, types and nullability of
//! every record type, as they were written out by hand before they were
//! derived from the core's record definitions (so a change to a definition
//! that moves a column shows here).

use arrow_schema::DataType;
use floxlog_arrow::schema::{decimal_type, level_item_field, symbol_type, timestamp_type};
use floxlog_arrow::RecordType;

fn columns(rt: RecordType) -> Vec<(String, DataType, bool)> {
    rt.schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone(), f.is_nullable()))
        .collect()
}

fn want(cols: &[(&str, DataType)]) -> Vec<(String, DataType, bool)> {
    cols.iter()
        .map(|(n, t)| (n.to_string(), t.clone(), *n == "symbol"))
        .collect()
}

fn tail() -> Vec<(&'static str, DataType)> {
    vec![
        ("symbol", symbol_type()),
        ("exchange_ts", timestamp_type()),
        ("recv_ts", timestamp_type()),
    ]
}

#[test]
fn book_schema_is_pinned() {
    use DataType::*;
    let levels = List(level_item_field());
    let mut v = vec![
        ("kind", Utf8),
        ("exchange_ts_ns", Int64),
        ("recv_ts_ns", Int64),
        ("seq", Int64),
        ("symbol_id", UInt32),
        ("header_type", UInt8),
        ("instrument", UInt8),
        ("exchange_id", UInt16),
        ("bids", levels.clone()),
        ("asks", levels),
    ];
    v.extend(tail());
    assert_eq!(columns(RecordType::Book), want(&v));
    let DataType::Struct(level) = level_item_field().data_type().clone() else {
        panic!("levels are not structs");
    };
    let level: Vec<_> = level
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    assert_eq!(
        level,
        [
            ("price_raw".to_string(), Int64),
            ("qty_raw".to_string(), Int64)
        ]
    );
}

#[test]
fn pool_state_schema_is_pinned() {
    use DataType::*;
    let mut v = vec![
        ("exchange_ts_ns", Int64),
        ("recv_ts_ns", Int64),
        ("symbol_id", UInt32),
        ("sub_type", UInt8),
        ("venue", UInt8),
        ("exchange_id", UInt16),
        ("payload", Binary),
    ];
    v.extend(tail());
    assert_eq!(columns(RecordType::PoolState), want(&v));
}

#[test]
fn option_quote_schema_is_pinned() {
    use DataType::*;
    let fixed = [
        "mark_price",
        "index_price",
        "underlying_price",
        "iv",
        "bid_price",
        "ask_price",
        "bid_size",
        "ask_size",
        "bid_iv",
        "ask_iv",
        "open_interest",
    ];
    let raw: Vec<String> = fixed.iter().map(|n| format!("{n}_raw")).collect();
    let mut v = vec![("exchange_ts_ns", Int64), ("recv_ts_ns", Int64)];
    v.extend(raw.iter().map(|n| (n.as_str(), Int64)));
    v.extend([
        ("symbol_id", UInt32),
        ("instrument", UInt8),
        ("exchange_id", UInt16),
    ]);
    v.extend(tail());
    v.extend(fixed.iter().map(|n| (*n, decimal_type())));
    assert_eq!(columns(RecordType::OptionQuote), want(&v));
}

#[test]
fn trade_schema_is_pinned() {
    use DataType::*;
    let mut v = vec![
        ("exchange_ts_ns", Int64),
        ("recv_ts_ns", Int64),
        ("price_raw", Int64),
        ("qty_raw", Int64),
        ("trade_id", UInt64),
        ("symbol_id", UInt32),
        ("side", UInt8),
        ("instrument", UInt8),
        ("exchange_id", UInt16),
    ];
    v.extend(tail());
    v.extend([("price", decimal_type()), ("qty", decimal_type())]);
    assert_eq!(columns(RecordType::Trade), want(&v));
}
