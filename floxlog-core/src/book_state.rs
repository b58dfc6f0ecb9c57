//! The state of one order book, rebuilt from snapshot and delta records
//! over storage the caller provides (no allocation, fixed capacity a side).
//!
//! Semantics follow spec 1.0, "BookLevel (16 bytes)" (the paragraph after
//! the level layout): "Snapshot semantics: the listed levels replace the
//! entire side. Delta semantics: positive qty_raw upserts a price level;
//! qty_raw == 0 removes the level." A snapshot record lists both sides
//! (`bid_count` and `ask_count`, either may be 0), so it replaces both: a
//! side with no listed levels becomes empty.
//!
//! What the spec leaves open is refused, not guessed (spec, "Numeric
//! conventions": negative quantities are "never in raw recorded fields"):
//! a negative `qty_raw` in a delta or a snapshot, and a price listed twice
//! on one side of a snapshot (which level would replace the side?), are
//! [`ErrorKind::MalformedRecord`] at the event's byte offset. A side that
//! would need more levels than its storage holds is
//! [`ErrorKind::CapacityExceeded`], never a silent truncation.
//!
//! After any error the book is cleared (both sides empty), so a caller never
//! reads a half-applied record as a book.

use core::cmp::Ordering;

use crate::book::{Book, BookKind, Level, Levels};
use crate::error::{Error, ErrorKind, Result};

/// Which side of a book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Buy orders, best (highest price) first.
    Bid,
    /// Sell orders, best (lowest price) first.
    Ask,
}

impl Side {
    /// Orders prices best-first for this side.
    fn better(self, a: i64, b: i64) -> Ordering {
        match self {
            Side::Bid => b.cmp(&a),
            Side::Ask => a.cmp(&b),
        }
    }
}

/// One side: a prefix `levels[..len]` of the caller's storage, sorted
/// best-first, one level per price.
#[derive(Debug)]
struct SideState<'s> {
    side: Side,
    levels: &'s mut [Level],
    len: usize,
}

impl<'s> SideState<'s> {
    fn view(&self) -> &[Level] {
        &self.levels[..self.len]
    }

    /// Where `price` is (Ok) or would go (Err) in the sorted prefix.
    fn find(&self, price: i64) -> core::result::Result<usize, usize> {
        let side = self.side;
        self.view()
            .binary_search_by(|l| side.better(l.price_raw, price))
    }

    fn upsert(&mut self, l: Level, at: u64) -> Result<()> {
        match self.find(l.price_raw) {
            Ok(i) => self.levels[i].qty_raw = l.qty_raw,
            Err(i) => {
                if self.len == self.levels.len() {
                    return Err(capacity(at, self.levels.len()));
                }
                self.levels.copy_within(i..self.len, i + 1);
                self.levels[i] = l;
                self.len += 1;
            }
        }
        Ok(())
    }

    fn remove(&mut self, price: i64) {
        // Removing a price the book does not hold changes nothing: the
        // spec's "removes the level" has nothing to remove.
        if let Ok(i) = self.find(price) {
            self.levels.copy_within(i + 1..self.len, i);
            self.len -= 1;
        }
    }

    /// Replaces the side with `src` (spec: "the listed levels replace the
    /// entire side"), sorted best-first.
    fn replace(&mut self, src: Levels<'_>, at: u64) -> Result<()> {
        let n = src.len();
        if n > self.levels.len() {
            return Err(capacity(at, self.levels.len()).needing(n as u64));
        }
        for (slot, l) in self.levels.iter_mut().zip(src.iter()) {
            *slot = l;
        }
        self.len = n;
        let side = self.side;
        let dst = &mut self.levels[..n];
        // Recorders list levels best-first already; sort only when not.
        if !dst
            .windows(2)
            .all(|w| side.better(w[0].price_raw, w[1].price_raw) == Ordering::Less)
        {
            dst.sort_unstable_by(|a, b| side.better(a.price_raw, b.price_raw));
            if dst.windows(2).any(|w| w[0].price_raw == w[1].price_raw) {
                return Err(Error::new(
                    ErrorKind::MalformedRecord,
                    at,
                    "book snapshot lists a price twice on one side",
                ));
            }
        }
        Ok(())
    }
}

fn capacity(at: u64, cap: usize) -> Error {
    Error::new(
        ErrorKind::CapacityExceeded,
        at,
        "book side needs more levels than its storage holds",
    )
    .needing(cap as u64 + 1)
}

fn negative_qty(at: u64) -> Error {
    Error::new(
        ErrorKind::MalformedRecord,
        at,
        "book level with a negative qty_raw",
    )
}

/// A book rebuilt from snapshots and deltas, over two caller-provided level
/// arrays (their lengths are the capacities of the sides).
///
/// ```
/// use floxlog_core::{Book, BookKind, BookState, Level, Levels};
/// let (mut b, mut a) = ([Level::default(); 8], [Level::default(); 8]);
/// let mut st = BookState::new(&mut b, &mut a);
/// let l = |p, q| Level { price_raw: p, qty_raw: q };
/// let snap = Book {
///     kind: BookKind::Snapshot, exchange_ts_ns: 1, recv_ts_ns: 1, seq: 0,
///     symbol_id: 1, header_type: 0, instrument: 0, exchange_id: 0,
///     bids: Levels::Slice(&[l(99, 1), l(98, 2)]), asks: Levels::Slice(&[l(101, 3)]),
/// };
/// st.apply(&snap, 0)?;
/// let delta = Book { kind: BookKind::Delta, bids: Levels::Slice(&[l(99, 0), l(100, 5)]),
///                    asks: Levels::Slice(&[]), ..snap };
/// st.apply(&delta, 100)?;
/// assert_eq!(st.bids(), &[l(100, 5), l(98, 2)]);
/// assert_eq!(st.best_ask(), Some(l(101, 3)));
/// # Ok::<(), floxlog_core::Error>(())
/// ```
#[derive(Debug)]
pub struct BookState<'s> {
    bids: SideState<'s>,
    asks: SideState<'s>,
}

impl<'s> BookState<'s> {
    /// An empty book over `bids` and `asks` storage (their contents are
    /// ignored; their lengths cap each side).
    pub fn new(bids: &'s mut [Level], asks: &'s mut [Level]) -> BookState<'s> {
        BookState {
            bids: SideState {
                side: Side::Bid,
                levels: bids,
                len: 0,
            },
            asks: SideState {
                side: Side::Ask,
                levels: asks,
                len: 0,
            },
        }
    }

    /// Resumes a book whose first `bid_len` / `ask_len` levels of `bids` /
    /// `asks` hold its sides (as [`BookState::lens`] reported them): for
    /// owners that keep the storage between calls (the C ABI, growable
    /// std storage). The prefixes are checked (lengths within the storage,
    /// prices strictly best-first), since the storage may have been changed
    /// in between: [`ErrorKind::InvalidInput`] if not.
    pub fn from_parts(
        bids: &'s mut [Level],
        bid_len: usize,
        asks: &'s mut [Level],
        ask_len: usize,
    ) -> Result<BookState<'s>> {
        let mut st = BookState::new(bids, asks);
        for (s, len) in [(&mut st.bids, bid_len), (&mut st.asks, ask_len)] {
            let side = s.side;
            let ok = len <= s.levels.len()
                && s.levels[..len]
                    .windows(2)
                    .all(|w| side.better(w[0].price_raw, w[1].price_raw) == Ordering::Less);
            if !ok {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    0,
                    "book storage is not a sorted side within its capacity",
                ));
            }
            s.len = len;
        }
        Ok(st)
    }

    /// [`BookState::from_parts`] checking only the lengths, not the order:
    /// for owners whose storage nothing but a `BookState` writes (the std
    /// replayer), where the O(levels) check on every record is pure cost.
    /// Storage that is not sorted best-first gives wrong books, nothing
    /// worse; [`ErrorKind::InvalidInput`] if a length exceeds its storage.
    pub fn resume(
        bids: &'s mut [Level],
        bid_len: usize,
        asks: &'s mut [Level],
        ask_len: usize,
    ) -> Result<BookState<'s>> {
        if bid_len > bids.len() || ask_len > asks.len() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                0,
                "book side length beyond its storage",
            ));
        }
        let mut st = BookState::new(bids, asks);
        st.bids.len = bid_len;
        st.asks.len = ask_len;
        Ok(st)
    }

    /// Number of (bid, ask) levels held.
    pub fn lens(&self) -> (usize, usize) {
        (self.bids.len, self.asks.len)
    }

    /// Empties both sides.
    pub fn clear(&mut self) {
        self.bids.len = 0;
        self.asks.len = 0;
    }

    /// Bid levels, highest price first.
    pub fn bids(&self) -> &[Level] {
        self.bids.view()
    }

    /// Ask levels, lowest price first.
    pub fn asks(&self) -> &[Level] {
        self.asks.view()
    }

    /// The levels of `side`, best first.
    pub fn side(&self, side: Side) -> &[Level] {
        match side {
            Side::Bid => self.bids(),
            Side::Ask => self.asks(),
        }
    }

    /// Highest bid.
    pub fn best_bid(&self) -> Option<Level> {
        self.bids().first().copied()
    }

    /// Lowest ask.
    pub fn best_ask(&self) -> Option<Level> {
        self.asks().first().copied()
    }

    /// Capacity of (bids, asks).
    pub fn capacity(&self) -> (usize, usize) {
        (self.bids.levels.len(), self.asks.levels.len())
    }

    /// Applies a snapshot or delta record; `at` is the event's byte offset,
    /// carried by any error. On error the book is cleared (see the module
    /// documentation). The record's `symbol_id` is not checked: one state
    /// is one symbol's book, and the caller picks it.
    pub fn apply(&mut self, book: &Book<'_>, at: u64) -> Result<()> {
        self.apply_levels(book.kind, book.bids, book.asks, at)
    }

    /// [`BookState::apply`] for levels not wrapped in a [`Book`].
    pub fn apply_levels(
        &mut self,
        kind: BookKind,
        bids: Levels<'_>,
        asks: Levels<'_>,
        at: u64,
    ) -> Result<()> {
        // Checked before anything changes: a bad record is refused whole.
        if bids.iter().chain(asks.iter()).any(|l| l.qty_raw < 0) {
            self.clear();
            return Err(negative_qty(at));
        }
        let r = match kind {
            BookKind::Snapshot => self
                .bids
                .replace(bids, at)
                .and_then(|()| self.asks.replace(asks, at)),
            BookKind::Delta => Self::delta(&mut self.bids, bids, at)
                .and_then(|()| Self::delta(&mut self.asks, asks, at)),
        };
        if r.is_err() {
            self.clear();
        }
        r
    }

    fn delta(side: &mut SideState<'_>, levels: Levels<'_>, at: u64) -> Result<()> {
        for l in levels.iter() {
            if l.qty_raw == 0 {
                side.remove(l.price_raw);
            } else {
                side.upsert(l, at)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(p: i64, q: i64) -> Level {
        Level {
            price_raw: p,
            qty_raw: q,
        }
    }

    fn rec<'a>(kind: BookKind, bids: &'a [Level], asks: &'a [Level]) -> Book<'a> {
        Book {
            kind,
            exchange_ts_ns: 0,
            recv_ts_ns: 0,
            seq: 0,
            symbol_id: 1,
            header_type: kind.flox_header_type(),
            instrument: 0,
            exchange_id: 0,
            bids: Levels::Slice(bids),
            asks: Levels::Slice(asks),
        }
    }

    use BookKind::{Delta, Snapshot};

    /// Snapshot, then deltas: upsert, insert between, remove, remove an
    /// absent price; books computed by hand.
    #[test]
    fn hand_computed_sequence() {
        let (mut b, mut a) = ([Level::default(); 4], [Level::default(); 4]);
        let mut st = BookState::new(&mut b, &mut a);
        // Listed out of order: kept best-first.
        st.apply(
            &rec(Snapshot, &[l(98, 2), l(100, 1)], &[l(103, 4), l(101, 3)]),
            0,
        )
        .unwrap();
        assert_eq!(st.bids(), &[l(100, 1), l(98, 2)]);
        assert_eq!(st.asks(), &[l(101, 3), l(103, 4)]);
        st.apply(&rec(Delta, &[l(99, 7), l(100, 5)], &[l(101, 0)]), 50)
            .unwrap();
        assert_eq!(st.bids(), &[l(100, 5), l(99, 7), l(98, 2)]);
        assert_eq!(st.asks(), &[l(103, 4)]);
        st.apply(&rec(Delta, &[l(42, 0)], &[l(102, 1), l(104, 2)]), 90)
            .unwrap();
        assert_eq!(st.bids(), &[l(100, 5), l(99, 7), l(98, 2)]);
        assert_eq!(st.asks(), &[l(102, 1), l(103, 4), l(104, 2)]);
        assert_eq!(st.best_bid(), Some(l(100, 5)));
        assert_eq!(st.best_ask(), Some(l(102, 1)));
        // A snapshot with no asks empties the ask side.
        st.apply(&rec(Snapshot, &[l(97, 1)], &[]), 120).unwrap();
        assert_eq!(st.bids(), &[l(97, 1)]);
        assert_eq!(st.asks(), &[]);
        // Zero-quantity levels listed by a snapshot are kept as listed.
        st.apply(&rec(Snapshot, &[], &[l(105, 0)]), 130).unwrap();
        assert_eq!((st.bids(), st.asks()), (&[][..], &[l(105, 0)][..]));
    }

    #[test]
    fn errors_carry_offset_and_clear() {
        let (mut b, mut a) = ([Level::default(); 2], [Level::default(); 2]);
        let mut st = BookState::new(&mut b, &mut a);
        st.apply(&rec(Snapshot, &[l(1, 1)], &[l(2, 1)]), 0).unwrap();
        let e = st
            .apply(&rec(Delta, &[l(1, 5)], &[l(3, -1)]), 777)
            .unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::MalformedRecord, 777));
        assert_eq!((st.bids(), st.asks()), (&[][..], &[][..]));

        st.apply(&rec(Snapshot, &[l(1, 1), l(2, 1)], &[]), 0)
            .unwrap();
        let e = st.apply(&rec(Delta, &[l(3, 1)], &[]), 888).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::CapacityExceeded, 888));
        assert_eq!(st.bids(), &[]);
        let e = st
            .apply(&rec(Snapshot, &[], &[l(1, 1), l(2, 1), l(3, 1)]), 9)
            .unwrap_err();
        assert_eq!((e.kind, e.needed), (ErrorKind::CapacityExceeded, Some(3)));
        let e = st
            .apply(&rec(Snapshot, &[l(1, 1), l(1, 2)], &[]), 10)
            .unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::MalformedRecord, 10));
        // Zero capacity: a snapshot of empty sides is fine.
        let mut z = BookState::new(&mut [], &mut []);
        z.apply(&rec(Snapshot, &[], &[]), 0).unwrap();
        z.apply(&rec(Delta, &[l(5, 0)], &[]), 0).unwrap();
        assert!(z.apply(&rec(Delta, &[l(5, 1)], &[]), 0).is_err());
    }

    #[test]
    fn resume_from_parts() {
        let mut b = [l(5, 1), l(4, 1), l(0, 0)];
        let mut a = [l(6, 1), l(0, 0)];
        let mut st = BookState::from_parts(&mut b, 2, &mut a, 1).unwrap();
        st.apply(&rec(Delta, &[l(3, 2)], &[]), 0).unwrap();
        assert_eq!(st.lens(), (3, 1));
        assert_eq!(st.bids(), &[l(5, 1), l(4, 1), l(3, 2)]);
        let mut b = [l(4, 1), l(5, 1)];
        let e = BookState::from_parts(&mut b, 2, &mut [], 0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidInput);
        assert!(BookState::from_parts(&mut [], 1, &mut [], 0).is_err());
        // resume: lengths checked, order trusted.
        let mut b = [l(5, 1), l(4, 1), l(0, 0)];
        let mut st = BookState::resume(&mut b, 2, &mut [], 0).unwrap();
        st.apply(&rec(Delta, &[l(4, 0)], &[]), 0).unwrap();
        assert_eq!(st.bids(), &[l(5, 1)]);
        assert!(BookState::resume(&mut [], 1, &mut [], 0).is_err());
    }

    #[test]
    fn wire_levels() {
        let mut bytes = [0u8; 32];
        bytes[0] = 10;
        bytes[8] = 1;
        bytes[16] = 20;
        bytes[24] = 2;
        let (mut b, mut a) = ([Level::default(); 4], [Level::default(); 4]);
        let mut st = BookState::new(&mut b, &mut a);
        st.apply_levels(Snapshot, Levels::Wire(&bytes), Levels::Wire(&bytes), 0)
            .unwrap();
        assert_eq!(st.bids(), &[l(20, 2), l(10, 1)]);
        assert_eq!(st.asks(), &[l(10, 1), l(20, 2)]);
    }
}
