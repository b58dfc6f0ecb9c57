//! Top of book per symbol for the report's charts, replayed lazily. The
//! report keeps only each bucket's last top of book, and a snapshot
//! replaces a whole book: so a symbol's book events wait in a queue while
//! they fall in one bucket, and a snapshot that will surely set both sides
//! drops the queue unapplied (on a tape with a snapshot a second most
//! deltas are never applied). Every other event is applied in turn, as
//! before, so the series are the same as replaying every event.

use super::buckets::SymbolSeries;
use crate::book_replay::{BookReplayer, DEFAULT_CAPACITY};
use crate::see::ids::IdTable;
use floxlog_core::{Book, BookKind, Level, Levels};

/// Events a symbol's queue holds at most (then they are applied), so
/// memory stays bounded on a tape without snapshots.
const MAX_QUEUED: usize = 4096;

/// A queued book event: its levels are in [`Queue::levels`].
struct Queued {
    kind: BookKind,
    ts: i64,
    bids: usize,
    asks: usize,
}

/// One symbol's events not yet applied, all of bucket `bucket`.
struct Queue {
    id: u32,
    bucket: usize,
    events: Vec<Queued>,
    levels: Vec<Level>,
}

/// Books of the tracked symbols and their queues.
#[derive(Default)]
pub struct TopBooks {
    replay: BookReplayer,
    queues: IdTable<Queue>,
    /// Tests: apply every event at once (the reference).
    #[cfg(test)]
    pub eager: bool,
}

impl TopBooks {
    /// Takes book record `b`, of bucket `bucket`, whose symbol's series is `s`.
    pub fn push(&mut self, b: &Book<'_>, bucket: usize, s: &mut SymbolSeries) {
        #[cfg(test)]
        if self.eager {
            return put(&mut self.replay, b, bucket, s);
        }
        let q = self.queues.get_or_insert_with(b.symbol_id, || Queue {
            id: b.symbol_id,
            bucket,
            events: Vec::new(),
            levels: Vec::new(),
        });
        // The queue's last event was its bucket's last: apply them.
        if !q.events.is_empty() && (q.bucket != bucket || q.events.len() >= MAX_QUEUED) {
            flush(&mut self.replay, q, s);
        }
        if sets_both_sides(b) {
            // It overwrites every value the queue would put in this bucket,
            // and its book does not depend on theirs.
            q.events.clear();
            q.levels.clear();
            put(&mut self.replay, b, bucket, s);
            return;
        }
        q.bucket = bucket;
        q.events.push(Queued {
            kind: b.kind,
            ts: b.exchange_ts_ns,
            bids: b.bids.len(),
            asks: b.asks.len(),
        });
        q.levels.reserve(b.bids.len() + b.asks.len());
        q.levels.extend(b.bids.iter());
        q.levels.extend(b.asks.iter());
    }

    /// Applies every queue (before buckets merge, and at the end).
    pub fn flush_all(&mut self, symbols: &mut IdTable<SymbolSeries>) {
        for q in self.queues.values_mut() {
            if let Some(s) = symbols.get_mut(q.id) {
                flush(&mut self.replay, q, s);
            }
        }
    }
}

/// Whether snapshot `b` will be applied without error and leave both
/// sides non-empty (otherwise it waits in the queue like a delta).
fn sets_both_sides(b: &Book<'_>) -> bool {
    // Best-first already (as recorders list them): no sort, no duplicate.
    let side = |lv: &Levels<'_>, bid: bool| {
        let (mut prev, mut n) = (None::<i64>, 0usize);
        for l in lv.iter() {
            let ordered = prev.is_none_or(|p| {
                if bid {
                    p > l.price_raw
                } else {
                    p < l.price_raw
                }
            });
            if l.qty_raw < 0 || !ordered {
                return false;
            }
            prev = Some(l.price_raw);
            n += 1;
        }
        n > 0 && n <= DEFAULT_CAPACITY
    };
    b.kind == BookKind::Snapshot && side(&b.bids, true) && side(&b.asks, false)
}

fn flush(replay: &mut BookReplayer, q: &mut Queue, s: &mut SymbolSeries) {
    let mut at = 0;
    for e in &q.events {
        let (bids, rest) = q.levels[at..].split_at(e.bids);
        let asks = &rest[..e.asks];
        at += e.bids + e.asks;
        let b = Book {
            kind: e.kind,
            exchange_ts_ns: e.ts,
            symbol_id: q.id,
            bids: Levels::Slice(bids),
            asks: Levels::Slice(asks),
            ..Book::default()
        };
        put(replay, &b, q.bucket, s);
    }
    q.events.clear();
    q.levels.clear();
}

/// Applies `b` and puts its symbol's top of book in bucket `bucket`.
fn put(replay: &mut BookReplayer, b: &Book<'_>, bucket: usize, s: &mut SymbolSeries) {
    // A book the replay refuses (damage-like data) is simply not
    // charted; `gaps` and `verify` name the fault.
    if let Ok(book) = replay.apply_book(b, 0) {
        s.top(bucket, book.bids.first(), book.asks.first());
    }
}

#[cfg(test)]
mod tests {
    use crate::see::report::buckets::Buckets;
    use crate::synth::{generate, SynthConfig};
    use floxlog_core::{Book, BookKind, Event, Level, Levels};

    /// The queued replay charts what applying every event charts: a
    /// synthetic market with snapshots that set both sides, and others
    /// that do not (an empty side, unsorted, a repeated price, a negative
    /// quantity), over a span that makes the buckets merge many times.
    #[test]
    fn lazy_series_equal_eager_ones() {
        let synth = SynthConfig {
            trades: 20_000,
            book_deltas: 40_000,
            duration_ns: 600_000_000_000,
            depth: 6,
            ..SynthConfig::default()
        };
        let (mut lazy, mut eager) = (Buckets::default(), Buckets::default());
        eager.books_mut().eager = true;
        let mut n = 0u64;
        let mut odd: Vec<Level> = Vec::new();
        generate(&synth, |ev| {
            n += 1;
            let mut ev = *ev;
            if let Event::Book(b) = &mut ev {
                let lv: Vec<Level> = b.bids.iter().collect();
                odd.clear();
                match n % 7 {
                    // An empty ask side.
                    1 if b.kind == BookKind::Snapshot => b.asks = Levels::Slice(&[]),
                    // Unsorted, with a repeated price, with a negative qty.
                    2..=4 if lv.len() > 1 => {
                        odd.extend(lv.iter().rev());
                        if n % 7 == 3 {
                            odd[1].price_raw = odd[0].price_raw;
                        }
                        if n % 7 == 4 {
                            odd[0].qty_raw = -1;
                        }
                        b.kind = if n.is_multiple_of(3) {
                            BookKind::Delta
                        } else {
                            BookKind::Snapshot
                        };
                    }
                    _ => {}
                }
                if !odd.is_empty() {
                    let mut b2: Book<'_> = *b;
                    b2.bids = Levels::Slice(&odd);
                    lazy.push(&Event::Book(b2));
                    eager.push(&Event::Book(b2));
                    return Ok::<(), ()>(());
                }
            }
            lazy.push(&ev);
            eager.push(&ev);
            Ok::<(), ()>(())
        })
        .unwrap();
        lazy.finish();
        eager.finish();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert!(lazy.width > 1_000_000_000, "the buckets merged");
        for (id, e) in eager.symbols.iter() {
            let l = lazy.symbols.get(id).unwrap();
            assert!(e.spread.v.iter().any(|x| !x.is_nan()));
            assert_eq!(bits(&l.spread.v), bits(&e.spread.v), "symbol {id}");
            assert_eq!(bits(&l.bid_qty.v), bits(&e.bid_qty.v), "symbol {id}");
            assert_eq!(bits(&l.ask_qty.v), bits(&e.ask_qty.v), "symbol {id}");
        }
    }
}
