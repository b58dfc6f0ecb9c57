"""Checks a PNG screenshot has content: at least MIN_COLOURS distinct
colours and MIN_INK of its pixels not white. Stdlib only (zlib); prints
what it counted. Usage: png-check.py FILE [MIN_COLOURS] [MIN_INK]."""

import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"colour type {ctype} depth {depth}"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main():
    path = sys.argv[1]
    min_colours = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    min_ink = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    w, h, bpp, rows = pixels(path)
    colours, ink = set(), 0
    for r in rows:
        for x in range(0, w * bpp, bpp):
            px = r[x:x + 3]
            colours.add(px)
            ink += px != b"\xff\xff\xff"
    share = ink / (w * h)
    print(f"{path}: {w}x{h}, {len(colours)} colours, {share:.1%} not white")
    if len(colours) < min_colours or share < min_ink:
        sys.exit(f"{path}: looks blank (want >= {min_colours} colours, >= {min_ink:.0%} not white)")


main()
