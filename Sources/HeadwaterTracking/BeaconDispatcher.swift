public import AsyncHTTPClient
public import Logging
public import Metrics
import NIOCore
import NIOHTTP1
public import ServiceLifecycle
import Synchronization

/// Sends ad tracking beacons for sessions, each at most once per node, without ever making a
/// playlist request wait.
///
/// The origin calls ``fire(session:_:personalize:)`` with ``AdTracking/dueBeacons(in:adClass:)`` of
/// every stitched playlist it serves (computed once per shared playlist, the URLs made the session's
/// only when queued); the call only takes a lock, and ``run()`` (a `Service` in the server's
/// `ServiceGroup`) sends the GETs in the background.
///
/// - **Once per (session, ad, event), per node.** Seen keys are kept in a bounded set
///   (``Configuration/dedupeCapacity``, 200,000 by default: about 10 MB, since a key is a 128-bit
///   hash). The set forgets the keys not listed for the longest time first, so a key is forgotten
///   only after that many *other* keys were seen since its session last listed it; keep it above
///   the number of (session, ad, event) triples listed in one playlist window at peak. Nodes do
///   not share the set: a session whose requests move between nodes during an ad can fire an
///   event once per node.
/// - **Bounded work.** At most ``Configuration/maxConcurrentRequests`` GETs are in flight; at most
///   ``Configuration/queueCapacity`` wait. When the queue is full a beacon is dropped, counted and
///   *not* marked seen, so the session's next playlist reload offers it again while the ad's point
///   is still listed.
/// - **No retries.** A failed GET (error, status ≥ 400, or no complete answer within
///   ``Configuration/requestTimeout``) is counted and not repeated: ad servers count a beacon on
///   arrival, so resending one whose answer was lost would count it twice.
/// - **Observable.** `headwater_beacons_total{event, outcome}` counts every URL as `sent`, `failed`,
///   `dropped` or `duplicate`. Failures are logged once per host when that host starts failing and
///   once when it recovers; a full queue once when it fills and once when it accepts again.
/// - **Graceful shutdown.** ``run()`` stops accepting, sends what is queued for at most
///   ``Configuration/drainTimeout`` (then counts the rest as dropped), waits for the GETs in
///   flight, and returns. Cancellation stops at once; what was queued is counted as dropped.
public final class BeaconDispatcher: Service, Sendable {
    public struct Configuration: Sendable, Hashable {
        /// GETs in flight at once.
        public var maxConcurrentRequests = 32
        /// Beacon URLs waiting to be sent, beyond those in flight.
        public var queueCapacity = 10_000
        /// How long one GET may take, to the last byte of its answer.
        public var requestTimeout: Duration = .seconds(2)
        /// (session, ad, event) keys remembered for dedupe.
        public var dedupeCapacity = 200_000
        /// After graceful shutdown begins, how long queued beacons are still sent.
        public var drainTimeout: Duration = .seconds(5)
        /// The `User-Agent` of beacon requests.
        public var userAgent = "Headwater"

        public init() {}
    }

    /// What became of one beacon URL (the `outcome` dimension).
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
        /// The ad server answered with a 2xx or 3xx status.
        case sent
        /// An error, a timeout or a status of 400 or more.
        case failed
        /// Not sent: the queue was full, or the dispatcher was shutting down.
        case dropped
        /// Already fired for this session.
        case duplicate
    }

    /// The metric every outcome is counted under.
    public static let metricLabel = "headwater_beacons_total"
    /// Failing hosts tracked for logging; beyond this, newly failing hosts are counted, not logged.
    static let maxTrackedFailingHosts = 1024
    /// Answer bytes read at most (tracking pixels are tiny); the rest is not waited for.
    static let maxBodyBytes = 64 * 1024

    private struct Job: Sendable {
        var url: String
        var event: AdTrackingEvent
        var dateRangeID: String
    }

    private struct Key: Hashable {
        var high: UInt64
        var low: UInt64
    }

    private enum Phase {
        case accepting
        case draining(until: ContinuousClock.Instant)
        case stopped
    }

    private struct State {
        var seen: RecentKeys<Key>
        /// URLs waiting in the stream, by event (to count them as dropped if never sent).
        var queued: [AdTrackingEvent: Int] = [:]
        var queuedTotal = 0
        var phase = Phase.accepting
        var running = false
        var queueFull = false
        var failingHosts: Set<String> = []
    }

    public let configuration: Configuration
    private let httpClient: HTTPClient
    private let logger: Logger
    /// By outcome, then event, in `allCases` order (``count(_:_:by:)``): no hashing per count.
    private let counters: [Counter]
    private let state: Mutex<State>
    private let stream: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    /// - Parameters:
    ///   - httpClient: the process's shared client; the dispatcher does not shut it down.
    ///   - metricsFactory: where the counters go (tests pass their own).
    public init(
        httpClient: HTTPClient,
        configuration: Configuration = Configuration(),
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.httpClient = httpClient
        self.configuration = configuration
        self.logger = logger
        var counters: [Counter?] = Array(repeating: nil, count: Outcome.allCases.count * AdTrackingEvent.allCases.count)
        for outcome in Outcome.allCases {
            for event in AdTrackingEvent.allCases {
                counters[Self.counterIndex(outcome, event)] = Counter(
                    label: Self.metricLabel,
                    dimensions: [("event", event.rawValue), ("outcome", outcome.rawValue)],
                    factory: metricsFactory
                )
            }
        }
        self.counters = counters.map { $0! }  // every index is filled: counterIndex is one-to-one
        self.state = Mutex(State(seen: RecentKeys(capacity: max(1, configuration.dedupeCapacity))))
        (self.stream, self.continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Queues the beacons of `session` not fired before, and returns at once.
    ///
    /// - Parameter personalize: makes a beacon's URLs the session's, for beacons taken from a
    ///   playlist rendered for a placeholder session (``AdTracking/dueBeacons(in:adClass:)`` of a
    ///   shared template): applied only to the beacons queued, after the dedupe, so a reload that
    ///   fires nothing new costs no string work.
    public func fire(session: String, _ beacons: [DueBeacon], personalize: ((String) -> String)? = nil) {
        guard !beacons.isEmpty else { return }
        // By AdTrackingEvent.quarters: the common call (every beacon already fired) allocates nothing.
        var duplicates = (0, 0, 0, 0, 0)
        var dropped: [AdTrackingEvent: Int] = [:]
        let hashers = Self.hashers(session: session)
        var queueFilled = false
        var queueRecovered = false
        state.withLock { state in
            for beacon in beacons {
                let key = Self.key(hashers, beacon: beacon)
                if state.seen.touch(key) {
                    switch beacon.event {
                    case .impression: duplicates.0 += beacon.urls.count
                    case .firstQuartile: duplicates.1 += beacon.urls.count
                    case .midpoint: duplicates.2 += beacon.urls.count
                    case .thirdQuartile: duplicates.3 += beacon.urls.count
                    case .complete: duplicates.4 += beacon.urls.count
                    }
                    continue
                }
                guard case .accepting = state.phase,
                    state.queuedTotal + beacon.urls.count <= configuration.queueCapacity
                else {
                    dropped[beacon.event, default: 0] += beacon.urls.count
                    if case .accepting = state.phase, !state.queueFull {
                        state.queueFull = true
                        queueFilled = true
                    }
                    continue
                }
                if state.queueFull {
                    state.queueFull = false
                    queueRecovered = true
                }
                state.seen.insert(key)
                state.queued[beacon.event, default: 0] += beacon.urls.count
                state.queuedTotal += beacon.urls.count
                // Yielded under the lock, so that every URL counted as queued while accepting is
                // either consumed or still counted when run() stops (and then counted as dropped).
                for url in beacon.urls {
                    let url = personalize.map { $0(url) } ?? url
                    _ = continuation.yield(Job(url: url, event: beacon.event, dateRangeID: beacon.dateRangeID))
                }
            }
        }
        for event in AdTrackingEvent.allCases {
            let urls =
                switch event {
                case .impression: duplicates.0
                case .firstQuartile: duplicates.1
                case .midpoint: duplicates.2
                case .thirdQuartile: duplicates.3
                case .complete: duplicates.4
                }
            if urls > 0 { count(.duplicate, event, by: urls) }
        }
        for (event, urls) in dropped { count(.dropped, event, by: urls) }
        if queueFilled {
            logger.warning(
                "Ad beacon queue is full: beacons are dropped until it drains",
                metadata: ["ad.beacons.queue_capacity": "\(configuration.queueCapacity)"]
            )
        }
        if queueRecovered { logger.info("Ad beacon queue accepts beacons again") }
    }

    /// Sends queued beacons until graceful shutdown (then drains) or cancellation.
    public func run() async throws {
        let first = state.withLock { state in
            defer { state.running = true }
            return !state.running
        }
        precondition(first, "BeaconDispatcher.run() must be called once")
        await withGracefulShutdownHandler {
            await self.consume()
        } onGracefulShutdown: {
            self.state.withLock { state in
                if case .accepting = state.phase {
                    state.phase = .draining(until: .now + self.configuration.drainTimeout)
                }
            }
            self.continuation.finish()
        }
        // Whatever was still queued (after cancellation) was never sent.
        let unsent = state.withLock { state in
            state.phase = .stopped
            defer {
                state.queued = [:]
                state.queuedTotal = 0
            }
            return state.queued
        }
        continuation.finish()
        for (event, urls) in unsent where urls > 0 { count(.dropped, event, by: urls) }
    }

    private func consume() async {
        let limit = max(1, configuration.maxConcurrentRequests)
        await withTaskGroup(of: Void.self) { group in
            var inFlight = 0
            for await job in stream {
                if inFlight >= limit {
                    await group.next()
                    inFlight -= 1
                }
                dequeued(job)
                if isPastDrainDeadline() || Task.isCancelled {
                    count(.dropped, job.event)
                    continue
                }
                group.addTask { await self.send(job) }
                inFlight += 1
            }
            await group.waitForAll()
        }
    }

    private func send(_ job: Job) async {
        var request = HTTPClientRequest(url: job.url)
        request.headers.add(name: "User-Agent", value: configuration.userAgent)
        let timeout = TimeAmount.nanoseconds(Self.nanoseconds(configuration.requestTimeout))
        let problem: String?
        do {
            let response = try await httpClient.execute(request, timeout: timeout)
            var received = 0
            for try await chunk in response.body {
                received += chunk.readableBytes
                if received > Self.maxBodyBytes { break }
            }
            problem = response.status.code < 400 ? nil : "HTTP \(response.status.code)"
        } catch {
            if Task.isCancelled {
                count(.dropped, job.event)
                return
            }
            problem = "\(error)"
        }
        let host = Self.host(of: job.url)
        if let problem {
            count(.failed, job.event)
            let isNew = state.withLock { state in
                guard state.failingHosts.count < Self.maxTrackedFailingHosts else { return false }
                return state.failingHosts.insert(host).inserted
            }
            if isNew {
                logger.warning(
                    "Ad beacons to \(host) are failing; further failures are counted, not logged, until one succeeds",
                    metadata: [
                        "error.message": "\(problem)", "ad.beacon.event": "\(job.event.rawValue)",
                        "ad.date_range.id": "\(job.dateRangeID)",
                    ]
                )
            }
        } else {
            count(.sent, job.event)
            let recovered = state.withLock { state in
                state.failingHosts.isEmpty ? false : state.failingHosts.remove(host) != nil
            }
            if recovered { logger.info("Ad beacons to \(host) are delivered again") }
        }
    }

    // MARK: - Helpers

    private func dequeued(_ job: Job) {
        state.withLock { state in
            state.queued[job.event, default: 0] -= 1
            state.queuedTotal -= 1
        }
    }

    private func isPastDrainDeadline() -> Bool {
        state.withLock { state in
            if case .draining(let until) = state.phase { return ContinuousClock.now > until }
            return false
        }
    }

    private func count(_ outcome: Outcome, _ event: AdTrackingEvent, by amount: Int = 1) {
        counters[Self.counterIndex(outcome, event)].increment(by: Int64(amount))
    }

    /// The place of (`outcome`, `event`) in ``counters``.
    private static func counterIndex(_ outcome: Outcome, _ event: AdTrackingEvent) -> Int {
        let row: Int =
            switch outcome {
            case .sent: 0
            case .failed: 1
            case .dropped: 2
            case .duplicate: 3
            }
        return row * AdTrackingEvent.allCases.count + Int(event.quarters)
    }

    /// A 128-bit hash of (session, ad, event): two SipHash passes with the process's random seed, so
    /// keys cost 16 bytes whatever the ids' lengths, and collisions (one in about 2⁶⁴ pairs at the
    /// default capacity) cannot be chosen by a client that does not know the seed. The session is
    /// absorbed once per call (``hashers(session:)``), then each beacon into copies.
    private static func key(_ hashers: (high: Hasher, low: Hasher), beacon: DueBeacon) -> Key {
        var (high, low) = hashers
        high.combine(beacon.dateRangeID)
        high.combine(beacon.event.quarters)
        low.combine(beacon.dateRangeID)
        low.combine(beacon.event.quarters)
        return Key(
            high: UInt64(bitPattern: Int64(high.finalize())),
            low: UInt64(bitPattern: Int64(low.finalize()))
        )
    }

    /// The two hash states of ``key(_:beacon:)`` with the session absorbed.
    private static func hashers(session: String) -> (high: Hasher, low: Hasher) {
        var high = Hasher()
        high.combine(0 as UInt8)
        high.combine(session)
        var low = Hasher()
        low.combine(1 as UInt8)
        low.combine(session)
        return (high, low)
    }

    /// The host (and port) of an absolute URL, for log lines: never the path, which may carry
    /// session details.
    static func host(of url: String) -> String {
        let bytes = Array(url.utf8)
        let separator = Array("://".utf8)
        guard let schemeEnd = (0..<max(0, bytes.count - 2)).first(where: { bytes[$0..<($0 + 3)].elementsEqual(separator) })
        else { return "?" }
        let rest = bytes[(schemeEnd + 3)...]
        let end = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
        let authority = rest[..<(end ?? rest.endIndex)]
        let host = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[($0 + 1)...] } ?? authority
        return String(decoding: host, as: UTF8.self)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (ns, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : ns &+ attoseconds / 1_000_000_000
    }
}
