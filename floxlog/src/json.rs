//! The conformance corpus's JSON event schema (one object per line), both
//! ways: parsed here, printed by [`crate::output::write_json_line`].
//! Integers are kept exact (64-bit, never through `f64`).

use crate::owned::{OwnedBook, OwnedEvent, OwnedPoolState};
use floxlog_core::fixed::parse_decimal;
use floxlog_core::{
    values_of, Book, BookKind, Event, FieldRole, FieldValue, Fields, Level, OptionQuote, PoolState,
    Trade,
};
use serde_json::{Map, Value};
use std::fmt;

/// Why a JSON event could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError(pub String);

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JsonError {}

/// How prices and quantities are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PriceStyle {
    /// Raw fixed-point integers (the corpus schema).
    #[default]
    Raw,
    /// Exact decimal strings (`"101.25"`), under the same field names
    /// without the `_raw` suffix.
    Decimal,
}

fn err(msg: impl Into<String>) -> JsonError {
    JsonError(msg.into())
}

fn get<'v>(o: &'v Map<String, Value>, k: &str) -> Result<&'v Value, JsonError> {
    o.get(k).ok_or_else(|| err(format!("missing field `{k}`")))
}

fn i64_of(o: &Map<String, Value>, k: &str) -> Result<i64, JsonError> {
    get(o, k)?
        .as_i64()
        .ok_or_else(|| err(format!("field `{k}` is not a 64-bit signed integer")))
}

fn u64_of(o: &Map<String, Value>, k: &str) -> Result<u64, JsonError> {
    get(o, k)?
        .as_u64()
        .ok_or_else(|| err(format!("field `{k}` is not a 64-bit unsigned integer")))
}

/// A fixed-point field: `k` as a raw integer, or (what `cat --prices
/// decimal` prints) `k` without `_raw` as an exact decimal string.
fn raw_of(o: &Map<String, Value>, k: &str) -> Result<i64, JsonError> {
    if o.contains_key(k) {
        return i64_of(o, k);
    }
    let dk = k.strip_suffix("_raw").unwrap_or(k);
    match o.get(dk) {
        Some(v) => decimal_of(v, dk),
        None => Err(err(format!("missing field `{k}` (or `{dk}` as a decimal)"))),
    }
}

/// A price or quantity as an exact decimal string, to fixed-point 1e8.
fn decimal_of(v: &Value, k: &str) -> Result<i64, JsonError> {
    let text = v
        .as_str()
        .ok_or_else(|| err(format!("field `{k}` is not a decimal string")))?;
    parse_decimal(text).map_err(|e| err(format!("field `{k}`: {e}")))
}

/// A level value: a raw integer, or a decimal string.
fn level_value(v: &Value, k: &str) -> Result<i64, JsonError> {
    match v.as_i64() {
        Some(raw) => Ok(raw),
        None if v.is_string() => decimal_of(v, k),
        None => Err(err(format!(
            "`{k}` level values are not 64-bit integers or decimals"
        ))),
    }
}

fn levels_of(o: &Map<String, Value>, k: &str) -> Result<Vec<Level>, JsonError> {
    let arr = get(o, k)?
        .as_array()
        .ok_or_else(|| err(format!("field `{k}` is not an array")))?;
    arr.iter()
        .map(|l| {
            let pair = l
                .as_array()
                .filter(|p| p.len() == 2)
                .ok_or_else(|| err(format!("`{k}` level is not [price_raw, qty_raw]")))?;
            Ok(Level {
                price_raw: level_value(&pair[0], k)?,
                qty_raw: level_value(&pair[1], k)?,
            })
        })
        .collect()
}

fn hex_decode(s: &str) -> Result<Vec<u8>, JsonError> {
    // Bytes, not string slices: a multi-byte character is simply not a
    // hex digit.
    let digit = |c: u8| (c as char).to_digit(16).filter(|_| c.is_ascii());
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return Err(err("payload_hex has an odd number of digits"));
    }
    b.chunks_exact(2)
        .map(|p| match (digit(p[0]), digit(p[1])) {
            (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
            _ => Err(err("payload_hex is not hex")),
        })
        .collect()
}

/// A record's fixed fields from `o`, by its definition, onto `base` (its
/// levels or payload kept): fixed-point fields as [`raw_of`] reads them,
/// the others as exact integers of the field's sign, narrowed to the
/// field's type. A field named in `optional` that `o` lacks keeps `base`'s
/// value.
fn fields_of<R: Fields>(
    base: R,
    o: &Map<String, Value>,
    optional: &[&str],
) -> Result<R, JsonError> {
    let kept = values_of(&base);
    base.with_fixed(
        |k, d| {
            if optional.contains(&d.name) && !o.contains_key(d.name) {
                return kept
                    .get(k)
                    .copied()
                    .ok_or_else(|| err(format!("field `{}` has no default", d.name)));
            }
            Ok(match (d.role, d.ty.signed()) {
                (FieldRole::Fixed, _) => FieldValue::Signed(raw_of(o, d.name)?),
                (_, true) => FieldValue::Signed(i64_of(o, d.name)?),
                (_, false) => FieldValue::Unsigned(u64_of(o, d.name)?),
            })
        },
        |d| err(format!("field `{}` is out of range", d.name)),
    )
}

/// Parses one event object of the corpus schema.
pub fn event_from_value(v: &Value) -> Result<OwnedEvent, JsonError> {
    let o = v
        .as_object()
        .ok_or_else(|| err("event is not a JSON object"))?;
    let ty = get(o, "type")?
        .as_str()
        .ok_or_else(|| err("field `type` is not a string"))?;
    Ok(match ty {
        "trade" => OwnedEvent::Trade(fields_of(Trade::default(), o, &[])?),
        "book_snapshot" | "book_delta" => {
            let kind = if ty == "book_snapshot" {
                BookKind::Snapshot
            } else {
                BookKind::Delta
            };
            // A missing header type is the kind's own byte.
            let base = Book {
                kind,
                header_type: kind.flox_header_type(),
                ..Book::default()
            };
            let head = fields_of(base, o, &["header_type"])?;
            OwnedEvent::Book(OwnedBook {
                head,
                bids: levels_of(o, "bids")?,
                asks: levels_of(o, "asks")?,
            })
        }
        "option_quote" => OwnedEvent::OptionQuote(fields_of(OptionQuote::default(), o, &[])?),
        "pool_state" => OwnedEvent::PoolState(OwnedPoolState {
            head: fields_of(PoolState::default(), o, &[])?,
            payload: hex_decode(
                get(o, "payload_hex")?
                    .as_str()
                    .ok_or_else(|| err("field `payload_hex` is not a string"))?,
            )?,
        }),
        other => return Err(err(format!("unknown event type `{other}`"))),
    })
}

/// Parses one line of JSON into an event.
pub fn event_from_line(line: &str) -> Result<OwnedEvent, JsonError> {
    let v: Value = serde_json::from_str(line).map_err(|e| err(format!("invalid JSON: {e}")))?;
    event_from_value(&v)
}

/// The corpus-schema JSON object of an event: the line
/// [`crate::output::write_json_line`] prints (the schema's one encoder),
/// parsed.
pub fn event_to_value(ev: &Event<'_>, style: PriceStyle) -> Value {
    let mut line = Vec::new();
    crate::output::write_json_line(&mut line, ev, style);
    // The encoder prints only static names, integers, decimal and hex
    // strings: its line is always valid JSON.
    serde_json::from_slice(&line).expect("write_json_line prints valid JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_hex_with_non_ascii_text_is_an_error_not_a_panic() {
        assert_eq!(hex_decode("00ff7A").unwrap(), [0x00, 0xff, 0x7a]);
        for bad in ["é0", "0é", "€€", "+1", "0"] {
            assert!(hex_decode(bad).is_err(), "{bad}");
        }
    }
}
