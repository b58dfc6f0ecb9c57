//! CRC32 (ISO-HDLC: reflected polynomial 0xEDB88320, init and xorout
//! 0xFFFFFFFF), the checksum of frame payloads and index entries.
//!
//! With the `fast-crc` feature (default) this uses crc32fast, which picks a
//! SIMD (PCLMULQDQ / ARMv8 CRC) kernel at run time and otherwise falls back to
//! slice-by-16; without it, the `crc` crate's portable 16-way table. Both give
//! the same values; `benches/` measures them.

#[cfg(not(feature = "fast-crc"))]
static PORTABLE: crc::Crc<u32, crc::Table<16>> =
    crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC);

/// CRC32 (ISO-HDLC) of `data`.
#[inline]
pub fn crc32(data: &[u8]) -> u32 {
    #[cfg(feature = "fast-crc")]
    {
        crc32fast::hash(data)
    }
    #[cfg(not(feature = "fast-crc"))]
    {
        PORTABLE.checksum(data)
    }
}

/// CRC32 through the portable `crc` table, whatever the features: for
/// cross-checking and benchmarking the fast path.
pub fn crc32_portable(data: &[u8]) -> u32 {
    static TABLE: crc::Crc<u32, crc::Table<16>> =
        crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC);
    TABLE.checksum(data)
}
