//! Book records, frame types 2 (snapshot) and 3 (delta): a 40-byte
//! BookRecordHeader, then `bid_count + ask_count` 16-byte levels, bids first.

use crate::consts::frame_type;
use crate::error::{malformed, Result};
use crate::le::{i64_at, put_i64, put_u16, put_u32, u16_at, u32_at};

/// Byte offsets of the book header fields.
pub mod field {
    /// `i64` exchange timestamp.
    pub const EXCHANGE_TS_NS: usize = 0;
    /// `i64` receive timestamp.
    pub const RECV_TS_NS: usize = 8;
    /// `i64` source sequence number.
    pub const SEQ: usize = 16;
    /// `u32` symbol tag.
    pub const SYMBOL_ID: usize = 24;
    /// `u16` bid levels.
    pub const BID_COUNT: usize = 28;
    /// `u16` ask levels.
    pub const ASK_COUNT: usize = 30;
    /// `u8` header type (flox: 0 snapshot / 1 delta; spec: 2 / 3).
    pub const TYPE: usize = 32;
    /// `u8` instrument code.
    pub const INSTRUMENT: usize = 33;
    /// `u16` exchange tag.
    pub const EXCHANGE_ID: usize = 34;
    /// `u32` padding, zero.
    pub const PAD: usize = 36;
    /// Level: `i64` price.
    pub const LEVEL_PRICE_RAW: usize = 0;
    /// Level: `i64` quantity.
    pub const LEVEL_QTY_RAW: usize = 8;
}

/// Book header length.
pub const BOOK_HEADER_LEN: usize = 40;
/// Level length.
pub const LEVEL_LEN: usize = 16;
/// Most levels one side can hold (`u16` count).
pub const MAX_LEVELS_PER_SIDE: usize = u16::MAX as usize;

/// Snapshot or delta; decides the frame type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BookKind {
    /// Levels replace each side (frame type 2).
    Snapshot,
    /// Levels upsert (qty > 0) or remove (qty == 0) (frame type 3).
    Delta,
}

impl BookKind {
    /// The frame type of this kind.
    pub const fn frame_type(self) -> u8 {
        match self {
            BookKind::Snapshot => frame_type::BOOK_SNAPSHOT,
            BookKind::Delta => frame_type::BOOK_DELTA,
        }
    }

    /// Header type bytes a reader accepts for this kind: flox's and the spec's.
    pub const fn accepts_header_type(self, t: u8) -> bool {
        match self {
            BookKind::Snapshot => t == 0 || t == 2,
            BookKind::Delta => t == 1 || t == 3,
        }
    }

    /// The byte flox's recorders store (0 snapshot, 1 delta).
    pub const fn flox_header_type(self) -> u8 {
        match self {
            BookKind::Snapshot => 0,
            BookKind::Delta => 1,
        }
    }
}

/// One price level.
///
/// `#[repr(C)]` so that C callers can hand arrays of their own identical
/// struct to the writer; file bytes are never cast to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
#[repr(C)]
pub struct Level {
    /// Price, fixed-point 1e8.
    pub price_raw: i64,
    /// Quantity, fixed-point 1e8 (0 removes the level in a delta).
    pub qty_raw: i64,
}

/// The levels of one side: decoded values the caller owns, or the encoded
/// bytes inside a segment (zero-copy; 16 bytes a level). Equality and
/// `Debug` look at the levels, not the representation.
#[derive(Clone, Copy)]
pub enum Levels<'a> {
    /// Levels as values.
    Slice(&'a [Level]),
    /// Levels as encoded in a frame (length a multiple of 16).
    Wire(&'a [u8]),
}

impl Default for Levels<'_> {
    fn default() -> Self {
        Levels::Slice(&[])
    }
}

impl<'a> Levels<'a> {
    /// Number of levels.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Levels::Slice(s) => s.len(),
            Levels::Wire(b) => b.len() / LEVEL_LEN,
        }
    }

    /// Whether there are no levels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Level `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Level> {
        match self {
            Levels::Slice(s) => s.get(i).copied(),
            Levels::Wire(b) => {
                let at = i.checked_mul(LEVEL_LEN)?;
                let l = b.get(at..at.checked_add(LEVEL_LEN)?)?;
                Some(Level {
                    price_raw: i64_at(l, field::LEVEL_PRICE_RAW),
                    qty_raw: i64_at(l, field::LEVEL_QTY_RAW),
                })
            }
        }
    }

    /// The levels in order.
    pub fn iter(&self) -> impl Iterator<Item = Level> + 'a {
        let me = *self;
        (0..me.len()).filter_map(move |i| me.get(i))
    }

    /// Encodes the levels into `out` (exactly `len() * 16` bytes).
    fn emit(&self, out: &mut [u8]) {
        match self {
            Levels::Wire(b) => out.copy_from_slice(b),
            Levels::Slice(s) => {
                for (l, o) in s.iter().zip(out.chunks_exact_mut(LEVEL_LEN)) {
                    put_i64(o, field::LEVEL_PRICE_RAW, l.price_raw);
                    put_i64(o, field::LEVEL_QTY_RAW, l.qty_raw);
                }
            }
        }
    }
}

impl core::fmt::Debug for Levels<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Levels<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}
impl Eq for Levels<'_> {}

/// A book snapshot or delta. From the reader, `bids`/`asks` are
/// [`Levels::Wire`] views into the segment (or the block scratch); for the
/// writer, either form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Book<'a> {
    /// Snapshot or delta (the frame type).
    pub kind: BookKind,
    /// Exchange-side timestamp, ns.
    pub exchange_ts_ns: i64,
    /// Receiver-side timestamp, ns.
    pub recv_ts_ns: i64,
    /// Source sequence number; 0 if not provided.
    pub seq: i64,
    /// Symbol tag.
    pub symbol_id: u32,
    /// The byte stored in `BookRecordHeader.type` (flox 0/1, spec 2/3).
    /// Writers take 0 as "the kind's own byte" (a delta is stored with 1
    /// under the reference profile); any other byte must agree with `kind`.
    pub header_type: u8,
    /// Instrument code.
    pub instrument: u8,
    /// Exchange tag.
    pub exchange_id: u16,
    /// Bid levels.
    pub bids: Levels<'a>,
    /// Ask levels.
    pub asks: Levels<'a>,
}

impl<'a> Book<'a> {
    /// Decodes a book payload of frame `kind`. The level counts must account
    /// for exactly the bytes after the header, and the header type byte must
    /// agree with the frame type (0 or 2 for a snapshot, 1 or 3 for a delta).
    pub fn parse(kind: BookKind, b: &'a [u8], at: u64) -> Result<Book<'a>> {
        if b.len() < BOOK_HEADER_LEN {
            return Err(malformed(
                at,
                "book payload shorter than its 40-byte header",
            ));
        }
        let bids = u16_at(b, field::BID_COUNT) as usize;
        let asks = u16_at(b, field::ASK_COUNT) as usize;
        if BOOK_HEADER_LEN + (bids + asks) * LEVEL_LEN != b.len() {
            return Err(malformed(
                at,
                "book level counts do not match the payload size",
            ));
        }
        let header_type = b[field::TYPE];
        if !kind.accepts_header_type(header_type) {
            return Err(malformed(at, "book header type contradicts the frame type"));
        }
        let split = BOOK_HEADER_LEN + bids * LEVEL_LEN;
        Ok(Book {
            kind,
            exchange_ts_ns: i64_at(b, field::EXCHANGE_TS_NS),
            recv_ts_ns: i64_at(b, field::RECV_TS_NS),
            seq: i64_at(b, field::SEQ),
            symbol_id: u32_at(b, field::SYMBOL_ID),
            header_type,
            instrument: b[field::INSTRUMENT],
            exchange_id: u16_at(b, field::EXCHANGE_ID),
            bids: Levels::Wire(&b[BOOK_HEADER_LEN..split]),
            asks: Levels::Wire(&b[split..]),
        })
    }

    /// The header fields without the levels (for owners that keep the
    /// levels elsewhere).
    pub fn without_levels(&self) -> Book<'static> {
        Book {
            kind: self.kind,
            exchange_ts_ns: self.exchange_ts_ns,
            recv_ts_ns: self.recv_ts_ns,
            seq: self.seq,
            symbol_id: self.symbol_id,
            header_type: self.header_type,
            instrument: self.instrument,
            exchange_id: self.exchange_id,
            bids: Levels::Slice(&[]),
            asks: Levels::Slice(&[]),
        }
    }

    /// Encoded payload length.
    pub fn len(&self) -> usize {
        BOOK_HEADER_LEN + (self.bids.len() + self.asks.len()) * LEVEL_LEN
    }

    /// Never empty: the header is always there.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Encodes into `out` (exactly [`Book::len`] bytes) with header type
    /// byte `header_type`.
    pub(crate) fn emit(&self, header_type: u8, out: &mut [u8]) {
        put_i64(out, field::EXCHANGE_TS_NS, self.exchange_ts_ns);
        put_i64(out, field::RECV_TS_NS, self.recv_ts_ns);
        put_i64(out, field::SEQ, self.seq);
        put_u32(out, field::SYMBOL_ID, self.symbol_id);
        put_u16(out, field::BID_COUNT, self.bids.len() as u16);
        put_u16(out, field::ASK_COUNT, self.asks.len() as u16);
        out[field::TYPE] = header_type;
        out[field::INSTRUMENT] = self.instrument;
        put_u16(out, field::EXCHANGE_ID, self.exchange_id);
        put_u32(out, field::PAD, 0);
        let split = BOOK_HEADER_LEN + self.bids.len() * LEVEL_LEN;
        self.bids.emit(&mut out[BOOK_HEADER_LEN..split]);
        self.asks.emit(&mut out[split..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    /// A delta with one bid and one ask, as flox writes it (header type 1).
    #[test]
    fn book_golden_bytes() {
        let bids = [Level {
            price_raw: 0x0a,
            qty_raw: 0x0b,
        }];
        let asks = [Level {
            price_raw: 0x0c,
            qty_raw: 0,
        }];
        let book = Book {
            kind: BookKind::Delta,
            exchange_ts_ns: 0x11,
            recv_ts_ns: 0x22,
            seq: 0x33,
            symbol_id: 0x44,
            header_type: 1,
            instrument: 2,
            exchange_id: 0x0506,
            bids: Levels::Slice(&bids),
            asks: Levels::Slice(&asks),
        };
        let mut want = [0u8; 72];
        want[0] = 0x11;
        want[8] = 0x22;
        want[16] = 0x33;
        want[24] = 0x44;
        want[28] = 1; // bid_count
        want[30] = 1; // ask_count
        want[32] = 1; // header type
        want[33] = 2;
        want[34..36].copy_from_slice(&[0x06, 0x05]);
        want[40] = 0x0a;
        want[48] = 0x0b;
        want[56] = 0x0c;
        let mut out = [0u8; 72];
        book.emit(1, &mut out);
        assert_eq!(out, want);
        assert_eq!(Book::parse(BookKind::Delta, &want, 9), Ok(book));
        let e = Book::parse(BookKind::Snapshot, &want, 9).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::MalformedRecord, 9));
        let e = Book::parse(BookKind::Delta, &want[..71], 9).unwrap_err();
        assert_eq!(e.kind, ErrorKind::MalformedRecord);
    }
}
