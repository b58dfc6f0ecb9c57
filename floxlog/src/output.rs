//! Fast event writers for `cat`: JSON lines in the corpus schema (the same
//! text as the corpus's `expected.jsonl`: compact, fields in corpus order)
//! and CSV. Both append to a byte buffer without building JSON values.

use crate::json::PriceStyle;
use floxlog_core::fixed::Decimal;
use floxlog_core::{values_of, Event, FieldRole, FieldValue, Levels, Record, Trade};
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

/// A fixed-layout record's fields, in record order, by its definition.
#[inline]
fn record_json<R: Record>(out: &mut Vec<u8>, style: PriceStyle, r: &R) {
    r.visit(|d, v| match (d.role, v) {
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
    // Timestamps first, as in the corpus (a fixed-layout record's list
    // starts with them).
    if !matches!(ev, Event::Trade(_) | Event::OptionQuote(_)) {
        int_field(out, "exchange_ts_ns", ev.exchange_ts_ns());
        int_field(out, "recv_ts_ns", ev.recv_ts_ns());
    }
    match ev {
        Event::Trade(t) => record_json(out, style, t),
        Event::Book(b) => {
            int_field(out, "seq", b.seq);
            uint_field(out, "symbol_id", b.symbol_id as u64);
            uint_field(out, "header_type", b.header_type as u64);
            uint_field(out, "instrument", b.instrument as u64);
            uint_field(out, "exchange_id", b.exchange_id as u64);
            levels(out, style, "bids", &b.bids);
            levels(out, style, "asks", &b.asks);
        }
        Event::OptionQuote(q) => record_json(out, style, q),
        Event::PoolState(p) => {
            uint_field(out, "symbol_id", p.symbol_id as u64);
            uint_field(out, "sub_type", p.sub_type as u64);
            uint_field(out, "venue", p.venue as u64);
            uint_field(out, "exchange_id", p.exchange_id as u64);
            key(out, "payload_hex");
            out.push(b'"');
            for &x in p.payload {
                out.push(HEX[(x >> 4) as usize]);
                out.push(HEX[(x & 15) as usize]);
            }
            out.push(b'"');
        }
    }
    out.extend_from_slice(b"}\n");
}

/// A CSV column: its name, the frame types it applies to (bit = type),
/// and for a trade column, where it is in the trade's definition.
struct Col {
    name: &'static str,
    types: u8,
    trade: Option<usize>,
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

/// The book, option quote and pool state columns, after the trade's.
const OTHERS: &[(&str, u8)] = &[
    ("seq", BOOK),
    ("header_type", BOOK),
    ("bids", BOOK),
    ("asks", BOOK),
    ("mark_price_raw", OPT),
    ("index_price_raw", OPT),
    ("underlying_price_raw", OPT),
    ("iv_raw", OPT),
    ("bid_price_raw", OPT),
    ("ask_price_raw", OPT),
    ("bid_size_raw", OPT),
    ("ask_size_raw", OPT),
    ("bid_iv_raw", OPT),
    ("ask_iv_raw", OPT),
    ("open_interest_raw", OPT),
    ("sub_type", POOL),
    ("venue", POOL),
    ("payload_hex", POOL),
];

/// Every column in order: [`COMMON`], the trade's other fields in record
/// order (from its definition), then [`OTHERS`].
fn all_columns() -> Vec<Col> {
    let trade_index = |name: &str| Trade::FIELDS.iter().position(|d| d.name == name);
    let trade_only = Trade::FIELDS
        .iter()
        .filter(|d| !COMMON.iter().any(|(n, _)| *n == d.name))
        .map(|d| (d.name, TRADE));
    COMMON
        .iter()
        .copied()
        .chain(trade_only)
        .chain(OTHERS.iter().copied())
        .map(|(name, types)| Col {
            name,
            types,
            trade: trade_index(name).filter(|_| types & TRADE != 0),
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
        let trade = match ev {
            Event::Trade(t) => Some(values_of(t)),
            _ => None,
        };
        for (n, c) in self.cols.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            let price = |out: &mut Vec<u8>, v: i64| match st {
                PriceStyle::Raw => push_i64(out, v),
                PriceStyle::Decimal => {
                    let _ = write!(out, "{}", Decimal(v));
                }
            };
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
            if let (Some(vals), Some(k)) = (&trade, c.trade) {
                match (Trade::FIELDS.get(k).map(|d| d.role), vals.get(k)) {
                    (Some(FieldRole::Fixed), Some(&FieldValue::Signed(v))) => price(out, v),
                    (_, Some(&FieldValue::Signed(v))) => push_i64(out, v),
                    (_, Some(&FieldValue::Unsigned(v))) => push_u64(out, v),
                    (_, None) => {}
                }
                continue;
            }
            match (c.name, ev) {
                ("type", _) => out.extend_from_slice(ev.type_name().as_bytes()),
                ("exchange_ts_ns", _) => push_i64(out, ev.exchange_ts_ns()),
                ("recv_ts_ns", _) => push_i64(out, ev.recv_ts_ns()),
                ("symbol_id", _) => push_u64(out, ev.symbol_id() as u64),
                ("instrument", Event::Book(b)) => push_u64(out, b.instrument as u64),
                ("instrument", Event::OptionQuote(q)) => push_u64(out, q.instrument as u64),
                ("exchange_id", Event::Book(b)) => push_u64(out, b.exchange_id as u64),
                ("exchange_id", Event::OptionQuote(q)) => push_u64(out, q.exchange_id as u64),
                ("exchange_id", Event::PoolState(p)) => push_u64(out, p.exchange_id as u64),
                ("seq", Event::Book(b)) => push_i64(out, b.seq),
                ("header_type", Event::Book(b)) => push_u64(out, b.header_type as u64),
                ("bids", Event::Book(b)) => side(out, &b.bids),
                ("asks", Event::Book(b)) => side(out, &b.asks),
                ("mark_price_raw", Event::OptionQuote(q)) => price(out, q.mark_price_raw),
                ("index_price_raw", Event::OptionQuote(q)) => price(out, q.index_price_raw),
                ("underlying_price_raw", Event::OptionQuote(q)) => {
                    price(out, q.underlying_price_raw)
                }
                ("iv_raw", Event::OptionQuote(q)) => price(out, q.iv_raw),
                ("bid_price_raw", Event::OptionQuote(q)) => price(out, q.bid_price_raw),
                ("ask_price_raw", Event::OptionQuote(q)) => price(out, q.ask_price_raw),
                ("bid_size_raw", Event::OptionQuote(q)) => price(out, q.bid_size_raw),
                ("ask_size_raw", Event::OptionQuote(q)) => price(out, q.ask_size_raw),
                ("bid_iv_raw", Event::OptionQuote(q)) => price(out, q.bid_iv_raw),
                ("ask_iv_raw", Event::OptionQuote(q)) => price(out, q.ask_iv_raw),
                ("open_interest_raw", Event::OptionQuote(q)) => price(out, q.open_interest_raw),
                ("sub_type", Event::PoolState(p)) => push_u64(out, p.sub_type as u64),
                ("venue", Event::PoolState(p)) => push_u64(out, p.venue as u64),
                ("payload_hex", Event::PoolState(p)) => {
                    for &x in p.payload {
                        out.push(HEX[(x >> 4) as usize]);
                        out.push(HEX[(x & 15) as usize]);
                    }
                }
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

    #[test]
    fn json_line_matches_the_value_writer() {
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
                let ours: serde_json::Value = serde_json::from_slice(&out).unwrap();
                assert_eq!(ours, crate::json::event_to_value(ev, style));
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
}
