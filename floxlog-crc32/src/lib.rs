//! CRC-32/ISO-HDLC — reflected polynomial 0xEDB88320, init and xorout
//! 0xFFFFFFFF; the value of zlib's `crc32`, `crc::CRC_32_ISO_HDLC` and
//! crc32fast — computed by carry-less-multiply folding, with a 4-lane entry
//! point ([`crc32_x4`]) that checks four short frames at once: one 48-byte
//! CRC is bound by the latency of its dependency chain, four independent ones
//! interleaved are bound by throughput.
//!
//! # Kernels and dispatch
//!
//! | kernel ([`kernel_name`]) | needs |
//! |---|---|
//! | `"vpclmulqdq-avx512"` | x86-64 with VPCLMULQDQ, AVX-512 F/BW/VL, PCLMULQDQ, SSE4.1: four lanes in one 512-bit register |
//! | `"pclmulqdq"` | x86-64 with PCLMULQDQ and SSE4.1 |
//! | `"pmull"` | AArch64 with NEON and AES (PMULL) |
//! | `"table"` | anything: slice-by-16 tables built at compile time |
//!
//! With the `std` feature the running CPU is probed once (first call) and
//! the answer cached; each call then costs one relaxed atomic load and a
//! branch. Without `std` (the default; the crate is `no_std`) the kernel is
//! fixed at compile time by the target features the build enables, e.g.
//! `-C target-cpu=native`; a plain x86-64 build gets the table.
//! With `std`, the environment variable `FLOXLOG_CRC32_KERNEL` (read once,
//! at the probe) may name a lesser kernel the CPU also runs (`table`, or
//! `pclmulqdq` on an AVX-512 machine), for benchmarks and cross-checks.
//!
//! Inputs shorter than 16 bytes, and the last `len % 16` bytes of longer
//! ones, always go through the table. No kernel reads outside the slices it
//! is given.
//!
//! # Unsafe
//!
//! `unsafe` is confined to this crate's SIMD modules: the unaligned 16-byte
//! loads (from `&[u8; 16]`, so always in bounds) and the calls from
//! [`dispatch`](crate) into `#[target_feature]` kernels once the CPU (or the
//! build) is known to have those features. Each block carries a `SAFETY:`
//! comment; the table path is safe code. (The tests also use `unsafe` to
//! call each kernel directly and to map a guard page.)

#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(any(test, feature = "std"))]
extern crate std;

mod constants;
mod dispatch;
mod table;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(test)]
mod tests;

use dispatch::{kernel, Kernel};

/// CRC-32/ISO-HDLC of `data` (e.g. `crc32(b"123456789") == 0xCBF43926`).
#[inline]
pub fn crc32(data: &[u8]) -> u32 {
    crc32_update(0, data)
}

/// Continues a CRC: `state` is a previous *finished* value, so
/// `crc32_update(crc32(a), b) == crc32(a ++ b)` and
/// `crc32_update(0, x) == crc32(x)` (zlib's `crc32(crc, buf, len)`).
#[inline]
pub fn crc32_update(state: u32, data: &[u8]) -> u32 {
    if data.len() < 16 {
        return table::crc32_update(state, data);
    }
    match kernel() {
        Kernel::Table => table::crc32_update(state, data),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: dispatch picks Pclmul only when PCLMULQDQ and SSE4.1 are
        // detected (std) or enabled at compile time (no_std).
        Kernel::Pclmul => unsafe { x86::crc32_update(state, data) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: dispatch picks Avx512 only when all of its features are
        // detected (std) or enabled at compile time (no_std).
        Kernel::Avx512 => unsafe { avx512::crc32_update(state, data) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: dispatch picks Pmull only when NEON and AES are detected
        // (std) or enabled at compile time (no_std).
        Kernel::Pmull => unsafe { aarch64::crc32_update(state, data) },
    }
}

/// Four independent CRCs, computed interleaved. Lengths may differ (the
/// common prefix of 16-byte chunks runs in lock-step, each lane finishes on
/// its own); equal lengths, e.g. four consecutive 48-byte trade payloads,
/// are the fast case.
#[inline]
pub fn crc32_x4(data: [&[u8]; 4]) -> [u32; 4] {
    match kernel() {
        Kernel::Table => data.map(crc32_table),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `crc32_update`.
        Kernel::Pclmul => unsafe { x86::crc32_x4(data) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `crc32_update`.
        Kernel::Avx512 => unsafe { avx512::crc32_x4(data) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as in `crc32_update`.
        Kernel::Pmull => unsafe { aarch64::crc32_x4(data) },
    }
}

/// The CRCs of `L` buffers of one length `N` known when compiling (runs
/// of 48-byte trade payloads), computed interleaved: more independent
/// chains than [`crc32_x4`]'s four hide more of the carry-less multiply's
/// latency (eight reach the multiplier's throughput), with no lengths to
/// check at run time. Equal to `L` [`crc32`] calls.
#[inline]
pub fn crc32_same<const N: usize, const L: usize>(data: [&[u8; N]; L]) -> [u32; L] {
    match kernel() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `crc32_update` (Avx512 implies PCLMUL and SSE4.1).
        Kernel::Pclmul | Kernel::Avx512 if N >= 16 && N.is_multiple_of(16) => unsafe {
            x86::crc32_same(data)
        },
        _ => {
            let mut out = [0u32; L];
            for (o, d) in out.chunks_mut(4).zip(data.chunks(4)) {
                if let (4, &[a, b, c, e]) = (o.len(), d) {
                    o.copy_from_slice(&crc32_x4([a, b, c, e]));
                } else {
                    for (o, d) in o.iter_mut().zip(d) {
                        *o = crc32(*d);
                    }
                }
            }
            out
        }
    }
}

/// Name of the kernel dispatch uses: `"vpclmulqdq-avx512"`, `"pclmulqdq"`,
/// `"pmull"` or `"table"`.
pub fn kernel_name() -> &'static str {
    kernel().name()
}

/// CRC-32/ISO-HDLC through the portable table path, whatever the CPU: for
/// cross-checks and benchmarks.
pub fn crc32_table(data: &[u8]) -> u32 {
    table::crc32_update(0, data)
}
