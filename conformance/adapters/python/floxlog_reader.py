#!/usr/bin/env python3
"""A second, independent reader for .floxlog 1.0 segments (standard library only).

Written from the spec text and docs/format.md; it shares no code with floxlog's
Rust decoder. It is the example reader adapter of the conformance kit:

    floxlog_reader.py SEGMENT           print the segment's events as JSON lines
    floxlog_reader.py --index SEGMENT   check the index trailer
    floxlog_reader.py --tape DIR        print a tape's events in time order

Protocol (conformance kit): events go to stdout, one JSON object per line. On
damage the events before it are printed, then the last stderr line is
`error <kind> <offset>` and the exit status is 1. `--index` prints `index ok` or
`index_error <kind>` and exits 0 (a segment header that is itself invalid gives
`index_error <its kind>`: no index can be found). Exit status 2: usage error or
unreadable file.
"""

import struct
import sys
import zlib

SEGMENT_HEADER_LEN = 64
FRAME_HEADER_LEN = 12
BLOCK_HEADER_LEN = 16
INDEX_HEADER_LEN = 32
INDEX_ENTRY_LEN = 16

MAGIC_SEGMENT = b"FLOX"
MAGIC_BLOCK = b"FBLK"
MAGIC_INDEX = b"INDX"

FLAG_HAS_INDEX = 0x01
FLAG_COMPRESSED = 0x02
FLAG_ENCRYPTED = 0x04
FLAG_SORTED = 0x08
FLAGS_KNOWN = FLAG_HAS_INDEX | FLAG_COMPRESSED | FLAG_ENCRYPTED | FLAG_SORTED

TRADE_LEN = 48
BOOK_HEADER_LEN = 40
BOOK_LEVEL_LEN = 16
OPTION_QUOTE_LEN = 112
POOL_HEADER_LEN = 32

# An LZ4 block cannot expand by more than ~255x (one extra length byte adds at
# most 255 output bytes); anything claiming more is rejected before decoding.
LZ4_MAX_RATIO = 256

S_SEGMENT = struct.Struct("<4sHBBqqqIIQB")  # through the compression byte (49 bytes)
S_FRAME = struct.Struct("<IIBBH")
S_BLOCK = struct.Struct("<4sIIHH")
S_INDEX = struct.Struct("<4sHHIIqq")
S_ENTRY = struct.Struct("<qQ")
S_TRADE = struct.Struct("<qqqqQIBBH")
S_BOOK = struct.Struct("<qqqIHHBBHI")
S_LEVEL = struct.Struct("<qq")
S_OPTION = struct.Struct("<13qIBBH")
S_POOL = struct.Struct("<qqIIBBHI")
S_I64 = struct.Struct("<q")


class Damage(Exception):
    """A spec violation: a corpus error kind and the byte offset of what failed."""

    def __init__(self, kind, offset):
        Exception.__init__(self, kind, offset)
        self.kind = kind
        self.offset = offset


class SegmentInfo(object):
    __slots__ = ("flags", "index_offset", "compressed", "frames_end", "index_lost")


# --------------------------------------------------------------------------
# Segment header


def parse_segment_header(data):
    if len(data) < SEGMENT_HEADER_LEN:
        raise Damage("truncated", 0)
    (magic, version, flags, _exchange_id, _created, _first, _last, _count,
     _symbols, index_offset, compression) = S_SEGMENT.unpack_from(data, 0)
    if magic != MAGIC_SEGMENT:
        raise Damage("bad_magic", 0)
    if version != 1:
        raise Damage("unsupported_version", 0)
    if flags & ~FLAGS_KNOWN & 0xFF:
        raise Damage("unknown_flags", 0)
    if flags & FLAG_ENCRYPTED:
        raise Damage("encrypted", 0)
    if any(data[49:64]):
        raise Damage("reserved_nonzero", 0)
    compressed = bool(flags & FLAG_COMPRESSED)
    # The compression byte must name a 1.0 codec and agree with the flag.
    if compression not in (0, 1) or compression != int(compressed):
        raise Damage("unknown_compression", 0)

    info = SegmentInfo()
    info.flags = flags
    info.index_offset = index_offset
    info.compressed = compressed
    info.frames_end = len(data)
    info.index_lost = False
    if flags & FLAG_HAS_INDEX:
        # The frame area ends where the trailer starts. If index_offset does not
        # lead to a trailer, read to the end of the file but stop at a complete,
        # CRC-correct trailer should one be met at a frame boundary.
        if (SEGMENT_HEADER_LEN <= index_offset <= len(data)
                and data[index_offset:index_offset + 4] == MAGIC_INDEX):
            info.frames_end = index_offset
        else:
            info.index_lost = True
    return info


def is_complete_trailer(data, pos, end):
    """True if data[pos:end] is exactly one index trailer whose CRC matches."""
    if end - pos < INDEX_HEADER_LEN or data[pos:pos + 4] != MAGIC_INDEX:
        return False
    _m, _v, _i, count, crc, _f, _l = S_INDEX.unpack_from(data, pos)
    if INDEX_HEADER_LEN + count * INDEX_ENTRY_LEN != end - pos:
        return False
    return zlib.crc32(data[pos + INDEX_HEADER_LEN:end]) & 0xFFFFFFFF == crc


# --------------------------------------------------------------------------
# Records -> JSON lines (keys as the corpus spells them)


def levels_json(buf, start, count):
    if count == 0:
        return "[]"
    end = start + count * BOOK_LEVEL_LEN
    return "[" + ",".join("[%d,%d]" % pq for pq in S_LEVEL.iter_unpack(buf[start:end])) + "]"


def decode_record(ftype, buf, p, size, where):
    """JSON line for the payload buf[p:p+size] of a frame of type ftype."""
    if ftype == 1:
        if size != TRADE_LEN:
            raise Damage("malformed_record", where)
        (ts, recv, price, qty, trade_id, symbol, side, instrument,
         exchange) = S_TRADE.unpack_from(buf, p)
        return ('{"type":"trade","exchange_ts_ns":%d,"recv_ts_ns":%d,"price_raw":%d,'
                '"qty_raw":%d,"trade_id":%d,"symbol_id":%d,"side":%d,"instrument":%d,'
                '"exchange_id":%d}' % (ts, recv, price, qty, trade_id, symbol, side,
                                       instrument, exchange))
    if ftype == 2 or ftype == 3:
        if size < BOOK_HEADER_LEN:
            raise Damage("malformed_record", where)
        (ts, recv, seq, symbol, bids, asks, htype, instrument, exchange,
         _pad) = S_BOOK.unpack_from(buf, p)
        if BOOK_HEADER_LEN + (bids + asks) * BOOK_LEVEL_LEN != size:
            raise Damage("malformed_record", where)
        # The header's type byte: 0 or 2 for a snapshot, 1 or 3 for a delta
        # (flox writes 0/1, the spec says 2/3); the frame type decides.
        if ftype == 2:
            if htype not in (0, 2):
                raise Damage("malformed_record", where)
            name = "book_snapshot"
        else:
            if htype not in (1, 3):
                raise Damage("malformed_record", where)
            name = "book_delta"
        lv = p + BOOK_HEADER_LEN
        return ('{"type":"%s","exchange_ts_ns":%d,"recv_ts_ns":%d,"seq":%d,'
                '"symbol_id":%d,"header_type":%d,"instrument":%d,"exchange_id":%d,'
                '"bids":%s,"asks":%s}' % (name, ts, recv, seq, symbol, htype, instrument,
                                          exchange, levels_json(buf, lv, bids),
                                          levels_json(buf, lv + bids * BOOK_LEVEL_LEN, asks)))
    if ftype == 4:
        if size != OPTION_QUOTE_LEN:
            raise Damage("malformed_record", where)
        v = S_OPTION.unpack_from(buf, p)
        return ('{"type":"option_quote","exchange_ts_ns":%d,"recv_ts_ns":%d,'
                '"mark_price_raw":%d,"index_price_raw":%d,"underlying_price_raw":%d,'
                '"iv_raw":%d,"bid_price_raw":%d,"ask_price_raw":%d,"bid_size_raw":%d,'
                '"ask_size_raw":%d,"bid_iv_raw":%d,"ask_iv_raw":%d,'
                '"open_interest_raw":%d,"symbol_id":%d,"instrument":%d,'
                '"exchange_id":%d}' % (v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
                                       v[8], v[9], v[10], v[11], v[12], v[13], v[14],
                                       v[16]))
    if ftype == 5:
        if size < POOL_HEADER_LEN:
            raise Damage("malformed_record", where)
        (ts, recv, symbol, plen, sub_type, venue, exchange,
         _pad) = S_POOL.unpack_from(buf, p)
        if plen != size - POOL_HEADER_LEN:
            raise Damage("malformed_record", where)
        body = bytes(buf[p + POOL_HEADER_LEN:p + size]).hex()
        return ('{"type":"pool_state","exchange_ts_ns":%d,"recv_ts_ns":%d,"symbol_id":%d,'
                '"sub_type":%d,"venue":%d,"exchange_id":%d,"payload_hex":"%s"}'
                % (ts, recv, symbol, sub_type, venue, exchange, body))
    raise Damage("unknown_record_type", where)


KNOWN_TYPES = (1, 2, 3, 4, 5)


def read_frame(buf, pos, end, where):
    """Check the frame whose header is at buf[pos]; the frame stream ends at
    `end`. Returns (json_line, next_pos). Errors are reported at `where` (the
    frame's own offset, or the offset of the compressed block holding it)."""
    if end - pos < FRAME_HEADER_LEN:
        raise Damage("truncated", where)
    size, crc, ftype, rec_version, fflags = S_FRAME.unpack_from(buf, pos)
    p = pos + FRAME_HEADER_LEN
    if size > end - p:
        raise Damage("truncated", where)
    if rec_version != 1:
        raise Damage("unsupported_record_version", where)
    if fflags != 0:
        raise Damage("frame_flags_nonzero", where)
    if zlib.crc32(buf[p:p + size]) & 0xFFFFFFFF != crc:
        raise Damage("crc_mismatch", where)
    if ftype not in KNOWN_TYPES:
        raise Damage("unknown_record_type", where)
    return decode_record(ftype, buf, p, size, where), p + size


# --------------------------------------------------------------------------
# LZ4 block format (raw blocks, no frame wrapper)


def lz4_decompress(src, original_size):
    """Decode one raw LZ4 block that must produce exactly original_size bytes.
    Returns the bytes, or None if the block is invalid."""
    n = len(src)
    if n == 0:
        return None
    if original_size > LZ4_MAX_RATIO * n + 64:
        return None
    out = bytearray()
    i = 0
    while True:
        if i >= n:
            return None  # a sequence must start with a token
        token = src[i]
        i += 1
        run = token >> 4
        if run == 15:
            while True:
                if i >= n:
                    return None
                b = src[i]
                i += 1
                run += b
                if b != 255:
                    break
        if run:
            if run > n - i or len(out) + run > original_size:
                return None
            out += src[i:i + run]
            i += run
        if i == n:
            break  # the last sequence carries literals only
        if n - i < 2:
            return None
        dist = src[i] | (src[i + 1] << 8)
        i += 2
        have = len(out)
        if dist == 0 or dist > have:
            return None
        mlen = token & 15
        if mlen == 15:
            while True:
                if i >= n:
                    return None
                b = src[i]
                i += 1
                mlen += b
                if b != 255:
                    break
        mlen += 4
        if have + mlen > original_size:
            return None
        start = have - dist
        if mlen <= dist:
            out += out[start:start + mlen]
        else:
            pattern = bytes(out[start:])
            out += (pattern * (mlen // dist + 1))[:mlen]
    if len(out) != original_size:
        return None
    return out


# --------------------------------------------------------------------------
# Reading

# Most bytes a frame whose writer died before storing its size may span in a
# zero tail (see zero_tail).
UNPUBLISHED_MAX = 64 << 10


def zero_tail(rest):
    """True if the frame stream from here on is the zero-filled end of a file
    whose writer stopped (preallocated, or a journal): a frame size of 0 and
    zeros after it, but for one frame written all but its size (header fields
    as an encoder writes them, or still zero) within UNPUBLISHED_MAX bytes.
    An uncompressed frame that fails its checks there is `truncated`."""
    if len(rest) < 4 or rest[:4] != b"\0\0\0\0":
        return False
    last = len(rest.rstrip(b"\0")) - 1
    if last < 0:
        return True
    if len(rest) < FRAME_HEADER_LEN:
        return False
    _size, _crc, ftype, rec_version, fflags = S_FRAME.unpack_from(rest, 0)
    return (rec_version in (0, 1) and fflags == 0
            and (ftype == 0 or ftype in KNOWN_TYPES)
            and last < FRAME_HEADER_LEN + UNPUBLISHED_MAX)


def read_events(data, info, emit):
    """Decode the frame area, calling emit(line) per event; raises Damage."""
    end = info.frames_end
    pos = SEGMENT_HEADER_LEN
    lost = info.index_lost
    if not info.compressed:
        while pos < end:
            if lost and is_complete_trailer(data, pos, end):
                return
            try:
                line, nxt = read_frame(data, pos, end, pos)
            except Damage as d:
                if d.offset == pos and zero_tail(data[pos:end]):
                    raise Damage("truncated", pos)
                raise
            emit(line)
            pos = nxt
        return
    while pos < end:
        if lost and is_complete_trailer(data, pos, end):
            return
        block_at = pos
        if end - pos < BLOCK_HEADER_LEN:
            raise Damage("truncated", block_at)
        magic, csize, osize, count, _bflags = S_BLOCK.unpack_from(data, pos)
        if magic != MAGIC_BLOCK:
            raise Damage("bad_block_magic", block_at)
        body = pos + BLOCK_HEADER_LEN
        if csize > end - body:
            raise Damage("truncated", block_at)
        frames = lz4_decompress(data[body:body + csize], osize)
        if frames is None:
            raise Damage("decompression_failed", block_at)
        fpos = 0
        seen = 0
        while fpos < osize:
            line, fpos = read_frame(frames, fpos, osize, block_at)
            seen += 1
            emit(line)
        if seen != count:
            raise Damage("malformed_record", block_at)
        pos = body + csize


# --------------------------------------------------------------------------
# Index check


def sound_frame_at(data, pos, end):
    """Next frame offset if a well-formed frame (header, payload inside the
    frame area, rec_version 1, zero flags, known type, matching CRC) starts at
    pos, else None."""
    if pos < SEGMENT_HEADER_LEN or end - pos < FRAME_HEADER_LEN:
        return None
    size, crc, ftype, rec_version, fflags = S_FRAME.unpack_from(data, pos)
    p = pos + FRAME_HEADER_LEN
    if size > end - p or rec_version != 1 or fflags != 0 or ftype not in KNOWN_TYPES:
        return None
    if zlib.crc32(data[p:p + size]) & 0xFFFFFFFF != crc:
        return None
    return p + size


def sound_block_at(data, pos, end):
    """Next block offset if a plausible block header (FBLK, payload inside the
    frame area, original_size within the LZ4 expansion limit) is at pos."""
    if pos < SEGMENT_HEADER_LEN or end - pos < BLOCK_HEADER_LEN:
        return None
    magic, csize, osize, _count, _bflags = S_BLOCK.unpack_from(data, pos)
    body = pos + BLOCK_HEADER_LEN
    if magic != MAGIC_BLOCK or csize > end - body or csize == 0:
        return None
    if osize > LZ4_MAX_RATIO * csize + 64:
        return None
    return body + csize


def check_index(data, info):
    """Returns None if the index is sound (or absent), else the error kind."""
    if not info.flags & FLAG_HAS_INDEX:
        return None
    off = info.index_offset
    if off < SEGMENT_HEADER_LEN or off > len(data) or len(data) - off < INDEX_HEADER_LEN:
        return "bad_index"
    magic, version, _interval, count, crc, first_ts, last_ts = S_INDEX.unpack_from(data, off)
    if magic != MAGIC_INDEX or version != 1:
        return "bad_index"
    entries_at = off + INDEX_HEADER_LEN
    if count * INDEX_ENTRY_LEN > len(data) - entries_at:
        return "bad_index"
    entries = data[entries_at:entries_at + count * INDEX_ENTRY_LEN]
    if zlib.crc32(entries) & 0xFFFFFFFF != crc:
        return "index_crc_mismatch"
    rows = list(S_ENTRY.iter_unpack(entries))
    if rows and (first_ts != rows[0][0] or last_ts != rows[-1][0]):
        return "bad_index"

    # Every entry must point at a frame header (block header if compressed) in
    # the frame area [64, index_offset), in file order. The chain of headers
    # from offset 64 is followed while it is sound; an entry the chain reaches
    # must sit exactly on a header. Past damage the chain cannot cross (a
    # broken frame is the reader's business, not the index's), an entry must
    # itself point at a well-formed frame/block; the chain resumes there.
    end = off
    step = sound_block_at if info.compressed else sound_frame_at
    pos = SEGMENT_HEADER_LEN
    chain = True
    prev = None
    for ts, target in rows:
        if target < SEGMENT_HEADER_LEN or target >= end:
            return "bad_index"
        if prev is not None and target <= prev:
            return "bad_index"
        prev = target
        while chain and pos < target:
            nxt = step(data, pos, end)
            if nxt is None:
                chain = False
            else:
                pos = nxt
        if chain and pos != target:
            return "bad_index"  # points inside a sound frame or block
        if not chain:
            if step(data, target, end) is None:
                return "bad_index"
            pos = target
            chain = True
        if not info.compressed:
            # An uncompressed entry carries its frame's exchange_ts_ns. (An LZ4
            # entry carries the first timestamp handed to the writer for the
            # block, before its in-block sort: nothing to compare cheaply.)
            p = target + FRAME_HEADER_LEN
            if end - p < 8 or S_I64.unpack_from(data, p)[0] != ts:
                return "bad_index"
    return None


# --------------------------------------------------------------------------
# Command line


def usage(msg):
    sys.stderr.write("floxlog_reader.py: %s\n"
                     "usage: floxlog_reader.py [--index] SEGMENT\n" % msg)
    sys.exit(2)


def fail(kind, offset, out_lines):
    write_out(out_lines)
    try:
        sys.stdout.flush()
    except Exception:
        pass
    sys.stderr.write("error %s %d\n" % (kind, offset))
    sys.stderr.flush()
    sys.exit(1)


def write_out(lines):
    if lines:
        sys.stdout.write("\n".join(lines))
        sys.stdout.write("\n")
        del lines[:]


def tape_segments(d):
    """The segment files of tape directory d in listing order, and the names
    manifest.json lists that are missing: manifest order (spec layout), then
    unlisted segment files; without a manifest, *.floxlog by name."""
    import json
    import os
    import re
    names = sorted(n for n in os.listdir(d)
                   if n.endswith(".floxlog") or re.match(r"^[a-z]+-[0-9]{6,}\.bin$", n))
    mp = os.path.join(d, "manifest.json")
    if not os.path.isfile(mp):
        return [os.path.join(d, n) for n in names], []
    with open(mp) as f:
        m = json.load(f)
    if m.get("format_version") != 1:
        raise Damage("unsupported_version", 0)
    listed = [s["name"] for s in m.get("segments", [])]
    missing = [n for n in listed if not os.path.isfile(os.path.join(d, n))]
    order = [n for n in listed if n not in missing] + [n for n in names if n not in listed]
    return [os.path.join(d, n) for n in order], missing


def read_tape(d):
    """Prints the events of tape directory d in time order (stable: listing
    order, then file position); returns the exit status."""
    import json
    segs, missing = tape_segments(d)
    damaged = []
    keyed = []
    for si, p in enumerate(segs):
        with open(p, "rb") as f:
            data = f.read()
        lines = []
        try:
            read_events(data, parse_segment_header(data), lines.append)
        except Damage as dmg:
            sys.stderr.write("%s: damaged\n" % p)
            damaged.append("error %s %d" % (dmg.kind, dmg.offset))
        for pos, line in enumerate(lines):
            keyed.append((json.loads(line)["exchange_ts_ns"], si, pos, line))
    keyed.sort(key=lambda k: k[:3])
    write_out([k[3] for k in keyed])
    # The kit's line comes last: `error <kind> <file name>` for a listed
    # segment that is missing (a damaged one had `error <kind> <offset>`).
    for n in missing:
        sys.stderr.write("floxlog_reader.py: %s: listed segment %s missing\n" % (d, n))
    for line in damaged:
        sys.stderr.write(line + "\n")
    for n in missing:
        sys.stderr.write("error missing_segment %s\n" % n)
    return 1 if missing or damaged else 0


def main(argv):
    index_mode = False
    path = None
    if argv[:1] == ["--tape"] and len(argv) == 2:
        return read_tape(argv[1])
    for a in argv:
        if a == "--index":
            index_mode = True
        elif a in ("-h", "--help"):
            sys.stdout.write(__doc__)
            return 0
        elif a.startswith("-") and a != "-":
            usage("unknown option %s" % a)
        elif path is None:
            path = a
        else:
            usage("more than one segment given")
    if path is None:
        usage("no segment given")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (OSError, IOError) as e:
        sys.stderr.write("floxlog_reader.py: cannot read %s: %s\n" % (path, e))
        sys.stderr.write("error io 0\n")
        return 2

    lines = []
    if index_mode:
        try:
            info = parse_segment_header(data)
        except Damage as d:
            sys.stdout.write("index_error %s\n" % d.kind)
            return 0
    try:
        info = parse_segment_header(data)
        if index_mode:
            kind = check_index(data, info)
            sys.stdout.write("index ok\n" if kind is None else "index_error %s\n" % kind)
            return 0

        def emit(line):
            lines.append(line)
            if len(lines) >= 4096:
                write_out(lines)

        read_events(data, info, emit)
    except Damage as d:
        fail(d.kind, d.offset, lines)
    except MemoryError:
        fail("decompression_failed" if not index_mode else "bad_index", 0, lines)
    write_out(lines)
    return 0


if __name__ == "__main__":
    try:
        status = main(sys.argv[1:])
        sys.stdout.flush()
    except BrokenPipeError:
        status = 1
    except SystemExit:
        raise
    except Exception as e:  # never a traceback on hostile input
        sys.stdout.flush()
        sys.stderr.write("floxlog_reader.py: internal error: %r\n" % (e,))
        sys.stderr.write("error malformed_record 0\n")
        status = 1
    sys.exit(status)
