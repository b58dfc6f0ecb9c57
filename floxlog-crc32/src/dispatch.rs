//! Picks the kernel once.
//!
//! With `std`: the running CPU is probed on first use and the answer cached
//! in an atomic, so every later call is one relaxed load and a branch.
//! Without `std`: the choice is a constant from the build's target features
//! (`-C target-cpu=...` / `-C target-feature=...`).

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
// Without `std`, the kernels the build's features exclude are never chosen.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub(crate) enum Kernel {
    Table = 1,
    #[cfg(target_arch = "x86_64")]
    Pclmul = 2,
    #[cfg(target_arch = "x86_64")]
    Avx512 = 3,
    #[cfg(target_arch = "aarch64")]
    Pmull = 4,
}

impl Kernel {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kernel::Table => "table",
            #[cfg(target_arch = "x86_64")]
            Kernel::Pclmul => "pclmulqdq",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => "vpclmulqdq-avx512",
            #[cfg(target_arch = "aarch64")]
            Kernel::Pmull => "pmull",
        }
    }
}

#[cfg(feature = "std")]
mod detect {
    use super::Kernel;
    use core::sync::atomic::{AtomicU8, Ordering};

    /// 0 = not probed yet, else a `Kernel` discriminant.
    static KERNEL: AtomicU8 = AtomicU8::new(0);

    #[inline]
    pub(crate) fn kernel() -> Kernel {
        match KERNEL.load(Ordering::Relaxed) {
            1 => Kernel::Table,
            #[cfg(target_arch = "x86_64")]
            2 => Kernel::Pclmul,
            #[cfg(target_arch = "x86_64")]
            3 => Kernel::Avx512,
            #[cfg(target_arch = "aarch64")]
            4 => Kernel::Pmull,
            _ => probe(),
        }
    }

    #[cold]
    fn probe() -> Kernel {
        let best = probe_cpu();
        // FLOXLOG_CRC32_KERNEL may name a lesser kernel the CPU also runs
        // (for benchmarks and cross-checks); anything else is ignored.
        let wanted = std::env::var("FLOXLOG_CRC32_KERNEL").ok();
        let k = match wanted.as_deref() {
            Some("table") => Kernel::Table,
            #[cfg(target_arch = "x86_64")]
            Some("pclmulqdq") if best == Kernel::Avx512 => Kernel::Pclmul,
            _ => best,
        };
        // Racing first calls all compute the same answer.
        KERNEL.store(k as u8, Ordering::Relaxed);
        k
    }

    #[cfg(target_arch = "x86_64")]
    fn probe_cpu() -> Kernel {
        if std::is_x86_feature_detected!("vpclmulqdq")
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("pclmulqdq")
            && std::is_x86_feature_detected!("sse4.1")
        {
            Kernel::Avx512
        } else if std::is_x86_feature_detected!("pclmulqdq")
            && std::is_x86_feature_detected!("sse4.1")
        {
            Kernel::Pclmul
        } else {
            Kernel::Table
        }
    }

    #[cfg(target_arch = "aarch64")]
    fn probe_cpu() -> Kernel {
        if std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("neon")
        {
            Kernel::Pmull
        } else {
            Kernel::Table
        }
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    fn probe_cpu() -> Kernel {
        Kernel::Table
    }
}

#[cfg(feature = "std")]
pub(crate) use detect::kernel;

#[cfg(not(feature = "std"))]
#[inline(always)]
pub(crate) fn kernel() -> Kernel {
    COMPILED
}

/// The kernel the build's target features allow (the `no_std` choice).
#[cfg(not(feature = "std"))]
const COMPILED: Kernel = {
    #[cfg(target_arch = "x86_64")]
    let k = if !cfg!(all(target_feature = "pclmulqdq", target_feature = "sse4.1")) {
        Kernel::Table
    } else if cfg!(all(
        target_feature = "vpclmulqdq",
        target_feature = "avx512f",
        target_feature = "avx512bw",
        target_feature = "avx512vl"
    )) {
        Kernel::Avx512
    } else {
        Kernel::Pclmul
    };
    #[cfg(target_arch = "aarch64")]
    let k = if cfg!(all(target_feature = "aes", target_feature = "neon")) {
        Kernel::Pmull
    } else {
        Kernel::Table
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let k = Kernel::Table;
    k
};
