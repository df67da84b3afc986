import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import HeadwaterStitching
import HeadwaterTesting
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

/// Server-side ad tracking fires when a stitched playlist's body has been written to a `GET`, not
/// when the playlist is decided: a `HEAD`, a conditional request, a client gone before the body
/// went out fire nothing. What is counted is what the `onStitched` observer's per-session action
/// (in `headwater serve`, `BeaconDispatcher.fire`) is called with, on both of a connection's
/// paths: ``OriginFastPath`` (plain requests) and NIO's HTTP/1 pipeline with ``OriginHTTPHandler``
/// (a request with a conditional field goes there).
@Suite("Ad tracking fires after a GET's body is written")
struct BeaconTimingTests {
    /// Which of a connection's two paths answers: the full path takes any request with a
    /// conditional field (``FastRequestHead``), which stitched playlists ignore.
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case fast, full

        var extraField: String { self == .full ? "If-None-Match: \"stale\"\r\n" : "" }
        var testDescription: String { rawValue + " path" }
    }

    @Test("a HEAD of a stitched media playlist in an ad, three times, fires nothing; the GET after it fires once", arguments: Path.allCases)
    func headFiresNothing(path: Path) async throws {
        let origin = try TrackedOrigin()
        let session = try origin.trackedSessions[0]
        try await origin.withServer { port in
            try await RawClient.connect(port: port).run { inbound, outbound in
                var inbound = inbound
                var bytes: [UInt8] = []
                for _ in 0..<3 {
                    try await outbound.write(ByteBuffer(string: session.request("HEAD", path: path)))
                    bytes = []
                    let responses = try await inbound.readResponses(1, into: &bytes, bodiless: { _ in true })
                    let response = try #require(responses.first)
                    #expect(response.status == 200 && response.body.isEmpty)
                    #expect(Int(response.header("content-length") ?? "") ?? 0 > 0, "a HEAD says how long the GET's body is")
                }
                // On the same connection (one event loop, in order): had a HEAD fired, it would be
                // recorded before this GET's action.
                try await outbound.write(ByteBuffer(string: session.request("GET", path: path)))
                bytes = []
                let responses = try await inbound.readResponses(1, into: &bytes)
                #expect(responses.first?.status == 200 && responses.first?.text.contains("X-TRACKING-") == true)
            }
            try await origin.waitForCalls(1)
        }
        #expect(origin.calls.map(\.session) == [session.id], "only the GET fired: \(origin.calls)")
    }

    @Test("a conditional GET of a stitched playlist is answered 200 with the body (no validators) and fires once")
    func conditionalGetIsAnsweredInFull() async throws {
        let origin = try TrackedOrigin()
        let session = try origin.trackedSessions[0]
        try await origin.withServer { port in
            for field in ["If-None-Match: *", "If-Modified-Since: Sat, 01 Jan 2050 00:00:00 GMT"] {
                try await RawClient.connect(port: port).run { inbound, outbound in
                    var inbound = inbound
                    try await outbound.write(ByteBuffer(string: session.request("GET", fields: field + "\r\n")))
                    var bytes: [UInt8] = []
                    let response = try #require(try await inbound.readResponses(1, into: &bytes).first)
                    // A 304 here would carry no body and must fire nothing; stitched playlists
                    // have no ETag or Last-Modified, so there is no 304 to give.
                    #expect(response.status == 200, "\(field)")
                    #expect(response.header("etag") == nil && response.header("last-modified") == nil)
                    #expect(response.text.contains("X-TRACKING-"))
                }
            }
            try await origin.waitForCalls(2)
        }
        #expect(origin.calls.map(\.session) == [session.id, session.id], "each written 200 fired once: \(origin.calls)")
    }

    @Test(
        "a GET whose client resets the connection right after sending it fires nothing (the write fails)",
        arguments: Path.allCases)
    func resetBeforeTheBodyIsWrittenFiresNothing(path: Path) async throws {
        let origin = try TrackedOrigin()
        let sessions = try origin.trackedSessions
        let (gone, sentinel) = (sessions[0], sessions[1])
        // One event-loop thread of the server's own: once `/metrics` shows the reset request decided,
        // everything the server did for it, its failed write included, is done.
        try await origin.withServer(threads: 1) { port in
            // The server reads the request and, deciding it, reads the clock, which holds it there
            // while the client resets the connection (SO_LINGER 0: the close at the end of `run`
            // sends RST, which loopback delivers before close returns). Then the server writes the
            // playlist to a reset connection: the write fails.
            defer { origin.clock.open() }
            origin.clock.arm()
            let client = try await RawClient.connect(port: port)
            try await client.run { _, _ in
                let channel = client.channel.channel
                try await (channel as! any SocketOptionProvider).setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
                try await channel.writeAndFlush(ByteBuffer(string: gone.request("GET", path: path))).get()
                for _ in 0..<500 where !origin.clock.isHolding { try await Task.sleep(for: .milliseconds(10)) }
                try #require(origin.clock.isHolding, "the server read the request and is deciding it")
            }
            origin.clock.open()
            var decided = 0
            for _ in 0..<500 {
                decided = try await origin.stitchedPlaylistsServed(port: port)
                if decided >= 1 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(decided == 1, "the server decided the reset request's playlist")
            #expect(origin.calls.isEmpty, "nothing fired for the request whose write failed: \(origin.calls)")
            // The same server fires for a GET it writes.
            try await RawClient.connect(port: port).run { inbound, outbound in
                var inbound = inbound
                try await outbound.write(ByteBuffer(string: sentinel.request("GET", path: path)))
                var bytes: [UInt8] = []
                #expect(try await inbound.readResponses(1, into: &bytes).first?.status == 200)
            }
            try await origin.waitForCalls(1)
        }
        #expect(origin.calls.map(\.session) == [sentinel.id], "only the written GET fired: \(origin.calls)")
    }

    @Test("a written GET fires each due action exactly once: one per rendition's playlist, with the session", arguments: Path.allCases)
    func writtenGetFiresOnce(path: Path) async throws {
        let origin = try TrackedOrigin()
        let session = try origin.trackedSessions[0]
        try await origin.withServer { port in
            try await RawClient.connect(port: port).run { inbound, outbound in
                var inbound = inbound
                for rendition in ["v1", "v0"] {
                    try await outbound.write(ByteBuffer(string: session.request("GET", rendition: rendition, path: path)))
                    var bytes: [UInt8] = []
                    let response = try #require(try await inbound.readResponses(1, into: &bytes).first)
                    #expect(response.status == 200 && response.text.contains("X-TRACKING-"), "\(rendition)")
                }
            }
            try await origin.waitForCalls(2)
            try await Task.sleep(for: .milliseconds(100))  // and no more come
        }
        let calls = origin.calls
        #expect(calls.map(\.session) == [session.id, session.id], "\(calls)")
        #expect(Set(calls.map(\.action)).count == 2, "each rendition's action once, not one of them twice: \(calls)")
    }

    // MARK: - The write-failure branch, deterministically, on an EmbeddedChannel

    @Test("a GET whose write fails fires nothing; the same GET written fires once (EmbeddedChannel)", arguments: Path.allCases)
    func failedWriteFiresNothing(path: Path) throws {
        let origin = try TrackedOrigin()
        let session = try origin.trackedSessions[0]
        for failing in [true, false] {
            let fullPath = FullPathProgress()
            let channel = try origin.embeddedConnection(progress: fullPath)
            let writes = FailingWrites(failing: failing)
            try channel.pipeline.syncOperations.addHandler(writes, position: .first)
            try channel.writeInbound(ByteBuffer(string: session.request("GET", path: path)))
            #expect(writes.attempted > 0, "the response was written (and \(failing ? "failed" : "succeeded"))")
            #expect(origin.calls.count == (failing ? 0 : 1), "failing: \(failing), \(path): \(origin.calls)")
            #expect(fullPath.responsesFinished == (path == .full ? 1 : 0), "answered by the \(path) path")
            // A failed write closes the connection; `acceptAlreadyClosed` still runs the loop's
            // pending teardown, which otherwise keeps the channel and its pipeline alive for good
            // (LeakSanitizer's one report in the suite).
            _ = try channel.finish(acceptAlreadyClosed: true)
        }
        #expect(origin.calls.map(\.session) == [session.id])
    }

    @Test("the hook belongs to the 200 body: a HEAD drops it, a 304 or error made of the response does not call it")
    func hookOnlyForTheBody() {
        var response = OriginResponse(status: .ok, body: .bytes(ByteBuffer(string: "#EXTM3U\n")))
        response.afterBodyWritten = {}
        #expect(response.afterBodyWrittenIfSent != nil)
        var head = response
        head.discardBody()
        #expect(head.afterBodyWritten == nil && head.afterBodyWrittenIfSent == nil)
        var notModified = response
        notModified.status = .notModified
        #expect(notModified.afterBodyWrittenIfSent == nil)
        var failed = response
        failed.status = .preconditionFailed
        #expect(failed.afterBodyWrittenIfSent == nil)
    }
}

// MARK: - Fixture

/// The committed demo channel (Public/demo) stitched with Config/ads.yaml, 3 s into a scheduled
/// break, where most TV viewers' pod opens with `ad1`, whose tracking URLs name the session; an
/// `onStitched` observer whose per-session action records what it is called with.
private final class TrackedOrigin: Sendable {
    struct Call: Sendable, CustomStringConvertible {
        /// Which action: one per prepared playlist (a rendition, with one set of pods).
        var action: Int
        var session: String
        var description: String { "action \(action) for \(session)" }
    }

    struct Session: Sendable {
        var id: String
        var token: String

        func request(_ method: String, rendition: String = "v1", path: BeaconTimingTests.Path = .fast, fields: String = "")
            -> String
        {
            "\(method) /ssai/demo/\(rendition).m3u8?session=\(token) HTTP/1.1\r\nHost: origin\r\n\(path.extraField)\(fields)\r\n"
        }
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let package = try! LoopPackage.load(multivariantPath: repository.appendingPathComponent("Public/demo/master.m3u8").path)
    /// 2026-11-21T17:36:00Z, on a minute: the schedule's break starts here (µs).
    static let breakStart: Int64 = 1_795_282_560_000_000
    /// When the requests are served: 3 s into the break (µs).
    static let now = breakStart + 3_000_000

    final class Recorder: Sendable {
        let state = Mutex<(actions: Int, calls: [Call])>((0, []))
    }

    let registry: ChannelRegistry
    let insertion: AdInsertion
    /// The servers' clock, at ``now``.
    let clock = GatedClock(now)
    private let recorder: Recorder
    private let tokens: [Session]

    init() throws {
        let ads = try AdConfiguration.load(
            file: Self.repository.appendingPathComponent("Config/ads.yaml").path,
            publicDirectory: Self.repository.appendingPathComponent("Public").path, version: 1)
        let ruleBook = AdRuleBook(ads.ruleSet)
        let recorder = Recorder()
        let registry = ChannelRegistry()
        let insertion = AdInsertion(
            registry: registry, ruleBook: ruleBook, signer: try SessionSigner(secret: Array("0123456789abcdef".utf8)),
            adminToken: nil, logger: quietLogger,
            onStitched: { playlist in
                // As `headwater serve` does: an action only for a playlist that lists tracking URLs.
                let tracked = playlist.segments.contains { segment in
                    segment.tags.dateRanges.contains { $0.attributes.string("X-TRACKING-IMPRESSION") != nil }
                }
                guard tracked else { return nil }
                let action = recorder.state.withLock { state in
                    state.actions += 1
                    return state.actions
                }
                return { session in recorder.state.withLock { $0.calls.append(Call(action: action, session: session.id)) } }
            },
            metrics: OriginMetrics())
        registry.setBreaks(
            ChannelBreaks(
                channel: "demo", schedule: try BreakSchedule(every: .seconds(60), duration: .seconds(20)), ruleBook: ruleBook,
                logger: quietLogger, metrics: OriginMetrics()),
            for: "demo")
        let channel = LoopChannel(name: "demo", package: Self.package, windowSeconds: 30, startedAt: 0)
        let sessionStart = Self.breakStart - 6_000_000
        registry.publish(channel.snapshot(at: sessionStart))
        // TV viewers with fixed ids (a viewer's pod is a hash of its id): most get the pod with ad1.
        var sessions: [Session] = []
        for index in 0..<12 {
            let id = "tv-viewer-\(index)"
            let master = try insertion.startSession(
                channel: "demo", query: [(name: "device", value: "tv")], headers: [(name: "X-Playback-Session-Id", value: id)],
                now: sessionStart / 1000
            ).get()
            let uri = try #require(try PlaylistParser().parseMultivariant(master.bytes).variants.first { $0.uri.hasPrefix("v1.m3u8") }?.uri)
            sessions.append(Session(id: id, token: String(uri.split(separator: "=", maxSplits: 1)[1])))
        }
        registry.publish(channel.snapshot(at: Self.now))
        // Deciding a playlist fires nothing, so asking which sessions have tracking due is free.
        self.tokens = try sessions.filter { session in
            try ["v0", "v1"].allSatisfy { rendition in
                try insertion.stitchedPlaylist(channel: "demo", rendition: rendition, token: session.token, now: Self.now / 1000)
                    .get().dueTracking != nil
            }
        }
        self.registry = registry
        self.insertion = insertion
        self.recorder = recorder
    }

    /// Sessions whose v0 and v1 playlists have tracking due now (at least two).
    var trackedSessions: [Session] {
        get throws {
            try #require(tokens.count >= 2, "sessions with ad1 in their pod: \(tokens.map(\.id))")
            return tokens
        }
    }

    var calls: [Call] { recorder.state.withLock { $0.calls } }

    /// Waits (up to 5 s) until at least `count` calls were recorded.
    func waitForCalls(_ count: Int) async throws {
        for _ in 0..<500 {
            if calls.count >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("timed out waiting for \(count) tracking calls; got \(calls)")
    }

    /// `headwater_stitched_playlists_total{outcome="ok"}` as the server's `/metrics` says it.
    func stitchedPlaylistsServed(port: Int) async throws -> Int {
        try await RawClient.connect(port: port).run { inbound, outbound in
            var inbound = inbound
            try await outbound.write(ByteBuffer(string: "GET /metrics HTTP/1.1\r\nHost: origin\r\n\r\n"))
            var bytes: [UInt8] = []
            let text = try #require(try await inbound.readResponses(1, into: &bytes).first).text
            let line = text.split(separator: "\n").first { $0.hasPrefix("headwater_stitched_playlists_total{outcome=\"ok\"}") }
            return line.flatMap { $0.split(separator: " ").last }.flatMap { Int(Double($0) ?? 0) } ?? 0
        }
    }

    /// Runs an `OriginServer` for this origin on 127.0.0.1 with an ephemeral port, its clock at ``now``.
    func withServer(threads: Int? = nil, _ body: @Sendable (_ port: Int) async throws -> Void) async throws {
        var configuration = OriginServerConfiguration(port: 0)
        configuration.metrics = OriginMetrics()
        configuration.eventLoopThreads = threads
        let server = OriginServer(
            configuration: configuration, content: registry, ingest: nil, logger: quietLogger, clock: clock,
            adInsertion: insertion)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let address = try await server.waitUntilListening()
            let port = try #require(address.port)
            do {
                try await body(port)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
            try await group.waitForAll()
        }
    }

    /// One connection's pipeline, as the server assembles it, on an `EmbeddedChannel`.
    func embeddedConnection(progress: FullPathProgress) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let responder = OriginResponder(
            content: registry, publicDirectory: nil, cors: false, ingestEnabled: false, logger: quietLogger,
            metrics: OriginMetrics(), clock: FixedClock(Self.now), adInsertion: insertion)
        let environment = OriginHTTPHandler.Environment(
            responder: responder, ingest: nil, maxIngestBodyBytes: 0, cors: false, logger: quietLogger, accessLogger: quietLogger,
            metrics: OriginMetrics(), now: { Self.now / 1_000_000 })
        try OriginServer.configure(
            channel.pipeline.syncOperations, environment: environment,
            dates: NIOLoopBoundBox(ResponseDates(), eventLoop: channel.eventLoop), progress: progress, idleTimeout: .seconds(60),
            maxHeadBytes: 16 * 1024)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
        return channel
    }
}

/// A wall clock that always says the same instant and, when armed, holds the next caller until
/// ``open()``: an event loop held inside a request's decision.
private final class GatedClock: WallClock {
    private let micros: Int64
    private let state = Mutex<(armed: Bool, holding: Bool)>((false, false))
    private let release = DispatchSemaphore(value: 0)

    init(_ micros: Int64) { self.micros = micros }

    func now() -> Int64 {
        let hold = state.withLock { state in
            guard state.armed else { return false }
            state = (false, true)
            return true
        }
        if hold { release.wait() }
        return micros
    }

    /// Holds the next caller of ``now()``.
    func arm() { state.withLock { $0.armed = true } }

    /// A caller is being held.
    var isHolding: Bool { state.withLock { $0.holding } }

    /// Lets the held caller go, if any; disarms.
    func open() {
        let held = state.withLock { state in
            defer { state = (false, false) }
            return state.holding
        }
        if held { release.signal() }
    }
}

/// The socket end of a pipeline whose writes fail (`failing`), as when the peer has reset the
/// connection, or succeed; counts them.
private final class FailingWrites: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData

    let failing: Bool
    private(set) var attempted = 0

    init(failing: Bool) { self.failing = failing }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        attempted += 1
        if failing {
            promise?.fail(IOError(errnoCode: ECONNRESET, reason: "write"))
        } else {
            context.write(data, promise: promise)
        }
    }
}

@available(*, unavailable)
extension FailingWrites: Sendable {}
