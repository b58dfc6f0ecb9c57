//! TradeRecord, frame type 1: 48 bytes.

use crate::error::{malformed, Result};
use crate::le::{i64_at, put_i64, put_u16, put_u32, put_u64, u16_at, u32_at, u64_at};

/// Byte offsets of the trade fields.
pub mod field {
    /// `i64` exchange timestamp.
    pub const EXCHANGE_TS_NS: usize = 0;
    /// `i64` receive timestamp.
    pub const RECV_TS_NS: usize = 8;
    /// `i64` fixed-point price.
    pub const PRICE_RAW: usize = 16;
    /// `i64` fixed-point quantity.
    pub const QTY_RAW: usize = 24;
    /// `u64` exchange trade id.
    pub const TRADE_ID: usize = 32;
    /// `u32` symbol tag.
    pub const SYMBOL_ID: usize = 40;
    /// `u8` side (0 buy, 1 sell).
    pub const SIDE: usize = 44;
    /// `u8` instrument code.
    pub const INSTRUMENT: usize = 45;
    /// `u16` exchange tag.
    pub const EXCHANGE_ID: usize = 46;
}

/// A trade. `#[repr(C)]` with the record's own field offsets (asserted
/// below), so a caller's C struct of the same layout can be checked against
/// it at compile time.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Trade {
    /// Exchange-side timestamp, ns.
    pub exchange_ts_ns: i64,
    /// Receiver-side timestamp, ns.
    pub recv_ts_ns: i64,
    /// Price, fixed-point 1e8.
    pub price_raw: i64,
    /// Quantity, fixed-point 1e8.
    pub qty_raw: i64,
    /// Exchange trade id; 0 if unknown.
    pub trade_id: u64,
    /// Symbol tag.
    pub symbol_id: u32,
    /// 0 buy, 1 sell.
    pub side: u8,
    /// Instrument code.
    pub instrument: u8,
    /// Exchange tag.
    pub exchange_id: u16,
}

const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<Trade>() == Trade::LEN);
    assert!(offset_of!(Trade, exchange_ts_ns) == field::EXCHANGE_TS_NS);
    assert!(offset_of!(Trade, recv_ts_ns) == field::RECV_TS_NS);
    assert!(offset_of!(Trade, price_raw) == field::PRICE_RAW);
    assert!(offset_of!(Trade, qty_raw) == field::QTY_RAW);
    assert!(offset_of!(Trade, trade_id) == field::TRADE_ID);
    assert!(offset_of!(Trade, symbol_id) == field::SYMBOL_ID);
    assert!(offset_of!(Trade, side) == field::SIDE);
    assert!(offset_of!(Trade, instrument) == field::INSTRUMENT);
    assert!(offset_of!(Trade, exchange_id) == field::EXCHANGE_ID);
};

impl Trade {
    /// Encoded length.
    pub const LEN: usize = 48;

    /// Decodes a trade payload; `MalformedRecord` at `at` (the frame's
    /// offset) unless it is exactly 48 bytes.
    #[inline]
    pub fn parse(b: &[u8], at: u64) -> Result<Trade> {
        match <&[u8; Self::LEN]>::try_from(b) {
            Ok(p) => Ok(Self::from_payload(p)),
            Err(_) => Err(malformed(at, "trade payload is not 48 bytes")),
        }
    }

    /// Decodes a payload whose length is already known to be right.
    #[inline(always)]
    pub(crate) fn from_payload(b: &[u8; Self::LEN]) -> Trade {
        Trade {
            exchange_ts_ns: i64_at(b, field::EXCHANGE_TS_NS),
            recv_ts_ns: i64_at(b, field::RECV_TS_NS),
            price_raw: i64_at(b, field::PRICE_RAW),
            qty_raw: i64_at(b, field::QTY_RAW),
            trade_id: u64_at(b, field::TRADE_ID),
            symbol_id: u32_at(b, field::SYMBOL_ID),
            side: b[field::SIDE],
            instrument: b[field::INSTRUMENT],
            exchange_id: u16_at(b, field::EXCHANGE_ID),
        }
    }

    /// Encodes into `out[..48]`.
    #[inline]
    pub fn emit(&self, out: &mut [u8; 48]) {
        put_i64(out, field::EXCHANGE_TS_NS, self.exchange_ts_ns);
        put_i64(out, field::RECV_TS_NS, self.recv_ts_ns);
        put_i64(out, field::PRICE_RAW, self.price_raw);
        put_i64(out, field::QTY_RAW, self.qty_raw);
        put_u64(out, field::TRADE_ID, self.trade_id);
        put_u32(out, field::SYMBOL_ID, self.symbol_id);
        out[field::SIDE] = self.side;
        out[field::INSTRUMENT] = self.instrument;
        put_u16(out, field::EXCHANGE_ID, self.exchange_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn trade_golden_bytes() {
        let t = Trade {
            exchange_ts_ns: 0x11,
            recv_ts_ns: 0x22,
            price_raw: -1,
            qty_raw: 0x44,
            trade_id: 0x55,
            symbol_id: 0x66,
            side: 1,
            instrument: 2,
            exchange_id: 0x0304,
        };
        let mut want = [0u8; 48];
        want[0] = 0x11;
        want[8] = 0x22;
        want[16..24].fill(0xff);
        want[24] = 0x44;
        want[32] = 0x55;
        want[40] = 0x66;
        want[44] = 1;
        want[45] = 2;
        want[46..48].copy_from_slice(&[0x04, 0x03]);
        let mut out = [0u8; 48];
        t.emit(&mut out);
        assert_eq!(out, want);
        assert_eq!(Trade::parse(&want, 76), Ok(t));
        let e = Trade::parse(&want[..47], 76).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::MalformedRecord, 76));
    }
}
