//! Fast event writers for `cat`: JSON lines in the corpus schema (the same
//! text as the corpus's `expected.jsonl`: compact, fields in corpus order)
//! and CSV. Both append to a byte buffer without building JSON values.

use crate::json::PriceStyle;
use floxlog_core::fixed::Decimal;
use floxlog_core::{
    values_of, Book, Event, FieldDesc, FieldRole, FieldValue, Fields, Levels, OptionQuote,
    PoolState, Trade,
};
use std::io::Write;

fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut b = [0u8; 20];
    let mut i = b.len();
    loop {
        i -= 1;
        b[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&b[i..]);
}

fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

fn key(out: &mut Vec<u8>, k: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(k.as_bytes());
    out.extend_from_slice(b"\":");
}

fn int_field(out: &mut Vec<u8>, k: &str, v: i64) {
    key(out, k);
    push_i64(out, v);
}

fn uint_field(out: &mut Vec<u8>, k: &str, v: u64) {
    key(out, k);
    push_u64(out, v);
}

fn price_value(out: &mut Vec<u8>, style: PriceStyle, raw: i64) {
    match style {
        PriceStyle::Raw => push_i64(out, raw),
        PriceStyle::Decimal => {
            out.push(b'"');
            let _ = write!(out, "{}", Decimal(raw));
            out.push(b'"');
        }
    }
}

fn price_field(out: &mut Vec<u8>, style: PriceStyle, k: &str, raw: i64) {
    let name = match style {
        PriceStyle::Raw => k,
        PriceStyle::Decimal => k.strip_suffix("_raw").unwrap_or(k),
    };
    key(out, name);
    price_value(out, style, raw);
}

fn levels(out: &mut Vec<u8>, style: PriceStyle, k: &str, l: &Levels<'_>) {
    key(out, k);
    out.push(b'[');
    for (i, lv) in l.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'[');
        price_value(out, style, lv.price_raw);
        out.push(b',');
        price_value(out, style, lv.qty_raw);
        out.push(b']');
    }
    out.push(b']');
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A record's fixed fields, in record order, by its definition.
#[inline]
fn record_json<R: Fields>(out: &mut Vec<u8>, style: PriceStyle, r: &R) {
    r.visit_fixed(|d, v| match (d.role, v) {
        (FieldRole::Fixed, FieldValue::Signed(x)) => price_field(out, style, d.name, x),
        (_, FieldValue::Signed(x)) => int_field(out, d.name, x),
        (_, FieldValue::Unsigned(x)) => uint_field(out, d.name, x),
    });
}

/// Appends one JSON line (with `\n`) in the corpus schema.
pub fn write_json_line(out: &mut Vec<u8>, ev: &Event<'_>, style: PriceStyle) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(ev.type_name().as_bytes());
    out.push(b'"');
    // Fields in record order (timestamps first, as in the corpus), then
    // the levels or the payload.
    match ev {
        Event::Trade(t) => record_json(out, style, t),
        Event::Book(b) => {
            record_json(out, style, b);
            levels(out, style, "bids", &b.bids);
            levels(out, style, "asks", &b.asks);
        }
        Event::OptionQuote(q) => record_json(out, style, q),
        Event::PoolState(p) => {
            record_json(out, style, p);
            key(out, "payload_hex");
            out.push(b'"');
            hex(out, p.payload);
            out.push(b'"');
        }
    }
    out.extend_from_slice(b"}\n");
}

fn hex(out: &mut Vec<u8>, b: &[u8]) {
    for &x in b {
        out.push(HEX[(x >> 4) as usize]);
        out.push(HEX[(x & 15) as usize]);
    }
}

/// A CSV column: its name, the frame types it applies to (bit = type),
/// and where it is in each record type's definition (trade, book, option
/// quote, pool state; `None`: not a field of that type).
struct Col {
    name: &'static str,
    types: u8,
    at: [Option<usize>; 4],
}

const ALL: u8 = 0b11_1110;
const TRADE: u8 = 1 << 1;
const BOOK: u8 = (1 << 2) | (1 << 3);
const OPT: u8 = 1 << 4;
const POOL: u8 = 1 << 5;

/// The columns first in every CSV (what most records have).
const COMMON: &[(&str, u8)] = &[
    ("type", ALL),
    ("exchange_ts_ns", ALL),
    ("recv_ts_ns", ALL),
    ("symbol_id", ALL),
    ("instrument", TRADE | BOOK | OPT),
    ("exchange_id", ALL),
];

/// Each record type's fixed fields and types bit, in [`Col::at`]'s order,
/// with the columns that follow its fields.
fn records() -> [(&'static [FieldDesc], u8, &'static [&'static str]); 4] {
    [
        (Trade::FIXED, TRADE, &[]),
        (Book::FIXED, BOOK, &["bids", "asks"]),
        (OptionQuote::FIXED, OPT, &[]),
        (PoolState::FIXED, POOL, &["payload_hex"]),
    ]
}

/// Every column in order: [`COMMON`], then each record type's other fields
/// in record order (from its definition) and its levels or payload.
fn all_columns() -> Vec<Col> {
    let recs = records();
    let own = recs.iter().flat_map(|(fields, types, extra)| {
        fields
            .iter()
            .map(|d| d.name)
            .filter(|n| !COMMON.iter().any(|(c, _)| c == n))
            .chain(extra.iter().copied())
            .map(|n| (n, *types))
    });
    COMMON
        .iter()
        .copied()
        .chain(own)
        .map(|(name, types)| Col {
            name,
            types,
            at: recs.map(|(fields, t, _)| {
                fields
                    .iter()
                    .position(|d| d.name == name)
                    .filter(|_| types & t != 0)
            }),
        })
        .collect()
}

/// CSV writer whose columns are the union of the selected types' fields.
/// Book levels are one field each side: `price:qty` pairs joined by `|`.
pub struct Csv {
    cols: Vec<Col>,
    style: PriceStyle,
}

impl Csv {
    /// Columns for frame types `types` (index = frame type; `None` = all).
    pub fn new(types: Option<[bool; 6]>, style: PriceStyle) -> Csv {
        let mask = match types {
            None => ALL,
            Some(t) => (1..6).filter(|&i| t[i]).fold(0u8, |m, i| m | (1 << i)),
        };
        Csv {
            cols: all_columns()
                .into_iter()
                .filter(|c| c.types & mask != 0)
                .collect(),
            style,
        }
    }

    /// Appends the header line.
    pub fn write_header(&self, out: &mut Vec<u8>) {
        for (n, c) in self.cols.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            let name = c.name;
            let name = match self.style {
                PriceStyle::Decimal if name.ends_with("_raw") => &name[..name.len() - 4],
                _ => name,
            };
            out.extend_from_slice(name.as_bytes());
        }
        out.push(b'\n');
    }

    /// Appends one event's line.
    pub fn write_row(&self, out: &mut Vec<u8>, ev: &Event<'_>) {
        let st = self.style;
        let (rt, fields, vals) = match ev {
            Event::Trade(t) => (0, Trade::FIXED, values_of(t)),
            Event::Book(b) => (1, Book::FIXED, values_of(b)),
            Event::OptionQuote(q) => (2, OptionQuote::FIXED, values_of(q)),
            Event::PoolState(p) => (3, PoolState::FIXED, values_of(p)),
        };
        let price = |out: &mut Vec<u8>, v: i64| match st {
            PriceStyle::Raw => push_i64(out, v),
            PriceStyle::Decimal => {
                let _ = write!(out, "{}", Decimal(v));
            }
        };
        for (n, c) in self.cols.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            let side = |out: &mut Vec<u8>, l: &Levels<'_>| {
                for (k, lv) in l.iter().enumerate() {
                    if k > 0 {
                        out.push(b'|');
                    }
                    price(out, lv.price_raw);
                    out.push(b':');
                    price(out, lv.qty_raw);
                }
            };
            if let Some(k) = c.at.get(rt).copied().flatten() {
                match (fields.get(k).map(|d| d.role), vals.get(k)) {
                    (Some(FieldRole::Fixed), Some(&FieldValue::Signed(v))) => price(out, v),
                    (_, Some(&FieldValue::Signed(v))) => push_i64(out, v),
                    (_, Some(&FieldValue::Unsigned(v))) => push_u64(out, v),
                    (_, None) => {}
                }
                continue;
            }
            match (c.name, ev) {
                ("type", _) => out.extend_from_slice(ev.type_name().as_bytes()),
                ("bids", Event::Book(b)) => side(out, &b.bids),
                ("asks", Event::Book(b)) => side(out, &b.asks),
                ("payload_hex", Event::PoolState(p)) => hex(out, p.payload),
                _ => {}
            }
        }
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floxlog_core::{Book, BookKind, Level, Trade};

    /// The encoder's lines parse back (by [`crate::json`], both price
    /// styles) to the events printed, extremes included.
    #[test]
    fn json_lines_read_back_as_the_events_printed() {
        let lv = [Level {
            price_raw: -5,
            qty_raw: 150_000_000,
        }];
        let evs = [
            Event::Trade(Trade {
                exchange_ts_ns: i64::MIN,
                recv_ts_ns: i64::MAX,
                price_raw: -1,
                qty_raw: 0,
                trade_id: u64::MAX,
                symbol_id: u32::MAX,
                side: 1,
                instrument: 3,
                exchange_id: 65535,
            }),
            Event::Book(Book {
                kind: BookKind::Delta,
                exchange_ts_ns: 5,
                recv_ts_ns: 6,
                seq: -7,
                symbol_id: 3,
                header_type: 1,
                instrument: 1,
                exchange_id: 2,
                bids: Levels::Slice(&lv),
                asks: Levels::Slice(&[]),
            }),
        ];
        for ev in &evs {
            for style in [PriceStyle::Raw, PriceStyle::Decimal] {
                let mut out = Vec::new();
                write_json_line(&mut out, ev, style);
                let line = std::str::from_utf8(&out).unwrap();
                assert_eq!(
                    crate::json::event_from_line(line).unwrap(),
                    crate::owned::OwnedEvent::from_event(ev),
                    "{style:?}: {line}"
                );
            }
        }
        let mut csv = Vec::new();
        let c = Csv::new(None, PriceStyle::Decimal);
        c.write_header(&mut csv);
        c.write_row(&mut csv, &evs[1]);
        let text = String::from_utf8(csv).unwrap();
        assert!(text.starts_with(
            "type,exchange_ts_ns,recv_ts_ns,symbol_id,instrument,exchange_id,price,qty"
        ));
        assert!(text.contains("-0.00000005:1.5"), "{text}");
    }

    /// One event of each type through the CSV writer (all columns) and the
    /// JSON line writer, both price styles: the bytes are pinned.
    #[test]
    fn csv_and_json_lines_of_every_type_are_pinned() {
        use floxlog_core::{OptionQuote, PoolState};
        let lv = [Level {
            price_raw: 250_000_000,
            qty_raw: 3,
        }];
        let q = OptionQuote {
            exchange_ts_ns: 1,
            recv_ts_ns: 2,
            mark_price_raw: 3,
            index_price_raw: 4,
            underlying_price_raw: 5,
            iv_raw: 6,
            bid_price_raw: 7,
            ask_price_raw: 8,
            bid_size_raw: 9,
            ask_size_raw: 10,
            bid_iv_raw: 11,
            ask_iv_raw: -12,
            open_interest_raw: 130_000_000,
            symbol_id: 14,
            instrument: 3,
            exchange_id: 15,
        };
        let evs = [
            Event::Trade(Trade {
                exchange_ts_ns: 10,
                recv_ts_ns: 11,
                price_raw: 12,
                qty_raw: 100_000_000,
                trade_id: 13,
                symbol_id: 14,
                side: 1,
                instrument: 2,
                exchange_id: 15,
            }),
            Event::Book(Book {
                kind: BookKind::Snapshot,
                exchange_ts_ns: 20,
                recv_ts_ns: 21,
                seq: 22,
                symbol_id: 23,
                header_type: 2,
                instrument: 1,
                exchange_id: 24,
                bids: Levels::Slice(&lv),
                asks: Levels::Slice(&lv),
            }),
            Event::OptionQuote(q),
            Event::PoolState(PoolState {
                exchange_ts_ns: 30,
                recv_ts_ns: 31,
                symbol_id: 32,
                sub_type: 2,
                venue: 7,
                exchange_id: 33,
                payload: &[0xab, 0x01],
            }),
        ];
        let mut got = String::new();
        for style in [PriceStyle::Raw, PriceStyle::Decimal] {
            let mut out = Vec::new();
            let c = Csv::new(None, style);
            c.write_header(&mut out);
            for ev in &evs {
                c.write_row(&mut out, ev);
            }
            for ev in &evs {
                write_json_line(&mut out, ev, style);
            }
            got.push_str(&String::from_utf8(out).unwrap());
        }
        assert_eq!(got, GOLDEN);
    }

    /// What the writers printed before the columns came from the record
    /// definitions.
    const GOLDEN: &str = concat!(
        "type,exchange_ts_ns,recv_ts_ns,symbol_id,instrument,exchange_id,price_raw,qty_raw,trade_id,side,seq,header_type,bids,asks,mark_price_raw,index_price_raw,underlying_price_raw,iv_raw,bid_price_raw,ask_price_raw,bid_size_raw,ask_size_raw,bid_iv_raw,ask_iv_raw,open_interest_raw,sub_type,venue,payload_hex\n",
        "trade,10,11,14,2,15,12,100000000,13,1,,,,,,,,,,,,,,,,,,\n",
        "book_snapshot,20,21,23,1,24,,,,,22,2,250000000:3,250000000:3,,,,,,,,,,,,,,\n",
        "option_quote,1,2,14,3,15,,,,,,,,,3,4,5,6,7,8,9,10,11,-12,130000000,,,\n",
        "pool_state,30,31,32,,33,,,,,,,,,,,,,,,,,,,,2,7,ab01\n",
        "{\"type\":\"trade\",\"exchange_ts_ns\":10,\"recv_ts_ns\":11,\"price_raw\":12,\"qty_raw\":100000000,\"trade_id\":13,\"symbol_id\":14,\"side\":1,\"instrument\":2,\"exchange_id\":15}\n",
        "{\"type\":\"book_snapshot\",\"exchange_ts_ns\":20,\"recv_ts_ns\":21,\"seq\":22,\"symbol_id\":23,\"header_type\":2,\"instrument\":1,\"exchange_id\":24,\"bids\":[[250000000,3]],\"asks\":[[250000000,3]]}\n",
        "{\"type\":\"option_quote\",\"exchange_ts_ns\":1,\"recv_ts_ns\":2,\"mark_price_raw\":3,\"index_price_raw\":4,\"underlying_price_raw\":5,\"iv_raw\":6,\"bid_price_raw\":7,\"ask_price_raw\":8,\"bid_size_raw\":9,\"ask_size_raw\":10,\"bid_iv_raw\":11,\"ask_iv_raw\":-12,\"open_interest_raw\":130000000,\"symbol_id\":14,\"instrument\":3,\"exchange_id\":15}\n",
        "{\"type\":\"pool_state\",\"exchange_ts_ns\":30,\"recv_ts_ns\":31,\"symbol_id\":32,\"sub_type\":2,\"venue\":7,\"exchange_id\":33,\"payload_hex\":\"ab01\"}\n",
        "type,exchange_ts_ns,recv_ts_ns,symbol_id,instrument,exchange_id,price,qty,trade_id,side,seq,header_type,bids,asks,mark_price,index_price,underlying_price,iv,bid_price,ask_price,bid_size,ask_size,bid_iv,ask_iv,open_interest,sub_type,venue,payload_hex\n",
        "trade,10,11,14,2,15,0.00000012,1,13,1,,,,,,,,,,,,,,,,,,\n",
        "book_snapshot,20,21,23,1,24,,,,,22,2,2.5:0.00000003,2.5:0.00000003,,,,,,,,,,,,,,\n",
        "option_quote,1,2,14,3,15,,,,,,,,,0.00000003,0.00000004,0.00000005,0.00000006,0.00000007,0.00000008,0.00000009,0.0000001,0.00000011,-0.00000012,1.3,,,\n",
        "pool_state,30,31,32,,33,,,,,,,,,,,,,,,,,,,,2,7,ab01\n",
        "{\"type\":\"trade\",\"exchange_ts_ns\":10,\"recv_ts_ns\":11,\"price\":\"0.00000012\",\"qty\":\"1\",\"trade_id\":13,\"symbol_id\":14,\"side\":1,\"instrument\":2,\"exchange_id\":15}\n",
        "{\"type\":\"book_snapshot\",\"exchange_ts_ns\":20,\"recv_ts_ns\":21,\"seq\":22,\"symbol_id\":23,\"header_type\":2,\"instrument\":1,\"exchange_id\":24,\"bids\":[[\"2.5\",\"0.00000003\"]],\"asks\":[[\"2.5\",\"0.00000003\"]]}\n",
        "{\"type\":\"option_quote\",\"exchange_ts_ns\":1,\"recv_ts_ns\":2,\"mark_price\":\"0.00000003\",\"index_price\":\"0.00000004\",\"underlying_price\":\"0.00000005\",\"iv\":\"0.00000006\",\"bid_price\":\"0.00000007\",\"ask_price\":\"0.00000008\",\"bid_size\":\"0.00000009\",\"ask_size\":\"0.0000001\",\"bid_iv\":\"0.00000011\",\"ask_iv\":\"-0.00000012\",\"open_interest\":\"1.3\",\"symbol_id\":14,\"instrument\":3,\"exchange_id\":15}\n",
        "{\"type\":\"pool_state\",\"exchange_ts_ns\":30,\"recv_ts_ns\":31,\"symbol_id\":32,\"sub_type\":2,\"venue\":7,\"exchange_id\":33,\"payload_hex\":\"ab01\"}\n",
    );
}
