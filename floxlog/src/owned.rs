//! Owned events: an [`Event`] whose levels and payload live on the heap, for
//! code that parses, buffers or merges events.

use floxlog_core::{Book, Event, Level, Levels, OptionQuote, PoolState, Trade};

/// An owned book update: the record's header fields and its levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedBook {
    /// The header fields (its own `bids`/`asks` are empty; the levels are
    /// below).
    pub head: Book<'static>,
    /// Bid levels.
    pub bids: Vec<Level>,
    /// Ask levels.
    pub asks: Vec<Level>,
}

/// An owned pool state: the record's header fields and its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedPoolState {
    /// The header fields (its own `payload` is empty; the bytes are below).
    pub head: PoolState<'static>,
    /// Opaque payload.
    pub payload: Vec<u8>,
}

/// An owned event of any type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedEvent {
    /// Frame type 1.
    Trade(Trade),
    /// Frame types 2 and 3.
    Book(OwnedBook),
    /// Frame type 4.
    OptionQuote(OptionQuote),
    /// Frame type 5.
    PoolState(OwnedPoolState),
}

impl OwnedEvent {
    /// Copies a borrowed event.
    pub fn from_event(ev: &Event<'_>) -> OwnedEvent {
        match ev {
            Event::Trade(t) => OwnedEvent::Trade(*t),
            Event::OptionQuote(q) => OwnedEvent::OptionQuote(*q),
            Event::Book(b) => OwnedEvent::Book(OwnedBook {
                head: b.without_levels(),
                bids: b.bids.iter().collect(),
                asks: b.asks.iter().collect(),
            }),
            Event::PoolState(p) => OwnedEvent::PoolState(OwnedPoolState {
                head: p.without_payload(),
                payload: p.payload.to_vec(),
            }),
        }
    }

    /// Copies a borrowed event into `self`, reusing its level and payload
    /// vectors when `self` already holds an event of the same type (a
    /// merge keeps one such slot per input and refills it per event).
    pub fn assign(&mut self, ev: &Event<'_>) {
        match (self, ev) {
            (OwnedEvent::Book(o), Event::Book(b)) => {
                o.head = b.without_levels();
                o.bids.clear();
                o.bids.extend(b.bids.iter());
                o.asks.clear();
                o.asks.extend(b.asks.iter());
            }
            (OwnedEvent::PoolState(o), Event::PoolState(p)) => {
                o.head = p.without_payload();
                o.payload.clear();
                o.payload.extend_from_slice(p.payload);
            }
            (slot, ev) => *slot = OwnedEvent::from_event(ev),
        }
    }

    /// Borrows as a core event (for the writer).
    pub fn as_event(&self) -> Event<'_> {
        match self {
            OwnedEvent::Trade(t) => Event::Trade(*t),
            OwnedEvent::OptionQuote(q) => Event::OptionQuote(*q),
            OwnedEvent::Book(b) => Event::Book(Book {
                bids: Levels::Slice(&b.bids),
                asks: Levels::Slice(&b.asks),
                ..b.head
            }),
            OwnedEvent::PoolState(p) => Event::PoolState(PoolState {
                payload: &p.payload,
                ..p.head
            }),
        }
    }

    /// Exchange-side timestamp.
    pub fn exchange_ts_ns(&self) -> i64 {
        self.as_event().exchange_ts_ns()
    }
}
