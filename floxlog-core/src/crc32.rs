//! CRC32 (ISO-HDLC: reflected polynomial 0xEDB88320, init and xorout
//! 0xFFFFFFFF), the checksum of frame payloads and index entries.
//!
//! Which code computes it depends on the build:
//!
//! | features | path |
//! |---|---|
//! | `fast-crc` + `std` | crc32fast: PCLMULQDQ (x86-64) or ARMv8 CRC kernel when the running CPU has it (detected once at run time), else its slice-by-16 table |
//! | `fast-crc` alone (the no_std default) | crc32fast's SIMD kernel only if the build's target features include it (e.g. `-C target-cpu=native`); otherwise its slice-by-16 table. No run-time detection without std |
//! | neither | the `crc` crate's portable 16-way table |
//!
//! The SIMD kernels only pay off on long inputs (whole buffers); one 48-byte
//! trade payload is latency-bound and runs at table speed either way. All
//! paths give the same values; `benches/` measures them.

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

/// Frames whose CRCs [`crc32_x4`] checks together.
pub const LANES: usize = 4;

/// CRC32 (ISO-HDLC) of four buffers at once, computed interleaved: one
/// short CRC is a chain of dependent steps, four independent chains keep
/// the CPU busy. Equal to four [`crc32`] calls.
#[inline]
pub fn crc32_x4(data: [&[u8]; 4]) -> [u32; 4] {
    crate::crc_lanes::crc32_x4(data)
}

/// CRC32 through the portable `crc` table, whatever the features: for
/// cross-checking and benchmarking the fast path.
pub fn crc32_portable(data: &[u8]) -> u32 {
    static TABLE: crc::Crc<u32, crc::Table<16>> =
        crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC);
    TABLE.checksum(data)
}
