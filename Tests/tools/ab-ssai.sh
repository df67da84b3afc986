#!/usr/bin/env bash
# Compares two `headwater` binaries on stitched playlists under the same conditions: both servers run
# at once (pinned to CPU 0), sessions are opened on both at the same moments, so both show the same
# break, ads or content in their windows; wrk (CPU 1) then loads them in turn, and the server's CPU
# time per request comes from /proc. For judging a change to the stitched path; not a test.
#
#   cp .build/release/headwater /tmp/headwater-before   # then change, rebuild (release)
#   Tests/tools/ab-ssai.sh /tmp/headwater-before .build/release/headwater 4 4 600
#   ADS=1 Tests/tools/ab-ssai.sh …   # first wait until the sessions' playlists show a pod
#
# Arguments: binary A, binary B, seconds per run, rounds, sessions per server.
set -euo pipefail
cd "$(dirname "$0")/../.."
a=$1 b=$2 seconds=${3:-4} rounds=${4:-4} sessions=${5:-600}
declare -A binary=([A]=$a [B]=$b) port=([A]=${PORT_A:-18941} [B]=${PORT_B:-18942}) pid=()
pin_server=() pin_client=()
if command -v taskset > /dev/null; then pin_server=(taskset -c 0) pin_client=(taskset -c 1); fi
work=$(mktemp -d)

for k in A B; do
  HEADWATER_SESSION_KEY=ab-session-key-0123456789 "${pin_server[@]}" "${binary[$k]}" serve \
    --config Config/headwater.yaml --listen "127.0.0.1:${port[$k]}" --log-level warning > /dev/null 2> "$work/$k.log" &
  pid[$k]=$!
done
trap 'kill "${pid[A]}" "${pid[B]}" 2> /dev/null || true; rm -rf "$work"' EXIT
for k in A B; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:${port[$k]}/readyz" > /dev/null && break; sleep 0.2; done
done

devices=(tv phone other)
for i in $(seq 0 $((sessions - 1))); do
  for k in A B; do
    uri=$(curl -sf "http://127.0.0.1:${port[$k]}/ssai/demo/master.m3u8?device=${devices[i % 3]}" | grep -m1 '^v1\.m3u8?session=')
    echo "/ssai/demo/$uri" >> "$work/$k.paths"
  done
done
if [ -n "${ADS:-}" ]; then  # the next break after the sessions began (within ~80 s)
  for _ in $(seq 400); do
    curl -s "http://127.0.0.1:${port[A]}$(head -1 "$work/A.paths")" | grep -q '^/ads/' && break
    sleep 0.2
  done
fi

ticks=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
echo "A: $a"
echo "B: $b"
for round in $(seq "$rounds"); do
  for k in A B; do
    before=$(cpu "${pid[$k]}")
    line=$(HEADWATER_PATHS="$work/$k.paths" "${pin_client[@]}" wrk -t1 -c64 -d"${seconds}s" -s Tests/tools/ssai-bench.lua \
      "http://127.0.0.1:${port[$k]}" | grep '^HEADWATER ')
    after=$(cpu "${pid[$k]}")
    requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$line")
    non2xx=$(sed -E 's/.*non2xx=([0-9]+).*/\1/' <<< "$line")
    ads=$(curl -s "http://127.0.0.1:${port[$k]}$(head -1 "$work/$k.paths")" | grep -c '^/ads/' || true)
    printf '%s round %d %s: %6d req/s %6d µs CPU/req  non-2xx %d  ad segments in window %d\n' "$(date -u +%T)" "$round" "$k" \
      $((requests / seconds)) $(((after - before) * 1000000 / ticks / requests)) "$non2xx" "$ads"
  done
done
