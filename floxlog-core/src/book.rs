//! Book records, frame types 2 (snapshot) and 3 (delta): a 40-byte
//! BookRecordHeader, then `bid_count + ask_count` 16-byte levels, bids first.

use crate::consts::frame_type;
use crate::error::{malformed, Result};
use crate::le::{put_u16, u16_at};
use crate::record::define_head;

/// The book header's field list, in record order (as
/// [`crate::trade_fields`]); the level counts and the padding are not
/// fields: the levels give the one, the other is zero.
#[macro_export]
macro_rules! book_fields {
    ($m:ident $(, $arg:tt)*) => {
        $m! {
            $($arg)*
            /// Exchange-side timestamp, ns.
            exchange_ts_ns EXCHANGE_TS_NS: i64 @ 0, Timestamp;
            /// Receiver-side timestamp, ns.
            recv_ts_ns RECV_TS_NS: i64 @ 8, Timestamp;
            /// Source sequence number; 0 if not provided.
            seq SEQ: i64 @ 16, Plain;
            /// Symbol tag.
            symbol_id SYMBOL_ID: u32 @ 24, Plain;
            /// The byte stored in `BookRecordHeader.type` (flox 0/1, spec
            /// 2/3). Writers take 0 as "the kind's own byte" (a delta is
            /// stored with 1 under the reference profile); any other byte
            /// must agree with `kind`.
            header_type TYPE: u8 @ 32, Plain;
            /// Instrument code.
            instrument INSTRUMENT: u8 @ 33, Plain;
            /// Exchange tag.
            exchange_id EXCHANGE_ID: u16 @ 34, Plain;
        }
    };
}

/// The book level's field list (16 bytes).
#[macro_export]
macro_rules! level_fields {
    ($m:ident $(, $arg:tt)*) => {
        $m! {
            $($arg)*
            /// Price, fixed-point 1e8.
            price_raw PRICE_RAW: i64 @ 0, Fixed;
            /// Quantity, fixed-point 1e8 (0 removes the level in a delta).
            qty_raw QTY_RAW: i64 @ 8, Fixed;
        }
    };
}

/// The level record (its own `field` and `desc` modules).
pub mod level {
    use crate::record::define_record;

    level_fields!(define_record, {
        /// One price level.
        ///
        /// `#[repr(C)]` so that C callers can hand arrays of their own
        /// identical struct to the writer; file bytes are never cast to it.
        struct Level;
        what "book level";
        len 16;
    });
}
pub use level::Level;

/// Book header length.
pub const BOOK_HEADER_LEN: usize = 40;
/// Level length.
pub const LEVEL_LEN: usize = 16;
/// Most levels one side can hold (`u16` count).
pub const MAX_LEVELS_PER_SIDE: usize = u16::MAX as usize;

/// Snapshot or delta; decides the frame type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BookKind {
    /// Levels replace each side (frame type 2).
    #[default]
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
                Some(Level::from_payload(l.try_into().ok()?))
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
                    if let Ok(o) = o.try_into() {
                        l.emit(o);
                    }
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

book_fields!(define_head, {
    /// A book snapshot or delta. From the reader, `bids`/`asks` are
    /// [`Levels::Wire`] views into the segment (or the block scratch); for
    /// the writer, either form.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
    struct Book<'a>;
    header 40;
    /// `u16` bid levels.
    pad BID_COUNT @ 28;
    /// `u16` ask levels.
    pad ASK_COUNT @ 30;
    /// `u32` padding, zero.
    pad PAD @ 36;
    lead {
        /// Snapshot or delta (the frame type).
        kind: BookKind,
    }
    tail {
        /// Bid levels.
        bids: Levels<'a>,
        /// Ask levels.
        asks: Levels<'a>,
    }
});

impl<'a> Book<'a> {
    /// Decodes a book payload of frame `kind`. The level counts must account
    /// for exactly the bytes after the header, and the header type byte must
    /// agree with the frame type (0 or 2 for a snapshot, 1 or 3 for a delta).
    pub fn parse(kind: BookKind, b: &'a [u8], at: u64) -> Result<Book<'a>> {
        let Some((h, levels)) = b.split_first_chunk::<BOOK_HEADER_LEN>() else {
            return Err(malformed(
                at,
                "book payload shorter than its 40-byte header",
            ));
        };
        let bids = u16_at(h, field::BID_COUNT) as usize;
        let asks = u16_at(h, field::ASK_COUNT) as usize;
        let counts = "book level counts do not match the payload size";
        if (bids + asks) * LEVEL_LEN != levels.len() {
            return Err(malformed(at, counts));
        }
        if !kind.accepts_header_type(h[field::TYPE]) {
            return Err(malformed(at, "book header type contradicts the frame type"));
        }
        let Some((bids, asks)) = levels.split_at_checked(bids * LEVEL_LEN) else {
            return Err(malformed(at, counts));
        };
        Ok(Book::from_header(
            h,
            kind,
            Levels::Wire(bids),
            Levels::Wire(asks),
        ))
    }

    /// The header fields without the levels (for owners that keep the
    /// levels elsewhere).
    pub fn without_levels(&self) -> Book<'static> {
        Book {
            bids: Levels::Slice(&[]),
            asks: Levels::Slice(&[]),
            ..*self
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
        let Some((h, levels)) = out.split_first_chunk_mut::<BOOK_HEADER_LEN>() else {
            return;
        };
        self.emit_header(h);
        put_u16(h, field::BID_COUNT, self.bids.len() as u16);
        put_u16(h, field::ASK_COUNT, self.asks.len() as u16);
        h[field::TYPE] = header_type;
        if let Some((bids, asks)) = levels.split_at_mut_checked(self.bids.len() * LEVEL_LEN) {
            self.bids.emit(bids);
            self.asks.emit(asks);
        }
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
