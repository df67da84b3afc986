#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus: Tests/fuzz-corpus/<target>/ for every headwater-fuzz target.

Usage: python3 Tests/fuzz-corpus/make-seeds.py   (from anywhere; rewrites the seed directories)

The seeds are small valid (and a few nearly valid) inputs the fuzzer mutates from: playlists and
SCTE-35 cues from the test fixtures, configurations from the configuration tests and Config/,
and hand-made HTTP/1 requests, request-targets, ranges and HTTP/2 frame sequences. Each target's
input format is described in Sources/headwater-fuzz/README.md. The result is committed, so a
fuzz run needs nothing but the repository; rerun this after changing it.
"""

import base64
import hashlib
import os
import re
import shutil
import struct

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "Tests", "fuzz-corpus")


def write(target, name, data):
    directory = os.path.join(OUT, target)
    os.makedirs(directory, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def reset(target):
    shutil.rmtree(os.path.join(OUT, target), ignore_errors=True)


# --- playlists: the smaller fixtures of each kind (canonical, tolerated, invalid, vendor, ...) ---

def playlists():
    reset("playlist")
    fixtures = os.path.join(ROOT, "Tests", "HeadwaterHLSTests", "Fixtures")
    total = 0
    for directory, _, files in sorted(os.walk(fixtures)):
        for name in sorted(files):
            path = os.path.join(directory, name)
            if not name.endswith(".m3u8") or os.path.getsize(path) > 3000 or total > 150_000:
                continue
            kind = os.path.relpath(directory, fixtures).replace(os.sep, "-")
            with open(path, "rb") as f:
                data = f.read()
            write("playlist", f"{kind}-{name}", data)
            total += len(data)


# --- SCTE-35: every cue in the tests and fixtures, binary and as text ---

def cues():
    found = set()
    pattern = re.compile(rb'(/DA[A-Za-z0-9+/]{16,}={0,2}|0[xX][Ff][Cc]30[0-9A-Fa-f]{24,}|"[Ff][Cc]30[0-9A-Fa-f]{24,}")')
    for top in ("Tests/HeadwaterSCTE35Tests", "Tests/HeadwaterHLSTests/Fixtures", "Tests/HeadwaterStitchingTests"):
        for directory, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                with open(os.path.join(directory, name), "rb") as f:
                    for match in pattern.findall(f.read()):
                        found.add(match.strip(b'"').decode())
    sections = {}
    for text in sorted(found):
        try:
            if text.startswith("/"):
                data = base64.b64decode(text + "=" * (-len(text) % 4))
            else:
                data = bytes.fromhex(text[2:] if text[:2] in ("0x", "0X") else text)
        except ValueError:
            continue
        if data[:1] == b"\xfc":
            sections[hashlib.sha1(data).hexdigest()[:12]] = (text, data)
    reset("scte35")
    reset("scte35-text")
    for key, (text, data) in sorted(sections.items()):
        write("scte35", f"cue-{key}.bin", data)
        write("scte35-text", f"cue-{key}.txt", text)
    # The other text form of a few, and whitespace around one.
    for key, (text, data) in sorted(sections.items())[:6]:
        other = base64.b64encode(data).decode() if not text.startswith("/") else "0x" + data.hex().upper()
        write("scte35-text", f"cue-{key}-other.txt", other)
    first_key, (first_text, _) = sorted(sections.items())[0]
    write("scte35-text", "cue-padded.txt", f" \t{first_text}\r\n")


# --- headwater.yaml: the shipped file and the configuration tests' documents ---

def configurations():
    reset("config")
    with open(os.path.join(ROOT, "Config", "headwater.yaml"), "rb") as f:
        write("config", "Config-headwater.yaml", f.read())
    tests = os.path.join(ROOT, "Tests", "HeadwaterConfigurationTests")
    count = 0
    for name in sorted(os.listdir(tests)):
        with open(os.path.join(tests, name)) as f:
            source = f.read()
        for block in re.findall(r'"""\n(.*?)\n\s*"""', source, re.S):
            lines = block.split("\n")
            indent = min((len(l) - len(l.lstrip(" ")) for l in lines if l.strip()), default=0)
            text = "\n".join(l[indent:] for l in lines) + "\n"
            if "\\(" in text or len(text) > 4000:
                continue  # Swift interpolation: not the file's text
            count += 1
            write("config", f"{name[:-len('.swift')]}-{count:02}.yaml", text)
    write("config", "anchors.yaml", "x: &a [1, 2]\nchannels:\n  demo: &c\n    source: {type: push}\n  other: *c\n")
    write("config", "flow.yaml", '{server: {listen: "[::1]:8080", threads: 2}, channels: {a: {source: {type: directory, path: d}}}}\n')


# --- HTTP/1: request heads, targets, ranges, and bytes into a connection ---

REQUESTS = {
    "get-playlist": "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip, br;q=0.5\r\nUser-Agent: AppleCoreMedia/1.0\r\n\r\n",
    "head-segment": "HEAD /live/demo/v1/seg7.ts HTTP/1.1\r\nHost: h\r\nRange: bytes=0-99\r\nConnection: keep-alive\r\n\r\n",
    "get-all-fields": "GET /live/demo/master.m3u8?_HLS_msn=7&_HLS_part=0 HTTP/1.1\r\nHost: h\r\nAccept-Encoding: identity\r\n"
    "Range: bytes=-500\r\nAuthorization: Bearer secret\r\nReferer: https://p/\r\nX-Playback-Session-Id: 1234-abcd\r\n"
    "User-Agent: hls.js\r\n\r\n",
    "conditional": "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"v1\", W/\"x\"\r\nIf-Modified-Since: Tue, 14 Nov 2023 22:13:10 GMT\r\n\r\n",
    "if-range": "GET /live/demo/v1/seg7.ts HTTP/1.1\r\nHost: h\r\nRange: bytes=100-\r\nIf-Range: \"seg7\"\r\n\r\n",
    "http10": "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "close": "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    "put-length": "PUT /ingest/demo/v1/seg8.ts HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer secret\r\nContent-Length: 5\r\n\r\nhello",
    "put-chunked": "PUT /ingest/demo/v1.m3u8 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer secret\r\nTransfer-Encoding: chunked\r\n\r\n"
    "7\r\n#EXTM3U\r\n1;ext=1\r\n\n\r\n0\r\nTrailer: x\r\n\r\n",
    "delete": "DELETE /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer secret\r\n\r\n",
    "expect": "POST /ingest/demo/v1/a.ts HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nab",
    "options-star": "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
    "absolute-form": "GET http://h/live/demo/v1.m3u8 HTTP/1.1\r\nHost: h\r\n\r\n",
    "obs-fold": "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n",
    "bare-lf": "GET / HTTP/1.1\nHost: h\n\n",
    "two-lengths": "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    "te-and-length": "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
    "upgrade-h2c": "GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n",
    "ows-values": "GET /api/status HTTP/1.1\r\nHost: h\r\nRange:  \t bytes=1-2 \t\r\nUser-Agent:\r\nreferer:x\r\n\r\n",
    "obs-text": "GET /metrics HTTP/1.1\r\nHost: h\r\nUser-Agent: caf\xc3\xa9 \xff\r\n\r\n",
    "static": "GET /index.html HTTP/1.1\r\nHost: h\r\nAccept-Encoding: *\r\n\r\n",
    "ssai": "GET /ssai/demo/master.m3u8?device=tv&x=%20 HTTP/1.1\r\nHost: h\r\n\r\n",
    "key": "GET /keys/demo/3.key?token=abc HTTP/1.1\r\nHost: h\r\n\r\n",
    "admin": "POST /admin/channels/demo/breaks?duration=30 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\nContent-Length: 0\r\n\r\n",
}


def http1():
    reset("request-head")
    reset("http1")
    for name, text in REQUESTS.items():
        data = text.encode("latin-1")
        write("request-head", name, data)
        write("http1", f"{name}-one-read", b"\x00" + data)
    pipelined = (REQUESTS["get-playlist"] + REQUESTS["head-segment"] + REQUESTS["put-length"] + REQUESTS["conditional"]).encode()
    write("request-head", "pipelined", pipelined)
    write("http1", "pipelined-one-read", b"\x00" + pipelined)
    write("http1", "pipelined-7-byte-reads", b"\x07" + pipelined)
    write("http1", "chunked-3-byte-reads", b"\x03" + REQUESTS["put-chunked"].encode())
    write("http1", "segment-then-more", b"\x00" + (REQUESTS["head-segment"].replace("HEAD", "GET") * 2).encode())
    write("http1", "h2c-preface-split", b"\x05PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + settings())


TARGETS = [
    "/", "/live/demo/master.m3u8", "/live/demo/v1.m3u8?_HLS_msn=12&_HLS_part=3&_HLS_skip=YES",
    "/live/demo/v1.iframes.m3u8", "/live/demo/v1/seg%2D7.ts", "/ssai/demo/master.m3u8?device=tv&lang=en+US&a&&b=",
    "/ssai/demo/v1.m3u8?session=abc.def", "/keys/demo/12.key?session=s&token=t", "/admin/channels/demo/breaks?duration=30",
    "/ingest/demo/v1/seg1.ts", "/healthz", "/readyz", "/metrics", "/api/status", "*", "/docs/", "/.env",
    "/%2e%2e/etc/passwd", "/a/%2F/b", "/a\\b", "/caf%C3%A9", "/%ff", "//host/x", "/a/./b", "/a?%zz", "/a#frag",
    "/a%00b", "http://h/x", "/" + "a/" * 20,
]


def targets():
    reset("request-target")
    for index, target in enumerate(TARGETS):
        write("request-target", f"target-{index:02}", target)


def ranges():
    reset("range")
    cases = [
        (40960, "bytes=0-99", None), (40960, "bytes=-500", None), (40960, "bytes=100-", '"seg7"'),
        (40960, "bytes=0-0,5-9", None), (40960, "BYTES = 0-1", None), (0, "bytes=-1", None),
        (1000, "bytes=900-9007199254740991", None), (1000, "bytes= ,0-1 , ", None), (1000, "items=0-1", None),
        (1000, "bytes=5-1", None), (10, "bytes=99999999999999999999999-", None),
        (1000, "bytes=0-1", "Tue, 14 Nov 2023 22:13:20 GMT"), (1000, "bytes=0-1", 'W/"seg7"'),
        (1000, "bytes=0-1", "Sunday, 06-Nov-94 08:49:37 GMT"), (1000, "bytes=0-1", "Sun Nov  6 08:49:37 1994"),
    ]
    for index, (length, field, if_range) in enumerate(cases):
        data = struct.pack(">q", length) + field.encode() + (b"\n" + if_range.encode() if if_range is not None else b"")
        write("range", f"range-{index:02}", data)


# --- HTTP/2: frame sequences after the preface (RFC 9113 §4.1: length, type, flags, stream) ---

def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def settings(*pairs, ack=False):
    return frame(4, 1 if ack else 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def literal(name, value):
    """HPACK literal header field without indexing, new name (RFC 7541 §6.2.2)."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def request_headers(method, path, extra=()):
    # Indexed :method GET (2) / POST (3), :scheme http (6); literal :path and :authority.
    block = {b"GET": b"\x82", b"POST": b"\x83"}.get(method, literal(b":method", method))
    block += b"\x86" + literal(b":path", path) + literal(b":authority", b"h")
    for name, value in extra:
        block += literal(name, value)
    return block


def http2():
    reset("h2")
    HEADERS, DATA, PRIORITY, RST, SETTINGS, PING, GOAWAY, WINDOW, CONTINUATION = 1, 0, 2, 3, 4, 6, 7, 8, 9
    END_STREAM, END_HEADERS, PADDED = 1, 4, 8
    hello = settings((3, 100), (4, 65535)) + settings(ack=True)
    get = lambda stream, path, extra=(): frame(HEADERS, END_STREAM | END_HEADERS, stream, request_headers(b"GET", path, extra))
    seeds = {
        "get-playlist": hello + get(1, b"/live/demo/v1.m3u8", [(b"accept-encoding", b"gzip")]),
        "get-segment-window": hello + get(1, b"/live/demo/v1/seg7.ts") + frame(WINDOW, 0, 1, struct.pack(">I", 100000))
        + frame(WINDOW, 0, 0, struct.pack(">I", 100000)),
        "get-segment-small-window": settings((4, 16)) + get(1, b"/live/demo/v1/seg7.ts", [(b"range", b"bytes=0-9999")]),
        "many-streams": hello + b"".join(get(s, b"/healthz") for s in range(1, 12, 2)),
        "upload": hello + frame(HEADERS, END_HEADERS, 1, request_headers(b"PUT", b"/ingest/demo/v1/seg8.ts",
                                                                          [(b"authorization", b"Bearer secret"), (b"content-length", b"10")]))
        + frame(DATA, 0, 1, b"01234") + frame(DATA, END_STREAM | PADDED, 1, b"\x0356789xxx"),
        "continuation": hello + frame(HEADERS, END_STREAM, 3, request_headers(b"GET", b"/metrics")[:5])
        + frame(CONTINUATION, END_HEADERS, 3, request_headers(b"GET", b"/metrics")[5:]),
        "reset-and-ping": hello + get(1, b"/live/demo/v1/seg7.ts") + frame(RST, 0, 1, struct.pack(">I", 8))
        + frame(PING, 0, 0, b"12345678") + frame(PRIORITY, 0, 3, struct.pack(">IB", 1, 16)),
        "goaway": hello + get(1, b"/api/status") + frame(GOAWAY, 0, 0, struct.pack(">II", 1, 0) + b"bye"),
        "post-admin": hello + frame(HEADERS, END_STREAM | END_HEADERS, 1, request_headers(b"POST", b"/admin/channels/demo/breaks")),
        "bad-stream-zero": hello + frame(HEADERS, END_STREAM | END_HEADERS, 0, request_headers(b"GET", b"/")),
        "huge-settings": settings((1, 0), (2, 1), (5, 16777215), (6, 1)) + get(1, b"/live/demo/master.m3u8"),
    }
    for name, data in seeds.items():
        write("h2", f"{name}-one-read", b"\x00" + data)
    write("h2", "get-playlist-5-byte-reads", b"\x05" + seeds["get-playlist"])
    write("h2", "upload-1-byte-reads", b"\x01" + seeds["upload"])


if __name__ == "__main__":
    playlists()
    cues()
    configurations()
    http1()
    targets()
    ranges()
    http2()
    for target in sorted(os.listdir(OUT)):
        directory = os.path.join(OUT, target)
        if os.path.isdir(directory):
            files = os.listdir(directory)
            size = sum(os.path.getsize(os.path.join(directory, f)) for f in files)
            print(f"{target}: {len(files)} seeds, {size} bytes")
