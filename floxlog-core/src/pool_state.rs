//! PoolStateRecord, frame type 5: a 32-byte header then `payload_len`
//! opaque bytes (layout in docs/format-notes.md).

use crate::error::{malformed, Result};
use crate::le::{put_u32, u32_at};
use crate::record::define_head;

/// The pool state header's field list, in record order (as
/// [`crate::trade_fields`]); `payload_len` and the padding are not fields:
/// the payload's length gives the one, the other is zero.
#[macro_export]
macro_rules! pool_state_fields {
    ($m:ident $(, $arg:tt)*) => {
        $m! {
            $($arg)*
            /// Exchange-side timestamp, ns.
            exchange_ts_ns EXCHANGE_TS_NS: i64 @ 0, Timestamp;
            /// Receiver-side timestamp, ns.
            recv_ts_ns RECV_TS_NS: i64 @ 8, Timestamp;
            /// Symbol tag.
            symbol_id SYMBOL_ID: u32 @ 16, Plain;
            /// 1 Descriptor, 2 Checkpoint, 3 SwapDelta, 4 LiquidityDelta.
            sub_type SUB_TYPE: u8 @ 24, Plain;
            /// Venue tag.
            venue VENUE: u8 @ 25, Plain;
            /// Exchange tag.
            exchange_id EXCHANGE_ID: u16 @ 26, Plain;
        }
    };
}

pool_state_fields!(define_head, {
    /// Pool state: header fields and a zero-copy view of the opaque payload.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
    struct PoolState<'a>;
    header 32;
    /// `u32` opaque payload bytes after the header.
    pad PAYLOAD_LEN @ 20;
    /// `u32` padding, zero.
    pad PAD @ 28;
    lead {}
    tail {
        /// Opaque payload.
        payload: &'a [u8],
    }
});

impl<'a> PoolState<'a> {
    /// Decodes a pool-state payload: the header's payload_len must account
    /// for exactly the bytes after it.
    pub fn parse(b: &'a [u8], at: u64) -> Result<PoolState<'a>> {
        let Some((h, payload)) = b.split_first_chunk::<32>() else {
            return Err(malformed(
                at,
                "pool state payload shorter than its 32-byte header",
            ));
        };
        if u32_at(h, field::PAYLOAD_LEN) as usize != payload.len() {
            return Err(malformed(
                at,
                "pool state payload_len does not match the frame size",
            ));
        }
        Ok(PoolState::from_header(h, payload))
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

    /// Encodes into `out`, which must be exactly [`PoolState::len`] bytes
    /// (else it writes nothing: the writer sized it).
    pub(crate) fn emit(&self, out: &mut [u8]) {
        if let Some((h, rest)) = out.split_first_chunk_mut::<32>() {
            if rest.len() == self.payload.len() {
                self.emit_header(h);
                put_u32(h, field::PAYLOAD_LEN, self.payload.len() as u32);
                rest.copy_from_slice(self.payload);
            }
        }
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
