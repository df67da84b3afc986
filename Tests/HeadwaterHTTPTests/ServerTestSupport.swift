import AsyncHTTPClient
import Foundation
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterTesting
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import Synchronization
import Testing

// MARK: - Fake content

/// An `OriginContent` with fixed snapshots.
struct FakeContent: OriginContent {
    var channels: [String: ChannelSnapshot]

    func snapshot(of channel: String) -> ChannelSnapshot? { channels[channel] }
    var channelNames: [String] { channels.keys.sorted() }
}

enum Fixture {
    static let masterText = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1280000\nv1.m3u8\n"
    static let mediaText =
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:7\n#EXTINF:6.000,\nv1/seg7.ts\n"
    static let publishedAt: Int64 = 1_700_000_000
    /// The wall clock of tests that need one, µs: 100 s after ``publishedAt``.
    static let now: Int64 = (publishedAt + 100) * 1_000_000

    static func playlist(_ text: String, tag: String, targetDuration: Int?) -> RenderedPlaylist {
        RenderedPlaylist(
            body: ByteBuffer(string: text),
            gzipBody: ByteBuffer(bytes: Gzip.stored(Array(text.utf8))),
            entityTag: "\"\(tag)\"",
            gzipEntityTag: "\"\(tag)-gz\"",
            lastModified: publishedAt,
            targetDuration: targetDuration
        )
    }

    /// A status whose one rendition `v1` last got a segment at `lastSegmentAt` (µs).
    static func status(targetDuration: Int, lastSegmentAt: Int64?) -> ChannelStatus {
        ChannelStatus(
            source: "push", targetDuration: targetDuration, windowSeconds: 3 * targetDuration,
            renditions: [
                .init(name: "v1", mediaSequence: 0, discontinuitySequence: 0, segments: [], lastSegmentAt: lastSegmentAt)
            ])
    }

    /// Channel `demo` (live, its newest segment 2 s before ``now``: master, rendition `v1`, the given segments), `slow` (starting),
    /// `shaky` (degraded, still serving).
    static func content(segments: [String: SegmentFile] = [:]) -> FakeContent {
        let master = playlist(masterText, tag: "demo-master-v1", targetDuration: nil)
        let media = playlist(mediaText, tag: "demo-v1-v1", targetDuration: 6)
        let demo = ChannelSnapshot(
            name: "demo",
            state: .live,
            multivariant: master,
            mediaPlaylists: ["v1": media],
            segments: ["v1": segments],
            targetDuration: 6,
            status: status(targetDuration: 6, lastSegmentAt: now - 2_000_000)
        )
        var shaky = demo
        shaky.name = "shaky"
        shaky.state = .degraded(reason: "source stalled")
        let slow = ChannelSnapshot(
            name: "slow",
            state: .starting,
            multivariant: nil,
            mediaPlaylists: [:],
            segments: [:],
            targetDuration: 4
        )
        return FakeContent(channels: ["demo": demo, "shaky": shaky, "slow": slow])
    }
}

/// gzip (RFC 1952) with one stored deflate block (RFC 1951 §3.2.4): valid gzip that any
/// decoder inflates, made without zlib.
enum Gzip {
    static func stored(_ data: [UInt8]) -> [UInt8] {
        precondition(data.count <= 0xFFFF)
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        out.append(1)  // BFINAL = 1, BTYPE = 00 (stored)
        let length = UInt16(data.count)
        out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
        out += data
        out += littleEndian(crc32(data))
        out += littleEndian(UInt32(data.count))
        return out
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    private static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

/// A wall clock that always says the same instant.
struct FixedClock: WallClock {
    let micros: Int64
    init(_ micros: Int64) { self.micros = micros }
    func now() -> Int64 { micros }
}

// MARK: - Files

/// A temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "headwater-server-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Writes `bytes` to `name` (relative) and returns the absolute path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let full = path + "/" + name
        let directory = (full as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
        return full
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Deterministic, non-repeating-looking bytes, so a range served from the wrong offset fails.
func patternBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        // Eight bytes per step: debug builds are slow, and some tests use 24 MB.
        let raw = UnsafeMutableRawBufferPointer(buffer)
        var offset = 0
        while offset < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            withUnsafeBytes(of: state.bigEndian) { word in
                let n = min(8, count - offset)
                raw.baseAddress!.advanced(by: offset).copyMemory(from: word.baseAddress!, byteCount: n)
            }
            offset += 8
        }
        initialized = count
    }
}

/// Byte equality with `memcmp`, so comparing megabytes is fast in debug builds and a failure
/// does not print them.
func sameBytes(_ a: [UInt8]?, _ b: [UInt8]) -> Bool {
    guard let a, a.count == b.count else { return false }
    return a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
}

extension Array where Element == UInt8 {
    /// Appends a buffer's readable bytes with one copy.
    mutating func append(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { append(contentsOf: $0) }
    }
}

func segmentFile(path: String, length: Int, tag: String) -> SegmentFile {
    SegmentFile(
        path: path,
        length: Int64(length),
        entityTag: "\"\(tag)\"",
        contentType: "video/mp2t",
        lastModified: Fixture.publishedAt
    )
}

// MARK: - Fake ingest

/// Records what the server asks of it; refuses without `Authorization: Bearer secret`.
final class RecordingSink: IngestSink {
    enum Event: Equatable, Sendable {
        case begin(channel: String, path: [String], method: IngestMethod, contentLength: Int64?)
        case chunk([UInt8])
        case finish
        case abort
    }

    let events = Mutex<[Event]>([])
    let requiredAuthorization: String? = "Bearer secret"
    /// How long an upload's `finish` takes (a real sink syncs and publishes on a thread pool).
    let finishTakes: TimeAmount

    init(finishTakes: TimeAmount = .zero) {
        self.finishTakes = finishTakes
    }

    func authorize(channel: String, authorization: String?) throws(Refusal) {
        if let requiredAuthorization, authorization != requiredAuthorization {
            throw Refusal(.unauthorized, "missing or wrong credentials for channel \"\(channel)\"")
        }
    }

    func begin(
        channel: String,
        path: [String],
        method: IngestMethod,
        contentLength: Int64?
    ) throws(Refusal) -> any IngestUpload {
        guard channel == "demo" else { throw Refusal(.notFound, "no channel \"\(channel)\"") }
        record(.begin(channel: channel, path: path, method: method, contentLength: contentLength))
        return Upload(sink: self)
    }

    func record(_ event: Event) {
        events.withLock { $0.append(event) }
    }

    var snapshot: [Event] { events.withLock { $0 } }

    /// The bytes of all chunks, in order.
    var body: [UInt8] {
        snapshot.flatMap { event -> [UInt8] in
            if case .chunk(let bytes) = event { return bytes }
            return []
        }
    }

    /// Waits (up to 5 s) until an event satisfies `predicate`.
    func waitFor(_ predicate: @escaping (Event) -> Bool) async throws {
        for _ in 0..<500 {
            if snapshot.contains(where: predicate) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("timed out waiting for an ingest event; got \(snapshot)")
    }

    struct Upload: IngestUpload {
        let sink: RecordingSink

        func write(_ batch: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
            sink.record(.chunk(Array(batch.readableBytesView)))
            return eventLoop.makeSucceededVoidFuture()
        }

        func finish(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
            guard sink.finishTakes > .zero else {
                sink.record(.finish)
                return eventLoop.makeSucceededVoidFuture()
            }
            let sink = sink
            return eventLoop.scheduleTask(in: sink.finishTakes) { sink.record(.finish) }.futureResult
        }

        func abort() { sink.record(.abort) }
    }
}

// MARK: - Logging

let quietLogger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

// MARK: - Parsed responses

/// One HTTP/1.1 response parsed from raw bytes.
struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    func headers(_ name: String) -> [String] {
        headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// Parses as many complete responses as `bytes` holds; `bodiless` says, per response index,
    /// whether it answers a HEAD (no body whatever Content-Length says). Returns the responses and
    /// the number of bytes consumed.
    static func parseAll(_ bytes: [UInt8], bodiless: (Int) -> Bool = { _ in false }) -> ([RawResponse], Int) {
        var responses: [RawResponse] = []
        var index = 0
        while let (response, next) = parse(bytes, from: index, bodiless: bodiless(responses.count)) {
            if response.status >= 200 { responses.append(response) }
            index = next
        }
        return (responses, index)
    }

    static func parse(_ bytes: [UInt8], from start: Int, bodiless: Bool) -> (RawResponse, Int)? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count - start >= 4,
            let headEnd = (start...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator })
        else { return nil }
        let headText = String(decoding: bytes[start..<headEnd], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = RawResponse(status: status, headers: headers, body: [])
        let bodyStart = headEnd + 4
        let hasBody = !bodiless && status >= 200 && status != 204 && status != 304
        let length = hasBody ? Int(response.header("content-length") ?? "0") ?? 0 : 0
        guard bytes.count - bodyStart >= length else { return nil }
        response.body = Array(bytes[bodyStart..<(bodyStart + length)])
        return (response, bodyStart + length)
    }
}

// MARK: - EmbeddedChannel harness

/// The assembled connection pipeline on an `EmbeddedChannel`.
struct PipelineHarness {
    let channel: EmbeddedChannel
    /// Responses the full path (NIO's decoder and `OriginHTTPHandler`) finished; the rest came
    /// from `OriginFastPath`.
    let fullPath = FullPathProgress()
    /// The fast path's file heads and kept files.
    let fileHeads: NIOLoopBoundBox<PreencodedFileHeads>
    var isActive: Bool { channel.isActive }

    init(
        content: any OriginContent = Fixture.content(),
        ingest: (any IngestSink)? = nil,
        cors: Bool = false,
        publicDirectory: String? = nil,
        logger: Logger = quietLogger,
        metrics: OriginMetrics = OriginMetrics(),
        clock: any WallClock = FixedClock(Fixture.now),
        now: @escaping @Sendable () -> Int64 = { Fixture.publishedAt + 100 }
    ) throws {
        channel = EmbeddedChannel()
        fileHeads = NIOLoopBoundBox.makeBoxSendingValue(PreencodedFileHeads(), eventLoop: channel.eventLoop)
        let environment = OriginHTTPHandler.Environment(
            responder: OriginResponder(
                content: content,
                publicDirectory: publicDirectory,
                cors: cors,
                ingestEnabled: ingest != nil,
                logger: logger,
                metrics: metrics,
                clock: clock
            ),
            ingest: ingest,
            maxIngestBodyBytes: 1 << 20,
            cors: cors,
            logger: logger,
            accessLogger: logger,
            metrics: metrics,
            now: now
        )
        try OriginServer.configure(
            channel.pipeline.syncOperations,
            environment: environment,
            dates: NIOLoopBoundBox(ResponseDates(), eventLoop: channel.eventLoop),
            fileHeads: fileHeads,
            progress: fullPath,
            idleTimeout: .seconds(60),
            maxHeadBytes: 16 * 1024
        )
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
    }

    /// Sends raw request bytes and returns every complete response written so far.
    func exchange(_ request: String, bodiless: @escaping (Int) -> Bool = { _ in false }) throws -> [RawResponse] {
        try channel.writeInbound(ByteBuffer(string: request))
        var bytes: [UInt8] = []
        while let part = try channel.readOutbound(as: IOData.self) {
            switch part {
            case .byteBuffer(let buffer): bytes.append(buffer)
            case .fileRegion: Issue.record("unexpected file region in an embedded test")
            }
        }
        return RawResponse.parseAll(bytes, bodiless: bodiless).0
    }

    /// One request, one response.
    func send(_ request: String, head: Bool = false) throws -> RawResponse {
        let responses = try exchange(request, bodiless: { _ in head })
        try #require(responses.count == 1, "expected one response, got \(responses.count)")
        return responses[0]
    }

    func finish() {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }
}

// MARK: - Real server

/// Runs an `OriginServer` on 127.0.0.1 with an ephemeral port for the duration of `body`.
func withServer<T: Sendable>(
    content: any OriginContent = Fixture.content(),
    ingest: (any IngestSink)? = nil,
    configure: (inout OriginServerConfiguration) -> Void = { _ in },
    logger: Logger = quietLogger,
    accessLogger: Logger? = nil,
    clock: any WallClock = SystemWallClock(),
    _ body: @Sendable (_ port: Int) async throws -> T
) async throws -> T {
    try await withServer(
        content: content, ingest: ingest, configure: configure, logger: logger, accessLogger: accessLogger, clock: clock,
        serverReady: { _ in 0 }
    ) { port, _ in try await body(port) }
}

/// Runs an `OriginServer` like ``withServer(content:ingest:configure:logger:accessLogger:clock:_:)``,
/// passing `body` the plain port and what `serverReady` returns once the plain listener is up (the
/// TLS port, from ``OriginServer/waitUntilTLSListening()``).
func withServer<T: Sendable>(
    content: any OriginContent = Fixture.content(),
    ingest: (any IngestSink)? = nil,
    configure: (inout OriginServerConfiguration) -> Void = { _ in },
    logger: Logger = quietLogger,
    accessLogger: Logger? = nil,
    clock: any WallClock = SystemWallClock(),
    serverReady: @Sendable (OriginServer) async throws -> Int,
    _ body: @Sendable (_ port: Int, _ other: Int) async throws -> T
) async throws -> T {
    var configuration = OriginServerConfiguration(port: 0)
    configuration.metrics = OriginMetrics()  // never the process's shared registry
    configure(&configuration)
    let server = OriginServer(
        configuration: configuration, content: content, ingest: ingest, logger: logger, accessLogger: accessLogger,
        clock: clock)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            try await server.run()
            return nil
        }
        let port = try #require(try await server.waitUntilListening().port)
        let other = try await serverReady(server)
        let result = try await body(port, other)
        group.cancelAll()
        try await group.waitForAll()
        return result
    }
}

/// A raw TCP client, for what AsyncHTTPClient will not do: half-sent bodies, slow reading,
/// several requests on one connection on purpose.
struct RawClient {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    static func connect(port: Int) async throws -> RawClient {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return RawClient(channel: channel)
    }

    /// Runs `body` with the connection's streams, then closes it.
    func run<T: Sendable>(
        _ body: (NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, NIOAsyncChannelOutboundWriter<ByteBuffer>)
            async throws -> T
    ) async throws -> T {
        try await channel.executeThenClose { inbound, outbound in
            try await body(inbound.makeAsyncIterator(), outbound)
        }
    }
}

extension RawClient {
    /// Connects and runs `body`, once more (up to three attempts) when the server had already
    /// closed the connection before anything was read, as an idle timeout does to a connection
    /// whose first request a stalled test task wrote too late.
    static func retryingWhenClosedBeforeRequest(
        port: Int,
        _ body: (NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, NIOAsyncChannelOutboundWriter<ByteBuffer>)
            async throws -> Void
    ) async throws {
        for attempt in 1...3 {
            do {
                return try await connect(port: port).run(body)
            } catch let error where attempt < 3 && isClosedEarly(error) {
                continue
            }
        }
    }

    /// Thrown by a body that got no response byte at all before the peer closed.
    struct ClosedBeforeResponse: Error {}

    private static func isClosedEarly(_ error: any Error) -> Bool {
        switch error {
        case ChannelError.ioOnClosedChannel, is ClosedBeforeResponse: true
        case let error as IOError: error.errnoCode == ECONNRESET
        default: false
        }
    }
}

extension NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator {
    /// Reads until `count` complete responses are buffered or the peer closes.
    mutating func readResponses(
        _ count: Int,
        into bytes: inout [UInt8],
        bodiless: @escaping (Int) -> Bool = { _ in false }
    ) async throws -> [RawResponse] {
        while true {
            let parsed = RawResponse.parseAll(bytes, bodiless: bodiless).0
            if parsed.count >= count { return parsed }
            guard let chunk = try await next() else { return parsed }
            bytes.append(chunk)
        }
    }

    /// Reads until the peer closes; returns everything read.
    mutating func readToEnd(into bytes: inout [UInt8]) async throws {
        while let chunk = try await next() { bytes.append(chunk) }
    }
}

/// Runs `body` with an AsyncHTTPClient (no automatic decompression unless asked, so tests see the
/// bytes on the wire), shut down afterwards whatever happens.
func withHTTPClient<T>(
    decompression: Bool = false,
    _ body: (HTTPClient) async throws -> T
) async throws -> T {
    let configuration = HTTPClient.Configuration(decompression: decompression ? .enabled(limit: .none) : .disabled)
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
        let result = try await body(client)
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}
