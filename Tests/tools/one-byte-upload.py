#!/usr/bin/env python3
"""A release figure for issue 18's "ingest off the event loop": a push upload sent as one-byte
chunks, and the latency of playlist requests on another connection while it runs.

    python3 Tests/tools/one-byte-upload.py --server .build/release/headwater [--chunks 3000000]

Starts the given server pinned to one CPU (`taskset -c 0`: one event loop, which the upload and
the playlist requests then share) with a push channel (`one`, token from the environment) and the
demo loop channel, publishes three segments so the push channel is live, then sends
`PUT /ingest/one/x_03.ts` with `Transfer-Encoding: chunked` in one-byte chunks (written in 64 KiB
pieces, as fast as the socket takes them) while a second connection asks for
`/live/demo/v1.m3u8` back to back. Prints the upload's status and time, and p50/p99/max of the
playlist requests made during the upload. Loopback only; stops the server it started.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "one-byte-upload-token-0123456789"


def config(directory, repository):
    package = os.path.join(repository, "Public/demo/master.m3u8")
    path = os.path.join(directory, "headwater.yaml")
    with open(path, "w") as f:
        f.write(f"""server:
  listen: 127.0.0.1:0
  public: "{os.path.join(repository, 'Public')}"
  state: "{os.path.join(directory, 'state')}"
channels:
  demo:
    source: {{type: loop, package: "{package}"}}
    window: 30
  one:
    source: {{type: push, token_env: ONE_BYTE_TOKEN, target_duration: 6}}
    window: 30
    stall: none
""")
    return path


def request(sock, head, body=b""):
    sock.sendall(head + body)
    return read_response(sock)


def read_response(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before a response head")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed inside a body")
        rest += chunk
    return status


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--chunks", type=int, default=3_000_000)
    args = parser.parse_args()
    repository = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
    with tempfile.TemporaryDirectory() as directory:
        os.mkdir(os.path.join(directory, "state"))
        env = dict(os.environ, ONE_BYTE_TOKEN=TOKEN)
        server = subprocess.Popen(
            ["taskset", "-c", "0", args.server, "serve", "--config", config(directory, repository)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            port = None
            deadline = time.monotonic() + 30
            while port is None and time.monotonic() < deadline:
                line = server.stderr.readline()
                # The HTTP server's own line, once bound: `… server.listener=plain server.port=N …`.
                if line.rstrip().endswith("[HeadwaterHTTP] listening") and "server.listener=plain" in line:
                    port = int(line.split("server.port=")[1].split()[0])
            if port is None:
                sys.exit("the server did not say where it listens")
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            auth = f"Authorization: Bearer {TOKEN}\r\n".encode()
            ingest = socket.create_connection(("127.0.0.1", port))
            segment = b"G" + bytes(187)
            for index in range(3):
                head = f"PUT /ingest/one/x_0{index}.ts HTTP/1.1\r\nHost: o\r\nContent-Length: {len(segment)}\r\n".encode()
                assert request(ingest, head + auth + b"\r\n", segment) in (200, 201, 204)
            playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:0\n" + "".join(
                f"#EXTINF:6.0,\nx_0{i}.ts\n" for i in range(3))
            head = f"PUT /ingest/one/stream.m3u8 HTTP/1.1\r\nHost: o\r\nContent-Length: {len(playlist)}\r\n".encode()
            assert request(ingest, head + auth + b"\r\n", playlist.encode()) in (200, 201, 204)

            uploading = threading.Event()
            done = threading.Event()
            latencies = []

            def probe():
                sock = socket.create_connection(("127.0.0.1", port))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                get = b"GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n"
                while not done.is_set():
                    during = uploading.is_set()
                    started = time.perf_counter()
                    status = request(sock, get)
                    if during and not done.is_set():
                        latencies.append(time.perf_counter() - started)
                    if status != 200:
                        raise RuntimeError(f"playlist answered {status}")

            prober = threading.Thread(target=probe, daemon=True)
            prober.start()
            time.sleep(0.5)
            framing = b"1\r\nx\r\n" * args.chunks + b"0\r\n\r\n"
            head = b"PUT /ingest/one/x_03.ts HTTP/1.1\r\nHost: o\r\nTransfer-Encoding: chunked\r\n" + auth + b"\r\n"
            started = time.perf_counter()
            uploading.set()
            ingest.sendall(head)
            view = memoryview(framing)
            for offset in range(0, len(framing), 65536):
                ingest.sendall(view[offset:offset + 65536])
            status = read_response(ingest)
            elapsed = time.perf_counter() - started
            done.set()
            prober.join(timeout=5)
            latencies.sort()
            if not latencies:
                sys.exit("no playlist request completed during the upload")
            p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
            print(f"upload of {args.chunks:,} one-byte chunks ({len(framing):,} bytes of framing): "
                  f"status {status}, {elapsed:.2f} s")
            print(f"playlist requests during it on the same event loop: {len(latencies):,}, "
                  f"p50 {p(0.5):.2f} ms, p99 {p(0.99):.2f} ms, max {latencies[-1] * 1000:.2f} ms, "
                  f"mean {statistics.mean(latencies) * 1000:.2f} ms")
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    main()
