import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A scripted upstream origin on the loopback interface: serves whatever the test put at each path
/// (playlists, segments, error statuses, slow answers), honours `Range`, and can be stopped — its
/// port closed and open connections dropped, so clients see connection refused — and started again
/// on the same port.
final class ScriptedUpstream: Sendable {
    struct Resource: Sendable {
        var status: HTTPResponseStatus = .ok
        var body: [UInt8]
        /// Answer only after this long (to provoke timeouts).
        var delay: TimeAmount?
    }

    private let resources = NIOLockedValueBox<[String: Resource]>([:])
    private let log = NIOLockedValueBox<[String]>([])
    private let server = NIOLockedValueBox<(any Channel)?>(nil)
    private let connections = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])
    private let boundPort = NIOLockedValueBox(0)

    var port: Int { boundPort.withLockedValue { $0 } }

    /// `http://127.0.0.1:{port}{path}`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Paths requested so far, in order.
    var requests: [String] { log.withLockedValue { $0 } }

    func set(_ path: String, _ body: [UInt8], status: HTTPResponseStatus = .ok, delay: TimeAmount? = nil) {
        resources.withLockedValue { $0[path] = Resource(status: status, body: body, delay: delay) }
    }

    func set(_ path: String, _ text: String, status: HTTPResponseStatus = .ok, delay: TimeAmount? = nil) {
        set(path, Array(text.utf8), status: status, delay: delay)
    }

    func resource(_ path: String) -> Resource? { resources.withLockedValue { $0[path] } }

    /// Listens (on a free port the first time, then on the same one again).
    func start() async throws {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(UpstreamHandler(upstream: self))
                    self.connections.withLockedValue { $0[ObjectIdentifier(channel)] = channel }
                    channel.closeFuture.whenComplete { _ in
                        _ = self.connections.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(channel)) }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        boundPort.withLockedValue { $0 = channel.localAddress!.port! }
        server.withLockedValue { $0 = channel }
    }

    /// Closes the port and every open connection.
    func stop() async {
        let channel = server.withLockedValue { server in
            defer { server = nil }
            return server
        }
        try? await channel?.close()
        for connection in connections.withLockedValue({ Array($0.values) }) { try? await connection.close() }
    }

    fileprivate func record(_ path: String) { log.withLockedValue { $0.append(path) } }
}

private final class UpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let upstream: ScriptedUpstream
    var head: HTTPRequestHead?

    init(upstream: ScriptedUpstream) { self.upstream = upstream }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            let path = String(head.uri.prefix { $0 != "?" })
            upstream.record(path)
            let resource = upstream.resource(path) ?? .init(status: .notFound, body: Array("not found\n".utf8))
            if let delay = resource.delay {
                context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                    self.respond(context: context, head: head, resource: resource)
                }
            } else {
                respond(context: context, head: head, resource: resource)
            }
        }
    }

    private func respond(context: ChannelHandlerContext, head: HTTPRequestHead, resource: ScriptedUpstream.Resource) {
        var status = resource.status
        var body = resource.body
        var headers = HTTPHeaders()
        if status == .ok, let range = head.headers.first(name: "Range"), range.hasPrefix("bytes=") {
            let bounds = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            if bounds.count == 2, let first = bounds[0], first < body.count {
                let last = min(bounds[1] ?? (body.count - 1), body.count - 1)
                headers.add(name: "Content-Range", value: "bytes \(first)-\(last)/\(body.count)")
                body = Array(body[first...last])
                status = .partialContent
            }
        }
        headers.add(name: "Content-Length", value: "\(body.count)")
        let keepAlive = head.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

/// A live upstream media playlist the test advances by hand: `seg{n}.ts` of one target duration,
/// a sliding window of `length` segments, and each segment's bytes distinct.
struct LiveScript {
    var directory: String
    var targetDuration = 1
    var length = 5
    var next: UInt64 = 0
    var listed: [UInt64] = []
    /// Bumped at a restart, so reused names carry other bytes.
    var run = 0

    init(directory: String, start: UInt64 = 0) {
        self.directory = directory
        self.next = start
    }

    static func bytes(_ n: UInt64, run: Int) -> [UInt8] { Array(String(repeating: "r\(run) segment \(n);", count: 400).utf8) }

    /// Produces the next segment and publishes it and the new playlist.
    mutating func produce(on upstream: ScriptedUpstream) {
        upstream.set("\(directory)/seg\(next).ts", Self.bytes(next, run: run))
        listed.append(next)
        next += 1
        if listed.count > length { listed.removeFirst() }
        upstream.set("\(directory)/index.m3u8", playlist())
    }

    /// The encoder restarts at `sequence` (its window starts over).
    mutating func restart(at sequence: UInt64) {
        run += 1
        next = sequence
        listed = []
    }

    func playlist() -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:\(targetDuration)\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\(listed.first ?? next)\n"
        for n in listed { text += "#EXTINF:\(targetDuration).000,\nseg\(n).ts\n" }
        return text
    }
}
