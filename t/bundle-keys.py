#!/usr/bin/env python3
# bundle-keys.py INDEX: the keys of a tensor bundle's index (an SSTable:
# footer, index block, data blocks of prefix-compressed entries), one a
# line, read without gerewrite, so that a test can check what the
# program wrote against a reader that shares none of its code.
import struct
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def block(data, off, size):
    if data[off + size] != 0:
        sys.exit("compressed block at %d: not supported" % off)
    b = data[off:off + size]
    nrestart = struct.unpack_from("<I", b, len(b) - 4)[0]
    end = len(b) - 4 - 4 * nrestart
    i, key = 0, b""
    while i < end:
        shared, i = varint(b, i)
        nonshared, i = varint(b, i)
        vlen, i = varint(b, i)
        key = key[:shared] + b[i:i + nonshared]
        i += nonshared
        yield key, b[i:i + vlen]
        i += vlen


def main():
    data = open(sys.argv[1], "rb").read()
    foot = data[-48:]
    if struct.unpack_from("<Q", foot, 40)[0] != 0xDB4775248B80FB57:
        sys.exit("%s: not an SSTable" % sys.argv[1])
    _, i = varint(foot, 0)
    _, i = varint(foot, i)
    ioff, i = varint(foot, i)
    isize, i = varint(foot, i)
    for _, handle in block(data, ioff, isize):
        off, j = varint(handle, 0)
        size, _ = varint(handle, j)
        for key, _ in block(data, off, size):
            if key:  # the empty key holds the bundle's header
                print(key.decode())


main()
