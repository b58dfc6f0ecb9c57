//! The round trip both no_std binaries run: src/main.rs on the host and
//! cortex-m/ under QEMU. One copy, so the embedded run proves exactly what
//! the host run proves: an uncompressed (and, with the `lz4` feature, an LZ4)
//! segment written into caller buffers and read back event for event.
//!
//! Errors are small integers (the host binary's exit code): 1x writing,
//! 2x reading.
#![no_std]

use core::ffi::c_int;
use floxlog_core::{
    BlockSlot, Compression, Event, IndexEntry, ReadOptions, Reader, Segment, SegmentWriter, Trade,
    WriterBuffers, WriterConfig,
};

/// Events per segment: enough for several index entries and LZ4 blocks.
pub const EVENTS: i64 = 100;

/// Bytes of the writer's and the reader's own state, which the halves below
/// keep on the stack (the writer's includes its set of seen symbols).
pub const WRITER_STATE_BYTES: usize = core::mem::size_of::<SegmentWriter<WriterBuffers<'static>>>();
pub const READER_STATE_BYTES: usize = core::mem::size_of::<Reader<'static, 'static>>();

const BUF: usize = 16 * 1024;

/// The segments this build writes and reads back: LZ4 only when compiled in
/// (without it floxlog-core refuses LZ4 segments, by design).
#[cfg(feature = "lz4")]
pub const COMPRESSIONS: &[Compression] = &[Compression::None, Compression::Lz4];
#[cfg(not(feature = "lz4"))]
pub const COMPRESSIONS: &[Compression] = &[Compression::None];

/// Every buffer the codec borrows, in one place the caller owns: on the
/// target they live in `.bss`, so the stack measured there is the codec's
/// own and not these 64 KiB.
pub struct Buffers {
    out: [u8; BUF],
    file: [u8; BUF],
    block: [u8; BUF],
    scratch: [u8; BUF],
    slots: [BlockSlot; 32],
    index: [IndexEntry; 16],
}

impl Buffers {
    /// `const` so the target can put it in a `static`.
    pub const fn new() -> Self {
        Buffers {
            out: [0; BUF],
            file: [0; BUF],
            block: [0; BUF],
            scratch: [0; BUF],
            slots: [BlockSlot::EMPTY; 32],
            index: [IndexEntry {
                timestamp_ns: 0,
                file_offset: 0,
            }; 16],
        }
    }
}

impl Default for Buffers {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes `EVENTS` trades as one segment into `b.file`; returns its length.
/// Not inlined: the target measures the writer's stack and code on its own.
#[inline(never)]
pub fn write_segment(compression: Compression, b: &mut Buffers) -> Result<usize, c_int> {
    let cfg = WriterConfig {
        compression,
        index_interval: 32,
        created_ns: 1,
        ..WriterConfig::default()
    };
    let bufs = WriterBuffers {
        out: &mut b.out,
        block: &mut b.block,
        slots: &mut b.slots,
        index: &mut b.index,
    };
    let mut w = SegmentWriter::new(cfg, bufs).map_err(|_| 10)?;
    for i in 0..EVENTS {
        let t = Trade {
            exchange_ts_ns: 1_000 + i,
            price_raw: 100 * i,
            qty_raw: 1,
            symbol_id: 3,
            ..Trade::default()
        };
        w.append(&Event::Trade(t)).map_err(|_| 11)?;
    }
    let header = w.finish().map_err(|_| 12)?;
    let bytes = w.pending();
    let len = bytes.len();
    b.file.get_mut(..len).ok_or(13)?.copy_from_slice(bytes);
    b.file[..64].copy_from_slice(&header);
    Ok(len)
}

/// Reads the segment of `len` bytes in `b.file` back and checks every event.
/// Not inlined, for the same reason as [`write_segment`].
#[inline(never)]
pub fn read_segment(b: &mut Buffers, len: usize) -> Result<(), c_int> {
    let seg = Segment::parse(b.file.get(..len).ok_or(20)?).map_err(|_| 20)?;
    let mut r = seg.reader(ReadOptions::default(), &mut b.scratch);
    let mut n = 0i64;
    while let Some(ev) = r.next_event().map_err(|_| 21)? {
        match ev {
            Event::Trade(t) if t.exchange_ts_ns == 1_000 + n && t.price_raw == 100 * n => n += 1,
            _ => return Err(22),
        }
    }
    if n != EVENTS {
        return Err(23);
    }
    Ok(())
}

/// Writes and reads back one segment of every compression in [`COMPRESSIONS`].
pub fn run(b: &mut Buffers) -> Result<(), c_int> {
    for &c in COMPRESSIONS {
        let len = write_segment(c, b)?;
        read_segment(b, len)?;
    }
    Ok(())
}

/// LZ4 bytes that do not depend on the target: `floxlog_core::lz4_compress`
/// must give liblz4's `LZ4_compress_default` output (x86-64 build) on every
/// target, so the Cortex-M run compresses fixed inputs and checks the
/// output's length and CRC32 against values computed on x86-64 (where
/// floxlog-core/tests/lz4_liblz4.rs checks them against liblz4 itself).
#[cfg(feature = "lz4")]
pub mod lz4_bytes {
    use core::ffi::c_int;
    use floxlog_core::crc32::crc32;
    use floxlog_core::lz4_compress::{compress_with, lz4_bound, CompressTable};

    /// Largest input: past 64 KiB + 11 bytes, liblz4's `u32`-table mode.
    pub const SRC: usize = 70_000;
    const DST: usize = lz4_bound(SRC);

    /// (input length, compressed length, CRC32 of the compressed bytes) of
    /// [`input`]'s prefixes: `u16`-table mode, then `u32`-table mode.
    pub const EXPECTED: [(usize, usize, u32); 3] = [
        (1_000, 511, 0xa048_e5bf),
        (16_384, 7856, 0x7dfd_dfa6),
        (SRC, 29977, 0x45fa_b9aa),
    ];

    /// Buffers for [`check`] (150 KiB: static on the target).
    pub struct Lz4Buffers {
        src: [u8; SRC],
        dst: [u8; DST],
        table: CompressTable,
    }

    impl Lz4Buffers {
        /// `const` so the target can put it in a `static`.
        pub const fn new() -> Self {
            Lz4Buffers {
                src: [0; SRC],
                dst: [0; DST],
                table: CompressTable::new(),
            }
        }
    }

    impl Default for Lz4Buffers {
        fn default() -> Self {
            Self::new()
        }
    }

    /// Fills `out` with 48-byte trade-like records whose fields drift a
    /// little (xorshift driven): what LZ4 meets in a block. The same
    /// generator is in floxlog-core/tests/lz4_liblz4.rs.
    pub fn input(out: &mut [u8]) {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut ts: u64 = 1_700_000_000_000_000_000;
        let mut price: u64 = 100_000_000_000;
        for (i, rec) in out.chunks_mut(48).enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = (x >> 24) as u8;
            ts += u64::from(d) * 1000;
            price = price.wrapping_add(u64::from(d % 7)).wrapping_sub(3);
            let mut r = [0u8; 48];
            r[..8].copy_from_slice(&ts.to_le_bytes());
            r[8..16].copy_from_slice(&(ts + 5).to_le_bytes());
            r[16..24].copy_from_slice(&price.to_le_bytes());
            r[24..32].copy_from_slice(&(1000 + u64::from(d & 3)).to_le_bytes());
            r[32..40].copy_from_slice(&(i as u64).to_le_bytes());
            r[40..48].copy_from_slice(&[7, 0, 0, 0, d & 1, 1, 3, 0]);
            rec.copy_from_slice(&r[..rec.len()]);
        }
    }

    /// Compresses each [`EXPECTED`] input; errors 3x on a mismatch.
    #[inline(never)]
    pub fn check(b: &mut Lz4Buffers) -> Result<(), c_int> {
        input(&mut b.src);
        for (k, &(len, zlen, crc)) in EXPECTED.iter().enumerate() {
            let n = compress_with(&b.src[..len], &mut b.dst, &mut b.table).ok_or(30)?;
            if n != zlen || crc32(&b.dst[..n]) != crc {
                return Err(31 + k as c_int);
            }
        }
        Ok(())
    }
}
