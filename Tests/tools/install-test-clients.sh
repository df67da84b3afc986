#!/usr/bin/env bash
# Installs the real HLS clients the tests drive (../shared/CLIENTS.md): ffmpeg, GStreamer, Chromium, and hls.js
# (from the PyPI wheel of gradio, which ships it as an ES module; fetched at test time, never
# committed), and the operators' tools the tests run against what we ship: systemd's offline
# tools (systemd-analyze, systemd-sysusers) for systemd/, promtool for /metrics and the alert
# rules, nginx as the CDN tier, logrotate, nghttp (HTTP/2 client), openssl and curl.
# Idempotent: installs only what is missing. Run by Tests/tools/test.sh (the README's test command).
# Debian packages come from the machine's apt sources (root, or sudo, for apt-get), the wheel
# from PyPI.
set -euo pipefail
cd "$(dirname "$0")/../.."

need=()
command -v ffmpeg >/dev/null 2>&1 || need+=(ffmpeg)
command -v chromium >/dev/null 2>&1 || need+=(chromium fonts-dejavu-core)
# GStreamer 1.22 with hlsdemux2 (plugins-bad) and the decoders (libav), for playbin3 playback.
command -v gst-launch-1.0 >/dev/null 2>&1 || need+=(gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav)
dpkg -s zlib1g-dev >/dev/null 2>&1 || need+=(zlib1g-dev)
# Debian's systemd package, for its offline tools: they work where systemd is not PID 1 (CI containers).
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
# Debian's prometheus package is the one that ships promtool (`promtool check metrics`, `check rules`).
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v nginx >/dev/null 2>&1 || need+=(nginx-light)
command -v logrotate >/dev/null 2>&1 || need+=(logrotate)
command -v nghttp >/dev/null 2>&1 || need+=(nghttp2-client)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v curl >/dev/null 2>&1 || need+=(curl)
# The install and package tests: dpkg-deb, and util-linux's unshare and setpriv (a private mount
# namespace to run check-config as the service's user against a scratch root).
command -v dpkg-deb >/dev/null 2>&1 || need+=(dpkg)
command -v setpriv >/dev/null 2>&1 || need+=(util-linux)
# pip fetches the hls.js wheel below.
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing: ${need[*]}"
  as_root=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-test-clients.sh: run as root (apt-get install ${need[*]})" >&2; exit 1; }
    as_root=(sudo env DEBIAN_FRONTEND=noninteractive)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

target=.build/test-clients/hls.mjs
if [ ! -s "$target" ]; then
  echo "== fetching hls.js (gradio wheel from PyPI)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -m pip download --no-deps -q -d "$work" gradio
  mkdir -p "$(dirname "$target")"
  python3 - "$work" "$target" <<'PY'
import glob, re, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/gradio-*.whl")[0]
archive = zipfile.ZipFile(wheel)
name = next(n for n in archive.namelist() if re.match(r"gradio/templates/frontend/assets/hls-[^/]*\.js$", n))
source = archive.read(name).decode()
# The module exports helpers only; also export the Hls class itself (the one with .Events).
cls = re.findall(r"(\w+)\.Events\.DESTROYING", source)[0]
source = re.sub(r"export\{([^}]*)\};?\s*$", lambda m: "export{" + m.group(1) + "," + cls + " as Hls};", source)
open(sys.argv[2], "w").write(source)
print("hls.js from", wheel.split("/")[-1], "->", sys.argv[2])
PY
fi
