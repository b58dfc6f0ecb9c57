//! CRC32 (ISO-HDLC: reflected polynomial 0xEDB88320, init and xorout
//! 0xFFFFFFFF), the checksum of frame payloads and index entries.
//!
//! Which code computes it depends on the build:
//!
//! | features | path |
//! |---|---|
//! | `fast-crc` + `std` | floxlog-crc32: the best kernel the running CPU has (VPCLMULQDQ/AVX-512, PCLMULQDQ, AArch64 PMULL), probed once, else its slice-by-16 table |
//! | `fast-crc` alone (the no_std default) | floxlog-crc32's kernel for the build's target features (e.g. `-C target-cpu=native`); a plain build gets its table |
//! | neither | the `crc` crate's portable 16-way table |
//!
//! One short CRC (a 48-byte trade payload) is latency-bound whatever the
//! kernel; [`crc32_x4`] computes four at once, which the reader uses to
//! check runs of consecutive frames and the writer to seal batches. All
//! paths give the same values (tested against the portable table).

/// Frames whose CRCs [`crc32_x4`] computes together.
pub const LANES: usize = 4;

#[cfg(not(feature = "fast-crc"))]
static PORTABLE: crc::Crc<u32, crc::Table<16>> =
    crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC);

/// CRC32 (ISO-HDLC) of `data`.
#[inline]
pub fn crc32(data: &[u8]) -> u32 {
    #[cfg(feature = "fast-crc")]
    {
        floxlog_crc32::crc32(data)
    }
    #[cfg(not(feature = "fast-crc"))]
    {
        PORTABLE.checksum(data)
    }
}

/// CRC32 (ISO-HDLC) of four buffers at once, computed interleaved: one
/// short CRC is a chain of dependent steps, four independent chains keep
/// the CPU busy. Equal to four [`crc32`] calls.
#[inline]
pub fn crc32_x4(data: [&[u8]; LANES]) -> [u32; LANES] {
    #[cfg(feature = "fast-crc")]
    {
        floxlog_crc32::crc32_x4(data)
    }
    #[cfg(not(feature = "fast-crc"))]
    {
        data.map(|d| PORTABLE.checksum(d))
    }
}

/// The CRCs of `L` buffers of one length fixed when compiling (a run of
/// trade payloads), interleaved: equal to `L` [`crc32`] calls.
#[inline]
pub fn crc32_same<const N: usize, const L: usize>(data: [&[u8; N]; L]) -> [u32; L] {
    #[cfg(feature = "fast-crc")]
    {
        floxlog_crc32::crc32_same(data)
    }
    #[cfg(not(feature = "fast-crc"))]
    {
        data.map(|d| PORTABLE.checksum(d))
    }
}

/// Which CRC code runs: floxlog-crc32's kernel name, or `"portable"`.
pub fn crc32_kernel() -> &'static str {
    #[cfg(feature = "fast-crc")]
    {
        floxlog_crc32::kernel_name()
    }
    #[cfg(not(feature = "fast-crc"))]
    {
        "portable"
    }
}

/// CRC32 through the portable `crc` table, whatever the features: for
/// cross-checking and benchmarking the fast path.
pub fn crc32_portable(data: &[u8]) -> u32 {
    static TABLE: crc::Crc<u32, crc::Table<16>> =
        crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC);
    TABLE.checksum(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift: deterministic lengths, offsets and bytes.
    fn rng(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn every_path_equals_the_portable_table() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let buf: [u8; 4096] = core::array::from_fn(|i| (i as u8).wrapping_mul(31) ^ 0x5a);
        for _ in 0..5_000 {
            let mut pick = || {
                let off = (rng(&mut s) % 64) as usize;
                let len = (rng(&mut s) % 300) as usize;
                &buf[off..off + len]
            };
            let d = [pick(), pick(), pick(), pick()];
            let want = d.map(crc32_portable);
            assert_eq!(crc32_x4(d), want);
            assert_eq!(crc32(d[0]), want[0]);
            let same = |k: usize| <&[u8; 48]>::try_from(&buf[k..k + 48]).unwrap();
            let offs: [usize; 8] = core::array::from_fn(|_| (rng(&mut s) % 64) as usize);
            let fixed = offs.map(same);
            assert_eq!(crc32_same(fixed), fixed.map(|d| crc32_portable(d)));
            let odd: [&[u8; 20]; 3] = core::array::from_fn(|k| {
                <&[u8; 20]>::try_from(&buf[offs[k]..offs[k] + 20]).unwrap()
            });
            assert_eq!(crc32_same(odd), odd.map(|d| crc32_portable(d)));
        }
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(&[]), 0);
    }
}
