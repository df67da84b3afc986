#!/usr/bin/env python3
"""Repeats a segment's PAT and PMT before every low-latency part boundary.

The live demo channel publishes each 2 s segment in 0.4 s parts (and a low-latency stitched
playlist lists the ads and slate so): byte ranges of the file that
start at the first PES packet of the timing stream (video, else audio) presenting at or after each
multiple of 0.4 s (TransportStreamParts in HeadwaterMedia, which also takes in the PSI packets just
before that PES packet). A player that switches rendition in the middle of a segment starts
demuxing at such a part, and an MPEG-TS demuxer needs the PAT and PMT first (hls.js reports
fragParsingError and stalls without them). So a copy of the segment's PAT and PMT packets goes
right before each boundary, with the continuity counters of those PIDs renumbered in order.

Idempotent: a boundary already preceded by a PAT is left alone.

    python3 Public/media-tools/part-headers.py Public/{demo,ads/ad*,slate}/{v0,v1,v2,audio-alt}/seg-*.ts
"""
import sys

PART = 0.4
SIZE = 188


def pid(packet):
    return ((packet[1] & 0x1F) << 8) | packet[2]


def pts_of(packet):
    """The PTS (s) of a PES packet starting in `packet`, or None."""
    if not packet[1] & 0x40:
        return None
    control = (packet[3] >> 4) & 3
    start = 4
    if control & 2:
        start += 1 + packet[4]
    if not control & 1 or start + 14 > SIZE:
        return None
    pes = packet[start:]
    if pes[0:3] != b"\x00\x00\x01" or not pes[7] & 0x80:
        return None
    p = pes[9:14]
    ticks = ((p[0] >> 1) & 7) << 30 | p[1] << 22 | (p[2] >> 1) << 15 | p[3] << 7 | p[4] >> 1
    return ticks / 90000


def pmt_pid(pat):
    start = 5 + pat[4]  # pointer field
    section = pat[start:]
    return ((section[10] & 0x1F) << 8) | section[11]


def stream_pids(pmt):
    start = 5 + pmt[4]
    s = pmt[start:]
    length = ((s[1] & 0x0F) << 8) | s[2]
    info = ((s[10] & 0x0F) << 8) | s[11]
    i = 12 + info
    end = 3 + length - 4
    streams = []
    while i < end:
        kind, es = s[i], ((s[i + 1] & 0x1F) << 8) | s[i + 2]
        streams.append((kind, es))
        i += 5 + (((s[i + 3] & 0x0F) << 8) | s[i + 4])
    return streams


def process(path):
    data = open(path, "rb").read()
    packets = [bytearray(data[i:i + SIZE]) for i in range(0, len(data), SIZE)]
    pat = next(p for p in packets if pid(p) == 0)
    pmt_id = pmt_pid(pat)
    pmt = next(p for p in packets if pid(p) == pmt_id)
    streams = stream_pids(pmt)
    video = [es for kind, es in streams if kind in (0x1B, 0x24)]
    timing = video[0] if video else streams[0][1]
    starts = [(i, pts_of(p)) for i, p in enumerate(packets) if pid(p) == timing and pts_of(p) is not None]
    origin = min(t for _, t in starts)
    boundaries, k = [], 1
    for i, t in starts:
        if t - origin >= k * PART - 1e-6 and i > 2:
            boundaries.append(i)
            while t - origin >= k * PART - 1e-6:
                k += 1
    out = []
    for i, packet in enumerate(packets):
        if i in boundaries and not (out and pid(out[-1]) in (0, pmt_id)):
            out += [bytearray(pat), bytearray(pmt)]
        out.append(packet)
    counters = {}
    for packet in out:
        p = pid(packet)
        if p in (0, pmt_id):
            counters[p] = (counters.get(p, -1) + 1) % 16
            packet[3] = (packet[3] & 0xF0) | counters[p]
    result = b"".join(out)
    if result != data:
        open(path, "wb").write(result)
    return len(boundaries)


for name in sys.argv[1:]:
    print(name, process(name))
