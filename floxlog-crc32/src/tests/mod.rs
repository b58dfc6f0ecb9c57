//! Unit tests: they can call each kernel directly, not only the one
//! dispatch picks.

mod constants;
mod differential;
#[cfg(unix)]
mod guard;

use std::vec::Vec;

/// `(name, crc32_update, crc32_x4)` of one compiled kernel.
pub(crate) type KernelFns = (
    &'static str,
    fn(u32, &[u8]) -> u32,
    fn([&[u8]; 4]) -> [u32; 4],
);

/// Every kernel this CPU can run, the table first.
pub(crate) fn kernels() -> Vec<KernelFns> {
    let mut v: Vec<KernelFns> = Vec::new();
    v.push(("table", crate::table::crc32_update, |d: [&[u8]; 4]| {
        d.map(|s| crate::table::crc32_update(0, s))
    }));
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("pclmulqdq") && std::is_x86_feature_detected!("sse4.1") {
            v.push((
                "pclmulqdq",
                // SAFETY: features checked just above.
                |s, d| unsafe { crate::x86::crc32_update(s, d) },
                // SAFETY: features checked just above.
                |d| unsafe { crate::x86::crc32_x4(d) },
            ));
        }
        if std::is_x86_feature_detected!("pclmulqdq")
            && std::is_x86_feature_detected!("sse4.1")
            && std::is_x86_feature_detected!("vpclmulqdq")
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
        {
            v.push((
                "vpclmulqdq-avx512",
                // SAFETY: features checked just above.
                |s, d| unsafe { crate::avx512::crc32_update(s, d) },
                // SAFETY: features checked just above.
                |d| unsafe { crate::avx512::crc32_x4(d) },
            ));
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("neon")
        {
            v.push((
                "pmull",
                // SAFETY: features checked just above.
                |s, d| unsafe { crate::aarch64::crc32_update(s, d) },
                // SAFETY: features checked just above.
                |d| unsafe { crate::aarch64::crc32_x4(d) },
            ));
        }
    }
    v
}

/// The reference: the `crc` crate.
pub(crate) fn reference(data: &[u8]) -> u32 {
    const R: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
    R.checksum(data)
}

/// Small deterministic PRNG (xorshift64*), so failures reproduce.
pub(crate) struct Rng(pub u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub(crate) fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn dispatch_picks_the_best_kernel() {
    let name = crate::kernel_name();
    std::eprintln!("dispatch: {name}");
    #[cfg(feature = "std")]
    if std::env::var_os("FLOXLOG_CRC32_KERNEL").is_none() {
        assert_eq!(name, kernels().last().unwrap().0);
    }
    assert!(
        kernels().iter().any(|k| k.0 == name),
        "{name} not runnable here"
    );
}
