#!/usr/bin/env bash
# Runs the test suite under a sanitizer (README.md "Sanitizers"), in the sanitizer's own scratch
# path so the normal build is untouched:
#
#   bash Tests/tools/sanitize.sh address|thread [swift test arguments…]
#
# e.g. `bash Tests/tools/sanitize.sh thread --filter HeadwaterHTTPTests`. Without arguments the
# whole suite runs. Tests that start the `headwater` executable run the one built here (they find
# it next to the test bundle), so it is sanitized too. Any sanitizer report fails the run, even
# when the tests pass (ThreadSanitizer reports and goes on); the reports are counted and kept in
# .build-<asan|tsan>/sanitize.log.
set -euo pipefail
cd "$(dirname "$0")/../.."

sanitizer=${1:-}
case "$sanitizer" in
  address) scratch=.build-asan ;;
  thread) scratch=.build-tsan ;;
  *) echo "usage: sanitize.sh address|thread [swift test arguments…]" >&2; exit 2 ;;
esac
shift

bash Tests/tools/install-test-clients.sh
swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"

log="$scratch/sanitize.log"
# LeakSanitizer reports what lives until exit and is never freed on purpose: XCTest's runner
# objects, NIO's blocking thread pool (a process-wide singleton; its queue), and the 4 KiB buffer
# FoundationEssentials' readBytesFromFile leaks for each empty file it reads (toolchain 6.3's
# Foundation; `headwater lint` of an empty file shows it), and the 32-byte weak-reference side
# table `Process.run()` leaks now and then (swift-corelibs-foundation, when a test starts curl), and
# the BoringSSL context `NIOSSLContext(configuration:)` leaks when it throws (swift-nio-ssl 2.37: a
# key that does not go with its certificate; `headwater check-config` then exits 78 with the
# report). The suppressions reach the `headwater` processes tests start too, where an unsuppressed
# leak's report goes to the process's standard error: a test reading that pipe only after the
# process exits would wait for ever. `print_suppressions=0`: the summary of suppressed leaks would
# be one more block of lines on that standard error, which tests read line by line. (A pattern
# matches part of a frame's mangled name; a leading `$` would be read as an anchor.)
printf '%s\n' leak:libXCTest.so leak:globalPosixBlockingPool leak:readBytesFromFile leak:Foundation7ProcessC3run \
  leak:NIOSSL13NIOSSLContextC13configuration15callbackManager > "$scratch/lsan-suppressions.txt"
# Swift's crash handler would get in the sanitizers' way. ThreadSanitizer reports and goes on.
status=0
SWIFT_BACKTRACE=enable=no LSAN_OPTIONS="suppressions=$PWD/$scratch/lsan-suppressions.txt:print_suppressions=0" TSAN_OPTIONS=halt_on_error=0 \
  swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "$@" 2>&1 | tee "$log" || status=$?
reports=$(grep -c -E "^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: (Address|Leak)Sanitizer)" "$log" || true)
echo "== sanitize.sh $sanitizer: swift test exit $status, $reports sanitizer report(s); log: $log"
if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
  exit 1
fi
