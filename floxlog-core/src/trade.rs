//! TradeRecord, frame type 1: 48 bytes.

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

/// A trade.
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

impl Trade {
    /// Encoded length.
    pub const LEN: usize = 48;

    /// Decodes a trade payload; `Err` unless it is exactly 48 bytes.
    #[inline]
    pub fn parse(b: &[u8]) -> Result<Trade, &'static str> {
        if b.len() != Self::LEN {
            return Err("trade payload is not 48 bytes");
        }
        Ok(Trade {
            exchange_ts_ns: i64_at(b, field::EXCHANGE_TS_NS),
            recv_ts_ns: i64_at(b, field::RECV_TS_NS),
            price_raw: i64_at(b, field::PRICE_RAW),
            qty_raw: i64_at(b, field::QTY_RAW),
            trade_id: u64_at(b, field::TRADE_ID),
            symbol_id: u32_at(b, field::SYMBOL_ID),
            side: b[field::SIDE],
            instrument: b[field::INSTRUMENT],
            exchange_id: u16_at(b, field::EXCHANGE_ID),
        })
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
