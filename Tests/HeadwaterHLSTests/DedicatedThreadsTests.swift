import HeadwaterTesting
import Testing

/// ``DedicatedThreadsTrait`` moves tests off the cooperative pool: if it did not, the full suite's
/// property tests would starve its socket tests again.
@Suite("Dedicated test threads")
struct DedicatedThreadsTests {
    static var thread: String { DedicatedThreadsTrait.currentThreadName() }

    @Test(".cpuBound runs a synchronous test on the CPU-bound threads, and its expectations count", .cpuBound)
    func cpuBound() {
        #expect(Self.thread.hasPrefix("cpu-bound-"), "ran on \(Self.thread)")
        withKnownIssue { #expect(Bool(false), "recorded from a dedicated thread") }
    }

    @Test(".cpuBound runs each case of a parameterized test there", .cpuBound, arguments: 0..<3)
    func parameterized(index: Int) {
        #expect(Self.thread.hasPrefix("cpu-bound-"), "case \(index) ran on \(Self.thread)")
    }

    @Test("without the trait a test runs on the cooperative pool")
    func withoutTrait() {
        #expect(!["cpu-bound-", "process-wait-", "timed-"].contains { Self.thread.hasPrefix($0) })
    }

    @Test(".timed runs a test on threads of its own", .timed)
    func timed() async {
        #expect(Self.thread.hasPrefix("timed-"), "ran on \(Self.thread)")
    }

    @Suite("a suite marked .waitsOnProcesses", .waitsOnProcesses)
    struct MarkedSuite {
        @Test("its tests run on the process-wait threads, async ones too")
        func nested() async {
            #expect(DedicatedThreadsTests.thread.hasPrefix("process-wait-"), "ran on \(DedicatedThreadsTests.thread)")
            await Task.yield()
            #expect(DedicatedThreadsTests.thread.hasPrefix("process-wait-"), "ran on \(DedicatedThreadsTests.thread)")
        }
    }
}
