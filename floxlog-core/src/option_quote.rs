//! OptionQuoteRecord, frame type 4: 112 bytes (layout in docs/format-notes.md).

use crate::error::{malformed, Result};
use crate::le::{i64_at, put_i64, put_u16, put_u32, u16_at, u32_at};

/// Byte offsets of the option-quote fields.
pub mod field {
    /// `i64` exchange timestamp.
    pub const EXCHANGE_TS_NS: usize = 0;
    /// `i64` receive timestamp.
    pub const RECV_TS_NS: usize = 8;
    /// `i64` mark price.
    pub const MARK_PRICE_RAW: usize = 16;
    /// `i64` index price.
    pub const INDEX_PRICE_RAW: usize = 24;
    /// `i64` underlying price.
    pub const UNDERLYING_PRICE_RAW: usize = 32;
    /// `i64` implied volatility, scale 1e8.
    pub const IV_RAW: usize = 40;
    /// `i64` bid price.
    pub const BID_PRICE_RAW: usize = 48;
    /// `i64` ask price.
    pub const ASK_PRICE_RAW: usize = 56;
    /// `i64` bid size.
    pub const BID_SIZE_RAW: usize = 64;
    /// `i64` ask size.
    pub const ASK_SIZE_RAW: usize = 72;
    /// `i64` bid implied volatility.
    pub const BID_IV_RAW: usize = 80;
    /// `i64` ask implied volatility.
    pub const ASK_IV_RAW: usize = 88;
    /// `i64` open interest.
    pub const OPEN_INTEREST_RAW: usize = 96;
    /// `u32` symbol tag.
    pub const SYMBOL_ID: usize = 104;
    /// `u8` instrument code.
    pub const INSTRUMENT: usize = 108;
    /// `u8` padding, zero.
    pub const PAD: usize = 109;
    /// `u16` exchange tag.
    pub const EXCHANGE_ID: usize = 110;
}

/// An option quote. All `_raw` fields are fixed-point 1e8.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct OptionQuote {
    pub exchange_ts_ns: i64,
    pub recv_ts_ns: i64,
    pub mark_price_raw: i64,
    pub index_price_raw: i64,
    pub underlying_price_raw: i64,
    pub iv_raw: i64,
    pub bid_price_raw: i64,
    pub ask_price_raw: i64,
    pub bid_size_raw: i64,
    pub ask_size_raw: i64,
    pub bid_iv_raw: i64,
    pub ask_iv_raw: i64,
    pub open_interest_raw: i64,
    pub symbol_id: u32,
    pub instrument: u8,
    pub exchange_id: u16,
}

impl OptionQuote {
    /// Encoded length.
    pub const LEN: usize = 112;

    /// Decodes an option-quote payload; `Err` unless exactly 112 bytes.
    /// The pad byte is not checked (readers accept what writers left there).
    pub fn parse(b: &[u8], at: u64) -> Result<OptionQuote> {
        if b.len() != Self::LEN {
            return Err(malformed(at, "option quote payload is not 112 bytes"));
        }
        Ok(OptionQuote {
            exchange_ts_ns: i64_at(b, field::EXCHANGE_TS_NS),
            recv_ts_ns: i64_at(b, field::RECV_TS_NS),
            mark_price_raw: i64_at(b, field::MARK_PRICE_RAW),
            index_price_raw: i64_at(b, field::INDEX_PRICE_RAW),
            underlying_price_raw: i64_at(b, field::UNDERLYING_PRICE_RAW),
            iv_raw: i64_at(b, field::IV_RAW),
            bid_price_raw: i64_at(b, field::BID_PRICE_RAW),
            ask_price_raw: i64_at(b, field::ASK_PRICE_RAW),
            bid_size_raw: i64_at(b, field::BID_SIZE_RAW),
            ask_size_raw: i64_at(b, field::ASK_SIZE_RAW),
            bid_iv_raw: i64_at(b, field::BID_IV_RAW),
            ask_iv_raw: i64_at(b, field::ASK_IV_RAW),
            open_interest_raw: i64_at(b, field::OPEN_INTEREST_RAW),
            symbol_id: u32_at(b, field::SYMBOL_ID),
            instrument: b[field::INSTRUMENT],
            exchange_id: u16_at(b, field::EXCHANGE_ID),
        })
    }

    /// The eleven fixed-point fields in layout order, with the names the
    /// corpus's JSON (and every text output) gives them.
    pub fn raw_fields(&self) -> [(&'static str, i64); 11] {
        [
            ("mark_price_raw", self.mark_price_raw),
            ("index_price_raw", self.index_price_raw),
            ("underlying_price_raw", self.underlying_price_raw),
            ("iv_raw", self.iv_raw),
            ("bid_price_raw", self.bid_price_raw),
            ("ask_price_raw", self.ask_price_raw),
            ("bid_size_raw", self.bid_size_raw),
            ("ask_size_raw", self.ask_size_raw),
            ("bid_iv_raw", self.bid_iv_raw),
            ("ask_iv_raw", self.ask_iv_raw),
            ("open_interest_raw", self.open_interest_raw),
        ]
    }

    /// Encodes into `out[..112]` (pad zero).
    pub fn emit(&self, out: &mut [u8; 112]) {
        put_i64(out, field::EXCHANGE_TS_NS, self.exchange_ts_ns);
        put_i64(out, field::RECV_TS_NS, self.recv_ts_ns);
        put_i64(out, field::MARK_PRICE_RAW, self.mark_price_raw);
        put_i64(out, field::INDEX_PRICE_RAW, self.index_price_raw);
        put_i64(out, field::UNDERLYING_PRICE_RAW, self.underlying_price_raw);
        put_i64(out, field::IV_RAW, self.iv_raw);
        put_i64(out, field::BID_PRICE_RAW, self.bid_price_raw);
        put_i64(out, field::ASK_PRICE_RAW, self.ask_price_raw);
        put_i64(out, field::BID_SIZE_RAW, self.bid_size_raw);
        put_i64(out, field::ASK_SIZE_RAW, self.ask_size_raw);
        put_i64(out, field::BID_IV_RAW, self.bid_iv_raw);
        put_i64(out, field::ASK_IV_RAW, self.ask_iv_raw);
        put_i64(out, field::OPEN_INTEREST_RAW, self.open_interest_raw);
        put_u32(out, field::SYMBOL_ID, self.symbol_id);
        out[field::INSTRUMENT] = self.instrument;
        out[field::PAD] = 0;
        put_u16(out, field::EXCHANGE_ID, self.exchange_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    /// Fields 1..=13 of the i64 run hold their own ordinal, so a swapped
    /// offset shows as a swapped byte.
    #[test]
    fn option_quote_golden_bytes() {
        let q = OptionQuote {
            exchange_ts_ns: 1,
            recv_ts_ns: 2,
            mark_price_raw: 3,
            index_price_raw: 4,
            underlying_price_raw: 5,
            iv_raw: 6,
            bid_price_raw: 7,
            ask_price_raw: 8,
            bid_size_raw: 9,
            ask_size_raw: 10,
            bid_iv_raw: 11,
            ask_iv_raw: 12,
            open_interest_raw: 13,
            symbol_id: 0x0e,
            instrument: 3,
            exchange_id: 0x0506,
        };
        let mut want = [0u8; 112];
        for i in 0..13 {
            want[i * 8] = i as u8 + 1;
        }
        want[104] = 0x0e;
        want[108] = 3;
        want[110..112].copy_from_slice(&[0x06, 0x05]);
        let mut out = [0u8; 112];
        q.emit(&mut out);
        assert_eq!(out, want);
        assert_eq!(OptionQuote::parse(&want, 3), Ok(q));
        assert_eq!(q.raw_fields()[0], ("mark_price_raw", 3));
        assert_eq!(q.raw_fields()[10], ("open_interest_raw", 13));
        let e = OptionQuote::parse(&want[..111], 3).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::MalformedRecord, 3));
    }
}
