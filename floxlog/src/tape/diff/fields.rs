//! Which decoded fields of two events differ, for the first difference of
//! [`crate::tape::diff::diff_tapes`]. Only called once events compare unequal, so
//! it favours clear output over speed.

use floxlog_core::book::Levels;
use floxlog_core::{values_of, Event, Fields};
use serde::Serialize;

/// One field that differs: its name and both values, as text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldDiff {
    /// Field name as the spec and `floxlog cat` spell it (`price_raw`,
    /// `bids[3].qty_raw`, `payload[17]`...).
    pub field: String,
    /// Value in tape A.
    pub a: String,
    /// Value in tape B.
    pub b: String,
}

impl std::fmt::Display for FieldDiff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} vs {}", self.field, self.a, self.b)
    }
}

/// Most level or byte differences listed for one event (the rest are
/// summed up in one line): a replaced book would otherwise list thousands.
const MAX_LISTED: usize = 8;

struct Out(Vec<FieldDiff>);

impl Out {
    fn cmp<T: PartialEq + std::fmt::Display>(&mut self, field: &str, a: T, b: T) {
        if a != b {
            self.0.push(FieldDiff {
                field: field.to_string(),
                a: a.to_string(),
                b: b.to_string(),
            });
        }
    }
}

/// Compares the fixed fields of two records field by field, by their
/// definition.
fn record<R: Fields>(o: &mut Out, x: &R, y: &R) {
    let ys = values_of(y);
    let mut k = 0;
    x.visit_fixed(|d, a| {
        if let Some(&b) = ys.get(k) {
            o.cmp(d.name, a, b);
        }
        k += 1;
    });
}

/// The fields in which `a` and `b` differ (empty when they are equal). Of
/// different record types, only the type is named.
pub fn field_diffs(a: &Event<'_>, b: &Event<'_>) -> Vec<FieldDiff> {
    let mut o = Out(Vec::new());
    match (a, b) {
        (Event::Trade(x), Event::Trade(y)) => record(&mut o, x, y),
        (Event::Book(x), Event::Book(y)) if x.kind == y.kind => {
            record(&mut o, x, y);
            levels(&mut o, "bids", &x.bids, &y.bids);
            levels(&mut o, "asks", &x.asks, &y.asks);
        }
        (Event::OptionQuote(x), Event::OptionQuote(y)) => record(&mut o, x, y),
        (Event::PoolState(x), Event::PoolState(y)) => {
            record(&mut o, x, y);
            payload(&mut o, x.payload, y.payload);
        }
        _ => o.cmp("type", a.type_name(), b.type_name()),
    }
    o.0
}

/// A side's level count, then its first differing levels.
fn levels(o: &mut Out, side: &str, a: &Levels<'_>, b: &Levels<'_>) {
    o.cmp(&format!("{side}.len"), a.len(), b.len());
    let mut listed = 0;
    let mut more = 0;
    for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        if x == y {
            continue;
        }
        if listed == MAX_LISTED {
            more += 1;
            continue;
        }
        listed += 1;
        o.cmp(&format!("{side}[{i}].price_raw"), x.price_raw, y.price_raw);
        o.cmp(&format!("{side}[{i}].qty_raw"), x.qty_raw, y.qty_raw);
    }
    if more > 0 {
        o.cmp(&format!("{side}: more levels"), more, 0);
    }
}

/// A pool payload's length, then its first differing byte.
fn payload(o: &mut Out, a: &[u8], b: &[u8]) {
    o.cmp("payload.len", a.len(), b.len());
    if let Some(i) = a.iter().zip(b).position(|(x, y)| x != y) {
        o.cmp(&format!("payload[{i}]"), a[i], b[i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floxlog_core::book::{Book, BookKind, Level};
    use floxlog_core::{PoolState, Trade};

    #[test]
    fn names_the_differing_trade_fields() {
        let a = Trade {
            price_raw: 100,
            qty_raw: 5,
            ..Trade::default()
        };
        let b = Trade {
            price_raw: 101,
            ..a
        };
        let d = field_diffs(&Event::Trade(a), &Event::Trade(b));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].to_string(), "price_raw: 100 vs 101");
        assert!(field_diffs(&Event::Trade(a), &Event::Trade(a)).is_empty());
    }

    #[test]
    fn names_levels_payload_bytes_and_types() {
        let la = [Level {
            price_raw: 1,
            qty_raw: 2,
        }];
        let lb = [
            Level {
                price_raw: 1,
                qty_raw: 3,
            },
            Level {
                price_raw: 5,
                qty_raw: 6,
            },
        ];
        let book = |l: &'static [Level]| Book {
            kind: BookKind::Snapshot,
            exchange_ts_ns: 1,
            recv_ts_ns: 1,
            seq: 1,
            symbol_id: 1,
            header_type: 0,
            instrument: 0,
            exchange_id: 0,
            bids: Levels::Slice(l),
            asks: Levels::default(),
        };
        let la: &'static [Level] = Box::leak(Box::new(la));
        let lb: &'static [Level] = Box::leak(Box::new(lb));
        let d = field_diffs(&Event::Book(book(la)), &Event::Book(book(lb)));
        let s: Vec<String> = d.iter().map(ToString::to_string).collect();
        assert_eq!(s, ["bids.len: 1 vs 2", "bids[0].qty_raw: 2 vs 3"]);

        let p = |b: &'static [u8]| PoolState {
            payload: b,
            ..PoolState::default()
        };
        let d = field_diffs(
            &Event::PoolState(p(&[1, 2, 3])),
            &Event::PoolState(p(&[1, 9, 3])),
        );
        assert_eq!(d[0].to_string(), "payload[1]: 2 vs 9");
        let d = field_diffs(&Event::PoolState(p(&[])), &Event::Trade(Trade::default()));
        assert_eq!(d[0].to_string(), "type: pool_state vs trade");
    }
}
