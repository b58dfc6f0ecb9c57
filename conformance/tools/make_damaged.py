#!/usr/bin/env python3
"""Deterministic generator of the corpus's damaged segments and header oddities.

    python3 conformance/tools/make_damaged.py [CORPUS]      (default: conformance/)

Every case is made from a segment the flox reference wrote (cases/*/segments/),
by the edit its entry below describes; nothing is random, so running it again
gives the same bytes. It writes:

  corrupt/<name>/segment.floxlog, case.json    damage a strict reader must report
  cases/<name>/segments/, expected.jsonl,      segments a reader must accept
    case.json                                  (read-only: no writer input)

adds `source` (the case a damaged segment was made from) to the older
corrupt/ cases, and rewrites SHA256SUMS over the whole corpus. The expected
outcome of each case is written here from the spec's rules and docs/format.md
(order of checks); floxlog and the independent Python reader must both give it
(floxlog-cli/tests/conformance_kit.rs runs both over every case).

Standard library only; it shares no code with either reader.
"""

import hashlib
import json
import os
import struct
import sys
import zlib

SEG = 64
FRAME = 12
BLOCK = 16
IDX = 32
ENTRY = 16


def crc(b):
    return zlib.crc32(bytes(b)) & 0xFFFFFFFF


class Seg(object):
    """A reference segment and the offsets of its structures."""

    def __init__(self, root, case):
        self.case = case
        d = os.path.join(root, case, "segments")
        files = sorted(os.listdir(d))
        assert len(files) == 1, case
        with open(os.path.join(d, files[0]), "rb") as f:
            self.data = bytearray(f.read())
        with open(os.path.join(root, case, "expected.jsonl")) as f:
            self.events = [l for l in f.read().splitlines() if l.strip()]
        flags = self.data[6]
        self.compressed = bool(flags & 2)
        self.index_offset = struct.unpack_from("<Q", self.data, 40)[0] if flags & 1 else 0
        end = self.index_offset or len(self.data)
        self.frames = []  # uncompressed: frame offsets
        self.blocks = []  # compressed: (offset, csize, osize, count)
        pos = SEG
        while pos < end:
            if self.compressed:
                _m, cs, os_, n, _f = struct.unpack_from("<4sIIHH", self.data, pos)
                self.blocks.append((pos, cs, os_, n))
                pos += BLOCK + cs
            else:
                self.frames.append(pos)
                pos += FRAME + struct.unpack_from("<I", self.data, pos)[0]

    def copy(self):
        return bytearray(self.data)

    def frame_type(self, k):
        return self.data[self.frames[k] + 8]

    def first_frame_of_type(self, types, after=0):
        for k in range(after, len(self.frames)):
            if self.frame_type(k) in types:
                return k
        raise AssertionError("no frame of type %r in %s" % (types, self.case))

    def events_before_block(self, b):
        return sum(n for (_o, _c, _s, n) in self.blocks[:b])


def put(b, fmt, at, *v):
    struct.pack_into(fmt, b, at, *v)


def refresh_crc(b, at):
    """Recomputes the CRC of the frame at `at` (its payload changed on purpose)."""
    size = struct.unpack_from("<I", b, at)[0]
    put(b, "<I", at + 4, crc(b[at + FRAME:at + FRAME + size]))


def refresh_index_crc(b, off):
    n = struct.unpack_from("<I", b, off + 8)[0]
    put(b, "<I", off + 12, crc(b[off + IDX:off + IDX + n * ENTRY]))


def placeholder(b):
    """The header a writer leaves until it closes the segment: no counts, no
    index (what a crash leaves)."""
    put(b, "<B", 6, b[6] & ~1 & 0xFF)
    put(b, "<qqIIQ", 16, 0, 0, 0, 0, 0)


def drop_index(b, s):
    """The frame area alone, under a placeholder header."""
    del b[s.index_offset:]
    placeholder(b)


def lz4_literals(raw):
    """`raw` as one valid LZ4 block of literals only (no matches)."""
    n = len(raw)
    if n < 15:
        return bytes([n << 4]) + bytes(raw)
    out = bytearray([0xF0])
    rest = n - 15
    while rest >= 255:
        out.append(255)
        rest -= 255
    out.append(rest)
    return bytes(out) + bytes(raw)


def first_match_offset(src):
    """(position of the first match's 2-byte offset, bytes decoded before it)."""
    i = 0
    produced = 0
    while True:
        t = src[i]
        i += 1
        run = t >> 4
        if run == 15:
            while True:
                x = src[i]
                i += 1
                run += x
                if x != 255:
                    break
        i += run
        produced += run
        if i >= len(src):
            raise AssertionError("no match in block")
        dist = src[i] | src[i + 1] << 8
        if dist >= 2:
            return i, produced, dist
        i += 2
        m = t & 15
        if m == 15:
            while True:
                x = src[i]
                i += 1
                m += x
                if x != 255:
                    break
        produced += m + 4


def rebuild_block(b, s, k, edit):
    """Block k of LZ4 segment `b` decompressed (from the reference's frames),
    passed to edit(frames) -> (frames, event_count), and stored back as a
    literal-only block; the blocks after it move. Returns the block offset."""
    off, cs, osz, n = s.blocks[k]
    frames = bytearray(block_frames(s, k))
    frames, n2 = edit(frames, n)
    body = lz4_literals(frames)
    head = struct.pack("<4sIIHH", b"FBLK", len(body), len(frames), n2, 0)
    b[off:off + BLOCK + cs] = head + body
    if b[6] & 1:
        # The index is left behind: dropped, placeholder header (a crash).
        placeholder(b)
        nxt = off + BLOCK + len(body) + sum(BLOCK + c for (_o, c, _s, _n) in s.blocks[k + 1:])
        del b[nxt:]
    return off


_DECODED = {}


def block_frames(s, k):
    """The decoded frames of block k (decoded by a tiny LZ4 decoder here)."""
    key = (s.case, k)
    if key not in _DECODED:
        off, cs, osz, _n = s.blocks[k]
        _DECODED[key] = lz4_block_decode(bytes(s.data[off + BLOCK:off + BLOCK + cs]), osz)
    return _DECODED[key]


def lz4_block_decode(src, osz):
    out = bytearray()
    i = 0
    n = len(src)
    while True:
        t = src[i]
        i += 1
        run = t >> 4
        if run == 15:
            while True:
                x = src[i]
                i += 1
                run += x
                if x != 255:
                    break
        out += src[i:i + run]
        i += run
        if i >= n:
            break
        dist = src[i] | src[i + 1] << 8
        i += 2
        m = t & 15
        if m == 15:
            while True:
                x = src[i]
                i += 1
                m += x
                if x != 255:
                    break
        m += 4
        for _ in range(m):
            out.append(out[-dist])
    assert len(out) == osz
    return out


# --------------------------------------------------------------------------
# The cases. Each returns (bytes, expect) where expect is the case.json
# `expect` object, or ("ok", bytes) for a segment a reader must accept.


def hdr(name, src, desc, edit, expect):
    return (name, src, desc, edit, expect)


def err(events, kind, offset):
    return {"events": events, "error": kind, "error_offset": offset}


def ixerr(events, kind):
    return {"events": events, "index_error": kind}


BOOKS = "cases/books-mixed"
T7 = "cases/trades-7"
T10K = "cases/trades-10k"
EXT = "cases/extensions"
LZ = "cases/lz4-extensions"
LZP = "cases/lz4-partial-block"


def cases(S):
    bm, t7, ext, lz, lzp = S[BOOKS], S[T7], S[EXT], S[LZ], S[LZP]
    out = []
    add = out.append

    # --- segment header: one bad field, and which check wins ---
    def e_unknown_compression(b):
        b[48] = 2
    add(("unknown-compression", T7, "Compression byte 2 (no 1.0 codec).",
         e_unknown_compression, err(0, "unknown_compression", 0)))

    def e_compression_disagrees(b):
        b[48] = 0
    add(("compression-disagrees", LZP, "Compressed flag set, compression byte 0 (none).",
         e_compression_disagrees, err(0, "unknown_compression", 0)))

    def e_magic_and_version(b):
        b[0:4] = b"XLOF"
        put(b, "<H", 4, 2)
    add(("order-magic-before-version", T7, "Bad magic and version 2: the magic is checked first.",
         e_magic_and_version, err(0, "bad_magic", 0)))

    def e_version_and_flag(b):
        put(b, "<H", 4, 2)
        b[6] |= 0x40
    add(("order-version-before-flags", T7, "Version 2 and an unknown flag: the version is checked first.",
         e_version_and_flag, err(0, "unsupported_version", 0)))

    def e_flag_and_encrypted(b):
        b[6] |= 0x44
    add(("order-unknown-flag-before-encrypted", T7,
         "An unknown flag and the Encrypted flag: unknown flags are checked first.",
         e_flag_and_encrypted, err(0, "unknown_flags", 0)))

    def e_encrypted_and_reserved(b):
        b[6] |= 0x04
        b[60] = 1
    add(("order-encrypted-before-reserved", T7,
         "Encrypted flag and a reserved byte set: Encrypted is checked first.",
         e_encrypted_and_reserved, err(0, "encrypted", 0)))

    def e_reserved_and_compression(b):
        b[49] = 1
        b[48] = 7
    add(("order-reserved-before-compression", T7,
         "Reserved byte 49 set and compression byte 7: reserved bytes are checked first.",
         e_reserved_and_compression, err(0, "reserved_nonzero", 0)))

    def e_empty(b):
        del b[:]
    add(("empty-file", T7, "A file of 0 bytes.", e_empty, err(0, "truncated", 0)))

    def e_header_only_cut(b):
        del b[40:]
    add(("cut-in-header", T7, "The file ends 40 bytes into the segment header.",
         e_header_only_cut, err(0, "truncated", 0)))

    # --- frames: truncation, zero headers, order of frame checks ---
    k = 100
    at = bm.frames[k]

    def e_cut_frame_header(b):
        drop_index(b, bm)
        del b[at + 5:]
    add(("cut-in-frame-header", BOOKS,
         "Crash-ended (placeholder header, no index): the file ends 5 bytes into frame 100's header.",
         e_cut_frame_header, err(k, "truncated", at)))

    def e_cut_payload(b):
        drop_index(b, bm)
        del b[at + FRAME + 3:]
    add(("cut-in-frame-payload", BOOKS,
         "Crash-ended (placeholder header, no index): the file ends 3 bytes into frame 100's payload.",
         e_cut_payload, err(k, "truncated", at)))

    def e_zero_tail(b):
        end = bm.index_offset
        b[at:end] = bytes(end - at)
        drop_index(b, bm)
    add(("zero-tail", BOOKS,
         "Crash-ended preallocated file: from frame 100 on, the frame area is zeros (placeholder header).",
         e_zero_tail, err(k, "truncated", at)))

    t10k = S[T10K]
    at10 = t10k.frames[k]

    def e_zero_header_mid(b):
        b[at10:at10 + FRAME] = bytes(FRAME)
    add(("zero-frame-header", T10K,
         "Frame 100's header is all zeros and frames follow for more than 64 KiB: not a zero tail, "
         "so its rec_version 0 fails.",
         e_zero_header_mid, err(k, "unsupported_record_version", at10)))

    def e_zero_header_near_end(b):
        b[at:at + FRAME] = bytes(FRAME)
    add(("zero-frame-header-near-end", BOOKS,
         "Frame 100's header is all zeros and the non-zero bytes after it end within 64 KiB: "
         "read as the zero tail of a writer that stopped (truncated), not as a bad frame.",
         e_zero_header_near_end, err(k, "truncated", at)))

    def e_version_and_crc(b):
        b[at + 9] = 2
        b[at + FRAME + 20] ^= 1
    add(("order-rec-version-before-crc", BOOKS,
         "Frame 100: rec_version 2 and a payload byte flipped: rec_version is checked first.",
         e_version_and_crc, err(k, "unsupported_record_version", at)))

    def e_flags_and_crc(b):
        b[at + 10] = 1
        b[at + FRAME + 20] ^= 1
    add(("order-frame-flags-before-crc", BOOKS,
         "Frame 100: flags 1 and a payload byte flipped: flags are checked before the CRC.",
         e_flags_and_crc, err(k, "frame_flags_nonzero", at)))

    def e_crc_and_type(b):
        b[at + 8] = 9
        b[at + FRAME + 20] ^= 1
    add(("order-crc-before-type", BOOKS,
         "Frame 100: type 9 and a payload byte flipped: the CRC is checked before the type.",
         e_crc_and_type, err(k, "crc_mismatch", at)))

    def e_size_past_end_and_version(b):
        put(b, "<I", at, 0x7FFFFFF0)
        b[at + 9] = 2
    add(("order-size-before-rec-version", BOOKS,
         "Frame 100: size past the end and rec_version 2: the size is checked first.",
         e_size_past_end_and_version, err(k, "truncated", at)))

    kt = t7.first_frame_of_type((1,), 3)
    at7 = t7.frames[kt]

    def e_trade_short(b):
        # Size 47, CRC over those 47 bytes: the frame is whole, its record is not.
        put(b, "<I", at7, 47)
        refresh_crc(b, at7)
    add(("trade-size-47", T7, "Trade frame 3 declares 47 payload bytes (CRC agrees).",
         e_trade_short, err(kt, "malformed_record", at7)))

    ks = bm.first_frame_of_type((2,))
    ats = bm.frames[ks]

    def e_snapshot_as_delta(b):
        b[ats + FRAME + 32] = 1
        refresh_crc(b, ats)
    add(("book-header-type-contradicts-frame", BOOKS,
         "A snapshot frame whose book header type byte says delta (1); CRC agrees.",
         e_snapshot_as_delta, err(ks, "malformed_record", ats)))

    kp = ext.first_frame_of_type((5,))
    atp = ext.frames[kp]

    def e_pool_len_lie(b):
        n = struct.unpack_from("<I", b, atp + FRAME + 20)[0]
        put(b, "<I", atp + FRAME + 20, n + 1)
        refresh_crc(b, atp)
    add(("pool-payload-len-lie", EXT, "A pool_state record's payload_len is one more than its frame holds (CRC agrees).",
         e_pool_len_lie, err(kp, "malformed_record", atp)))

    ko = ext.first_frame_of_type((4,))
    ato = ext.frames[ko]

    def e_option_short(b):
        put(b, "<I", ato, 104)
        refresh_crc(b, ato)
    add(("option-quote-size-104", EXT, "An option_quote frame declares 104 payload bytes (CRC agrees).",
         e_option_short, err(ko, "malformed_record", ato)))

    # --- LZ4 blocks ---
    blk = 2
    boff = lz.blocks[blk][0]
    before = lz.events_before_block(blk)

    def e_lz4_bad_offset(b):
        pos, produced, _d = first_match_offset(b[boff + BLOCK:boff + BLOCK + lz.blocks[blk][1]])
        put(b, "<H", boff + BLOCK + pos, produced + 1)
    add(("lz4-offset-before-start", LZ,
         "Block 2: the first match's offset points before the start of the output.",
         e_lz4_bad_offset, err(before, "decompression_failed", boff)))

    def e_lz4_original_smaller(b):
        put(b, "<I", boff + 8, lz.blocks[blk][2] - 1)
    add(("lz4-original-size-short", LZ, "Block 2: original_size one byte less than the data decodes to.",
         e_lz4_original_smaller, err(before, "decompression_failed", boff)))

    def e_lz4_zero_csize(b):
        cs = lz.blocks[blk][1]
        put(b, "<I", boff + 4, 0)
        del b[boff + BLOCK:boff + BLOCK + cs]
        placeholder(b)
        del b[boff + BLOCK:]
    add(("lz4-empty-block", LZ, "Block 2 holds 0 compressed bytes for a non-empty original_size (crash-ended, no index).",
         e_lz4_zero_csize, err(before, "decompression_failed", boff)))

    def e_lz4_cut_block_header(b):
        placeholder(b)
        del b[boff + 9:]
    add(("lz4-cut-in-block-header", LZ, "Crash-ended (placeholder header): the file ends 9 bytes into block 2's header.",
         e_lz4_cut_block_header, err(before, "truncated", boff)))

    def e_lz4_cut_block_body(b):
        placeholder(b)
        del b[boff + BLOCK + 10:]
    add(("lz4-cut-in-block-data", LZ, "Crash-ended (placeholder header): the file ends 10 bytes into block 2's data.",
         e_lz4_cut_block_body, err(before, "truncated", boff)))

    def frame_offsets(frames):
        offs, p = [], 0
        while p < len(frames):
            offs.append(p)
            p += FRAME + struct.unpack_from("<I", frames, p)[0]
        return offs

    inner = 3

    def e_lz4_crc_inside(b):
        def edit(frames, n):
            p = frame_offsets(frames)[inner]
            frames[p + FRAME + 9] ^= 1
            return frames, n
        rebuild_block(b, lz, blk, edit)
    add(("lz4-crc-inside-block", LZ,
         "Block 2 (re-stored as literals): its frame 3's payload has a flipped bit; the events before it in the block are read.",
         e_lz4_crc_inside, err(before + inner, "crc_mismatch", boff)))

    def e_lz4_version_inside(b):
        def edit(frames, n):
            p = frame_offsets(frames)[inner]
            frames[p + 9] = 2
            return frames, n
        rebuild_block(b, lz, blk, edit)
    add(("lz4-rec-version-inside-block", LZ,
         "Block 2 (re-stored as literals): its frame 3 has rec_version 2.",
         e_lz4_version_inside, err(before + inner, "unsupported_record_version", boff)))

    def e_lz4_frame_cut_inside(b):
        def edit(frames, n):
            p = frame_offsets(frames)[inner]
            return frames[:p + FRAME + 4], n
        rebuild_block(b, lz, blk, edit)
    add(("lz4-frame-cut-inside-block", LZ,
         "Block 2 (re-stored as literals) decodes to frames that stop 4 bytes into frame 3's payload.",
         e_lz4_frame_cut_inside, err(before + inner, "truncated", boff)))

    def e_lz4_count_lie(b):
        def edit(frames, n):
            return frames, n + 1
        rebuild_block(b, lz, blk, edit)
    nblk = lz.blocks[blk][3]
    add(("lz4-event-count-lie", LZ,
         "Block 2 (re-stored as literals) says it holds one frame more than it does.",
         e_lz4_count_lie, err(before + nblk, "malformed_record", boff)))

    # --- index trailers (books-mixed: uncompressed, an entry every 50 frames) ---
    io = bm.index_offset
    n_ev = len(bm.events)

    def e_ix_version(b):
        put(b, "<H", io + 4, 2)
    add(("index-version-2", BOOKS, "The index trailer's version is 2.", e_ix_version, ixerr(n_ev, "bad_index")))

    def e_ix_count(b):
        put(b, "<I", io + 8, 0x10000000)
    add(("index-count-past-end", BOOKS, "entry_count runs the entries past the end of the file.",
         e_ix_count, ixerr(n_ev, "bad_index")))

    def e_ix_first_ts(b):
        v = struct.unpack_from("<q", b, io + 16)[0]
        put(b, "<q", io + 16, v - 1)
    add(("index-first-ts-mismatch", BOOKS, "The index header's first_ts_ns is not entry 0's timestamp.",
         e_ix_first_ts, ixerr(n_ev, "bad_index")))

    def e_ix_last_ts(b):
        v = struct.unpack_from("<q", b, io + 24)[0]
        put(b, "<q", io + 24, v + 1)
    add(("index-last-ts-mismatch", BOOKS, "The index header's last_ts_ns is not the last entry's timestamp.",
         e_ix_last_ts, ixerr(n_ev, "bad_index")))

    def e_ix_inside_frame(b):
        e1 = io + IDX + ENTRY
        put(b, "<Q", e1 + 8, struct.unpack_from("<Q", b, e1 + 8)[0] + 4)
        refresh_index_crc(b, io)
    add(("index-entry-inside-frame", BOOKS, "Index entry 1 points 4 bytes into a frame (CRC agrees).",
         e_ix_inside_frame, ixerr(n_ev, "bad_index")))

    def e_ix_past_area(b):
        e1 = io + IDX + ENTRY
        put(b, "<Q", e1 + 8, io)
        refresh_index_crc(b, io)
    add(("index-entry-past-frames", BOOKS, "Index entry 1 points at the index itself (CRC agrees).",
         e_ix_past_area, ixerr(n_ev, "bad_index")))

    def e_ix_entry_ts(b):
        e1 = io + IDX + ENTRY
        put(b, "<q", e1, struct.unpack_from("<q", b, e1)[0] + 1)
        refresh_index_crc(b, io)
    add(("index-entry-timestamp", BOOKS,
         "Index entry 1's timestamp is not its frame's exchange_ts_ns (CRC agrees).",
         e_ix_entry_ts, ixerr(n_ev, "bad_index")))

    def e_ix_in_header(b):
        put(b, "<Q", 40, 10)
    add(("index-offset-in-header", BOOKS,
         "index_offset 10 (inside the segment header): the frames read to the trailer, the index is bad.",
         e_ix_in_header, ixerr(n_ev, "bad_index")))

    lio = lz.index_offset

    def e_lz_ix_not_block(b):
        e1 = lio + IDX + ENTRY
        put(b, "<Q", e1 + 8, struct.unpack_from("<Q", b, e1 + 8)[0] + 16)
        refresh_index_crc(b, lio)
    add(("lz4-index-entry-not-a-block", LZ, "LZ4 index entry 1 points into its block's data (CRC agrees).",
         e_lz_ix_not_block, ixerr(len(lz.events), "bad_index")))

    def e_lz_ix_crc(b):
        b[lio + IDX + 3] ^= 0x10
    add(("lz4-index-crc", LZ, "An LZ4 segment's index entries do not match the index CRC.",
         e_lz_ix_crc, ixerr(len(lz.events), "index_crc_mismatch")))

    return out


def oddities(S):
    """Segments a reader must accept though they look odd."""
    bm, t7 = S[BOOKS], S[T7]
    out = []

    def e_symbols(b):
        put(b, "<I", 36, 5)
    out.append(("odd-symbol-count", T7,
                "symbol_count 5 (flox always writes 0; the field is informative).", e_symbols))

    def e_sorted(b):
        b[6] |= 0x08
    out.append(("odd-sorted-uncompressed", T7,
                "The Sorted flag on an uncompressed segment whose events are in order.", e_sorted))

    def e_count(b):
        put(b, "<I", 32, 3)
    out.append(("odd-event-count", T7,
                "event_count 3 for 7 frames: the header's count is informative, the frames are read.", e_count))

    def e_crash(b):
        drop_index(b, t7)
    out.append(("odd-crash-at-frame-boundary", T7,
                "A writer stopped between frames: placeholder header (no counts, no index), every frame whole.",
                e_crash))

    ks = bm.first_frame_of_type((2, 3))

    def e_pad(b):
        at = bm.frames[ks]
        b[at + FRAME + 36:at + FRAME + 40] = b"\x01\x02\x03\x04"
        refresh_crc(b, at)
    out.append(("odd-book-pad-nonzero", BOOKS,
                "A book header's pad bytes are not zero (CRC agrees): pads are not checked.", e_pad))

    lzp = S[LZP]

    def e_block_flags(b):
        put(b, "<H", lzp.blocks[0][0] + 14, 0x8001)
    out.append(("odd-block-flags-nonzero", LZP,
                "An LZ4 block header's reserved flags are not zero: they are not checked.", e_block_flags))

    def e_header_only(b):
        del b[SEG:]
        placeholder(b)
    out.append(("odd-header-only", T7, "A segment header and nothing else: no events.", e_header_only))
    return out


# --------------------------------------------------------------------------


def write(path, data):
    d = os.path.dirname(path)
    if not os.path.isdir(d):
        os.makedirs(d)
    with open(path, "wb") as f:
        f.write(data)


def dump(obj):
    return (json.dumps(obj, indent=2) + "\n").encode()


def longest_prefix_source(root, data, sources):
    def common(seg):
        a, b = data[SEG:], seg.data[SEG:]
        n = 0
        for x, y in zip(a, b):
            if x != y:
                break
            n += 1
        return n
    return max(sorted(sources), key=lambda k: common(sources[k]))


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.abspath(root)
    S = {}
    for c in sorted(os.listdir(os.path.join(root, "cases"))):
        p = "cases/" + c
        segs = os.path.join(root, p, "segments")
        if os.path.isdir(segs) and len(os.listdir(segs)) == 1 and not c.startswith("odd-"):
            S[p] = Seg(root, p)
    made = 0
    for name, src, desc, edit, expect in cases(S):
        b = S[src].copy()
        edit(b)
        d = os.path.join(root, "corrupt", name)
        write(os.path.join(d, "segment.floxlog"), bytes(b))
        write(os.path.join(d, "case.json"), dump({
            "name": name, "description": desc, "source": src,
            "generated_by": "tools/make_damaged.py", "expect": expect}))
        made += 1
    # Pads and block flags: the spec says zero, the readers do not check
    # them; a reader that refuses them is not wrong (recommended tier).
    lenient = ("odd-book-pad-nonzero", "odd-block-flags-nonzero")
    for name, src, desc, edit in oddities(S):
        b = S[src].copy()
        edit(b)
        d = os.path.join(root, "cases", name)
        n = 0 if len(b) == SEG else len(S[src].events)
        write(os.path.join(d, "segments", "segment.floxlog"), bytes(b))
        write(os.path.join(d, "expected.jsonl"),
              "".join(l + "\n" for l in S[src].events[:n]).encode())
        write(os.path.join(d, "case.json"), dump({
            "name": name, "description": desc, "source": src,
            "generated_by": "tools/make_damaged.py", "event_count": n,
            "segments": [{"file": "segment.floxlog", "size": len(b),
                          "sha256": hashlib.sha256(bytes(b)).hexdigest()}]}
            | ({"recommended": ["read"]} if name in lenient else {})))
        made += 1
    # The older damaged segments: name the case each was made from.
    for c in sorted(os.listdir(os.path.join(root, "corrupt"))):
        cj = os.path.join(root, "corrupt", c, "case.json")
        with open(cj) as f:
            v = json.load(f)
        if "source" not in v:
            with open(os.path.join(root, "corrupt", c, "segment.floxlog"), "rb") as f:
                data = f.read()
            v2 = {"name": v["name"], "description": v["description"],
                  "source": longest_prefix_source(root, data, S)}
            v2.update((k, x) for k, x in v.items() if k not in v2)
            write(cj, dump(v2))
    write_sums(root)
    sys.stderr.write("made %d cases; SHA256SUMS rewritten\n" % made)
    return 0


def write_sums(root):
    lines = []
    for top in ("VERSION", "cases", "corrupt", "real", "tapes"):
        p = os.path.join(root, top)
        if os.path.isfile(p):
            files = [top]
        else:
            files = []
            for d, _subdirs, names in os.walk(p):
                for n in names:
                    files.append(os.path.relpath(os.path.join(d, n), root))
        for rel in sorted(files):
            with open(os.path.join(root, rel), "rb") as f:
                lines.append("%s  %s\n" % (hashlib.sha256(f.read()).hexdigest(), rel.replace(os.sep, "/")))
    write(os.path.join(root, "SHA256SUMS"), "".join(lines).encode())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
