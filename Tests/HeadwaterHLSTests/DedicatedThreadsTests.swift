import Foundation
import HeadwaterTesting
import Synchronization
import Testing

/// ``DedicatedThreadsTrait`` moves tests off the cooperative pool: if it did not, the full suite's
/// property tests would starve its socket tests again.
///
/// Placement is best effort (see the trait), so it is not asserted per test.
@Suite("Dedicated test threads")
struct DedicatedThreadsTests {
    static var thread: String { DedicatedThreadsTrait.currentThreadName() }

    /// Runs `bodies` synchronous bodies through `trait`'s scope, called from the pool, and returns
    /// the thread name and niceness each ran with.
    static func placements(_ trait: DedicatedThreadsTrait, bodies: Int) async throws -> [(thread: String, nice: Int32)] {
        let seen = Mutex<[(thread: String, nice: Int32)]>([])
        for _ in 0..<bodies {
            try await trait.provideScope(for: try #require(Test.current), testCase: nil) {
                #if os(Linux)
                let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
                #else
                let nice: Int32 = 0
                #endif
                seen.withLock { $0.append((Self.thread, nice)) }
            }
        }
        return seen.withLock { $0 }
    }

    /// Where bodies land is not asserted: a whole test process was seen with none of 50 on the
    /// trait's threads (see the trait). What is deterministic is checked: the bodies that do land
    /// there run niced, and a body always runs, once, wherever it lands.
    @Test(".cpuBound runs each body once; those on its threads run niced")
    func cpuBound() async throws {
        let placed = try await Self.placements(.cpuBound, bodies: 50)
        #expect(placed.count == 50)
        let dedicated = placed.filter { $0.thread.hasPrefix("cpu-bound-") }
        #if os(Linux)
        #expect(dedicated.allSatisfy { $0.nice == 10 }, "niced: \(dedicated.map(\.nice))")
        #endif
    }

    @Test("expectations recorded on a dedicated thread count for the test", .cpuBound)
    func expectationsCount() {
        withKnownIssue { #expect(Bool(false), "recorded from the trait's scope") }
    }

    @Test("the trait applies to every test of a suite it marks")
    func recursive() {
        #expect(DedicatedThreadsTrait.cpuBound.isRecursive)
        #expect(DedicatedThreadsTrait.waitsOnProcesses.isRecursive)
    }

    @Test("without the trait a test runs on the cooperative pool")
    func withoutTrait() {
        #expect(!["cpu-bound-", "process-wait-"].contains { Self.thread.hasPrefix($0) })
    }
}
