#!/usr/bin/env python3
"""Writes the hand-made adversarial segments of this folder.

File names say what a strict reader must do: `<events>-<kind>@<offset>--<what>.floxlog`
(the reader yields <events> events, then fails with <kind> at <offset>), or
`<events>-index-<kind>--<what>.floxlog` (reads cleanly; the index fails with <kind>).
Fuzz-found inputs are added under the same scheme. floxlog-core's
`tests/regressions.rs` replays every file.
"""
import struct, zlib

def header(flags=0, comp=0, index_offset=0, count=0):
    return struct.pack('<IHBBqqqIIQB15x', 0x584F4C46, 1, flags, 0, 1, 0, 0, count, 0, index_offset, comp)

def frame(ftype, payload, size=None, crc=None):
    size = len(payload) if size is None else size
    crc = zlib.crc32(payload) if crc is None else crc
    return struct.pack('<IIBBH', size, crc, ftype, 1, 0) + payload

def trade(ts):
    return struct.pack('<qqqqQIBBH', ts, ts, 100, 1, 7, 3, 0, 1, 0)

def lz4_literals(data):
    """A valid LZ4 block holding `data` as literals only."""
    n = len(data)
    if n < 15:
        return bytes([n << 4]) + data
    out = bytearray([0xF0])
    rest = n - 15
    while rest >= 255:
        out.append(255); rest -= 255
    out.append(rest)
    return bytes(out) + data

def block(raw, events, original=None, magic=0x4B4C4246):
    z = lz4_literals(raw)
    original = len(raw) if original is None else original
    return struct.pack('<IIIHH', magic, len(z), original, events, 0) + z

def write(name, data):
    open(name, 'wb').write(data)

t = frame(1, trade(5))
write('0-truncated@64--frame-size-u32-max.floxlog', header() + struct.pack('<IIBBH', 0xFFFFFFFF, 0, 1, 1, 0) + b'\0' * 40)
write('1-truncated@124--frame-size-wraps-offset.floxlog', header() + t + struct.pack('<IIBBH', 0xFFFFFFF4, 0, 1, 1, 0))
book = struct.pack('<qqqIHHBBHI', 1, 1, 0, 1, 65535, 65535, 0, 0, 0, 0) + b'\0' * 32
write('0-malformed_record@64--book-counts-65535.floxlog', header() + frame(2, book))
pool = struct.pack('<qqIIBBHI', 1, 1, 1, 0xFFFFFFFF, 1, 1, 0, 0) + b'xy'
write('0-malformed_record@64--pool-payload-len-lies.floxlog', header() + frame(5, pool))
write('1-unknown_record_type@124--frame-type-zero.floxlog', header() + t + frame(0, trade(6)))
write('0-malformed_record@64--trade-of-8-bytes.floxlog', header() + frame(1, struct.pack('<q', 9)))
write('0-buffer_too_small@64--lz4-original-size-4g.floxlog', header(0x02, 1) + block(t, 1, original=0xFFFFFFFF))
write('1-malformed_record@64--lz4-block-event-count-too-big.floxlog', header(0x02, 1) + block(t, 2))
write('0-truncated@64--lz4-frame-torn-inside-block.floxlog', header(0x02, 1) + block(t[:30], 1))
write('0-decompression_failed@64--lz4-literals-past-end.floxlog', header(0x02, 1) + struct.pack('<IIIHH', 0x4B4C4246, 3, 60, 1, 0) + bytes([0xF0, 200, 1]))
write('0-bad_block_magic@64--lz4-block-magic-is-frame.floxlog', header(0x02, 1) + t)
write('0-decompression_failed@64--lz4-empty-block-claims-bytes.floxlog', header(0x02, 1) + struct.pack('<IIIHH', 0x4B4C4246, 0, 60, 1, 0))
idx = struct.pack('<IHHIIqq', 0x58444E49, 1, 1, 0xFFFFFFFF, 0, 5, 5) + struct.pack('<qQ', 5, 64)
write('1-index-bad_index--entry-count-u32-max.floxlog', header(0x01, 0, 124, 1) + t + idx)
idx = struct.pack('<IHHIIqq', 0x58444E49, 1, 1, 1, zlib.crc32(struct.pack('<qQ', 5, 124)), 5, 5) + struct.pack('<qQ', 5, 124)
write('1-index-bad_index--entry-points-at-trailer.floxlog', header(0x01, 0, 124, 1) + t + idx)
idx = struct.pack('<IHHIIqq', 0x58444E49, 2, 1, 1, zlib.crc32(struct.pack('<qQ', 5, 64)), 5, 5) + struct.pack('<qQ', 5, 64)
write('1-index-bad_index--index-version-2.floxlog', header(0x01, 0, 124, 1) + t + idx)
