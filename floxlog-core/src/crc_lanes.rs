//! CRC32 (ISO-HDLC) of several short buffers at once.
//!
//! One CRC of a 48-byte payload is a chain of dependent table lookups:
//! latency-bound, whatever the CPU's width. Four independent chains run
//! interleaved fill the CPU's load and ALU ports, so four payloads cost
//! little more than one. Slice-by-8 tables, built at compile time; safe
//! code only. Results equal [`crate::crc32::crc32`] for every input
//! (tested against it on random lengths and alignments).

const POLY: u32 = 0xEDB8_8320;

/// `T[k][b]`: the CRC contribution of byte `b` followed by `k` zero bytes.
static TABLES: [[u32; 256]; 8] = tables();

const fn tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut b = 0;
    while b < 256 {
        let mut c = b as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][b] = c;
        b += 1;
    }
    let mut s = 1;
    while s < 8 {
        let mut b = 0;
        while b < 256 {
            let prev = t[s - 1][b];
            t[s][b] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            b += 1;
        }
        s += 1;
    }
    t
}

/// Advances `crc` (pre-inverted state) over 8 bytes.
#[inline(always)]
fn step8(crc: u32, w: [u8; 8]) -> u32 {
    let lo = crc ^ u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    let t = &TABLES;
    t[7][(lo & 0xff) as usize]
        ^ t[6][((lo >> 8) & 0xff) as usize]
        ^ t[5][((lo >> 16) & 0xff) as usize]
        ^ t[4][(lo >> 24) as usize]
        ^ t[3][w[4] as usize]
        ^ t[2][w[5] as usize]
        ^ t[1][w[6] as usize]
        ^ t[0][w[7] as usize]
}

/// Advances `crc` (pre-inverted state) over `data`, one byte at a time.
#[inline(always)]
fn bytes(mut crc: u32, data: &[u8]) -> u32 {
    for &b in data {
        crc = (crc >> 8) ^ TABLES[0][((crc ^ u32::from(b)) & 0xff) as usize];
    }
    crc
}

#[inline(always)]
fn word(d: &[u8], at: usize) -> [u8; 8] {
    let mut w = [0u8; 8];
    w.copy_from_slice(&d[at..at + 8]);
    w
}

/// CRC32 (ISO-HDLC) of one buffer, slice-by-8.
pub fn crc32_one(data: &[u8]) -> u32 {
    let mut c = !0u32;
    let whole = data.len() / 8 * 8;
    let mut at = 0;
    while at < whole {
        c = step8(c, word(data, at));
        at += 8;
    }
    !bytes(c, &data[whole..])
}

/// CRC32 (ISO-HDLC) of four buffers, computed interleaved.
pub fn crc32_x4(d: [&[u8]; 4]) -> [u32; 4] {
    let mut c = [!0u32; 4];
    // The 8-byte words all four have, in lock-step.
    let common = d.iter().map(|x| x.len()).min().unwrap_or(0) / 8 * 8;
    let mut at = 0;
    while at < common {
        c[0] = step8(c[0], word(d[0], at));
        c[1] = step8(c[1], word(d[1], at));
        c[2] = step8(c[2], word(d[2], at));
        c[3] = step8(c[3], word(d[3], at));
        at += 8;
    }
    let mut out = [0u32; 4];
    for k in 0..4 {
        let rest = &d[k][common..];
        let whole = rest.len() / 8 * 8;
        let mut s = c[k];
        let mut i = 0;
        while i < whole {
            s = step8(s, word(rest, i));
            i += 8;
        }
        out[k] = !bytes(s, &rest[whole..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crc32::crc32_portable;

    /// xorshift: deterministic lengths, offsets and bytes.
    fn rng(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn equal_to_the_portable_table_on_random_lengths_and_alignments() {
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
            assert_eq!(crc32_one(d[0]), want[0]);
        }
        assert_eq!(crc32_one(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32_one(&[]), 0);
    }
}
