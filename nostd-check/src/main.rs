//! See Cargo.toml: links floxlog-core's writer and reader with no std and no
//! allocator, and checks a round trip. Exit code 0 means it worked.
#![no_std]
#![no_main]

use core::ffi::c_int;
use floxlog_core::{
    BlockSlot, Compression, Event, IndexEntry, ReadOptions, Segment, SegmentWriter, Trade,
    WriterBuffers, WriterConfig,
};

const EVENTS: i64 = 100;

fn round_trip(compression: Compression, out: &mut [u8], file: &mut [u8]) -> Result<(), c_int> {
    let mut block = [0u8; 16 * 1024];
    let mut slots = [BlockSlot::EMPTY; 32];
    let mut index = [IndexEntry::default(); 16];
    let cfg = WriterConfig {
        compression,
        index_interval: 32,
        created_ns: 1,
        ..WriterConfig::default()
    };
    let bufs = WriterBuffers {
        out,
        block: &mut block,
        slots: &mut slots,
        index: &mut index,
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
    file.get_mut(..len).ok_or(13)?.copy_from_slice(bytes);
    file[..64].copy_from_slice(&header);

    let seg = Segment::parse(&file[..len]).map_err(|_| 20)?;
    let mut scratch = [0u8; 16 * 1024];
    let mut r = seg.reader(ReadOptions::default(), &mut scratch);
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

#[no_mangle]
extern "C" fn main(_argc: c_int, _argv: *const *const u8) -> c_int {
    let mut out = [0u8; 16 * 1024];
    let mut file = [0u8; 16 * 1024];
    for c in [Compression::None, Compression::Lz4] {
        if let Err(code) = round_trip(c, &mut out, &mut file) {
            return code;
        }
    }
    0
}

// The C runtime (crt startup, memcpy/memset): libc, not Rust's std.
#[link(name = "c")]
extern "C" {}

// The precompiled `core` references the unwinding personality even under
// panic = "abort"; nothing here unwinds, so it is never called.
#[no_mangle]
extern "C" fn rust_eh_personality() {}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // No std, no abort(): spin. A panic here would be a bug the exit code
    // cannot report; the codec itself never panics.
    loop {}
}
