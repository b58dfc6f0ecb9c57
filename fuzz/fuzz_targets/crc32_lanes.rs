//! floxlog-crc32: the dispatched kernels (`crc32`, `crc32_update`,
//! `crc32_x4`) against the portable table on lanes cut from the input at
//! fuzzer-chosen offsets and lengths (equal, unequal, empty, unaligned).
#![no_main]

use floxlog_crc32::{crc32, crc32_table, crc32_update, crc32_x4};
use libfuzzer_sys::fuzz_target;

/// Header: one byte (lane count, equal-length flag), then for each of the
/// four lanes a u16 start and a u16 length, then a u16 split point.
const HEADER: usize = 1 + 4 * 4 + 2;

fuzz_target!(|data: &[u8]| {
    if data.len() < HEADER {
        return;
    }
    let (head, body) = data.split_at(HEADER);
    let u16_at = |i: usize| usize::from(u16::from_le_bytes([head[i], head[i + 1]]));
    let lanes_used = usize::from(head[0] & 3) + 1;
    let equal = head[0] & 4 != 0;
    let n = body.len();
    let mut lanes: [&[u8]; 4] = [&[]; 4];
    let mut first_len = None;
    for (i, lane) in lanes.iter_mut().enumerate().take(lanes_used) {
        let start = u16_at(1 + 4 * i) % (n + 1);
        let room = n - start;
        let want = u16_at(3 + 4 * i);
        let len = match (equal, first_len) {
            (true, Some(l)) => usize::min(l, room),
            _ => want % (room + 1),
        };
        first_len.get_or_insert(len);
        *lane = &body[start..start + len];
    }
    let want = lanes.map(crc32_table);
    assert_eq!(crc32_x4(lanes), want);
    for (lane, &w) in lanes.iter().zip(&want) {
        assert_eq!(crc32(lane), w);
        let split = u16_at(17) % (lane.len() + 1);
        let (a, b) = lane.split_at(split);
        assert_eq!(crc32_update(crc32(a), b), w);
        assert_eq!(crc32_update(0, lane), w);
    }
});
