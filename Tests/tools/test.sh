#!/usr/bin/env bash
# The test command (README.md, "Test"): installs what the tests drive (install-test-clients.sh:
# apt-get as root, or through sudo; PyPI for hls.js), then runs the whole suite: all but the
# latency-bound tests in parallel, then those alone (below). Arguments go to one `swift test` run
# instead (e.g. --filter). .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/tools/install-test-clients.sh
# The module graph (layers; declared = imported): the checker's selftest, then the check itself.
bash Tests/tools/check-module-graph-selftest.sh
python3 Tests/tools/check-module-graph.py
if [ $# -gt 0 ]; then
  swift test "$@"
  exit
fi
# Tests that bound wall-clock latency (a viewer's request under a slowloris, a playlist while a
# one-byte-chunk upload runs, the first 200 after a restart, a held playlist request answered at
# its publish, a held hinted part likewise, the listener closed 200 ms into a graceful shutdown) run after the rest, alone: in
# the parallel run a request can wait seconds for a CPU whatever the server does. Both passes run;
# either failing fails the command.
timed='ConnectionAttackTests|IngestOffLoopTests/eventLoopStaysResponsive|RestartTests|RestartPlaybackTests|BlockingReloadTests|HintedPartTests|ServerSocketTests/gracefulShutdown'
status=0
swift test --skip "$timed" || status=$?
echo "== the latency-bound tests, alone: $timed"
swift test --skip-build --filter "$timed" || status=$?
exit "$status"
