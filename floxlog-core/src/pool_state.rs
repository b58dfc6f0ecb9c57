//! PoolStateRecord, frame type 5: a 32-byte header then `payload_len`
//! opaque bytes (layout in docs/format-notes.md).

use crate::error::{malformed, Result};
use crate::le::{i64_at, put_i64, put_u16, put_u32, u16_at, u32_at};

/// Byte offsets of the pool-state header fields.
pub mod field {
    /// `i64` exchange timestamp.
    pub const EXCHANGE_TS_NS: usize = 0;
    /// `i64` receive timestamp.
    pub const RECV_TS_NS: usize = 8;
    /// `u32` symbol tag.
    pub const SYMBOL_ID: usize = 16;
    /// `u32` opaque payload bytes after the header.
    pub const PAYLOAD_LEN: usize = 20;
    /// `u8` sub-type (1 descriptor .. 4 liquidity delta).
    pub const SUB_TYPE: usize = 24;
    /// `u8` venue.
    pub const VENUE: usize = 25;
    /// `u16` exchange tag.
    pub const EXCHANGE_ID: usize = 26;
    /// `u32` padding, zero.
    pub const PAD: usize = 28;
}

/// Pool state: header fields and a zero-copy view of the opaque payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct PoolState<'a> {
    /// Exchange-side timestamp, ns.
    pub exchange_ts_ns: i64,
    /// Receiver-side timestamp, ns.
    pub recv_ts_ns: i64,
    /// Symbol tag.
    pub symbol_id: u32,
    /// Sub-type ([`crate::consts::pool_sub_type`]).
    pub sub_type: u8,
    /// Venue tag.
    pub venue: u8,
    /// Exchange tag.
    pub exchange_id: u16,
    /// Opaque payload.
    pub payload: &'a [u8],
}

impl<'a> PoolState<'a> {
    /// Header length.
    pub const HEADER_LEN: usize = 32;

    /// Decodes a pool-state payload: the header's payload_len must account
    /// for exactly the bytes after it.
    pub fn parse(b: &'a [u8], at: u64) -> Result<PoolState<'a>> {
        if b.len() < Self::HEADER_LEN {
            return Err(malformed(
                at,
                "pool state payload shorter than its 32-byte header",
            ));
        }
        let n = u32_at(b, field::PAYLOAD_LEN) as usize;
        if n != b.len() - Self::HEADER_LEN {
            return Err(malformed(
                at,
                "pool state payload_len does not match the frame size",
            ));
        }
        Ok(PoolState {
            exchange_ts_ns: i64_at(b, field::EXCHANGE_TS_NS),
            recv_ts_ns: i64_at(b, field::RECV_TS_NS),
            symbol_id: u32_at(b, field::SYMBOL_ID),
            sub_type: b[field::SUB_TYPE],
            venue: b[field::VENUE],
            exchange_id: u16_at(b, field::EXCHANGE_ID),
            payload: &b[Self::HEADER_LEN..],
        })
    }

    /// The header fields without the payload (for owners that keep the
    /// payload elsewhere).
    pub fn without_payload(&self) -> PoolState<'static> {
        PoolState {
            payload: &[],
            ..*self
        }
    }

    /// Encoded length (header + payload).
    pub fn len(&self) -> usize {
        Self::HEADER_LEN + self.payload.len()
    }

    /// Never empty: the header is always there.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Encodes into `out`, which must be exactly [`PoolState::len`] bytes.
    pub(crate) fn emit(&self, out: &mut [u8]) {
        put_i64(out, field::EXCHANGE_TS_NS, self.exchange_ts_ns);
        put_i64(out, field::RECV_TS_NS, self.recv_ts_ns);
        put_u32(out, field::SYMBOL_ID, self.symbol_id);
        put_u32(out, field::PAYLOAD_LEN, self.payload.len() as u32);
        out[field::SUB_TYPE] = self.sub_type;
        out[field::VENUE] = self.venue;
        put_u16(out, field::EXCHANGE_ID, self.exchange_id);
        put_u32(out, field::PAD, 0);
        out[Self::HEADER_LEN..].copy_from_slice(self.payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn pool_state_golden_bytes() {
        let p = PoolState {
            exchange_ts_ns: 0x11,
            recv_ts_ns: 0x22,
            symbol_id: 0x33,
            sub_type: 3,
            venue: 4,
            exchange_id: 0x0506,
            payload: &[0xaa, 0xbb, 0xcc],
        };
        let mut want = [0u8; 35];
        want[0] = 0x11;
        want[8] = 0x22;
        want[16] = 0x33;
        want[20] = 3; // payload_len
        want[24] = 3;
        want[25] = 4;
        want[26..28].copy_from_slice(&[0x06, 0x05]);
        want[32..].copy_from_slice(&[0xaa, 0xbb, 0xcc]);
        let mut out = [0u8; 35];
        p.emit(&mut out);
        assert_eq!(out, want);
        assert_eq!(PoolState::parse(&want, 5), Ok(p));
        let e = PoolState::parse(&want[..34], 5).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::MalformedRecord, 5));
    }
}
