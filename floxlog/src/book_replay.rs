//! Order books replayed from a tape: one [`floxlog_core::BookState`] per
//! symbol over growable storage, fed with book events in time order.
//!
//! Semantics are the core's (spec 1.0, "BookLevel": a snapshot replaces
//! each side with its listed levels, a delta upserts `qty_raw > 0` and
//! removes `qty_raw == 0`); a negative quantity, a price listed twice in a
//! snapshot side and a side beyond the configured capacity are data errors
//! naming the segment and the event's byte offset.

use std::path::Path;

use floxlog_core::{Book, BookState, Event, Level, Levels, ReadOptions, UnknownTypes};

use crate::see::ids::IdTable;
use crate::tape::read::merge::{Filter, OpenedTape, Order};
use crate::tape::read::Request;
use crate::tape::{Kept, ReadOutcome, Tape, TapeError};

/// Default levels a side may hold: the most one record can list.
pub const DEFAULT_CAPACITY: usize = floxlog_core::book::MAX_LEVELS_PER_SIDE;

/// One symbol's book: its sides best-first, and what was applied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolBook {
    /// Bids, highest price first.
    pub bids: Vec<Level>,
    /// Asks, lowest price first.
    pub asks: Vec<Level>,
    /// exchange_ts_ns of the last event applied.
    pub last_ts: Option<i64>,
    /// Book events applied.
    pub events: u64,
}

impl SymbolBook {
    /// The top `depth` levels of each side (all with `None`).
    pub fn top(&self, depth: Option<usize>) -> (&[Level], &[Level]) {
        let d = |v: &[Level]| depth.map_or(v.len(), |d| d.min(v.len()));
        (&self.bids[..d(&self.bids)], &self.asks[..d(&self.asks)])
    }
}

/// Books of every symbol seen, each side capped at `capacity` levels.
#[derive(Clone, Debug)]
pub struct BookReplayer {
    capacity: usize,
    /// By id without hashing: looked up on every book event.
    books: IdTable<SymbolBook>,
}

impl Default for BookReplayer {
    fn default() -> Self {
        BookReplayer::new(DEFAULT_CAPACITY)
    }
}

impl BookReplayer {
    /// No books yet; each side of each book holds at most `capacity` levels.
    pub fn new(capacity: usize) -> BookReplayer {
        BookReplayer {
            capacity,
            books: IdTable::default(),
        }
    }

    /// Applies a book record to its symbol's book (other events are
    /// ignored); `at` is the event's byte offset for errors. On error the
    /// symbol's book is empty.
    pub fn apply(&mut self, ev: &Event<'_>, at: u64) -> Result<(), floxlog_core::Error> {
        let Event::Book(b) = ev else { return Ok(()) };
        self.apply_book(b, at).map(|_| ())
    }

    /// [`BookReplayer::apply`] for a book record, giving its symbol's book
    /// after it (one lookup for callers that read the book every event).
    pub fn apply_book(
        &mut self,
        b: &Book<'_>,
        at: u64,
    ) -> Result<&SymbolBook, floxlog_core::Error> {
        let cap = self.capacity;
        let book = self
            .books
            .get_or_insert_with(b.symbol_id, SymbolBook::default);
        // Storage grows to what this record could need, within the cap;
        // the core reports a record that needs more.
        let (bl, al) = (book.bids.len(), book.asks.len());
        let grow = |len: usize, lv: &Levels<'_>| match b.kind {
            floxlog_core::BookKind::Snapshot => lv.len().min(cap).max(len),
            floxlog_core::BookKind::Delta => len.saturating_add(lv.len()).min(cap).max(len),
        };
        book.bids.resize(grow(bl, &b.bids), Level::default());
        book.asks.resize(grow(al, &b.asks), Level::default());
        let r = apply_to(book, b, bl, al, at);
        let (nb, na) = r.as_ref().map_or((0, 0), |&lens| lens);
        book.bids.truncate(nb);
        book.asks.truncate(na);
        book.last_ts = Some(b.exchange_ts_ns);
        book.events += 1;
        r.map(|_| &*book)
    }

    /// The book of `symbol` (`None` before its first book event).
    pub fn book(&self, symbol: u32) -> Option<&SymbolBook> {
        self.books.get(symbol)
    }

    /// Every book, by symbol id (ascending). Since 0.2.0 an iterator; it
    /// was a `&HashMap<u32, SymbolBook>`.
    pub fn books(&self) -> impl Iterator<Item = (u32, &SymbolBook)> {
        self.books.iter()
    }
}

fn apply_to(
    book: &mut SymbolBook,
    b: &Book<'_>,
    bl: usize,
    al: usize,
    at: u64,
) -> Result<(usize, usize), floxlog_core::Error> {
    // Only this module writes the storage (callers get `&SymbolBook`), and
    // it keeps the sides as the core left them: their order needs no
    // re-check on every record.
    let mut st = BookState::resume(&mut book.bids, bl, &mut book.asks, al)?;
    st.apply(b, at)?;
    Ok(st.lens())
}

/// A sampled book: the top levels of one symbol after every event stamped
/// at or before `at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookSample {
    /// Symbol id.
    pub symbol_id: u32,
    /// The sample time (ns).
    pub at: i64,
    /// exchange_ts_ns of the last book event applied (`None`: none yet).
    pub last_ts: Option<i64>,
    /// Bids, best first (at most the depth asked for).
    pub bids: Vec<Level>,
    /// Asks, best first.
    pub asks: Vec<Level>,
}

fn sample(r: &BookReplayer, symbol: u32, at: i64, depth: Option<usize>) -> BookSample {
    let (bids, asks, last_ts) = match r.book(symbol) {
        Some(b) => {
            let (bi, ai) = b.top(depth);
            (bi.to_vec(), ai.to_vec(), b.last_ts)
        }
        None => (Vec::new(), Vec::new(), None),
    };
    BookSample {
        symbol_id: symbol,
        at,
        last_ts,
        bids,
        asks,
    }
}

/// Replay settings.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Levels a side may hold.
    pub capacity: usize,
    /// Skip frames of types 1.0 does not define instead of failing.
    pub skip_unknown: bool,
    /// Fail on the torn tail of an unfinished segment too (otherwise the
    /// events before it are used and the tail reported in `warnings`).
    pub strict: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            capacity: DEFAULT_CAPACITY,
            skip_unknown: false,
            strict: false,
        }
    }
}

/// Replays `symbol`'s book events of `tape` stamped before `end`
/// (exclusive; `None`: all), in time order, calling `before(ts, replayer)`
/// ahead of each event (so samplers see the book before it). Damage stops
/// the replay with the error (a book missing events would be wrong);
/// returns warnings (torn tails of unfinished segments).
fn replay(
    tape: Tape,
    symbol: u32,
    end: Option<i64>,
    opts: &ReplayOptions,
    mut before: impl FnMut(i64, &BookReplayer) -> Result<(), TapeError>,
) -> Result<(BookReplayer, Vec<String>), TapeError> {
    let cfg = Request {
        order: Order::Time,
        filter: Filter {
            from: None,
            to: end,
            symbols: Some(vec![symbol]),
            types: Some([false, false, true, true, false, false]),
        },
        read: ReadOptions {
            verify_crc: true,
            unknown_types: if opts.skip_unknown {
                UnknownTypes::Skip
            } else {
                UnknownTypes::Reject
            },
            ..ReadOptions::default()
        },
        ..Request::default()
    };
    let mut opened = OpenedTape::open(tape);
    if let Some(e) = opened.open_errors.pop() {
        return Err(e);
    }
    let paths: Vec<_> = opened
        .tape
        .segments
        .iter()
        .map(|s| s.path.clone())
        .collect();
    let mut rep = BookReplayer::new(opts.capacity);
    let mut r = opened.reader(&cfg);
    while let Some(it) = r.next_item()? {
        before(it.event.exchange_ts_ns(), &rep)?;
        if let Err(mut e) = rep.apply(&it.event, it.position.offset) {
            if let Some(p) = it.position.in_block {
                e = e.in_block(p);
            }
            let path = paths.get(it.segment).map_or(Path::new("?"), |p| p);
            return Err(TapeError::data(path, e));
        }
    }
    let outcome = ReadOutcome::new(r.problems(), opts.strict);
    if let Some(e) = outcome.error() {
        return Err(e);
    }
    Ok((rep, outcome.warnings(Kept::Replayed).collect()))
}

/// The book of `symbol` after every event stamped at or before `at`, top
/// `depth` levels a side (all with `None`), and the replay's warnings.
pub fn book_at(
    tape: Tape,
    symbol: u32,
    at: i64,
    depth: Option<usize>,
    opts: &ReplayOptions,
) -> Result<(BookSample, Vec<String>), TapeError> {
    let (rep, warnings) = replay(tape, symbol, at.checked_add(1), opts, |_, _| Ok(()))?;
    Ok((sample(&rep, symbol, at, depth), warnings))
}

/// Samples `symbol`'s book at `from`, `from + interval`, ... while before
/// `to` (exclusive, like `--to` elsewhere), each the book after every event
/// stamped at or before the sample time; `emit` gets each sample in order.
/// Returns the replay's warnings.
#[allow(clippy::too_many_arguments)]
pub fn every(
    tape: Tape,
    symbol: u32,
    interval: i64,
    from: i64,
    to: i64,
    depth: Option<usize>,
    opts: &ReplayOptions,
    mut emit: impl FnMut(&BookSample) -> Result<(), TapeError>,
) -> Result<Vec<String>, TapeError> {
    if interval <= 0 {
        return Err(TapeError::usage("the sampling interval must be positive"));
    }
    // Next sample time; None once past `to` (or past i64::MAX).
    let mut next = (from < to).then_some(from);
    let mut step = |rep: &BookReplayer, upto: Option<i64>, next: &mut Option<i64>| {
        while let Some(t) = *next {
            if upto.is_some_and(|u| t >= u) {
                break;
            }
            emit(&sample(rep, symbol, t, depth))?;
            *next = t.checked_add(interval).filter(|&n| n < to);
        }
        Ok::<(), TapeError>(())
    };
    let (rep, warnings) = replay(tape, symbol, Some(to), opts, |ts, rep| {
        // Samples stamped before this event see the book without it.
        step(rep, Some(ts), &mut next)
    })?;
    step(&rep, None, &mut next)?;
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use floxlog_core::{BookKind, ErrorKind};

    fn l(p: i64, q: i64) -> Level {
        Level {
            price_raw: p,
            qty_raw: q,
        }
    }

    fn ev<'a>(
        kind: BookKind,
        sym: u32,
        ts: i64,
        bids: &'a [Level],
        asks: &'a [Level],
    ) -> Event<'a> {
        Event::Book(Book {
            kind,
            exchange_ts_ns: ts,
            recv_ts_ns: ts,
            seq: 0,
            symbol_id: sym,
            header_type: kind.flox_header_type(),
            instrument: 0,
            exchange_id: 0,
            bids: Levels::Slice(bids),
            asks: Levels::Slice(asks),
        })
    }

    #[test]
    fn per_symbol_books() {
        let mut r = BookReplayer::new(3);
        r.apply(&ev(BookKind::Snapshot, 1, 10, &[l(9, 1)], &[l(11, 1)]), 0)
            .unwrap();
        r.apply(&ev(BookKind::Delta, 2, 11, &[l(5, 2)], &[]), 100)
            .unwrap();
        r.apply(&ev(BookKind::Delta, 1, 12, &[l(10, 3), l(9, 0)], &[]), 200)
            .unwrap();
        let b1 = r.book(1).unwrap();
        assert_eq!(
            (&b1.bids[..], &b1.asks[..]),
            (&[l(10, 3)][..], &[l(11, 1)][..])
        );
        assert_eq!((b1.last_ts, b1.events), (Some(12), 2));
        assert_eq!(r.book(2).unwrap().bids, vec![l(5, 2)]);
        let e = r
            .apply(
                &ev(BookKind::Delta, 2, 13, &[l(1, 1), l(2, 1), l(3, 1)], &[]),
                300,
            )
            .unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::CapacityExceeded, 300));
        assert!(r.book(2).unwrap().bids.is_empty());
    }
}
