import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// An ad server's tracking endpoint on the loopback interface, for dispatcher tests.
///
/// - `.answering`: records every request target and answers `204` (or `500` for paths starting
///   with `/fail`);
/// - `.silent`: accepts connections and reads requests, and never answers (for timeouts);
/// - ``refusedPort()``: a port nothing listens on (for refused connections).
final class BeaconEndpoint: Sendable {
    enum Behaviour: Sendable {
        case answering
        case silent
    }

    private let channel: any Channel
    private let log: NIOLockedValueBox<[String]>

    var port: Int { channel.localAddress!.port! }

    /// `http://127.0.0.1:{port}{path}`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The request target of one of ``url(_:)``'s URLs.
    func target(_ url: String) -> String { String(url.dropFirst("http://127.0.0.1:\(port)".count)) }

    /// Request targets received so far, in order.
    var requests: [String] { log.withLockedValue { $0 } }

    static func start(_ behaviour: Behaviour = .answering) async throws -> BeaconEndpoint {
        let log = NIOLockedValueBox<[String]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(behaviour: behaviour, log: log))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return BeaconEndpoint(channel: channel, log: log)
    }

    private init(channel: any Channel, log: NIOLockedValueBox<[String]>) {
        self.channel = channel
        self.log = log
    }

    func stop() async { try? await channel.close() }

    /// A loopback port with no listener: bound once, then closed.
    static func refusedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return port
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let behaviour: Behaviour
        let log: NIOLockedValueBox<[String]>

        init(behaviour: Behaviour, log: NIOLockedValueBox<[String]>) {
            self.behaviour = behaviour
            self.log = log
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            log.withLockedValue { $0.append(head.uri) }
            guard case .answering = behaviour else { return }
            let status: HTTPResponseStatus = head.uri.hasPrefix("/fail") ? .internalServerError : .noContent
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "0")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
