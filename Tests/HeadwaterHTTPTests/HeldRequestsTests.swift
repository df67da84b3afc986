import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import HeadwaterHTTP

/// The held-request table on its own (``HeldRequests``), on an embedded loop: what a publish asks
/// of the responder, what it answers, and when. The wire behaviour (blocking reloads on both
/// HTTP/1 paths and HTTP/2) is `BlockingReloadTests`'.
@Suite struct HeldRequestsTests {
    /// What the table did with the waiters it was given.
    final class Log {
        var decisions: [String] = []
        var answers: [(target: String, status: UInt)] = []
        /// The shared HTTP/1.1 encoding each answer carried (``SharedHTTP1Answer``), by identity.
        var encodings: [ObjectIdentifier?] = []
    }

    static let hold = OriginResponse.Hold(channel: "demo", targetDuration: 1)

    // A table on its own loop, and what it did, for each test (Swift Testing makes a suite value per test).
    let loop = EmbeddedEventLoop()
    let held: HeldRequests
    let log = Log()

    init() { held = HeldRequests(eventLoop: loop, metrics: nil) }

    static func request(_ target: String, gzip: Bool = false) -> OriginRequest {
        OriginRequest(
            method: .GET, target: target, version: .http1_1,
            fields: .init(acceptEncoding: gzip ? "gzip" : nil, userAgent: "test"))
    }

    /// A waiter whose responder answers `200` once `ready` says so, and holds before.
    static func waiter(
        _ request: OriginRequest, route: Route, log: Log, ready: @escaping () -> Bool,
        deadline: NIODeadline = .now() + .seconds(3),
        body: @escaping () -> OriginResponse.Body = { .bytes(ByteBuffer(string: "#EXTM3U\n")) }
    ) -> HeldRequests.Waiter {
        HeldRequests.Waiter(
            hold: hold, deadline: deadline, request: request, route: route,
            respond: { request, _ in
                log.decisions.append(request.target)
                var response = OriginResponse(status: .ok, body: body())
                if !ready() { response.hold = hold }
                return response
            },
            answer: { response in
                log.answers.append((request.target, response.status.code))
                log.encodings.append(response.sharedHTTP1.map(ObjectIdentifier.init))
                var response = response
                response.discardBody()  // as a writer would: a file body is closed once
            })
    }

    @Test("equal requests for a shared playlist are decided once per publish, and all answered")
    func equalRequestsShareOneDecision() {
        var ready = false
        let target = "/live/demo/v1.m3u8?_HLS_msn=101"
        let route = Route.mediaPlaylist(channel: "demo", rendition: "v1")
        for _ in 0..<20 { _ = held.add(Self.waiter(Self.request(target), route: route, log: log, ready: { ready })) }
        for _ in 0..<10 { _ = held.add(Self.waiter(Self.request(target, gzip: true), route: route, log: log, ready: { ready })) }
        let iFrames = "/live/demo/v1.iframes.m3u8?_HLS_msn=101"
        for _ in 0..<5 {
            _ = held.add(Self.waiter(Self.request(iFrames), route: .iFramePlaylist(channel: "demo", rendition: "v1"), log: log, ready: { ready }))
        }

        held.published("demo")  // not yet: one decision per distinct request, all still held
        #expect(log.decisions.count == 3, "\(log.decisions)")
        #expect(log.answers.isEmpty)
        #expect(held.heldCount == 35)

        ready = true
        log.decisions = []
        held.published("demo")
        #expect(log.decisions.count == 3, "identity, gzip and the I-frame playlist: \(log.decisions)")
        #expect(log.answers.count == 35 && log.answers.allSatisfy { $0.status == 200 })
        #expect(held.heldCount == 0)
        held.published("demo")
        #expect(log.answers.count == 35, "answered once")
    }

    @Test("stitched playlists and hinted parts are decided for each request: a session's effects, an open file")
    func perViewerAnswersAreNotShared() {
        let stitched = Route.stitchedPlaylist(channel: "demo", rendition: "v1", session: "s.t")
        for _ in 0..<4 {
            _ = held.add(Self.waiter(Self.request("/ssai/demo/v1.m3u8?session=s.t&_HLS_msn=101"), route: stitched, log: log, ready: { true }))
        }
        let part = Route.segment(channel: "demo", rendition: "v1", name: "101.1.ts")
        for _ in 0..<3 { _ = held.add(Self.waiter(Self.request("/live/demo/v1/101.1.ts"), route: part, log: log, ready: { true })) }
        held.published("demo")
        #expect(log.decisions.count == 7)
        #expect(log.answers.count == 7)
    }

    @Test("a shared playlist's decision that must not be shared (a file body) is asked again for the next request")
    func unshareableDecisionIsNotReused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("part.ts", [1])
        let route = Route.mediaPlaylist(channel: "demo", rendition: "v1")
        for _ in 0..<3 {
            _ = held.add(
                Self.waiter(
                    Self.request("/live/demo/v1.m3u8?_HLS_msn=101"), route: route, log: log, ready: { true },
                    body: { .file(try! OpenFile.open(ConfinedPath(file: path, symlinks: .never)).get(), offset: 0, count: 1) }))
        }
        held.published("demo")
        #expect(log.decisions.count == 3)
        #expect(log.answers.count == 3)
    }

    @Test("past its deadline a held request gets the hold's own timeout answer, and leaves the table")
    func deadlineAnswersTheTimeout() throws {
        _ = held.add(
            Self.waiter(
                Self.request("/live/demo/v1.m3u8?_HLS_msn=200"), route: .mediaPlaylist(channel: "demo", rendition: "v1"), log: log,
                ready: { false }, deadline: loop.now + .milliseconds(250)))
        loop.advanceTime(by: .milliseconds(200))
        #expect(log.answers.isEmpty, "never early")
        loop.advanceTime(by: .milliseconds(100))
        #expect(log.answers.map(\.status) == [503])
        #expect(log.decisions.isEmpty, "the timeout's answer is the hold's, not a new decision")
        #expect(held.heldCount == 0)
    }

    @Test("a removed request is neither decided nor answered")
    func removedRequestIsForgotten() {
        let ticket = held.add(
            Self.waiter(
                Self.request("/live/demo/v1.m3u8?_HLS_msn=101"), route: .mediaPlaylist(channel: "demo", rendition: "v1"), log: log,
                ready: { true }))
        held.remove(ticket, channel: "demo")
        held.published("demo")
        loop.advanceTime(by: .seconds(5))
        #expect(log.decisions.isEmpty && log.answers.isEmpty)
        #expect(held.heldCount == 0)
    }

    @Test("equal requests share decisions but keep their own deadlines and removals")
    func groupMembersExpireAndLeaveAlone() {
        var ready = false
        let target = "/live/demo/v1.m3u8?_HLS_msn=300"
        let route = Route.mediaPlaylist(channel: "demo", rendition: "v1")
        let early = loop.now + .milliseconds(250)
        _ = held.add(Self.waiter(Self.request(target), route: route, log: log, ready: { ready }, deadline: early))
        let removed = held.add(Self.waiter(Self.request(target), route: route, log: log, ready: { ready }, deadline: loop.now + .seconds(2)))
        _ = held.add(Self.waiter(Self.request(target), route: route, log: log, ready: { ready }, deadline: loop.now + .seconds(2)))
        loop.advanceTime(by: .milliseconds(300))
        #expect(log.answers.map(\.status) == [503], "the early one timed out alone")
        held.remove(removed, channel: "demo")
        ready = true
        held.published("demo")
        #expect(log.decisions.count == 1)
        #expect(log.answers.map(\.status) == [503, 200], "only the one still held is answered")
        #expect(held.heldCount == 0)
    }

    @Test("a publish releasing more than one task's worth writes the first answers at once and the rest in later tasks")
    func largeReleaseIsWrittenInTasks() {
        var ready = false
        let count = HeldRequests.answersPerTask * 2 + 10
        let route = Route.mediaPlaylist(channel: "demo", rendition: "v1")
        for _ in 0..<count { _ = held.add(Self.waiter(Self.request("/live/demo/v1.m3u8?_HLS_msn=400"), route: route, log: log, ready: { ready })) }
        ready = true
        held.published("demo")
        #expect(log.answers.count == HeldRequests.answersPerTask, "one task's worth now")
        #expect(held.heldCount == 0, "all out of the table before any answer")
        loop.run()
        #expect(log.answers.count == count, "the rest in the tasks after")
        #expect(log.decisions.count == 1)
    }

    @Test("a group's one answer carries one shared HTTP/1.1 encoding; a lone request's and a stitched one's none")
    func groupAnswersShareOneEncoding() {
        let route = Route.mediaPlaylist(channel: "demo", rendition: "v1")
        for _ in 0..<4 { _ = held.add(Self.waiter(Self.request("/live/demo/v1.m3u8?_HLS_msn=500"), route: route, log: log, ready: { true })) }
        _ = held.add(Self.waiter(Self.request("/live/demo/v1.m3u8?_HLS_msn=500", gzip: true), route: route, log: log, ready: { true }))
        let stitched = Route.stitchedPlaylist(channel: "demo", rendition: "v1", session: "s.t")
        _ = held.add(Self.waiter(Self.request("/ssai/demo/v1.m3u8?session=s.t&_HLS_msn=500"), route: stitched, log: log, ready: { true }))
        held.published("demo")
        let byTarget = Dictionary(grouping: zip(log.answers, log.encodings), by: { "\($0.0.target) \($0.1 == nil ? "none" : "shared")" })
        let group = log.answers.indices.filter { log.answers[$0].target.hasPrefix("/live/") && log.encodings[$0] != nil }
        #expect(group.count == 4, "\(byTarget.keys.sorted())")
        #expect(Set(group.map { log.encodings[$0] }).count == 1, "one encoding for the four")
        #expect(log.encodings.filter { $0 == nil }.count == 2, "the lone gzip request and the stitched one: \(byTarget.keys.sorted())")
    }

    @Test("a shared encoding answers only the second and the method it was made for")
    func sharedEncodingIsForItsSecondAndMethod() {
        let shared = SharedHTTP1Answer()
        #expect(shared.bytes(second: 100, isHead: false) == nil)
        shared.keep(ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n#EXTM3U\n"), second: 100, isHead: false)
        #expect(shared.bytes(second: 100, isHead: false) == ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n#EXTM3U\n"))
        #expect(shared.bytes(second: 101, isHead: false) == nil, "a later Date")
        #expect(shared.bytes(second: 100, isHead: true) == nil, "a HEAD has no body")
    }

    @Test("one publish's answers are written connection by connection, however their requests arrived")
    func answersAreWrittenByConnection() {
        let connections = (0..<3).map { _ in EmbeddedChannel(loop: loop) }
        var order: [Int] = []
        let route = Route.mediaPlaylist(channel: "demo", rendition: "v1")
        for index in 0..<30 {
            let connection = index % 3  // arriving interleaved: 0, 1, 2, 0, 1, 2, …
            _ = held.add(
                HeldRequests.Waiter(
                    hold: Self.hold, deadline: .now() + .seconds(3), request: Self.request("/live/demo/v1.m3u8?_HLS_msn=600"),
                    route: route, connection: connections[connection],
                    respond: { _, _ in OriginResponse(status: .ok, body: .bytes(ByteBuffer(string: "#EXTM3U\n"))) },
                    answer: { _ in order.append(connection) }))
        }
        held.published("demo")
        let runs = zip(order, order.dropFirst()).filter { $0 != $1 }.count + 1
        #expect(order.count == 30)
        #expect(runs == 3, "each connection's answers together: \(order)")
        for connection in connections { _ = try? connection.finish(acceptAlreadyClosed: true) }
    }
}
