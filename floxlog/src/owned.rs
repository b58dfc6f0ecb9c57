//! Owned events: an [`Event`] whose levels and payload live on the heap, for
//! code that parses, buffers or merges events.

use floxlog_core::{Book, BookKind, Event, Level, Levels, OptionQuote, PoolState, Trade};

/// An owned book update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedBook {
    /// Snapshot or delta.
    pub kind: BookKind,
    /// Exchange-side timestamp, ns.
    pub exchange_ts_ns: i64,
    /// Receiver-side timestamp, ns.
    pub recv_ts_ns: i64,
    /// Source sequence number.
    pub seq: i64,
    /// Symbol tag.
    pub symbol_id: u32,
    /// Byte stored in the book header's type field.
    pub header_type: u8,
    /// Instrument code.
    pub instrument: u8,
    /// Exchange tag.
    pub exchange_id: u16,
    /// Bid levels.
    pub bids: Vec<Level>,
    /// Ask levels.
    pub asks: Vec<Level>,
}

/// An owned pool state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedPoolState {
    /// Exchange-side timestamp, ns.
    pub exchange_ts_ns: i64,
    /// Receiver-side timestamp, ns.
    pub recv_ts_ns: i64,
    /// Symbol tag.
    pub symbol_id: u32,
    /// Sub-type.
    pub sub_type: u8,
    /// Venue.
    pub venue: u8,
    /// Exchange tag.
    pub exchange_id: u16,
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
                kind: b.kind,
                exchange_ts_ns: b.exchange_ts_ns,
                recv_ts_ns: b.recv_ts_ns,
                seq: b.seq,
                symbol_id: b.symbol_id,
                header_type: b.header_type,
                instrument: b.instrument,
                exchange_id: b.exchange_id,
                bids: b.bids.iter().collect(),
                asks: b.asks.iter().collect(),
            }),
            Event::PoolState(p) => OwnedEvent::PoolState(OwnedPoolState {
                exchange_ts_ns: p.exchange_ts_ns,
                recv_ts_ns: p.recv_ts_ns,
                symbol_id: p.symbol_id,
                sub_type: p.sub_type,
                venue: p.venue,
                exchange_id: p.exchange_id,
                payload: p.payload.to_vec(),
            }),
        }
    }

    /// Borrows as a core event (for the writer).
    pub fn as_event(&self) -> Event<'_> {
        match self {
            OwnedEvent::Trade(t) => Event::Trade(*t),
            OwnedEvent::OptionQuote(q) => Event::OptionQuote(*q),
            OwnedEvent::Book(b) => Event::Book(Book {
                kind: b.kind,
                exchange_ts_ns: b.exchange_ts_ns,
                recv_ts_ns: b.recv_ts_ns,
                seq: b.seq,
                symbol_id: b.symbol_id,
                header_type: b.header_type,
                instrument: b.instrument,
                exchange_id: b.exchange_id,
                bids: Levels::Slice(&b.bids),
                asks: Levels::Slice(&b.asks),
            }),
            OwnedEvent::PoolState(p) => Event::PoolState(PoolState {
                exchange_ts_ns: p.exchange_ts_ns,
                recv_ts_ns: p.recv_ts_ns,
                symbol_id: p.symbol_id,
                sub_type: p.sub_type,
                venue: p.venue,
                exchange_id: p.exchange_id,
                payload: &p.payload,
            }),
        }
    }

    /// Exchange-side timestamp.
    pub fn exchange_ts_ns(&self) -> i64 {
        self.as_event().exchange_ts_ns()
    }
}
