#!/usr/bin/env bash
# Profiles the release `headwater serve` under wrk load with perf, for shared or stitched playlists,
# and prints where the server's CPU time goes, in % and µs per request. Not a test; a companion of
# `headwater-bench ssai` (which gives the figures without the profiler's overhead).
#
#   swift build -c release --product headwater
#   Tests/tools/profile-ssai.sh stitched 6 500     # kind, seconds, sessions
#   ADS=1 Tests/tools/profile-ssai.sh stitched 6    # wait until the sessions' playlists show a pod
#   HEADWATER=/tmp/headwater-other Tests/tools/profile-ssai.sh …   # another server binary
#
# Needs perf (apt-get install -y linux-perf), wrk, curl; taskset if present (server CPU 0, wrk CPU 1).
# DWARF call graphs, so that time inside libz and libc is charged to its Swift caller.
set -euo pipefail
cd "$(dirname "$0")/../.."
kind=${1:-stitched}
seconds=${2:-6}
sessions=${3:-500}
port=${PORT:-18990}
out=${OUT:-/tmp/headwater-profile-$kind}
pin_server=() pin_client=()
if command -v taskset > /dev/null; then pin_server=(taskset -c 0) pin_client=(taskset -c 1); fi

HEADWATER_SESSION_KEY=profile-session-key-0123456789 "${pin_server[@]}" "${HEADWATER:-.build/release/headwater}" serve \
  --config Config/headwater.yaml --listen "127.0.0.1:$port" --log-level warning > /dev/null 2> "$out.log" &
server=$!
trap 'kill $server 2> /dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break; sleep 0.2; done

if [ "$kind" = shared ]; then
  echo "/live/demo/v1.m3u8" > "$out.paths"
else
  : > "$out.paths"
  devices=(tv phone other)
  for i in $(seq 0 $((sessions - 1))); do
    uri=$(curl -sf "http://127.0.0.1:$port/ssai/demo/master.m3u8?device=${devices[i % 3]}" | grep -m1 '^v1\.m3u8?session=')
    echo "/ssai/demo/$uri" >> "$out.paths"
  done
  if [ -n "${ADS:-}" ]; then  # the next break after the sessions began (within ~80 s)
    for _ in $(seq 400); do
      curl -s "http://127.0.0.1:$port$(head -1 "$out.paths")" | grep -q '^/ads/' && break
      sleep 0.2
    done
    sleep 6  # a few ads listed
  fi
fi

# perf covers the whole wrk run, so requests ÷ sampled CPU time is the CPU per request under perf.
perf record -q -F 999 --call-graph dwarf,16384 -p "$server" -o "$out.data" -- sleep $((seconds + 1)) 2> /dev/null &
recorder=$!
sleep 0.3
HEADWATER_PATHS="$out.paths" "${pin_client[@]}" wrk -t1 -c64 -d"${seconds}s" -s Tests/tools/ssai-bench.lua \
  "http://127.0.0.1:$port" > "$out.wrk"
wait $recorder
result=$(grep '^HEADWATER ' "$out.wrk")
echo "$result"
requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$result")

perf report -i "$out.data" --children --sort symbol -g none 2> /dev/null > "$out.report"
cpu_ns=$(grep -m1 'Event count' "$out.report" | sed -E 's/.*: ([0-9]+).*/\1/')
echo "server CPU under perf: $((cpu_ns / requests / 1000)) µs per request ($requests requests)"
printf '%-58s %7s %9s\n' "inclusive" "%" "µs/req"
swift demangle --simplified < "$out.report" | awk -v ns="$cpu_ns" -v n="$requests" '
  /\] / {
    name = $0; sub(/^.*\] /, "", name); sub(/ +$/, "", name); sub(/ +-  +-.*$/, "", name)
    pct = $1; sub(/%/, "", pct)
    split("OriginResponder.respond(|Gzip.compress(|AdInsertion.stitchedPlaylist(|Stitcher.render(|SessionSigner.verify(|PlaylistSerializer.serialize(|AdTracking.dueBeacons(|Stitcher.trackingAttributes(|OriginHTTPHandler.writeEnd(|AccessLogEntry.log(|OriginMetrics.stitchedPlaylist(|asm_exc_page_fault|deflateInit2_|entry_SYSCALL_64_after_hwframe", keys, "|")
    for (i in keys) if (index(name, keys[i]) && !(keys[i] in seen) && name !~ /inlined/) {
      seen[keys[i]] = 1
      printf "%-58s %6.1f%% %9.1f\n", substr(name, 1, 58), pct, pct / 100 * ns / n / 1000
    }
  }'
