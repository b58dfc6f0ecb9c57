//! The portable path: slice-by-16 tables built at compile time.
//!
//! Functions here work on the raw CRC *register* (not inverted): the SIMD
//! kernels hand their reduced register to [`update`] for the sub-16-byte
//! tail. `TABLES[k][b]` is the register contribution of byte `b` followed by
//! `k` zero bytes, so one step of any `n <= 16` bytes is `n` independent
//! lookups (no per-byte dependency chain).

/// Reflected CRC-32/ISO-HDLC polynomial.
const POLY: u32 = 0xEDB8_8320;

const fn build() -> [[u32; 256]; 16] {
    let mut t = [[0u32; 256]; 16];
    let mut b = 0;
    while b < 256 {
        let mut r = b as u32;
        let mut i = 0;
        while i < 8 {
            r = (r >> 1) ^ (POLY & (r & 1).wrapping_neg());
            i += 1;
        }
        t[0][b] = r;
        b += 1;
    }
    let mut k = 1;
    while k < 16 {
        let mut b = 0;
        while b < 256 {
            let prev = t[k - 1][b];
            t[k][b] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            b += 1;
        }
        k += 1;
    }
    t
}

static TABLES: [[u32; 256]; 16] = build();

/// One step over `bytes.len() <= 16` bytes.
#[inline]
fn step(reg: u32, bytes: &[u8]) -> u32 {
    let n = bytes.len();
    debug_assert!(n <= 16);
    // Register bytes not yet consumed by a short step shift down.
    let mut out = if n < 4 { reg >> (8 * n) } else { 0 };
    for (j, &b) in bytes.iter().enumerate() {
        let r = if j < 4 { (reg >> (8 * j)) as u8 } else { 0 };
        out ^= TABLES[n - 1 - j][(b ^ r) as usize];
    }
    out
}

/// Advances the raw register over `data`.
#[inline]
pub(crate) fn update(mut reg: u32, data: &[u8]) -> u32 {
    let (blocks, tail) = data.as_chunks::<16>();
    for b in blocks {
        let t = |k: usize, i: u8| TABLES[k][i as usize];
        // The twelve lookups of message bytes don't depend on `reg` and run
        // ahead; only the last four wait for it, so the chain per block is
        // one load and a few XORs rather than sixteen serial XORs.
        let data = t(11, b[4])
            ^ t(10, b[5])
            ^ t(9, b[6])
            ^ t(8, b[7])
            ^ t(7, b[8])
            ^ t(6, b[9])
            ^ t(5, b[10])
            ^ t(4, b[11])
            ^ t(3, b[12])
            ^ t(2, b[13])
            ^ t(1, b[14])
            ^ t(0, b[15]);
        let x = reg ^ u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        reg = data
            ^ t(15, x as u8)
            ^ t(14, (x >> 8) as u8)
            ^ t(13, (x >> 16) as u8)
            ^ t(12, (x >> 24) as u8);
    }
    if tail.is_empty() {
        reg
    } else {
        step(reg, tail)
    }
}

/// Finished CRC continuing from finished `state`, table only.
#[inline]
pub(crate) fn crc32_update(state: u32, data: &[u8]) -> u32 {
    !update(!state, data)
}
