//! The 64-byte segment header at offset 0 of every segment.

use crate::consts::{FORMAT_VERSION, MAGIC_SEGMENT};
use crate::error::{Error, ErrorKind, Result};
use crate::le::{put_u32, u32_at};
use crate::record::define_head;

/// The segment header's field list, in record order (as
/// [`crate::trade_fields`]); the magic and the reserved bytes are not
/// fields: they are constants.
#[macro_export]
macro_rules! segment_header_fields {
    ($m:ident $(, $arg:tt)*) => {
        $m! {
            $($arg)*
            /// Format version (1).
            version VERSION: u16 @ 4, Plain;
            /// Flag bits (`FLOXLOG_FLAG_*`).
            flags FLAGS: u8 @ 6, Plain;
            /// Exchange tag; 0 if unused.
            exchange_id EXCHANGE_ID: u8 @ 7, Plain;
            /// Wall clock when the segment was opened, ns.
            created_ns CREATED_NS: i64 @ 8, Plain;
            /// First (reference) or earliest (spec) event timestamp.
            first_event_ns FIRST_EVENT_NS: i64 @ 16, Plain;
            /// Last (reference) or latest (spec) event timestamp.
            last_event_ns LAST_EVENT_NS: i64 @ 24, Plain;
            /// Events in the segment (0 in a placeholder header).
            event_count EVENT_COUNT: u32 @ 32, Plain;
            /// Distinct symbols (0 from the reference writer).
            symbol_count SYMBOL_COUNT: u32 @ 36, Plain;
            /// Offset of the index trailer; 0 if none.
            index_offset INDEX_OFFSET: u64 @ 40, Plain;
            /// 0 none, 1 LZ4.
            compression COMPRESSION: u8 @ 48, Plain;
        }
    };
}

segment_header_fields!(define_head, {
    /// A decoded segment header.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
    struct SegmentHeader;
    header 64;
    /// `u32` magic, `FLOX`.
    pad MAGIC @ 0;
    /// The first of the 15 reserved bytes (49..64), zero.
    pad RESERVED_START @ 49;
    lead {}
    tail {}
});

/// The 15 reserved bytes, zero.
const RESERVED: core::ops::Range<usize> = field::RESERVED_START..SegmentHeader::LEN;

/// Segment flag bits.
pub mod flags {
    /// Sparse index trailer present.
    pub const HAS_INDEX: u8 = 0x01;
    /// Frame stream partitioned into LZ4 blocks.
    pub const COMPRESSED: u8 = 0x02;
    /// Reserved in 1.0; a reader refuses it.
    pub const ENCRYPTED: u8 = 0x04;
    /// exchange_ts_ns never decreases across the segment.
    pub const SORTED: u8 = 0x08;
    /// Every bit 1.0 defines.
    pub const KNOWN: u8 = HAS_INDEX | COMPRESSED | ENCRYPTED | SORTED;
}

/// Codec of the frame stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Compression {
    /// Frames follow the header directly.
    #[default]
    None = 0,
    /// Frames are packed into LZ4 blocks.
    Lz4 = 1,
}

impl SegmentHeader {
    /// Encoded length.
    pub const LEN: usize = 64;

    /// Decodes and validates a header from the first 64 bytes of `data`.
    ///
    /// Checks, in order: length (`Truncated`), magic (`BadMagic`), version
    /// (`UnsupportedVersion`), flags (`Encrypted`, `UnknownFlags`), reserved
    /// bytes (`ReservedNonzero`), codec byte (`UnknownCompression`). Every
    /// error is at offset 0.
    pub fn parse(data: &[u8]) -> Result<SegmentHeader> {
        let h = Self::parse_unchecked(data)?;
        h.validate(data)?;
        Ok(h)
    }

    /// Decodes the fields without validating them (only the length is
    /// checked). For tools that inspect damaged segments.
    pub fn parse_unchecked(data: &[u8]) -> Result<SegmentHeader> {
        let Some(h) = data.first_chunk::<64>() else {
            return Err(Error::new(
                ErrorKind::Truncated,
                0,
                "data shorter than the 64-byte segment header",
            )
            .needing(Self::LEN as u64));
        };
        Ok(SegmentHeader::from_header(h))
    }

    fn validate(&self, data: &[u8]) -> Result<()> {
        let fail = |kind, what| Err(Error::new(kind, 0, what));
        if u32_at(data, field::MAGIC) != MAGIC_SEGMENT {
            return fail(ErrorKind::BadMagic, "segment magic is not FLOX");
        }
        if self.version != FORMAT_VERSION {
            return fail(
                ErrorKind::UnsupportedVersion,
                "segment format version is not 1",
            );
        }
        if self.flags & !flags::KNOWN != 0 {
            return fail(
                ErrorKind::UnknownFlags,
                "segment flag bit not defined by 1.0",
            );
        }
        if self.flags & flags::ENCRYPTED != 0 {
            return fail(ErrorKind::Encrypted, "Encrypted flag set (reserved in 1.0)");
        }
        if data[RESERVED].iter().any(|&b| b != 0) {
            return fail(
                ErrorKind::ReservedNonzero,
                "reserved segment header byte is not zero",
            );
        }
        let flagged = self.flags & flags::COMPRESSED != 0;
        match (self.compression, flagged) {
            (0, false) | (1, true) => Ok(()),
            (0 | 1, _) => fail(
                ErrorKind::UnknownCompression,
                "compression byte disagrees with the Compressed flag",
            ),
            _ => fail(ErrorKind::UnknownCompression, "unknown compression codec"),
        }
    }

    /// The codec, if the header is consistent.
    pub fn codec(&self) -> Compression {
        if self.flags & flags::COMPRESSED != 0 {
            Compression::Lz4
        } else {
            Compression::None
        }
    }

    /// Whether a flag bit is set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Encodes into `out[..64]`; the magic is always `FLOX` and the reserved
    /// bytes zero.
    pub fn emit(&self, out: &mut [u8; 64]) {
        self.emit_header(out);
        put_u32(out, field::MAGIC, MAGIC_SEGMENT);
    }

    /// The encoded 64 bytes.
    pub fn to_bytes(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        self.emit(&mut b);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed, indexed, LZ4 segment's header, byte for byte.
    #[test]
    fn segment_header_golden_bytes() {
        let h = SegmentHeader {
            version: 1,
            flags: flags::HAS_INDEX | flags::COMPRESSED | flags::SORTED,
            exchange_id: 7,
            created_ns: 0x0102_0304_0506_0708,
            first_event_ns: 1000,
            last_event_ns: -2,
            event_count: 3,
            symbol_count: 4,
            index_offset: 0x1_0000_0040,
            compression: 1,
        };
        let mut want = [0u8; 64];
        want[..4].copy_from_slice(b"FLOX");
        want[4] = 1;
        want[6] = 0x0b;
        want[7] = 7;
        want[8..16].copy_from_slice(&[8, 7, 6, 5, 4, 3, 2, 1]);
        want[16..18].copy_from_slice(&[0xe8, 0x03]);
        want[24..32].copy_from_slice(&[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        want[32] = 3;
        want[36] = 4;
        want[40..45].copy_from_slice(&[0x40, 0, 0, 0, 1]);
        want[48] = 1;
        assert_eq!(h.to_bytes(), want);
        assert_eq!(SegmentHeader::parse(&want), Ok(h));
        let mut bad = want;
        bad[63] = 1;
        let e = SegmentHeader::parse(&bad).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::ReservedNonzero, 0));
        let e = SegmentHeader::parse(&want[..63]).unwrap_err();
        assert_eq!((e.kind, e.needed), (ErrorKind::Truncated, Some(64)));
    }
}
