#!/usr/bin/env bash
# The test command (README.md, "Test"): installs what the tests drive (install-test-clients.sh:
# apt-get as root, or through sudo; PyPI for hls.js), then runs the whole suite. Arguments go to
# `swift test` (e.g. --filter). .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/tools/install-test-clients.sh
# The module graph (layers; declared = imported): the checker's selftest, then the check itself.
bash Tests/tools/check-module-graph-selftest.sh
python3 Tests/tools/check-module-graph.py
swift test "$@"
