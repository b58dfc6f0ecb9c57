//! The event: one decoded frame of any known type.

use crate::book::{Book, BookKind, LEVEL_LEN, MAX_LEVELS_PER_SIDE};
use crate::consts::frame_type;
use crate::error::{Error, ErrorKind, Result};
use crate::option_quote::OptionQuote;
use crate::pool_state::PoolState;
use crate::trade::Trade;

/// One event. The reader hands these out as views into the segment (or the
/// LZ4 block scratch); the writer takes them as input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// Frame type 1.
    Trade(Trade),
    /// Frame types 2 (snapshot) and 3 (delta).
    Book(Book<'a>),
    /// Frame type 4.
    OptionQuote(OptionQuote),
    /// Frame type 5.
    PoolState(PoolState<'a>),
}

/// Which writer conventions to follow where the reference and the spec text
/// disagree (see docs/format-notes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    /// Byte-for-byte what the flox reference writer produces: the book header
    /// type byte as given, symbol_count 0, Sorted only on compressed segments
    /// whose blocks do not overlap, first/last_event_ns from the first
    /// non-zero and the last event handed in.
    #[default]
    Reference,
    /// The spec text: book header type 2/3, symbol_count counted, Sorted
    /// whenever the segment's timestamps never decrease, first/last_event_ns
    /// the earliest and latest timestamps.
    Spec,
}

/// What a reader does with a frame type no layout defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum UnknownTypes {
    /// Stop with `UnknownRecordType` (spec 1.0; the default).
    #[default]
    Reject,
    /// Skip the frame by its size (flox's later revision).
    Skip,
}

impl<'a> Event<'a> {
    /// Decodes a payload of frame type `frame_type`. Errors report offset
    /// `at` (the frame's, by the corpus convention): `MalformedRecord` when
    /// the payload does not fit its type, `UnknownRecordType` for a type no
    /// layout defines.
    #[inline(always)]
    pub fn decode(frame_type: u8, payload: &'a [u8], at: u64) -> Result<Event<'a>> {
        match frame_type {
            frame_type::TRADE => Trade::parse(payload, at).map(Event::Trade),
            frame_type::BOOK_SNAPSHOT => {
                Book::parse(BookKind::Snapshot, payload, at).map(Event::Book)
            }
            frame_type::BOOK_DELTA => Book::parse(BookKind::Delta, payload, at).map(Event::Book),
            frame_type::OPTION_QUOTE => OptionQuote::parse(payload, at).map(Event::OptionQuote),
            frame_type::POOL_STATE => PoolState::parse(payload, at).map(Event::PoolState),
            _ => Err(Error::new(
                ErrorKind::UnknownRecordType,
                at,
                "frame type not defined by 1.0",
            )),
        }
    }

    /// The record type's name as the corpus and the CLI spell it
    /// (`"trade"`, `"book_snapshot"`, ...).
    pub fn type_name(&self) -> &'static str {
        frame_type::name(self.frame_type()).unwrap_or("unknown")
    }

    /// The frame type this event is written as.
    pub fn frame_type(&self) -> u8 {
        match self {
            Event::Trade(_) => frame_type::TRADE,
            Event::Book(b) => b.kind.frame_type(),
            Event::OptionQuote(_) => frame_type::OPTION_QUOTE,
            Event::PoolState(_) => frame_type::POOL_STATE,
        }
    }

    /// Exchange-side timestamp (every record starts with it).
    #[inline]
    pub fn exchange_ts_ns(&self) -> i64 {
        match self {
            Event::Trade(t) => t.exchange_ts_ns,
            Event::Book(b) => b.exchange_ts_ns,
            Event::OptionQuote(q) => q.exchange_ts_ns,
            Event::PoolState(p) => p.exchange_ts_ns,
        }
    }

    /// Receiver-side timestamp.
    pub fn recv_ts_ns(&self) -> i64 {
        match self {
            Event::Trade(t) => t.recv_ts_ns,
            Event::Book(b) => b.recv_ts_ns,
            Event::OptionQuote(q) => q.recv_ts_ns,
            Event::PoolState(p) => p.recv_ts_ns,
        }
    }

    /// Symbol tag.
    pub fn symbol_id(&self) -> u32 {
        match self {
            Event::Trade(t) => t.symbol_id,
            Event::Book(b) => b.symbol_id,
            Event::OptionQuote(q) => q.symbol_id,
            Event::PoolState(p) => p.symbol_id,
        }
    }

    /// Encoded payload length (without the 12-byte frame header).
    #[inline]
    pub fn payload_len(&self) -> usize {
        match self {
            Event::Trade(_) => Trade::LEN,
            Event::Book(b) => b.len(),
            Event::OptionQuote(_) => OptionQuote::LEN,
            Event::PoolState(p) => p.len(),
        }
    }

    /// Whether the event can be encoded under `profile`; `Err` says why not.
    ///
    /// Book sides hold at most 65535 levels; wire-form levels must be whole
    /// 16-byte levels; a pool payload must fit a `u32` frame size; and (under
    /// both profiles, which take the same bytes) a book's header type byte must not contradict its kind (0 or 2 for a
    /// snapshot, 1 or 3 for a delta; 0 on a delta is replaced by the kind's
    /// own byte), since flox would pick the frame type from that byte.
    pub fn validate(&self, profile: Profile) -> core::result::Result<(), &'static str> {
        // Both profiles accept the same events; kept for future checks.
        let _ = profile;
        match self {
            Event::Book(b) => {
                for side in [b.bids, b.asks] {
                    if let crate::book::Levels::Wire(w) = side {
                        if w.len() % LEVEL_LEN != 0 {
                            return Err("wire-form book levels are not a whole number of levels");
                        }
                    }
                    if side.len() > MAX_LEVELS_PER_SIDE {
                        return Err("book side has more than 65535 levels");
                    }
                }
                // 0 (a zero-initialised struct) takes the kind's own byte;
                // any other byte must agree with the kind, under either
                // profile, since flox picks the frame type from it.
                if b.header_type != 0 && !b.kind.accepts_header_type(b.header_type) {
                    return Err(
                        "book `header_type` contradicts the book kind (snapshot 0 or 2, delta 1 or 3; 0 takes the kind's byte)",
                    );
                }
                Ok(())
            }
            Event::PoolState(p) => {
                if p.payload.len() > u32::MAX as usize - PoolState::HEADER_LEN {
                    return Err("pool state payload does not fit a frame");
                }
                Ok(())
            }
            Event::Trade(_) | Event::OptionQuote(_) => Ok(()),
        }
    }

    /// Encodes the payload into `out` (exactly `payload_len()` bytes). The
    /// event must have passed [`Event::validate`].
    #[inline]
    pub(crate) fn emit_payload(&self, profile: Profile, out: &mut [u8]) {
        match self {
            Event::Trade(t) => {
                if let Ok(a) = <&mut [u8; Trade::LEN]>::try_from(out) {
                    t.emit(a);
                }
            }
            Event::Book(b) => {
                let ht = match profile {
                    Profile::Reference if b.kind.accepts_header_type(b.header_type) => {
                        b.header_type
                    }
                    Profile::Reference => b.kind.flox_header_type(),
                    Profile::Spec => b.kind.frame_type(),
                };
                b.emit(ht, out);
            }
            Event::OptionQuote(q) => {
                if let Ok(a) = <&mut [u8; OptionQuote::LEN]>::try_from(out) {
                    q.emit(a);
                }
            }
            Event::PoolState(p) => p.emit(out),
        }
    }
}
