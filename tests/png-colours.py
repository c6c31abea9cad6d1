#!/usr/bin/env python3
"""Reads a PNG (8-bit grey, RGB, RGBA or palette, as gnuplot's png and
pngcairo terminals write them) with the standard library alone and prints
its size and how many pixels carry each colour, most frequent first:

    WIDTHxHEIGHT
    #rrggbb COUNT
    ...

Used by tests/plot-render.sh to check that a drawn plot is not empty and
that its predicted and measured series are drawn in their own colours.
Exit status 2 when the file is not a PNG this reader understands."""
import struct
import sys
import zlib
from collections import Counter


def unfilter(raw, width, height, bpp):
    stride = width * bpp
    out = bytearray()
    prev = bytearray(stride)
    pos = 0
    for _ in range(height):
        ftype = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
            elif ftype != 0:
                raise ValueError("bad filter type %d" % ftype)
        out += line
        prev = line
    return out


def colours(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, palette = 8, b"", None
    width = height = depth = ctype = interlace = None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = [body[i:i + 3] for i in range(0, len(body), 3)]
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if depth != 8 or interlace != 0 or ctype not in (0, 2, 3, 6):
        raise ValueError("unsupported PNG (depth %s, colour type %s)" % (depth, ctype))
    bpp = {0: 1, 2: 3, 3: 1, 6: 4}[ctype]
    pix = unfilter(zlib.decompress(idat), width, height, bpp)
    count = Counter()
    for i in range(0, len(pix), bpp):
        if ctype == 3:
            rgb = palette[pix[i]]
        elif ctype == 0:
            rgb = bytes([pix[i]] * 3)
        else:
            rgb = bytes(pix[i:i + 3])
        count[rgb] += 1
    return width, height, count


def main():
    if len(sys.argv) != 2:
        print("usage: png-colours.py FILE.png", file=sys.stderr)
        return 1
    try:
        width, height, count = colours(sys.argv[1])
    except (OSError, ValueError, zlib.error, struct.error) as e:
        print("%s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 2
    print("%dx%d" % (width, height))
    for rgb, n in count.most_common():
        print("#%02x%02x%02x %d" % (rgb[0], rgb[1], rgb[2], n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
