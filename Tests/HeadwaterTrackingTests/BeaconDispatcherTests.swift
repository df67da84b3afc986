import AsyncHTTPClient
import HeadwaterTesting
import Logging
import MetricsTestKit
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@testable import HeadwaterTracking

/// The dispatcher against real sockets on the loopback interface: an answering endpoint, a silent
/// one, a refused port.
///
/// Deadlines are proven by counts (what was sent, failed, dropped), and wall-clock bounds are only
/// "far sooner than without the deadline": the full suite starts some 1,500 tests at once on the
/// two-thread cooperative pool, and for its first twenty seconds any continuation here (an answer,
/// a timeout, a `Task.sleep`) can wait that long for a thread. Threads of the suite's own do not
/// help: `Task.sleep` resumes on the pool whatever the task's executor preference
/// (swiftlang/swift#74395), and the dispatcher's HTTP client resumes it from its event loop.
@Suite("Beacon dispatcher")
struct BeaconDispatcherTests {
    /// Everything one test needs: a dispatcher with its own metrics and log.
    struct Harness {
        let dispatcher: BeaconDispatcher
        let metrics: TestMetrics
        let log: LogRecorder

        func count(_ outcome: BeaconDispatcher.Outcome, _ event: AdTrackingEvent? = nil) -> Int64 {
            let events = event.map { [$0] } ?? AdTrackingEvent.allCases
            return events.reduce(0) { total, event in
                let counter = try? metrics.expectCounter(
                    BeaconDispatcher.metricLabel, [("event", event.rawValue), ("outcome", outcome.rawValue)])
                return total + (counter?.totalValue ?? 0)
            }
        }
    }

    /// Runs `body` with a dispatcher; `running: false` leaves ``BeaconDispatcher/run()`` to the body.
    static func withDispatcher(
        _ configuration: BeaconDispatcher.Configuration = BeaconDispatcher.Configuration(),
        running: Bool = true,
        _ body: (Harness) async throws -> Void
    ) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let metrics = TestMetrics()
        let log = LogRecorder()
        let dispatcher = BeaconDispatcher(
            httpClient: client, configuration: configuration, logger: log.logger, metricsFactory: metrics)
        let harness = Harness(dispatcher: dispatcher, metrics: metrics, log: log)
        do {
            if running {
                try await testGracefulShutdown { trigger in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { try await dispatcher.run() }
                        try await body(harness)
                        trigger.triggerGracefulShutdown()
                        try await group.waitForAll()
                    }
                }
            } else {
                try await body(harness)
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// Waits (up to 30 s) until `condition` holds: generous for a loaded two-core machine (see the
    /// suite's note); the condition itself is what is checked. (The full suite once starved this
    /// suite for 90 s: the property tests held the cooperative pool. They run on threads of their
    /// own now, `.cpuBound`.)
    static func eventually(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting for \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// One beacon per event of `ad`, with `urlsPerEvent` URLs each on `endpoint`'s paths.
    static func beacons(
        ad: String, session: String, urlsPerEvent: Int = 1, events: [AdTrackingEvent] = AdTrackingEvent.allCases,
        url: (String) -> String
    ) -> [DueBeacon] {
        events.map { event in
            DueBeacon(
                dateRangeID: ad, event: event,
                urls: (0..<urlsPerEvent).map { url("/t/\(session)/\(ad)/\(event.rawValue)/\($0)") })
        }
    }

    // MARK: - Exactly once

    @Test func eachBeaconIsSentOnceDespiteRepeatedFires() async throws {
        let endpoint = try await BeaconEndpoint.start()
        defer { Task { await endpoint.stop() } }
        try await Self.withDispatcher { harness in
            let s1 = Self.beacons(ad: "ad-1", session: "s1", urlsPerEvent: 2, url: endpoint.url)
                + Self.beacons(ad: "ad-2", session: "s1", urlsPerEvent: 2, url: endpoint.url)
            let s2 = Self.beacons(ad: "ad-1", session: "s2", urlsPerEvent: 2, url: endpoint.url)
            // Ten reloads of s1's playlist, some of them at the same time, and one of s2's.
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<10 { group.addTask { harness.dispatcher.fire(session: "s1", s1) } }
                group.addTask { harness.dispatcher.fire(session: "s2", s2) }
            }
            let expected = (s1 + s2).flatMap(\.urls).map(endpoint.target)
            try await Self.eventually("every beacon") { endpoint.requests.count >= expected.count }
            // More reloads after the sends, and time for any stray resend to arrive.
            harness.dispatcher.fire(session: "s1", s1)
            try await Task.sleep(for: .milliseconds(300))
            #expect(endpoint.requests.sorted() == expected.sorted())
            #expect(harness.count(.sent) == 30)
            #expect(harness.count(.sent, .impression) == 6)
            #expect(harness.count(.duplicate) == 10 * 20)
            #expect(harness.count(.duplicate, .complete) == 10 * 4)
            #expect(harness.count(.failed) == 0 && harness.count(.dropped) == 0)
        }
    }

    @Test("beacons taken from a placeholder playlist are made the session's, only when queued, and sent once")
    func personalizedBeaconsAreSentAsTheSessionsOnce() async throws {
        let endpoint = try await BeaconEndpoint.start()
        defer { Task { await endpoint.stop() } }
        try await Self.withDispatcher { harness in
            let template = Self.beacons(ad: "ad-1", session: "PLACEHOLDER", urlsPerEvent: 2, url: endpoint.url)
            var personalized = 0
            for session in ["s1", "s2", "s1", "s1"] {
                harness.dispatcher.fire(session: session, template) { url in
                    personalized += 1
                    return url.replacing("PLACEHOLDER", with: session)
                }
            }
            let expected = (Self.beacons(ad: "ad-1", session: "s1", urlsPerEvent: 2, url: endpoint.url)
                + Self.beacons(ad: "ad-1", session: "s2", urlsPerEvent: 2, url: endpoint.url)).flatMap(\.urls).map(endpoint.target)
            try await Self.eventually("every beacon") { endpoint.requests.count >= expected.count }
            try await Task.sleep(for: .milliseconds(200))
            #expect(endpoint.requests.sorted() == expected.sorted())
            #expect(personalized == 20, "only the URLs queued (2 sessions × 5 events × 2), not the duplicates")
            #expect(harness.count(.duplicate) == 2 * 10)
        }
    }

    // MARK: - Failures

    @Test func unansweredBeaconsTimeOutAsFailedAndAreLoggedOnce() async throws {
        let endpoint = try await BeaconEndpoint.start(.silent)
        defer { Task { await endpoint.stop() } }
        var configuration = BeaconDispatcher.Configuration()
        // Long enough that a loaded machine (a full parallel run) still connects before it ends:
        // at 200 ms all five once timed out before the endpoint accepted any.
        configuration.requestTimeout = .seconds(1)
        try await Self.withDispatcher(configuration) { harness in
            let started = ContinuousClock.now
            harness.dispatcher.fire(session: "s", Self.beacons(ad: "ad", session: "s", url: endpoint.url))
            try await Self.eventually("five failures") { harness.count(.failed) == 5 }
            #expect(ContinuousClock.now - started >= .seconds(1))
            // Each was sent; on a loaded machine one can time out before the endpoint accepts it,
            // so the endpoint sees at most five.
            #expect((1...5).contains(endpoint.requests.count))
            #expect(harness.count(.sent) == 0)
            #expect(harness.count(.failed, .midpoint) == 1)
            #expect(harness.log.count("are failing", atLeast: .warning) == 1, "\(harness.log.lines)")
            #expect(harness.log.snapshot.count == 1, "\(harness.log.lines)")
        }
    }

    @Test func refusedConnectionsAreFailed() async throws {
        let port = try await BeaconEndpoint.refusedPort()
        try await Self.withDispatcher { harness in
            harness.dispatcher.fire(
                session: "s", Self.beacons(ad: "ad", session: "s", events: [.impression, .complete]) { "http://127.0.0.1:\(port)\($0)" })
            try await Self.eventually("two failures") { harness.count(.failed) == 2 }
            #expect(harness.count(.failed, .impression) == 1 && harness.count(.failed, .complete) == 1)
            #expect(harness.count(.sent) == 0)
            #expect(harness.log.count("127.0.0.1:\(port) are failing") == 1, "\(harness.log.lines)")
        }
    }

    @Test func errorStatusesFailAndRecoveryIsLoggedOnce() async throws {
        let endpoint = try await BeaconEndpoint.start()
        defer { Task { await endpoint.stop() } }
        try await Self.withDispatcher { harness in
            harness.dispatcher.fire(
                session: "s", Self.beacons(ad: "ad", session: "s", urlsPerEvent: 3) { endpoint.url("/fail" + $0) })
            try await Self.eventually("fifteen failures") { harness.count(.failed) == 15 }
            #expect(harness.log.count("are failing") == 1, "\(harness.log.lines)")
            harness.dispatcher.fire(session: "s", Self.beacons(ad: "other", session: "s", url: endpoint.url))
            try await Self.eventually("five sent") { harness.count(.sent) == 5 }
            #expect(harness.log.count("delivered again") == 1, "\(harness.log.lines)")
            #expect(harness.log.snapshot.count == 2, "\(harness.log.lines)")
        }
    }

    // MARK: - Bounds and lifecycle

    @Test func fullQueueDropsCountsAndOffersTheBeaconAgainLater() async throws {
        let endpoint = try await BeaconEndpoint.start()
        defer { Task { await endpoint.stop() } }
        var configuration = BeaconDispatcher.Configuration()
        configuration.queueCapacity = 2
        try await Self.withDispatcher(configuration, running: false) { harness in
            let beacons = Self.beacons(ad: "ad", session: "s", events: [.impression, .firstQuartile, .midpoint, .thirdQuartile], url: endpoint.url)
            // Not running yet: two fit in the queue, two are dropped.
            harness.dispatcher.fire(session: "s", beacons)
            #expect(harness.count(.dropped) == 2)
            #expect(harness.count(.dropped, .midpoint) == 1 && harness.count(.dropped, .thirdQuartile) == 1)
            harness.dispatcher.fire(session: "s", beacons)
            #expect(harness.count(.duplicate) == 2)
            #expect(harness.count(.dropped) == 4)
            #expect(harness.log.count("queue is full", atLeast: .warning) == 1, "\(harness.log.lines)")

            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await harness.dispatcher.run() }
                    try await Self.eventually("the queued two") { harness.count(.sent) == 2 }
                    // The dropped ones were not marked as fired: the next reload sends them.
                    harness.dispatcher.fire(session: "s", beacons)
                    try await Self.eventually("all four") { harness.count(.sent) == 4 }
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
            #expect(harness.count(.duplicate) == 4)
            #expect(endpoint.requests.sorted() == beacons.flatMap(\.urls).map(endpoint.target).sorted())
            #expect(harness.log.count("accepts beacons again") == 1, "\(harness.log.lines)")
        }
    }

    @Test func gracefulShutdownSendsWhatIsQueuedThenRefusesMore() async throws {
        let endpoint = try await BeaconEndpoint.start()
        defer { Task { await endpoint.stop() } }
        try await Self.withDispatcher(running: false) { harness in
            harness.dispatcher.fire(session: "s", Self.beacons(ad: "ad", session: "s", urlsPerEvent: 4, url: endpoint.url))
            try await testGracefulShutdown { trigger in
                trigger.triggerGracefulShutdown()
                try await harness.dispatcher.run()
            }
            #expect(harness.count(.sent) == 20)
            #expect(endpoint.requests.count == 20)
            harness.dispatcher.fire(session: "s", Self.beacons(ad: "late", session: "s", url: endpoint.url))
            #expect(harness.count(.dropped) == 5)
            try await Task.sleep(for: .milliseconds(100))
            #expect(endpoint.requests.count == 20)
        }
    }

    @Test func drainStopsAtItsDeadline() async throws {
        let endpoint = try await BeaconEndpoint.start(.silent)
        defer { Task { await endpoint.stop() } }
        var configuration = BeaconDispatcher.Configuration()
        configuration.maxConcurrentRequests = 1
        configuration.requestTimeout = .seconds(1)
        configuration.drainTimeout = .milliseconds(500)
        try await Self.withDispatcher(configuration, running: false) { harness in
            // 60 GETs to a silent endpoint, one at a time: a minute of timeouts without the deadline.
            harness.dispatcher.fire(
                session: "s", Self.beacons(ad: "ad", session: "s", urlsPerEvent: 12, url: endpoint.url))
            let started = ContinuousClock.now
            try await testGracefulShutdown { trigger in
                trigger.triggerGracefulShutdown()
                try await harness.dispatcher.run()
            }
            // The first GET times out (1 s); by then the drain time is over and the rest are dropped.
            #expect(harness.count(.failed) == 1)
            #expect(harness.count(.dropped) == 59)
            #expect(endpoint.requests.count == 1)
            #expect(ContinuousClock.now - started < .seconds(30), "half the minute it would take without the deadline")
        }
    }

    @Test func cancellationStopsAtOnceAndCountsTheRestAsDropped() async throws {
        let endpoint = try await BeaconEndpoint.start(.silent)
        defer { Task { await endpoint.stop() } }
        var configuration = BeaconDispatcher.Configuration()
        configuration.maxConcurrentRequests = 2
        configuration.requestTimeout = .seconds(60)
        try await Self.withDispatcher(configuration, running: false) { harness in
            harness.dispatcher.fire(session: "s", Self.beacons(ad: "ad", session: "s", url: endpoint.url))
            let run = Task { try await harness.dispatcher.run() }
            try await Self.eventually("two in flight") { endpoint.requests.count == 2 }
            let started = ContinuousClock.now
            run.cancel()
            try await run.value
            // In-flight GETs would run into their 60 s timeout if cancelling did not stop them.
            #expect(ContinuousClock.now - started < .seconds(30), "half of the requests' timeout")
            #expect(harness.count(.dropped) == 5)
            #expect(harness.count(.failed) == 0 && harness.count(.sent) == 0)
        }
    }

    // MARK: - Dedupe memory

    @Test func recentKeysForgetTheLeastRecentlySeenFirst() {
        var keys = RecentKeys<String>(capacity: 3)
        for key in ["a", "b", "c"] { keys.insert(key) }
        var seen = keys.touch("a")
        #expect(seen)
        keys.insert("d")  // "a" was seen again, so "b" goes
        #expect(keys.count == 3)
        seen = keys.touch("b")
        #expect(!seen)
        let held = ["a", "c", "d"].map { keys.touch($0) }
        #expect(held == [true, true, true])
        keys.insert("e")  // every key is marked: one full sweep, then the oldest slot goes
        #expect(keys.count == 3)
        let after = ["a", "c", "d", "e"].map { keys.touch($0) }
        #expect(after == [true, false, true, true])
    }

    @Test func recentKeysNeverHoldMoreThanTheirCapacity() {
        var random = SeededRandom(seed: 7)
        var keys = RecentKeys<Int>(capacity: 100)
        var present: Set<Int> = []
        for _ in 0..<10_000 {
            let key = random.int(0...300)
            if keys.touch(key) {
                present.insert(key)
            } else {
                keys.insert(key)
            }
            #expect(keys.count <= 100)
        }
        // A key touched on every step is never evicted.
        var hot = RecentKeys<Int>(capacity: 10)
        hot.insert(-1)
        for key in 0..<1000 {
            let held = hot.touch(-1)
            #expect(held, "evicted at \(key)")
            hot.insert(key)
        }
        #expect(!present.isEmpty)
    }

    @Test func hostsInLogsNeverIncludePathsOrCredentials() {
        #expect(BeaconDispatcher.host(of: "https://ads.example:8443/imp?sid=secret") == "ads.example:8443")
        #expect(BeaconDispatcher.host(of: "http://user:pw@ads.example/x") == "ads.example")
        #expect(BeaconDispatcher.host(of: "https://ads.example") == "ads.example")
        #expect(BeaconDispatcher.host(of: "garbage") == "?")
    }
}
