//! LZ4 block compressor whose output is byte-identical to liblz4's
//! `LZ4_compress_default` (acceleration 1) as built for x86-64.
//!
//! Why a compressor of our own: the flox reference writes its LZ4 blocks
//! with liblz4, and any other LZ4 encoder (lz4_flex included) picks other
//! matches, so its segments decode the same but differ in bytes. Matching
//! liblz4's parse decision for decision makes our segments byte-identical
//! to the reference's (the conformance corpus checks every block).
//!
//! What has to match, and how it is done here:
//! - The table mode. Inputs shorter than 65,547 bytes (64 KiB + MFLIMIT - 1)
//!   index a 8192-entry `u16` table by a 4-byte multiplicative hash (hash
//!   log 13); larger ones a 4096-entry `u32` table by the 5-byte hash the
//!   64-bit build uses (the 8 bytes at the position read little-endian,
//!   shifted left 24, times 889523592379, top 12 bits). A 32-bit liblz4
//!   hashes differently, so everything here is explicit `u32`/`u64`
//!   arithmetic on little-endian reads: the bytes are those of x86-64 on
//!   every target, Cortex-M included. Positions are `u32` like liblz4's
//!   indexes; a fresh (zeroed) table makes unseen hashes point at 0.
//! - The search: skip step grows by one every 64 misses (`skipTrigger` 6,
//!   counter starting at `1 << 6`), candidates farther than 65,535 bytes are
//!   skipped (the `u32` mode only; in the `u16` mode none can be), the match
//!   is extended backwards to the previous sequence's end, and after each
//!   match the position two bytes before its end is hashed and the match's
//!   end is tried at once as a zero-literal sequence.
//! - The limits: no match starts in the last 12 bytes (MFLIMIT) nor runs
//!   into the last 5 (LASTLITERALS); inputs shorter than 13 bytes are
//!   literals only; an empty input is the single byte `0`.
//! - Output room: with less than [`lz4_bound`] bytes of output, liblz4 gives
//!   up (returns 0) on the same conservative checks as done here, so a
//!   `None` here is a 0 there.
//!
//! Everything is safe Rust without allocation: the hash table is a
//! [`CompressTable`] (16 KiB) the caller lends, or one on the stack.

/// Minimum match length.
const MINMATCH: usize = 4;
/// No match starts within the last `MFLIMIT` bytes.
const MFLIMIT: usize = 12;
/// The last `LASTLITERALS` bytes are always literals.
const LASTLITERALS: usize = 5;
/// Shorter inputs are stored as literals only.
const MIN_LENGTH: usize = MFLIMIT + 1;
/// Inputs shorter than this use the `u16` table.
const LIMIT_64K: usize = 65536 + MFLIMIT - 1;
/// Largest match offset.
const DISTANCE_MAX: u32 = 65535;
/// liblz4's largest input (`LZ4_MAX_INPUT_SIZE`).
pub const MAX_INPUT: usize = 0x7E00_0000;
/// Search acceleration: the step grows every `1 << SKIP_TRIGGER` misses.
const SKIP_TRIGGER: u32 = 6;
const U16_HASH_LOG: u32 = 13;
const U32_HASH_LOG: u32 = 12;
const U16_ENTRIES: usize = 1 << U16_HASH_LOG;
const U32_ENTRIES: usize = 1 << U32_HASH_LOG;
const RUN_MASK: usize = 15;
const ML_MASK: usize = 15;

pub use crate::block::lz4_bound;

/// The compressor's hash table (16 KiB): liblz4's 8192 `u16` entries, or
/// in the `u32` mode its 4096 `u32` entries as pairs of `u16` halves (one
/// array for both modes, so nothing is moved or doubled when the mode
/// changes). Reset at the start of each call.
#[derive(Clone)]
pub struct CompressTable {
    t: [u16; U16_ENTRIES],
}

impl CompressTable {
    /// A zeroed table.
    pub const fn new() -> CompressTable {
        CompressTable {
            t: [0; U16_ENTRIES],
        }
    }
}

impl Default for CompressTable {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for CompressTable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("CompressTable")
    }
}

/// Compresses `src` as one LZ4 block into `dst` with a hash table on the
/// stack (16 KiB): the compressed length, or `None` where
/// `LZ4_compress_default(src, dst, src.len(), dst.len())` returns 0 (input
/// over [`MAX_INPUT`], or `dst` too small; [`lz4_bound`] always suffices).
pub fn compress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    if let Some(r) = trivial(src, dst) {
        return r;
    }
    let limited = dst.len() < lz4_bound(src.len());
    if src.len() < LIMIT_64K {
        compress_generic(src, dst, limited, &mut Small(&mut [0; U16_ENTRIES]))
    } else {
        compress_large(src, dst, limited)
    }
}

/// The `u32` mode with a `u32` array on the stack, in a frame of its own so
/// that the stack holds one 16 KiB table either way (a little faster than
/// the `u16` pairs of [`CompressTable`]).
#[inline(never)]
fn compress_large(src: &[u8], dst: &mut [u8], limited: bool) -> Option<usize> {
    compress_generic(src, dst, limited, &mut Large32(&mut [0; U32_ENTRIES]))
}

/// [`compress`] with a caller-provided hash table.
pub fn compress_with(src: &[u8], dst: &mut [u8], table: &mut CompressTable) -> Option<usize> {
    if let Some(r) = trivial(src, dst) {
        return r;
    }
    let limited = dst.len() < lz4_bound(src.len());
    table.t.fill(0);
    if src.len() < LIMIT_64K {
        compress_generic(src, dst, limited, &mut Small(&mut table.t))
    } else {
        compress_generic(src, dst, limited, &mut Large(&mut table.t))
    }
}

/// liblz4's answers that need no table: an input over [`MAX_INPUT`] fails,
/// an empty one is the single byte 0 (if there is room for it).
fn trivial(src: &[u8], dst: &mut [u8]) -> Option<Option<usize>> {
    if src.len() > MAX_INPUT {
        return Some(None);
    }
    if src.is_empty() {
        return Some(dst.first_mut().map(|b| {
            *b = 0;
            1
        }));
    }
    None
}

/// The two table modes: how a position is hashed, stored and found.
trait Table {
    /// Whether candidates must be checked against `DISTANCE_MAX` (only the
    /// `u32` mode: in the `u16` one every position is within 64 KiB).
    const CHECK_DISTANCE: bool;
    /// The bytes the hash of position `p` covers, little-endian (the low
    /// 32 bits are always the 4 bytes at `p`; at least 8 bytes readable).
    fn seq(src: &[u8], p: usize) -> u64;
    /// The table slot of a position whose bytes are `seq`.
    fn hash(seq: u64) -> usize;
    fn get(&self, h: usize) -> u32;
    fn put(&mut self, h: usize, pos: u32);
}

struct Small<'a>(&'a mut [u16; U16_ENTRIES]);
/// `u32` entry `h` is `u16`s `2h` (low half) and `2h + 1`.
struct Large<'a>(&'a mut [u16; U16_ENTRIES]);

impl Table for Small<'_> {
    const CHECK_DISTANCE: bool = false;
    #[inline(always)]
    fn seq(src: &[u8], p: usize) -> u64 {
        u64::from(read32(src, p))
    }
    #[inline(always)]
    fn hash(seq: u64) -> usize {
        // LZ4_hash4 with hash log 13 on a little-endian 4-byte read.
        ((seq as u32).wrapping_mul(2_654_435_761) >> (32 - U16_HASH_LOG)) as usize
    }
    #[inline(always)]
    fn get(&self, h: usize) -> u32 {
        u32::from(self.0[h & (U16_ENTRIES - 1)])
    }
    #[inline(always)]
    fn put(&mut self, h: usize, pos: u32) {
        // Positions stay below 65,547 - 11 here, so they fit.
        self.0[h & (U16_ENTRIES - 1)] = pos as u16;
    }
}

impl Table for Large<'_> {
    const CHECK_DISTANCE: bool = true;
    #[inline(always)]
    fn seq(src: &[u8], p: usize) -> u64 {
        read64(src, p)
    }
    #[inline(always)]
    fn hash(seq: u64) -> usize {
        // LZ4_hash5 of the 64-bit little-endian build, whatever this
        // target's word size.
        ((seq << 24).wrapping_mul(889_523_592_379) >> (64 - U32_HASH_LOG)) as usize
    }
    #[inline(always)]
    fn get(&self, h: usize) -> u32 {
        let i = 2 * (h & (U32_ENTRIES - 1));
        u32::from(self.0[i]) | u32::from(self.0[i + 1]) << 16
    }
    #[inline(always)]
    fn put(&mut self, h: usize, pos: u32) {
        let i = 2 * (h & (U32_ENTRIES - 1));
        self.0[i] = pos as u16;
        self.0[i + 1] = (pos >> 16) as u16;
    }
}

/// The `u32` mode over a `u32` array.
struct Large32<'a>(&'a mut [u32; U32_ENTRIES]);

impl Table for Large32<'_> {
    const CHECK_DISTANCE: bool = true;
    #[inline(always)]
    fn seq(src: &[u8], p: usize) -> u64 {
        Large::seq(src, p)
    }
    #[inline(always)]
    fn hash(seq: u64) -> usize {
        Large::hash(seq)
    }
    #[inline(always)]
    fn get(&self, h: usize) -> u32 {
        self.0[h & (U32_ENTRIES - 1)]
    }
    #[inline(always)]
    fn put(&mut self, h: usize, pos: u32) {
        self.0[h & (U32_ENTRIES - 1)] = pos;
    }
}

#[inline(always)]
fn read32(src: &[u8], p: usize) -> u32 {
    let b: [u8; 4] = src[p..p + 4].try_into().unwrap();
    u32::from_le_bytes(b)
}

#[inline(always)]
fn read64(src: &[u8], p: usize) -> u64 {
    let b: [u8; 8] = src[p..p + 8].try_into().unwrap();
    u64::from_le_bytes(b)
}

/// Length of the common prefix of `src[a..limit]` and `src[b..]` (`b < a`),
/// 8 bytes at a time.
#[inline(always)]
fn count(src: &[u8], mut a: usize, mut b: usize, limit: usize) -> usize {
    let start = a;
    while a + 8 <= limit {
        let diff = read64(src, a) ^ read64(src, b);
        if diff != 0 {
            return a - start + (diff.trailing_zeros() / 8) as usize;
        }
        a += 8;
        b += 8;
    }
    while a < limit && src[a] == src[b] {
        a += 1;
        b += 1;
    }
    a - start
}

/// Writes a length's extra bytes (after the 15 in the token): 255s, then
/// the rest.
#[inline(always)]
fn put_len(dst: &mut [u8], mut op: usize, mut len: usize) -> usize {
    while len >= 255 {
        dst[op] = 255;
        op += 1;
        len -= 255;
    }
    dst[op] = len as u8;
    op + 1
}

/// Writes the final literal run `src[anchor..]` at `op`; the end of output
/// or `None` if `limited` and it might not fit (liblz4's check).
#[inline(always)]
fn last_literals(
    src: &[u8],
    dst: &mut [u8],
    limited: bool,
    anchor: usize,
    mut op: usize,
) -> Option<usize> {
    let run = src.len() - anchor;
    if limited && op + run + 1 + (run + 255 - RUN_MASK) / 255 > dst.len() {
        return None;
    }
    if run >= RUN_MASK {
        dst[op] = (RUN_MASK << 4) as u8;
        op = put_len(dst, op + 1, run - RUN_MASK);
    } else {
        dst[op] = (run << 4) as u8;
        op += 1;
    }
    dst[op..op + run].copy_from_slice(&src[anchor..]);
    Some(op + run)
}

/// liblz4's single-block, no-dictionary compression loop.
// Long but kept whole: one loop, as liblz4's, so the two compare line by
// line (and the hot loop stays in one function for the optimiser).
#[inline(always)]
fn compress_generic<T: Table>(
    src: &[u8],
    dst: &mut [u8],
    limited: bool,
    table: &mut T,
) -> Option<usize> {
    let n = src.len();
    let olimit = dst.len();
    let mut anchor = 0usize;
    let mut op = 0usize;
    if n < MIN_LENGTH {
        return last_literals(src, dst, limited, anchor, op);
    }
    // A match may start at most here (inclusive): the last 12 bytes are
    // never a match start.
    let mflimit_plus_one = n - MFLIMIT + 1;
    // Matches end before the last 5 bytes.
    let match_limit = n - LASTLITERALS;
    // Every hashed position is at most `mflimit_plus_one`: reading through
    // a slice that ends 8 bytes past it lets the compiler drop the bounds
    // checks of the probe loop's reads.
    let probe = &src[..mflimit_plus_one + 8];

    table.put(T::hash(T::seq(src, 0)), 0);
    let mut ip = 1usize;
    // The bytes at the next position to probe (its hash, and its first 4
    // bytes to compare with the candidate's: read once).
    let mut forward_seq = T::seq(src, ip);

    'main: loop {
        // Find a match: probe positions with a step that grows by one every
        // 64 misses.
        let mut m;
        {
            let mut forward_ip = ip;
            let mut step = 1usize;
            let mut search_nb = 1u32 << SKIP_TRIGGER;
            loop {
                let seq = forward_seq;
                let h = T::hash(seq);
                let cur = forward_ip;
                m = table.get(h) as usize;
                ip = forward_ip;
                forward_ip += step;
                step = (search_nb >> SKIP_TRIGGER) as usize;
                search_nb += 1;
                if forward_ip > mflimit_plus_one {
                    break 'main;
                }
                forward_seq = T::seq(probe, forward_ip);
                table.put(h, cur as u32);
                if T::CHECK_DISTANCE && m as u32 + DISTANCE_MAX < cur as u32 {
                    continue;
                }
                if read32(src, m) == seq as u32 {
                    break;
                }
            }
        }

        // Catch up: extend the match backwards over equal bytes.
        while ip > anchor && m > 0 && src[ip - 1] == src[m - 1] {
            ip -= 1;
            m -= 1;
        }

        // Literals.
        let lit = ip - anchor;
        let mut token = op;
        op += 1;
        if limited && op + lit + (2 + 1 + LASTLITERALS) + lit / 255 > olimit {
            return None;
        }
        if lit >= RUN_MASK {
            dst[token] = (RUN_MASK << 4) as u8;
            op = put_len(dst, op, lit - RUN_MASK);
        } else {
            dst[token] = (lit << 4) as u8;
        }
        dst[op..op + lit].copy_from_slice(&src[anchor..ip]);
        op += lit;

        loop {
            // Offset.
            let off = (ip - m) as u16;
            dst[op..op + 2].copy_from_slice(&off.to_le_bytes());
            op += 2;

            // Match length.
            let mc = count(src, ip + MINMATCH, m + MINMATCH, match_limit);
            ip += mc + MINMATCH;
            if limited && op + (1 + LASTLITERALS) + (mc + 240) / 255 > olimit {
                return None;
            }
            if mc >= ML_MASK {
                dst[token] += ML_MASK as u8;
                op = put_len(dst, op, mc - ML_MASK);
            } else {
                dst[token] += mc as u8;
            }

            anchor = ip;
            if ip >= mflimit_plus_one {
                break 'main;
            }

            // Hash the position two bytes before the match end, then try
            // the match end itself as a sequence without literals.
            table.put(T::hash(T::seq(src, ip - 2)), (ip - 2) as u32);
            let seq = T::seq(src, ip);
            let h = T::hash(seq);
            m = table.get(h) as usize;
            table.put(h, ip as u32);
            let near = !T::CHECK_DISTANCE || m as u32 + DISTANCE_MAX >= ip as u32;
            if near && read32(src, m) == seq as u32 {
                token = op;
                dst[token] = 0;
                op += 1;
                continue;
            }
            break;
        }

        ip += 1;
        forward_seq = T::seq(src, ip);
    }

    last_literals(src, dst, limited, anchor, op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_inputs_are_literals() {
        let mut out = [0u8; 64];
        assert_eq!(compress(&[], &mut out), Some(1));
        assert_eq!(out[0], 0);
        assert_eq!(compress(&[], &mut []), None);
        let src = [7u8; 12];
        let n = compress(&src, &mut out).unwrap();
        assert_eq!(&out[..n], &[0xc0, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]);
    }

    #[test]
    fn a_run_becomes_one_match() {
        // 32 zero bytes: one literal, a 27-byte match at offset 1, 5 literals.
        let src = [0u8; 32];
        let mut out = [0u8; 64];
        let n = compress(&src, &mut out).unwrap();
        assert_eq!(&out[..n], &[0x1f, 0, 1, 0, 7, 0x50, 0, 0, 0, 0, 0]);
    }
}
