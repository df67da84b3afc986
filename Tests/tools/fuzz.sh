#!/usr/bin/env bash
# Builds headwater-fuzz with libFuzzer and AddressSanitizer (its own scratch path, .build-fuzz) and
# runs each target for a fixed time (README.md "Fuzzing"; Sources/headwater-fuzz/README.md).
#
#   bash Tests/tools/fuzz.sh [--minutes N | --seconds N] [TARGET…]
#
# Default: every target (`HEADWATER_FUZZ_TARGET=list`), 5 minutes each. Each target starts from its
# committed seeds (Tests/fuzz-corpus/<target>/, read only) plus what earlier runs found
# (.build-fuzz/corpus/<target>/, where new inputs go). A crash, a timeout (10 s on one input) or
# running out of memory (2 GiB) fails the target; its input is saved under .build-fuzz/crashes/<target>/
# (the path is printed) and the other targets still run. Exit status 1 if any target failed.
# Replay a saved input: HEADWATER_FUZZ_TARGET=<target> .build-fuzz/debug/headwater-fuzz <file>
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=300
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) seconds=$(( $2 * 60 )); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done

scratch=.build-fuzz
echo "== building headwater-fuzz (-sanitize=fuzzer,address) in $scratch"
swift build -c debug --product headwater-fuzz --scratch-path "$scratch" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
fuzzer="$scratch/debug/headwater-fuzz"
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(HEADWATER_FUZZ_TARGET=list "$fuzzer")
fi

failed=()
for target in "${targets[@]}"; do
  seeds="Tests/fuzz-corpus/$target"
  [ -d "$seeds" ] || { echo "fuzz.sh: no seed corpus $seeds" >&2; exit 2; }
  corpus="$scratch/corpus/$target"
  crashes="$scratch/crashes/$target"
  mkdir -p "$corpus" "$crashes"
  dictionary=()
  [ -f "Tests/fuzz-corpus/$target.dict" ] && dictionary=("-dict=Tests/fuzz-corpus/$target.dict")
  before=$(find "$corpus" -type f | wc -l)
  echo "== $target: ${seconds}s from $seeds and $corpus ($before inputs); crashes go to $crashes/"
  log="$scratch/fuzz-$target.log"
  # SWIFT_BACKTRACE=enable=no: Swift's crash handler would get in AddressSanitizer's way.
  status=0
  HEADWATER_FUZZ_TARGET="$target" SWIFT_BACKTRACE=enable=no "$fuzzer" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "${dictionary[@]}" "$corpus" "$seeds" >"$log" 2>&1 || status=$?
  grep -E "^#[0-9]+ +(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)|ERROR|SUMMARY|Test unit written" "$log" || true
  after=$(find "$corpus" -type f | wc -l)
  if [ "$status" -ne 0 ]; then
    echo "== $target: FAILED (exit $status); input saved in $crashes/; the report:"
    pattern="^==[0-9]+==ERROR|Fatal error|deadly signal|ERROR: libFuzzer"
    if grep -q -E "$pattern" "$log"; then grep -E -A40 "$pattern" "$log" | head -60; else tail -40 "$log"; fi
    failed+=("$target")
  else
    echo "== $target: ok; corpus $before → $after inputs"
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "== fuzzing failed: ${failed[*]} (inputs under $scratch/crashes/)"
  exit 1
fi
echo "== fuzzing: ${#targets[@]} targets, ${seconds}s each, no crash"
