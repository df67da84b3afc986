import Foundation
import HeadwaterTesting
import Synchronization
import Testing

/// ``DedicatedThreadsTrait`` moves tests off the cooperative pool: if it did not, the full suite's
/// property tests would starve its socket tests again.
@Suite("Dedicated test threads")
struct DedicatedThreadsTests {
    static var thread: String { DedicatedThreadsTrait.currentThreadName() }

    @Test(".cpuBound runs a synchronous test on the CPU-bound threads, and its expectations count", .cpuBound)
    func cpuBound() {
        #expect(Self.thread.hasPrefix("cpu-bound-"), "ran on \(Self.thread)")
        #if os(Linux)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == 10, "its thread is niced")
        #endif
        withKnownIssue { #expect(Bool(false), "recorded from a dedicated thread") }
    }

    @Test(".cpuBound runs each case of a parameterized test there", .cpuBound, arguments: 0..<3)
    func parameterized(index: Int) {
        #expect(Self.thread.hasPrefix("cpu-bound-"), "case \(index) ran on \(Self.thread)")
    }

    @Test("without the trait a test runs on the cooperative pool")
    func withoutTrait() {
        #expect(!["cpu-bound-", "process-wait-"].contains { Self.thread.hasPrefix($0) })
    }

    @Test("the scope moves a body that never suspends (a task executor preference alone would not)")
    func movesABodyThatNeverSuspends() async throws {
        let ranOn = Mutex("")
        try await DedicatedThreadsTrait.cpuBound.provideScope(for: try #require(Test.current), testCase: nil) {
            ranOn.withLock { $0 = Self.thread }
        }
        let thread = ranOn.withLock { $0 }
        #expect(thread.hasPrefix("cpu-bound-"), "ran on \(thread)")
    }

    @Suite("a suite marked .waitsOnProcesses", .waitsOnProcesses)
    struct MarkedSuite {
        @Test("its tests run on the process-wait threads")
        func nested() {
            #expect(DedicatedThreadsTests.thread.hasPrefix("process-wait-"), "ran on \(DedicatedThreadsTests.thread)")
        }

        @Test("an async test starts there, and child tasks run there too")
        func asyncTest() async {
            #expect(DedicatedThreadsTests.thread.hasPrefix("process-wait-"), "ran on \(DedicatedThreadsTests.thread)")
            async let child = DedicatedThreadsTests.thread
            let childThread = await child
            #expect(childThread.hasPrefix("process-wait-"), "its child ran on \(childThread)")
        }
    }
}
