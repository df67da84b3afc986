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
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import Testing

// MARK: - Framings

/// The three ways a request reaches ``OriginResponder`` (DESIGN.md "One response path").
enum Framing: String, CaseIterable, Sendable, CustomStringConvertible {
    /// HTTP/1.1 to a server whose ``OriginFastPath`` answers what it can (production).
    case fast
    /// HTTP/1.1 to a server with ``OriginServerConfiguration/fastPathAnswers`` off: NIO's HTTP/1
    /// decoder and ``OriginHTTPHandler`` answer everything.
    case full
    /// h2c with prior knowledge to a server like ``fast``'s: each request one HTTP/2 stream.
    case http2

    var description: String {
        switch self {
        case .fast: "HTTP/1.1 fast path"
        case .full: "HTTP/1.1 full path"
        case .http2: "h2c"
        }
    }
}

/// One request, as every framing sends it.
struct FramingRequest: Sendable, CustomStringConvertible {
    var method: HTTPMethod
    var target: String
    /// Sent in this order after `Host: origin` (names in lower case over HTTP/2).
    var fields: [Field]
    /// The status the fast path's server must answer, so that equal answers are also right ones.
    var expectedStatus: Int
    /// The values of the HTTP/1.1 `Host` lines, in order (none, two: refused); HTTP/2 sends `host: origin`.
    var hosts = ["origin"]

    struct Field: Sendable {
        var name: String
        var value: String
    }

    init(_ method: HTTPMethod, _ target: String, _ fields: [(String, String)] = [], expect status: Int) {
        self.method = method
        self.target = target
        self.fields = fields.map { Field(name: $0.0, value: $0.1) }
        self.expectedStatus = status
    }

    var isHead: Bool { method == .HEAD }

    /// The request without the signature of a session token, for failure messages.
    var description: String {
        let target = target.count > 80 ? String(target.prefix(77)) + "..." : target
        let fields = fields.map { "\($0.name): \($0.value)" }.joined(separator: ", ")
        return "\(method.rawValue) \(target)" + (fields.isEmpty ? "" : " [\(fields)]")
    }

    /// The HTTP/1.1 bytes of the request.
    var http1: String {
        var text = "\(method.rawValue) \(target) HTTP/1.1\r\n" + hosts.map { "Host: \($0)\r\n" }.joined()
        for field in fields { text += "\(field.name): \(field.value)\r\n" }
        return text + "\r\n"
    }
}

/// A response as one framing's client received it: header names exactly as sent.
struct FramingResponse: Sendable {
    var status: Int
    var headers: [Field]
    var body: [UInt8]

    struct Field: Sendable, Hashable {
        var name: String
        var value: String
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

// MARK: - The origin every framing is asked

/// The committed demo channel (Public/demo) stitched with Config/ads.yaml, 3 s into a scheduled
/// break, with a signed session for one TV viewer; the fixture's `slow` channel (starting: no
/// playlist yet); a static file. The clock is fixed, so every server built from this answers the
/// same requests with the same bytes (but `Date`).
final class FramingOrigin: Sendable {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// 2026-11-21T17:36:00Z, on a minute: the schedule's break starts here (µs).
    static let breakStart: Int64 = 1_795_282_560_000_000
    /// The servers' clock: 3 s into the break (µs).
    static let now = breakStart + 3_000_000
    /// The viewer whose session the stitched requests use.
    static let viewer = "framing-viewer-1"

    let registry: ChannelRegistry
    let insertion: AdInsertion
    let clock = FixedClock(now)
    let publicDirectory: TemporaryDirectory
    /// A session token for ``viewer``, as its multivariant playlist's media URIs carry it.
    let sessionToken: String
    /// The demo channel's current snapshot.
    let demo: ChannelSnapshot
    /// The static file's bytes (`/app.js`), larger than a head's write so it goes by `sendfile`.
    let staticBytes = patternBytes(count: 20_000, seed: 16)
    /// The static file's modification time (Unix seconds).
    static let staticModified: Int64 = 1_000_000_000

    init() throws {
        let ads = try AdConfiguration.load(
            file: Self.repository.appendingPathComponent("Config/ads.yaml").path,
            publicDirectory: Self.repository.appendingPathComponent("Public").path, version: 1)
        let ruleBook = AdRuleBook(ads.ruleSet)
        let registry = ChannelRegistry()
        let insertion = AdInsertion(
            registry: registry, ruleBook: ruleBook, signer: try SessionSigner(secret: Array("0123456789abcdef".utf8)),
            adminToken: nil, logger: quietLogger, metrics: OriginMetrics())
        registry.setBreaks(
            ChannelBreaks(
                channel: "demo", schedule: try BreakSchedule(every: .seconds(60), duration: .seconds(20)), ruleBook: ruleBook,
                logger: quietLogger, metrics: OriginMetrics()),
            for: "demo")
        let package = try LoopPackage.load(
            multivariantPath: Self.repository.appendingPathComponent("Public/demo/master.m3u8").path)
        let sessionStart = Self.breakStart - 6_000_000
        // Started an hour before: its multivariant playlist was last modified then.
        let channel = LoopChannel(name: "demo", package: package, windowSeconds: 30, startedAt: sessionStart - 3_600_000_000)
        registry.publish(channel.snapshot(at: sessionStart))
        let master = try insertion.startSession(
            channel: "demo", query: [(name: "device", value: "tv")], headers: [(name: "X-Playback-Session-Id", value: Self.viewer)],
            now: sessionStart / 1000
        ).get()
        let uri = try #require(
            try PlaylistParser().parseMultivariant(master.bytes).variants.first { $0.uri.hasPrefix("v1.m3u8") }?.uri)
        sessionToken = String(try #require(uri.split(separator: "=", maxSplits: 1).last))
        registry.publish(channel.snapshot(at: Self.now))
        registry.publish(try #require(Fixture.content().snapshot(of: "slow")))
        demo = try #require(registry.snapshot(of: "demo"))

        publicDirectory = try TemporaryDirectory()
        let staticPath = try publicDirectory.write("app.js", staticBytes)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: TimeInterval(Self.staticModified))], ofItemAtPath: staticPath)

        self.registry = registry
        self.insertion = insertion
    }

    func remove() { publicDirectory.remove() }

    /// What one framing's run left: each request's response, the access logger's records, and the
    /// server's metrics.
    struct Run: Sendable {
        var framing: Framing
        var responses: [FramingResponse]
        var log: LogRecorder
        var metrics: OriginMetrics
        /// Requests the fast HTTP/1 path answered (none on the other framings).
        var fastPathAnswered: Int
    }

    /// Sends `requests` in order, one at a time, to a server of its own (fresh metrics and access
    /// log) in `framing`: on one HTTP/1.1 keep-alive connection (a new one after a response that
    /// closes it), or as one HTTP/2 stream each on one h2c connection. Each request's access line is
    /// waited for before the next request is sent, so the `n`th line is the `n`th request's.
    func run(_ framing: Framing, _ requests: [FramingRequest]) async throws -> Run {
        let log = LogRecorder()
        let metrics = OriginMetrics()
        let tally = FastPathTally()
        let responses = try await withServer(
            fastPathAnswers: framing != .full, tally: tally, metrics: metrics, accessLogger: log.logger
        ) {
            port in
            let afterEach: @Sendable (Int) async throws -> Void = { index in
                for _ in 0..<500 where log.snapshot.count <= index { try await Task.sleep(for: .milliseconds(5)) }
                #expect(log.snapshot.count == index + 1, "\(framing): one access line for \(requests[index])")
            }
            switch framing {
            case .fast, .full: return try await HTTP1FramingClient.send(requests, port: port, afterEach: afterEach)
            case .http2: return try await H2CFramingClient.send(requests, port: port, afterEach: afterEach)
            }
        }
        return Run(framing: framing, responses: responses, log: log, metrics: metrics, fastPathAnswered: tally.count)
    }

    /// An `OriginServer` of this origin on 127.0.0.1 (ephemeral port) for the duration of `body`,
    /// built as ``withServer(content:ingest:configure:logger:accessLogger:clock:_:)`` builds one, with
    /// ad insertion and this origin's clock and static files.
    func withServer<T: Sendable>(
        fastPathAnswers: Bool, tally: FastPathTally, metrics: OriginMetrics, accessLogger: Logger,
        _ body: @Sendable (_ port: Int) async throws -> T
    ) async throws -> T {
        var configuration = OriginServerConfiguration(port: 0, publicDirectory: publicDirectory.path)
        configuration.metrics = metrics
        configuration.fastPathAnswers = fastPathAnswers
        configuration.fastPathTally = tally
        let server = OriginServer(
            configuration: configuration, content: registry, ingest: nil, logger: quietLogger, accessLogger: accessLogger,
            clock: clock, adInsertion: insertion)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await server.run()
                return nil
            }
            let result: T
            do {
                let port = try #require(try await server.waitUntilListening().port)
                result = try await body(port)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
            try await group.waitForAll()
            return result
        }
    }
}

// MARK: - HTTP/1.1

/// HTTP/1.1 over a raw socket (``RawClient``): the response bytes as the server wrote them.
enum HTTP1FramingClient {
    struct UnexpectedClose: Error, CustomStringConvertible {
        var request: String
        var description: String { "the connection closed without a whole response to \(request)" }
    }

    static func send(
        _ requests: [FramingRequest], port: Int, afterEach: @Sendable (Int) async throws -> Void
    ) async throws -> [FramingResponse] {
        var responses: [FramingResponse] = []
        while responses.count < requests.count {
            let start = responses.count
            // One connection for as many requests as it stays open for.
            let answered = try await RawClient.connect(port: port).run { inbound, outbound in
                var inbound = inbound
                var answered: [FramingResponse] = []
                for index in start..<requests.count {
                    let request = requests[index]
                    try await outbound.write(ByteBuffer(string: request.http1))
                    var bytes: [UInt8] = []
                    let parsed = try await inbound.readResponses(1, into: &bytes, bodiless: { _ in request.isHead })
                    guard let response = parsed.first else { throw UnexpectedClose(request: "\(request)") }
                    let consumed = RawResponse.parseAll(bytes, bodiless: { _ in request.isHead }).1
                    #expect(consumed == bytes.count, "\(bytes.count - consumed) bytes after the response to \(request)")
                    answered.append(
                        FramingResponse(
                            status: response.status, headers: response.headers.map { .init(name: $0.0, value: $0.1) },
                            body: response.body))
                    try await afterEach(index)
                    if response.header("connection")?.lowercased() == "close" { break }
                }
                return answered
            }
            responses += answered
        }
        return responses
    }
}

// MARK: - HTTP/2

/// h2c with prior knowledge: NIO's HTTP/2 client, one stream per request, each stream's frames
/// turned into HTTP/1 parts by `HTTP2FramePayloadToHTTP1ClientCodec` (header names as received).
enum H2CFramingClient {
    struct StreamEndedEarly: Error, CustomStringConvertible {
        var request: String
        var description: String { "the stream ended without a whole response to \(request)" }
    }

    static func send(
        _ requests: [FramingRequest], port: Int, afterEach: @Sendable (Int) async throws -> Void
    ) async throws -> [FramingResponse] {
        let (channel, multiplexer) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(mode: .client) { stream in
                        stream.eventLoop.makeSucceededVoidFuture()
                    }
                    return (channel, multiplexer)
                }
            }
        do {
            var responses: [FramingResponse] = []
            for (index, request) in requests.enumerated() {
                responses.append(try await exchange(request, on: multiplexer))
                try await afterEach(index)
            }
            try await channel.close()
            return responses
        } catch {
            try? await channel.close()
            throw error
        }
    }

    private static func exchange(
        _ request: FramingRequest, on multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>
    ) async throws -> FramingResponse {
        let stream = try await multiplexer.openStream { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .http))
                return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: stream)
            }
        }
        return try await stream.executeThenClose { inbound, outbound in
            var headers = HTTPHeaders()
            headers.add(name: "host", value: "origin")
            for field in request.fields { headers.add(name: field.name.lowercased(), value: field.value) }
            try await outbound.write(
                .head(HTTPRequestHead(version: .http1_1, method: request.method, uri: request.target, headers: headers)))
            try await outbound.write(.end(nil))
            var response: FramingResponse?
            for try await part in inbound {
                switch part {
                case .head(let head) where head.status.code >= 200:
                    response = FramingResponse(
                        status: Int(head.status.code), headers: head.headers.map { .init(name: $0.name, value: $0.value) },
                        body: [])
                case .head:
                    continue  // 1xx
                case .body(let buffer):
                    response?.body.append(buffer)
                case .end:
                    guard let response else { throw StreamEndedEarly(request: "\(request)") }
                    return response
                }
            }
            throw StreamEndedEarly(request: "\(request)")
        }
    }
}
