//! OptionQuoteRecord, frame type 4: 112 bytes (layout in docs/format-notes.md).
//! The one definition of the option quote: its field list below (see
//! [`crate::record`]).

use crate::record::{define_record, FieldRole, FieldValue, Record};

/// The option quote's field list, in record order (as [`crate::trade_fields`]).
#[macro_export]
macro_rules! option_quote_fields {
    ($m:ident $(, $arg:tt)*) => {
        $m! {
            $($arg)*
            /// Exchange-side timestamp, ns.
            exchange_ts_ns EXCHANGE_TS_NS: i64 @ 0, Timestamp;
            /// Receiver-side timestamp, ns.
            recv_ts_ns RECV_TS_NS: i64 @ 8, Timestamp;
            /// Mark price, fixed-point 1e8.
            mark_price_raw MARK_PRICE_RAW: i64 @ 16, Fixed;
            /// Index price, fixed-point 1e8.
            index_price_raw INDEX_PRICE_RAW: i64 @ 24, Fixed;
            /// Underlying price, fixed-point 1e8.
            underlying_price_raw UNDERLYING_PRICE_RAW: i64 @ 32, Fixed;
            /// Implied volatility, fixed-point 1e8.
            iv_raw IV_RAW: i64 @ 40, Fixed;
            /// Bid price, fixed-point 1e8.
            bid_price_raw BID_PRICE_RAW: i64 @ 48, Fixed;
            /// Ask price, fixed-point 1e8.
            ask_price_raw ASK_PRICE_RAW: i64 @ 56, Fixed;
            /// Bid size, fixed-point 1e8.
            bid_size_raw BID_SIZE_RAW: i64 @ 64, Fixed;
            /// Ask size, fixed-point 1e8.
            ask_size_raw ASK_SIZE_RAW: i64 @ 72, Fixed;
            /// Bid implied volatility, fixed-point 1e8.
            bid_iv_raw BID_IV_RAW: i64 @ 80, Fixed;
            /// Ask implied volatility, fixed-point 1e8.
            ask_iv_raw ASK_IV_RAW: i64 @ 88, Fixed;
            /// Open interest, fixed-point 1e8.
            open_interest_raw OPEN_INTEREST_RAW: i64 @ 96, Fixed;
            /// Symbol tag.
            symbol_id SYMBOL_ID: u32 @ 104, Plain;
            /// Instrument code.
            instrument INSTRUMENT: u8 @ 108, Plain;
            /// Exchange tag.
            exchange_id EXCHANGE_ID: u16 @ 110, Plain;
        }
    };
}

option_quote_fields!(define_record, {
    /// An option quote (the byte at 109 is padding, written as zero).
    struct OptionQuote;
    what "option quote";
    len 112;
    /// `u8` padding, zero.
    pad PAD @ 109;
});

impl OptionQuote {
    /// The eleven fixed-point fields in record order: name and raw value.
    pub fn raw_fields(&self) -> [(&'static str, i64); 11] {
        let mut out = [("", 0); 11];
        let mut k = 0;
        self.visit(|d, v| {
            if let (FieldRole::Fixed, FieldValue::Signed(x)) = (d.role, v) {
                if let Some(slot) = out.get_mut(k) {
                    *slot = (d.name, x);
                }
                k += 1;
            }
        });
        out
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
