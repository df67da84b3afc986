#!/usr/bin/env python3
"""Measure and finish the HLS packages that generate.sh encodes, and check them.

    measure.py write  PUBLIC_DIR   finish every package: drop DVB SDT packets, fold a trailing
                                   audio sliver into the last segment, rewrite every media
                                   playlist, measure, write every master.m3u8
    measure.py check  PUBLIC_DIR   verify every segment and playlist; print tables; exit 1 on error
    measure.py report PUBLIC_DIR   print the measured figures as Markdown (for README.md)

A package is a directory with v0/, v1/, v2/ (H.264 + muxed AAC, MPEG-TS) and audio-alt/ (AAC only):
Public/demo, Public/ads/adN and Public/slate. Demo is the channel; the others are creatives
conditioned to its ladder, so the demo's BANDWIDTH also covers them.

Figures (RFC 8216bis §4.1, §4.4.6.2): a segment's bit rate is size*8/EXTINF. With a 2 s target
duration the "contiguous set of segments between 0.5 and 1.5 target durations + 0.5 s" is a single
segment, so the peak is the largest single-segment bit rate. A player that picks the "Alternate"
audio downloads the variant (with its muxed audio) *and* audio-alt, so BANDWIDTH and
AVERAGE-BANDWIDTH describe that larger combination (§4.4.6.2.1: every playable combination must fit
in BANDWIDTH). CODECS comes from the bytes: avc1.PPCCLL from the SPS, mp4a.40.AOT from the ADTS header.
"""

import json
import math
import os
import re
import subprocess
import sys

TS = 188
SEG_DURATION = 2.0
FPS = 25
TARGET_DURATION = 2
VIDEO_RE = re.compile(r"^v\d+$")
ALT = "audio-alt"
AUDIO_FRAME = 1024 / 48000


def die(msg):
    print(f"measure.py: {msg}", file=sys.stderr)
    sys.exit(1)


def run(*args, binary=False):
    out = subprocess.run(args, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return out.stdout if binary else out.stdout.decode()


# ----------------------------------------------------------------------------- discovery

def packages(public):
    pk = []
    if os.path.isdir(os.path.join(public, "demo")):
        pk.append("demo")
    ads = os.path.join(public, "ads")
    if os.path.isdir(ads):
        pk += sorted(f"ads/{d}" for d in os.listdir(ads) if os.path.isdir(os.path.join(ads, d)))
    if os.path.isdir(os.path.join(public, "slate")):
        pk.append("slate")
    if not pk:
        die(f"no packages under {public}")
    return pk


def variants(pkg_dir):
    vs = sorted(d for d in os.listdir(pkg_dir) if VIDEO_RE.match(d) and os.path.isdir(os.path.join(pkg_dir, d)))
    if not vs:
        die(f"{pkg_dir}: no variant directories")
    if not os.path.isdir(os.path.join(pkg_dir, ALT)):
        die(f"{pkg_dir}: no {ALT}/")
    return vs


def segments(rend_dir):
    return sorted(f for f in os.listdir(rend_dir) if re.match(r"^seg-\d{5}\.ts$", f))


# ----------------------------------------------------------------------------- MPEG-TS helpers

def ts_packets(data):
    if len(data) % TS:
        raise ValueError("size is not a multiple of 188")
    for i in range(0, len(data), TS):
        p = data[i:i + TS]
        if p[0] != 0x47:
            raise ValueError(f"lost sync at byte {i}")
        yield p


def pid(p):
    return ((p[1] & 0x1F) << 8) | p[2]


def strip_sdt(path):
    """Drop DVB SDT packets (PID 0x11): HLS does not use them and they push PAT/PMT off the head
    of every segment (RFC 8216bis §3.1.1: the first two packets SHOULD be PAT and PMT)."""
    data = open(path, "rb").read()
    kept = b"".join(p for p in ts_packets(data) if pid(p) != 0x11)
    if len(kept) != len(data):
        with open(path, "wb") as f:
            f.write(kept)


def pmt_pid(data):
    p = data[:TS]
    if pid(p) != 0:
        return None
    off = 4
    if p[3] & 0x20:  # adaptation field
        off += 1 + p[4]
    off += 1 + p[off]  # pointer_field
    section_length = ((p[off + 1] & 0x0F) << 8) | p[off + 2]
    i, end = off + 8, off + 3 + section_length - 4
    while i < end:
        program = (p[i] << 8) | p[i + 1]
        if program != 0:
            return ((p[i + 2] & 0x1F) << 8) | p[i + 3]
        i += 4
    return None


def nal_units(annexb):
    """Yield NAL unit payloads (without start codes) of an Annex B byte stream."""
    starts = [m.end() for m in re.finditer(b"\x00\x00\x01", annexb)]
    for n, s in enumerate(starts):
        e = starts[n + 1] - 3 if n + 1 < len(starts) else len(annexb)
        yield annexb[s:e].rstrip(b"\x00")


# ----------------------------------------------------------------------------- probing

def probe(path):
    j = json.loads(run("ffprobe", "-v", "error", "-show_streams", "-show_packets", "-of", "json", path))
    streams = {s["index"]: s for s in j["streams"]}
    per = {}
    for p in j["packets"]:
        per.setdefault(streams[p["stream_index"]]["codec_type"], []).append(p)
    return streams, per


def video_info(path):
    """Frames, duration, first PTS, whether the first picture is an IDR, and the codec string."""
    annexb = run("ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-c", "copy", "-f", "h264", "-", binary=True)
    sps = None
    first_vcl = None
    for nal in nal_units(annexb):
        t = nal[0] & 0x1F
        if t == 7 and sps is None:
            sps = nal
        if 1 <= t <= 5 and first_vcl is None:
            first_vcl = t
    codec = "avc1.%02x%02x%02x" % (sps[1], sps[2], sps[3]) if sps else None
    return codec, first_vcl == 5


def audio_codec(path, index="0:a:0"):
    adts = run("ffmpeg", "-v", "error", "-i", path, "-map", index, "-c", "copy", "-f", "adts", "-", binary=True)
    if len(adts) < 7 or adts[0] != 0xFF or (adts[1] & 0xF0) != 0xF0:
        return None
    aot = ((adts[2] >> 6) & 0x3) + 1
    return f"mp4a.40.{aot}"


def pkt_span(pkts, frame_duration):
    pts = sorted(float(p["pts_time"]) for p in pkts)
    return len(pts), pts[0], pts[-1] + frame_duration - pts[0]


# ----------------------------------------------------------------------------- write

def fold_slivers(alt_dir, want):
    """hls muxer cuts audio-only at every 2 s of audio; the AAC tail (priming + padding) can make a
    one-frame 11th segment. Append it to the last real segment (same TS stream, continuity counters
    carry on), so audio-alt has exactly the segments the video has."""
    segs = segments(alt_dir)
    while len(segs) > want:
        last, prev = segs[-1], segs[-2]
        _, per = probe(os.path.join(alt_dir, last))
        n, _, dur = pkt_span(per.get("audio", []), AUDIO_FRAME)
        if dur > 0.1:
            die(f"{alt_dir}: {len(segs)} segments, expected {want} (extra one is {dur:.3f} s)")
        with open(os.path.join(alt_dir, prev), "ab") as f:
            f.write(open(os.path.join(alt_dir, last), "rb").read())
        os.remove(os.path.join(alt_dir, last))
        segs.pop()


def write_media_playlist(rend_dir, durations):
    lines = [
        "#EXTM3U",
        "#EXT-X-VERSION:3",
        f"#EXT-X-TARGETDURATION:{TARGET_DURATION}",
        "#EXT-X-PLAYLIST-TYPE:VOD",
        "#EXT-X-MEDIA-SEQUENCE:0",
    ]
    for seg, d in zip(segments(rend_dir), durations):
        if round(d) > TARGET_DURATION:
            die(f"{rend_dir}/{seg}: {d:.3f} s rounds above the target duration")
        lines += [f"#EXTINF:{d:.3f},", seg]
    lines.append("#EXT-X-ENDLIST")
    with open(os.path.join(rend_dir, "index.m3u8"), "w") as f:
        f.write("\n".join(lines) + "\n")


def measure_package(public, pkg):
    """Return the figures of one package (after finishing its playlists)."""
    pdir = os.path.join(public, pkg)
    vs = variants(pdir)
    out = {"variants": {}, "alt": None}
    durations = None
    for v in vs:
        vdir = os.path.join(pdir, v)
        segs = segments(vdir)
        durs, sizes = [], []
        for s in segs:
            path = os.path.join(vdir, s)
            strip_sdt(path)
            streams, per = probe(path)
            n, _, _ = pkt_span(per["video"], 1 / FPS)
            durs.append(n / FPS)
            sizes.append(os.path.getsize(path))
        for s, d in zip(segs, durs):
            if f"{d:.3f}" != f"{SEG_DURATION:.3f}":
                die(f"{vdir}/{s}: {d:.3f} s of video, expected {SEG_DURATION:.3f}")
        if durations is None:
            durations = durs
        elif durs != durations:
            die(f"{vdir}: segment durations differ from {vs[0]}")
        write_media_playlist(vdir, durs)
        first = os.path.join(vdir, segs[0])
        streams, _ = probe(first)
        vst = next(s for s in streams.values() if s["codec_type"] == "video")
        vcodec, _ = video_info(first)
        acodec = audio_codec(first)
        out["variants"][v] = {
            "sizes": sizes,
            "durations": durs,
            "codecs": f"{vcodec},{acodec}",
            "resolution": f"{vst['width']}x{vst['height']}",
        }
    adir = os.path.join(pdir, ALT)
    fold_slivers(adir, len(durations))
    sizes = []
    for s in segments(adir):
        strip_sdt(os.path.join(adir, s))
        sizes.append(os.path.getsize(os.path.join(adir, s)))
    if len(sizes) != len(durations):
        die(f"{adir}: {len(sizes)} segments, video has {len(durations)}")
    # Audio segments are cut on the same 2 s grid as the video; their EXTINF is the video's, so
    # every rendition of a package agrees on segment boundaries (what a stitcher relies on).
    write_media_playlist(adir, durations)
    out["alt"] = {"sizes": sizes, "codecs": audio_codec(os.path.join(adir, segments(adir)[0]))}
    out["durations"] = durations
    return out


def rates(sizes, durations):
    r = [s * 8 / d for s, d in zip(sizes, durations)]
    avg = sum(sizes) * 8 / sum(durations)
    return max(r), avg


def figures(m):
    """Per variant: variant-only peak/avg and variant+alt-audio peak/avg (bit/s, rounded up)."""
    out = {}
    d = m["durations"]
    alt = m["alt"]["sizes"]
    for v, f in m["variants"].items():
        peak, avg = rates(f["sizes"], d)
        cpeak, cavg = rates([a + b for a, b in zip(f["sizes"], alt)], d)
        out[v] = {
            "peak": math.ceil(peak), "avg": math.ceil(avg),
            "combo_peak": math.ceil(cpeak), "combo_avg": math.ceil(cavg),
        }
    apeak, aavg = rates(alt, d)
    out[ALT] = {"peak": math.ceil(apeak), "avg": math.ceil(aavg)}
    return out


def write_master(pdir, m, fig, bandwidth):
    lines = [
        "#EXTM3U",
        "#EXT-X-VERSION:3",
        "#EXT-X-INDEPENDENT-SEGMENTS",
        '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Main",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2"',
        '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Alternate",LANGUAGE="fr",DEFAULT=NO,AUTOSELECT=YES,'
        f'CHANNELS="2",URI="{ALT}/index.m3u8"',
    ]
    for v, f in m["variants"].items():
        codecs = f["codecs"]
        if m["alt"]["codecs"] not in codecs.split(","):
            die(f"{pdir}: {ALT} codec {m['alt']['codecs']} not in {codecs}")
        lines.append(
            f"#EXT-X-STREAM-INF:BANDWIDTH={bandwidth[v]},AVERAGE-BANDWIDTH={fig[v]['combo_avg']},"
            f'CODECS="{codecs}",RESOLUTION={f["resolution"]},FRAME-RATE={FPS:.3f},AUDIO="aud"'
        )
        lines.append(f"{v}/index.m3u8")
    with open(os.path.join(pdir, "master.m3u8"), "w") as f:
        f.write("\n".join(lines) + "\n")


def measure_all(public):
    ms = {pkg: measure_package(public, pkg) for pkg in packages(public)}
    figs = {pkg: figures(m) for pkg, m in ms.items()}
    return ms, figs


def channel_bandwidth(figs):
    """The demo's BANDWIDTH per variant: its own peak, raised if any creative's peak is higher
    (ads are stitched into the demo channel and must not exceed what its master promises)."""
    demo = figs["demo"]
    bw = {}
    for v in demo:
        if v == ALT:
            continue
        bw[v] = max(f[v]["combo_peak"] for f in figs.values() if v in f)
    return bw


def cmd_write(public):
    ms, figs = measure_all(public)
    bw = channel_bandwidth(figs)
    for pkg, m in ms.items():
        own = {v: f["combo_peak"] for v, f in figs[pkg].items() if v != ALT}
        write_master(os.path.join(public, pkg), m, figs[pkg], bw if pkg == "demo" else own)
    for v in bw:
        if bw[v] != figs["demo"][v]["combo_peak"]:
            print(f"note: demo {v} BANDWIDTH raised from {figs['demo'][v]['combo_peak']} to {bw[v]} to cover the creatives")
    print(f"wrote master.m3u8 for {len(ms)} packages")


# ----------------------------------------------------------------------------- check

def parse_master(path):
    inf = {}
    lines = open(path).read().splitlines()
    for i, l in enumerate(lines):
        if l.startswith("#EXT-X-STREAM-INF:"):
            attrs = dict(re.findall(r'([A-Z-]+)=("[^"]*"|[^,]*)', l.split(":", 1)[1]))
            inf[lines[i + 1]] = {k: v.strip('"') for k, v in attrs.items()}
    return inf


def check_media_playlist(path, nseg, errors):
    text = open(path).read()
    want = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:2", "#EXT-X-PLAYLIST-TYPE:VOD",
            "#EXT-X-MEDIA-SEQUENCE:0"]
    lines = text.splitlines()
    if lines[:5] != want:
        errors.append(f"{path}: header {lines[:5]}")
    extinf = [l for l in lines if l.startswith("#EXTINF:")]
    if extinf != ["#EXTINF:2.000,"] * nseg:
        errors.append(f"{path}: EXTINF {extinf}")
    if lines[-1] != "#EXT-X-ENDLIST":
        errors.append(f"{path}: no EXT-X-ENDLIST at the end")


def cmd_check(public):
    errors = []
    pkgs = packages(public)
    params = {}      # (pkg, rendition) -> tuple of codec parameters
    seg_rows = []    # per rendition: durations
    for pkg in pkgs:
        pdir = os.path.join(public, pkg)
        vs = variants(pdir)
        for r in vs + [ALT]:
            rdir = os.path.join(pdir, r)
            segs = segments(rdir)
            vdurs, adurs, firsts, idrs = [], [], [], 0
            for s in segs:
                path = os.path.join(rdir, s)
                data = open(path, "rb").read()
                try:
                    pk = list(ts_packets(data))
                except ValueError as e:
                    errors.append(f"{path}: {e}")
                    continue
                pmt = pmt_pid(data)
                if pid(pk[0]) != 0 or pmt is None or pid(pk[1]) != pmt:
                    errors.append(f"{path}: first two packets are not PAT, PMT")
                streams, per = probe(path)
                st = {v["codec_type"]: v for v in streams.values()}
                if r != ALT:
                    n, first, dur = pkt_span(per["video"], 1 / FPS)
                    vdurs.append(dur)
                    codec, idr = video_info(path)
                    idrs += idr
                    if not idr:
                        errors.append(f"{path}: first picture is not an IDR")
                    if n != SEG_DURATION * FPS or f"{dur:.3f}" != "2.000":
                        errors.append(f"{path}: {n} frames, {dur:.3f} s of video")
                    v = st["video"]
                    a = st["audio"]
                    key = (codec, f"{v['width']}x{v['height']}", v["r_frame_rate"], v["pix_fmt"],
                           v.get("profile"), v.get("level"), v.get("has_b_frames"),
                           audio_codec(path), a.get("profile"), a["sample_rate"], a["channels"])
                else:
                    if set(st) != {"audio"}:
                        errors.append(f"{path}: streams {sorted(st)}")
                    a = st["audio"]
                    key = (audio_codec(path), a.get("profile"), a["sample_rate"], a["channels"])
                na, afirst, adur = pkt_span(per["audio"], AUDIO_FRAME)
                adurs.append(adur)
                firsts.append(afirst)
                params.setdefault((pkg, r), set()).add(key)
            check_media_playlist(os.path.join(rdir, "index.m3u8"), len(segs), errors)
            seg_rows.append((pkg, r, len(segs), vdurs, adurs, firsts, idrs))
            if len(params.get((pkg, r), ())) != 1:
                errors.append(f"{pkg}/{r}: codec parameters vary between segments: {params.get((pkg, r))}")
        # master playlist
        m = parse_master(os.path.join(pdir, "master.m3u8"))
        if sorted(m) != [f"{v}/index.m3u8" for v in vs]:
            errors.append(f"{pdir}/master.m3u8: variants {sorted(m)}")

    # alternate audio in sync with the audio muxed in v0 (same first PTS)
    firsts = {(p, r): f for p, r, _, _, _, f, _ in seg_rows}
    for pkg in pkgs:
        if firsts[(pkg, ALT)][0] != firsts[(pkg, "v0")][0]:
            errors.append(f"{pkg}: {ALT} starts at {firsts[(pkg, ALT)][0]}, v0 audio at {firsts[(pkg, 'v0')][0]}")

    # ---- table 1: segment durations
    print("\nSegments: IDR = segments whose first picture is an IDR; video s = frames/25; audio s = AAC frames x 1024/48000")
    print(f"{'package':<9} {'rend.':<10} {'segs':>4} {'IDR':>5}  {'video s':<10} audio s")
    for pkg, r, n, vd, ad, _, idr in seg_rows:
        vtxt = "-" if not vd else (f"all {vd[0]:.3f}" if len({f'{x:.3f}' for x in vd}) == 1 else " ".join(f"{x:.3f}" for x in vd))
        itxt = "-" if not vd else f"{idr}/{n}"
        print(f"{pkg:<9} {r:<10} {n:>4} {itxt:>5}  {vtxt:<10} {' '.join(f'{x:.3f}' for x in ad)}")

    # ---- table 2: codec parameters per rendition, across packages
    print("\nCodec parameters per rendition (must be identical down each rendition):")
    hdr = ("codec", "size", "fps", "pix_fmt", "profile", "level", "b-fr", "audio", "aac", "Hz", "ch")
    for r in sorted({r for _, r in params}):
        print(f"  {r}")
        ref = None
        for pkg in pkgs:
            (key,) = params[(pkg, r)] if len(params[(pkg, r)]) == 1 else (tuple(params[(pkg, r)]),)
            if ref is None:
                ref = key
            mark = "" if key == ref else "   <-- DIFFERS"
            if key != ref:
                errors.append(f"{pkg}/{r}: codec parameters {key} differ from demo {ref}")
            cols = hdr if r != ALT else ("audio", "aac", "Hz", "ch")
            print(f"    {pkg:<9} " + "  ".join(f"{c}={k}" for c, k in zip(cols, key)) + mark)

    # ---- table 3: bit rates vs the master playlists
    figs = {}
    for pkg in pkgs:
        pdir = os.path.join(public, pkg)
        d = [SEG_DURATION] * len(segments(os.path.join(pdir, "v0")))
        m = {"durations": d, "variants": {}, "alt": {"sizes": [os.path.getsize(os.path.join(pdir, ALT, s)) for s in segments(os.path.join(pdir, ALT))]}}
        for v in variants(pdir):
            m["variants"][v] = {"sizes": [os.path.getsize(os.path.join(pdir, v, s)) for s in segments(os.path.join(pdir, v))]}
        figs[pkg] = figures(m)
    demo_master = parse_master(os.path.join(public, "demo", "master.m3u8"))
    print("\nBit rates (bit/s; peak = largest single 2 s segment; +alt = variant and audio-alt together)")
    print(f"{'package':<9} {'rend.':<10} {'peak':>8} {'average':>8} {'peak+alt':>9} {'avg+alt':>8}   demo BANDWIDTH")
    for pkg in pkgs:
        master = parse_master(os.path.join(public, pkg, "master.m3u8"))
        for r, f in figs[pkg].items():
            if r == ALT:
                print(f"{pkg:<9} {r:<10} {f['peak']:>8} {f['avg']:>8}")
                continue
            bw = int(demo_master[f"{r}/index.m3u8"]["BANDWIDTH"])
            ok = "ok" if f["combo_peak"] <= bw else "EXCEEDS"
            if f["combo_peak"] > bw:
                errors.append(f"{pkg}/{r}: peak {f['combo_peak']} > demo BANDWIDTH {bw}")
            own = master[f"{r}/index.m3u8"]
            if pkg != "demo" and int(own["BANDWIDTH"]) != f["combo_peak"]:
                errors.append(f"{pkg}/master.m3u8: {r} BANDWIDTH {own['BANDWIDTH']} != measured {f['combo_peak']}")
            if int(own["AVERAGE-BANDWIDTH"]) != f["combo_avg"]:
                errors.append(f"{pkg}/master.m3u8: {r} AVERAGE-BANDWIDTH {own['AVERAGE-BANDWIDTH']} != measured {f['combo_avg']}")
            print(f"{pkg:<9} {r:<10} {f['peak']:>8} {f['avg']:>8} {f['combo_peak']:>9} {f['combo_avg']:>8}   {bw} {ok}")

    # ---- decode everything once through the master playlists
    print("\nDecoding every master playlist with ffmpeg (-map 0 -f null):")
    for pkg in pkgs:
        path = os.path.join(public, pkg, "master.m3u8")
        p = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0", "-f", "null", "-"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        msg = p.stderr.decode().strip()
        print(f"  {pkg:<9} {'ok' if p.returncode == 0 and not msg else 'ERROR ' + msg}")
        if p.returncode != 0 or msg:
            errors.append(f"{path}: ffmpeg: {msg}")

    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(public) for f in fs)
    print(f"\nTotal size of {public}: {total} bytes ({total / 1048576:.2f} MiB)")
    if errors:
        print("\nERRORS:")
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("all checks passed")


def cmd_report(public):
    pkgs = packages(public)
    demo_master = parse_master(os.path.join(public, "demo", "master.m3u8"))
    figs = {}
    for pkg in pkgs:
        pdir = os.path.join(public, pkg)
        d = [SEG_DURATION] * len(segments(os.path.join(pdir, "v0")))
        m = {"durations": d, "variants": {}, "alt": {"sizes": [os.path.getsize(os.path.join(pdir, ALT, s)) for s in segments(os.path.join(pdir, ALT))]}}
        for v in variants(pdir):
            m["variants"][v] = {"sizes": [os.path.getsize(os.path.join(pdir, v, s)) for s in segments(os.path.join(pdir, v))]}
        figs[pkg] = figures(m)
    print("| variant | RESOLUTION | CODECS | BANDWIDTH | AVERAGE-BANDWIDTH | variant alone: peak / avg |")
    print("| --- | --- | --- | --- | --- | --- |")
    for key, a in demo_master.items():
        v = key.split("/")[0]
        f = figs["demo"][v]
        print(f"| {v} | {a['RESOLUTION']} | `{a['CODECS']}` | {a['BANDWIDTH']} | {a['AVERAGE-BANDWIDTH']} | {f['peak']} / {f['avg']} |")
    f = figs["demo"][ALT]
    print(f"| {ALT} | — | `mp4a.40.2` | — | — | {f['peak']} / {f['avg']} |")
    print()
    print("| package | duration | v0 peak+alt | v1 peak+alt | v2 peak+alt | size |")
    print("| --- | --- | --- | --- | --- | --- |")
    for pkg in pkgs:
        pdir = os.path.join(public, pkg)
        size = sum(os.path.getsize(os.path.join(dp, x)) for dp, _, fs in os.walk(pdir) for x in fs)
        n = len(segments(os.path.join(pdir, "v0")))
        cells = " | ".join(str(figs[pkg][v]["combo_peak"]) for v in variants(pdir))
        print(f"| {pkg} | {n * SEG_DURATION:.0f} s | {cells} | {size / 1024:.0f} KiB |")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check", "report"):
        die("usage: measure.py write|check|report PUBLIC_DIR")
    public = os.path.abspath(sys.argv[2])
    {"write": cmd_write, "check": cmd_check, "report": cmd_report}[sys.argv[1]](public)


if __name__ == "__main__":
    main()
