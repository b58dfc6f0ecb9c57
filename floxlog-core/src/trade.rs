//! TradeRecord, frame type 1: 48 bytes. The one definition of the trade:
//! its field list below; the struct, codec, descriptors and every front
//! end's columns follow from it (see [`crate::record`]).

use crate::record::define_record;

/// The trade's field list, in record order: `name NAME: type @ offset,
/// role;` with each field's doc. Calls `$m! { $($arg)* <list> }`: the core
/// makes [`Trade`] from it, and columnar front ends (the batch kernels'
/// [`crate::TradeColumns`], Arrow's trade columns) their per-field storage.
#[macro_export]
macro_rules! trade_fields {
    ($m:ident $(, $arg:tt)*) => {
        $m! {
            $($arg)*
            /// Exchange-side timestamp, ns.
            exchange_ts_ns EXCHANGE_TS_NS: i64 @ 0, Timestamp;
            /// Receiver-side timestamp, ns.
            recv_ts_ns RECV_TS_NS: i64 @ 8, Timestamp;
            /// Price, fixed-point 1e8.
            price_raw PRICE_RAW: i64 @ 16, Fixed;
            /// Quantity, fixed-point 1e8.
            qty_raw QTY_RAW: i64 @ 24, Fixed;
            /// Exchange trade id; 0 if unknown.
            trade_id TRADE_ID: u64 @ 32, Optional;
            /// Symbol tag.
            symbol_id SYMBOL_ID: u32 @ 40, Plain;
            /// 0 buy, 1 sell.
            side SIDE: u8 @ 44, Plain;
            /// Instrument code.
            instrument INSTRUMENT: u8 @ 45, Plain;
            /// Exchange tag.
            exchange_id EXCHANGE_ID: u16 @ 46, Plain;
        }
    };
}

trade_fields!(define_record, {
    /// A trade. `#[repr(C)]` with the record's own field offsets (asserted),
    /// so a caller's C struct of the same layout can be checked against it
    /// at compile time.
    struct Trade;
    what "trade";
    len 48;
});

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
