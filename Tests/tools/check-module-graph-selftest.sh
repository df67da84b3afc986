#!/usr/bin/env bash
# Self-test of check-module-graph.py on a tiny synthetic package (a package JSON in the shape of
# `swift package dump-package` and a source tree, in a temporary directory; no swift needed):
# the clean graph passes, and each of the five violation kinds fails with its message.
# Run by Tests/tools/test.sh before the real check.
set -euo pipefail
checker="$(cd "$(dirname "$0")" && pwd)/check-module-graph.py"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0

# The package, one target a line: NAME TYPE [path=DIR] DEPENDENCY...; a dependency is T:target,
# P:product@package or B:name (byName, as `"Name"` in Package.swift).
write_json() {  # DIR: DIR/targets.txt -> DIR/package.json
  python3 - "$1" <<'EOF'
import json, sys
targets = []
for line in open(sys.argv[1] + "/targets.txt"):
    fields = line.split()
    if not fields or fields[0].startswith("#"):
        continue
    name, kind, rest = fields[0], fields[1], fields[2:]
    target = {"name": name, "type": kind, "dependencies": [], "exclude": [], "resources": [], "settings": []}
    for field in rest:
        if field.startswith("path="):
            target["path"] = field[5:]
        elif field.startswith("T:"):
            target["dependencies"].append({"target": [field[2:], None]})
        elif field.startswith("B:"):
            target["dependencies"].append({"byName": [field[2:], None]})
        elif field.startswith("P:"):
            product, package = field[2:].split("@")
            target["dependencies"].append({"product": [product, package, None, None]})
    targets.append(target)
json.dump({"name": "fixture", "targets": targets}, open(sys.argv[1] + "/package.json", "w"), indent=1)
EOF
}

put() {  # FILE, contents on stdin
  mkdir -p "$(dirname "$1")"
  cat >"$1"
}

clean="$work/clean"
mkdir -p "$clean"
cat >"$clean/targets.txt" <<'EOF'
HeadwaterHLS        regular
HeadwaterSCTE35     regular
HeadwaterStitching  regular     T:HeadwaterHLS B:HeadwaterSCTE35
HeadwaterRuntime    regular     B:HeadwaterStitching P:NIOCore@swift-nio P:Logging@swift-log
HeadwaterSources    regular     B:HeadwaterRuntime
HeadwaterHTTP       regular     B:HeadwaterSources B:HeadwaterRuntime P:NIOCore@swift-nio
CHeadwaterZlib      system
headwater-bench     executable  B:HeadwaterHTTP B:CHeadwaterZlib B:ArgumentParser
HeadwaterTesting    regular     path=Tests/HeadwaterTesting B:HeadwaterHLS
HeadwaterHTTPTests  test        B:HeadwaterHTTP B:HeadwaterTesting B:headwater-bench P:NIOPosix@swift-nio
EOF
put "$clean/Sources/HeadwaterHLS/Playlist.swift" <<'EOF'
// import Foundation (a comment, not an import)
/* A block comment /* nested */
import Foundation
*/
public struct Playlist {
    public static let example = """
        import Foundation
        """
}
EOF
put "$clean/Sources/HeadwaterSCTE35/Cue.swift" <<'EOF'
import Swift
public struct Cue {}
EOF
put "$clean/Sources/HeadwaterStitching/Stitcher.swift" <<'EOF'
public import HeadwaterHLS
import struct HeadwaterSCTE35.Cue
EOF
put "$clean/Sources/HeadwaterRuntime/Clock.swift" <<'EOF'
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@preconcurrency import NIOCore
package import HeadwaterStitching
internal import Logging
import Synchronization
EOF
put "$clean/Sources/HeadwaterSources/Loop.swift" <<'EOF'
public import HeadwaterRuntime
EOF
put "$clean/Sources/HeadwaterHTTP/Server.swift" <<'EOF'
import HeadwaterRuntime; import HeadwaterSources
import NIOCore
EOF
put "$clean/Sources/CHeadwaterZlib/module.modulemap" <<'EOF'
module CHeadwaterZlib [system] { header "shim.h" link "z" export * }
EOF
put "$clean/Sources/headwater-bench/main.swift" <<'EOF'
@_exported import HeadwaterHTTP
import CHeadwaterZlib
import ArgumentParser
EOF
put "$clean/Tests/HeadwaterTesting/Seeds.swift" <<'EOF'
public import HeadwaterHLS
public import Testing
EOF
put "$clean/Tests/HeadwaterHTTPTests/ServerTests.swift" <<'EOF'
@testable import HeadwaterHTTP
@testable import headwater_bench
import HeadwaterTesting
import Testing
EOF
write_json "$clean"

# expect NAME STATUS EXPECTED-STDOUT: runs the checker on $work/NAME, compares status and stdout.
expect() {
  local dir="$work/$1" status=0 output
  output="$(python3 "$checker" --package-json "$dir/package.json" --root "$dir" 2>"$dir/stderr")" || status=$?
  if [[ "$status" == "$2" && "$output" == "$3" ]]; then
    echo "ok   $1 (exit $status)"
    printf '%s\n' "$output" | sed 's/^/       /'
  else
    echo "FAIL $1: exit $status (expected $2)"
    diff <(printf '%s\n' "$3") <(printf '%s\n' "$output") | sed 's/^/       /' || true
    sed 's/^/       stderr: /' "$dir/stderr"
    failures=$((failures + 1))
  fi
}

case_from_clean() {  # NAME: a copy of the clean package to break
  cp -R "$clean" "$work/$1"
}

# 0. The clean graph passes (its summary: the first line, the header, a layered row, a test row).
status=0
output="$(python3 "$checker" --package-json "$clean/package.json" --root "$clean" 2>&1)" || status=$?
if [[ "$status" == 0 ]] \
  && grep -qx 'module-graph: ok: 10 targets, 7 layers, no violations' <<<"$output" \
  && grep -qE '^layer +target +files +lines +depends on \(targets \| products\)$' <<<"$output" \
  && grep -qE '^3 runtime +HeadwaterRuntime +1 +14 +HeadwaterStitching \| NIOCore, Logging$' <<<"$output" \
  && grep -qE '^- test +HeadwaterHTTPTests +1 +4 +HeadwaterHTTP, HeadwaterTesting, headwater-bench \| NIOPosix$' <<<"$output"; then
  echo "ok   clean (exit 0)"
  printf '%s\n' "$output" | sed 's/^/       /'
else
  echo "FAIL clean: exit $status"
  printf '%s\n' "$output" | sed 's/^/       /'
  failures=$((failures + 1))
fi

# 1. A target the layer table does not know.
case_from_clean unknown-target
echo "HeadwaterMystery regular B:HeadwaterHLS" >>"$work/unknown-target/targets.txt"
put "$work/unknown-target/Sources/HeadwaterMystery/Mystery.swift" <<<"import HeadwaterHLS"
write_json "$work/unknown-target"
expect unknown-target 1 "module-graph: HeadwaterMystery: is not in the layer table (regular target): place it in LAYERS (or the exempt sets) at the top of Tests/tools/check-module-graph.py"

# 2. A dependency on a higher layer.
case_from_clean layer
sed -i 's/^HeadwaterRuntime .*/& B:HeadwaterSources/' "$work/layer/targets.txt"
put "$work/layer/Sources/HeadwaterRuntime/Upward.swift" <<<"import HeadwaterSources"
write_json "$work/layer"
expect layer 1 "module-graph: HeadwaterRuntime: imports HeadwaterSources (layer 4), which is above it (layer 3) (at Sources/HeadwaterRuntime/Upward.swift:1)"

# 3. A pure target importing Foundation.
case_from_clean pure
put "$work/pure/Sources/HeadwaterHLS/Dates.swift" <<<"import Foundation"
write_json "$work/pure"
expect pure 1 "module-graph: HeadwaterHLS: imports Foundation (a platform module), but it is pure (layer 0, model): values in, values out, only lower pure targets (at Sources/HeadwaterHLS/Dates.swift:1)"

# 4. Used but undeclared.
case_from_clean undeclared
put "$work/undeclared/Sources/HeadwaterHTTP/Listen.swift" <<<"public import NIOPosix"
write_json "$work/undeclared"
expect undeclared 1 "module-graph: HeadwaterHTTP: imports NIOPosix, which it does not declare as a dependency (at Sources/HeadwaterHTTP/Listen.swift:1)"

# 5. Declared but unused.
case_from_clean unused
sed -i 's/^HeadwaterSources .*/& P:Logging@swift-log/' "$work/unused/targets.txt"
write_json "$work/unused"
expect unused 1 "module-graph: HeadwaterSources: declares Logging (product of swift-log) but none of its 1 Swift files imports it"

if ((failures)); then
  echo "check-module-graph selftest: $failures case(s) failed"
  exit 1
fi
echo "check-module-graph selftest: all 6 cases passed"
