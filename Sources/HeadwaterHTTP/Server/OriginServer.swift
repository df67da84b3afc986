public import HeadwaterRuntime
public import Logging
public import NIOCore
import NIOHTTP1
import NIOPosix
public import ServiceLifecycle
import Synchronization

/// The HTTP/1.1 origin: playlists, segments, static files, `/healthz`, `/readyz`, `/metrics`, `/api/status` and push ingest
/// (DESIGN.md "Public interface"), as a swift-service-lifecycle `Service`.
///
/// ```swift
/// let server = OriginServer(configuration: .init(port: 8080), content: registry, ingest: nil, logger: logger)
/// let group = ServiceGroup(services: [server], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// On graceful shutdown it stops accepting connections, closes idle keep-alive connections, lets
/// in-flight requests (a segment being sent, an upload) finish for up to
/// ``OriginServerConfiguration/shutdownGracePeriod``, closes whatever is left, and returns. On
/// task cancellation it closes everything at once.
///
/// Each connection's pipeline: ``OriginFastPath`` (the idle keep-alive timeout; plain `GET`s of
/// shared playlists, segments and static files, answered from bytes encoded once per version) → NIO's HTTP/1.1
/// server pipeline with pipelining assistance (pipelined requests answered in order) and
/// protocol-error handling (a malformed request gets 400 and a close) → ``OriginHTTPHandler``.
public final class OriginServer: Service {
    /// ``waitUntilListening()`` was called on a server that stopped, or failed to bind.
    public struct NotListening: Error, CustomStringConvertible {
        public let description: String
    }

    private enum Listening {
        case pending([CheckedContinuation<SocketAddress, any Error>])
        case listening(SocketAddress)
        case stopped(any Error)
    }

    private let configuration: OriginServerConfiguration
    private let content: any OriginContent
    private let ingest: (any IngestSink)?
    private let logger: Logger
    private let statusAPI: StatusAPI
    private let accessLogger: Logger
    private let clock: any WallClock
    /// Sessions, stitched playlists and "cue now" (`/ssai/…`, `/admin/…`); `nil` without ads.
    private let adInsertion: AdInsertion?
    /// The plain listener's state, then the TLS listener's.
    private let listening = Mutex([Listening.pending([]), Listening.pending([])])

    /// The label the executable gives the access logger, so operators can route access lines
    /// apart from the rest of the log.
    public static let accessLogLabel = "headwater.access"

    /// - Parameters:
    ///   - accessLogger: where the access log goes, one `info` line per request (see README.md
    ///     "Logs, metrics and health"); make it with ``accessLogLabel``. `nil` logs them to `logger`.
    ///   - clock: the wall clock live-edge ages and uptime are measured with (`/healthz`, `/readyz`,
    ///     `/metrics`, `/api/status`; inject one in tests).
    public init(
        configuration: OriginServerConfiguration,
        content: any OriginContent,
        ingest: (any IngestSink)?,
        logger: Logger,
        accessLogger: Logger? = nil,
        clock: any WallClock = SystemWallClock(),
        adInsertion: AdInsertion? = nil
    ) {
        self.adInsertion = adInsertion
        self.configuration = configuration
        self.content = content
        self.ingest = ingest
        self.logger = logger
        self.statusAPI = StatusAPI(clock: clock, metrics: configuration.metrics)
        self.accessLogger = accessLogger ?? logger
        self.clock = clock
    }

    /// The bound address while ``run()`` is listening, else `nil`.
    public var localAddress: SocketAddress? {
        listening.withLock { states in
            if case .listening(let address) = states[0] { return address }
            return nil
        }
    }

    /// Waits until ``run()`` has bound its socket and returns the address (with the real port when
    /// ``OriginServerConfiguration/port`` is 0). Throws if binding failed or the server stopped.
    public func waitUntilListening() async throws -> SocketAddress {
        try await waitUntilListening(tls: false)
    }

    /// Like ``waitUntilListening()``, for the TLS listener (``OriginServerConfiguration/tls``);
    /// throws if there is none.
    public func waitUntilTLSListening() async throws -> SocketAddress {
        try await waitUntilListening(tls: true)
    }

    private func waitUntilListening(tls: Bool) async throws -> SocketAddress {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SocketAddress, any Error>) in
            let result: Result<SocketAddress, any Error>? = listening.withLock { states in
                let index = tls ? 1 : 0
                switch states[index] {
                case .pending(var waiters):
                    waiters.append(continuation)
                    states[index] = .pending(waiters)
                    return nil
                case .listening(let address):
                    return .success(address)
                case .stopped(let error):
                    return .failure(error)
                }
            }
            if let result { continuation.resume(with: result) }
        }
    }

    private func setListening(_ result: Result<SocketAddress, any Error>, tls: Bool = false) {
        let waiters = listening.withLock { states -> [CheckedContinuation<SocketAddress, any Error>] in
            let index = tls ? 1 : 0
            var waiters: [CheckedContinuation<SocketAddress, any Error>] = []
            if case .pending(let pending) = states[index] { waiters = pending }
            switch result {
            case .success(let address): states[index] = .listening(address)
            case .failure(let error): states[index] = .stopped(error)
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    public func run() async throws {
        let group: any EventLoopGroup
        let ownsGroup: Bool
        if let threads = configuration.eventLoopThreads {
            group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
            ownsGroup = true
        } else {
            group = MultiThreadedEventLoopGroup.singleton
            ownsGroup = false
        }

        let connections = ConnectionTracker(metrics: configuration.metrics)
        let handlers = ConnectionHandlers(server: self, group: group)
        var serverChannels: [any Channel] = []
        do {
            let plain = try await bootstrap(group: group, connections: connections, handlers: handlers, tls: nil)
                .bind(host: configuration.host, port: configuration.port).get()
            serverChannels.append(plain)
            if let tls = configuration.tls {
                serverChannels.append(
                    try await bootstrap(group: group, connections: connections, handlers: handlers, tls: tls.certificates)
                        .bind(host: tls.host, port: tls.port).get())
            }
        } catch {
            for channel in serverChannels { try? await channel.close() }
            setListening(.failure(error))
            setListening(.failure(error), tls: true)
            if ownsGroup { try? await group.shutdownGracefully() }
            throw error
        }
        let eventLoops = group.makeIterator().reduce(0) { count, _ in count + 1 }
        for (index, channel) in serverChannels.enumerated() {
            guard let address = channel.localAddress else {
                preconditionFailure("a bound server channel has a local address")
            }
            let isTLS = index == 1
            setListening(.success(address), tls: isTLS)
            logger.info(
                "listening",
                metadata: [
                    "server.tls": "\(isTLS)",
                    "network.protocol.names": isTLS ? "http/1.1,h2" : "http/1.1,h2c",
                    "server.address": "\(isTLS ? configuration.tls?.host ?? "" : configuration.host)",
                    "server.port": "\(address.port ?? 0)",
                    "server.event_loops": "\(eventLoops)",
                ]
            )
        }
        if configuration.tls == nil {
            setListening(.failure(NotListening(description: "no TLS listener is configured")), tls: true)
        }
        let listeners = serverChannels

        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                for channel in listeners { try? await channel.closeFuture.get() }
                await drain(connections)
            } onGracefulShutdown: { [logger] in
                logger.info("shutting down: no new connections; finishing requests in flight")
                for channel in listeners { channel.close(promise: nil) }
                connections.quiesceAll()
            }
        } onCancel: {
            for channel in listeners { channel.close(promise: nil) }
            connections.closeAll()
        }

        setListening(.failure(NotListening(description: "the server has stopped")))
        setListening(.failure(NotListening(description: "the server has stopped")), tls: true)
        if ownsGroup { try? await group.shutdownGracefully() }
        logger.info("stopped")
    }

    /// Waits for every connection to close, closing the stragglers after the grace period.
    private func drain(_ connections: ConnectionTracker) async {
        let grace = configuration.shutdownGracePeriod
        let logger = self.logger
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await connections.waitUntilEmpty() }
            group.addTask {
                do {
                    try await Task.sleep(for: grace)
                } catch {
                    return  // everything closed in time
                }
                logger.warning(
                    "grace period over: closing connections still busy",
                    metadata: ["connections": "\(connections.count)"]
                )
                connections.closeAll()
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// What every connection's handlers share, made once per run: the responder's environment and
    /// the per-event-loop caches (dates, access-log lines, encoded playlists and file heads).
    struct ConnectionHandlers: Sendable {
        let environment: OriginHTTPHandler.Environment
        let dates: LoopLocal<ResponseDates>
        let accessLines: LoopLocal<AccessLogLines>
        let playlists: LoopLocal<PreencodedPlaylists>
        let fileHeads: LoopLocal<PreencodedFileHeads>

        init(server: OriginServer, group: any EventLoopGroup) {
            let configuration = server.configuration
            environment = OriginHTTPHandler.Environment(
                responder: OriginResponder(
                    content: server.content,
                    publicDirectory: configuration.publicDirectory,
                    cors: configuration.cors,
                    ingestEnabled: server.ingest != nil,
                    logger: server.logger,
                    statusAPI: server.statusAPI,
                    metrics: configuration.metrics,
                    clock: server.clock,
                    adInsertion: server.adInsertion
                ),
                ingest: server.ingest,
                maxIngestBodyBytes: configuration.maxIngestBodyBytes,
                cors: configuration.cors,
                logger: server.logger,
                accessLogger: server.accessLogger,
                metrics: configuration.metrics
            )
            dates = LoopLocal(group: group) { _ in ResponseDates() }
            accessLines = LoopLocal(group: group) { [accessLogger = server.accessLogger] in
                AccessLogLines(logger: accessLogger, eventLoop: $0)
            }
            playlists = LoopLocal(group: group) { _ in PreencodedPlaylists() }
            fileHeads = LoopLocal(group: group) { _ in PreencodedFileHeads() }
        }
    }

    /// The plain listener (`tls` nil: HTTP/1.1, and h2c by prior knowledge) or the TLS one
    /// (HTTP/1.1 or `h2` by ALPN, with the certificate current at each handshake).
    private func bootstrap(
        group: any EventLoopGroup, connections: ConnectionTracker, handlers: ConnectionHandlers, tls: TLSCertificates?
    ) -> ServerBootstrap {
        let idleTimeout = TimeAmount(configuration.idleTimeout)
        let maxHeadBytes = configuration.maxRequestHeadBytes
        let http2 = configuration.http2
        let fastPathAnswers = configuration.fastPathAnswers
        let tally = configuration.fastPathTally
        return ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // TCP_NODELAY is a TCP-level option: `.socketOption(.tcp_nodelay)` would set SOL_SOCKET's
            // option 1, SO_DEBUG, which needs CAP_NET_ADMIN and resets every connection of an
            // unprivileged server (the systemd unit's user).
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let loop = channel.eventLoop
                    let pipeline = channel.pipeline.syncOperations
                    connections.add(channel)
                    guard let tls else {
                        try Self.configure(
                            pipeline, environment: handlers.environment, dates: handlers.dates.box(for: loop),
                            accessLines: handlers.accessLines.box(for: loop), playlists: handlers.playlists.box(for: loop),
                            fileHeads: handlers.fileHeads.box(for: loop), idleTimeout: idleTimeout, maxHeadBytes: maxHeadBytes,
                            http2: http2, fastPathAnswers: fastPathAnswers, tally: tally)
                        return
                    }
                    try TLSConnection.configure(channel, context: tls.context, handshakeTimeout: idleTimeout) {
                        negotiated, pipeline in
                        if negotiated == "h2" {
                            try HTTP2Connection.configure(
                                pipeline, environment: handlers.environment, dates: handlers.dates.box(for: loop),
                                accessLines: handlers.accessLines.box(for: loop).value, limits: http2, idleTimeout: idleTimeout)
                        } else {
                            try Self.configure(
                                pipeline, environment: handlers.environment, dates: handlers.dates.box(for: loop),
                                accessLines: handlers.accessLines.box(for: loop), playlists: handlers.playlists.box(for: loop),
                                fileHeads: handlers.fileHeads.box(for: loop), idleTimeout: idleTimeout,
                                maxHeadBytes: maxHeadBytes, fileBodies: .pieces, fastPathAnswers: fastPathAnswers, tally: tally)
                        }
                    }
                }
            }
    }

    /// Adds a connection's handlers. Also used by tests on an `EmbeddedChannel`.
    static func configure(
        _ pipeline: ChannelPipeline.SynchronousOperations,
        environment: OriginHTTPHandler.Environment,
        dates: NIOLoopBoundBox<ResponseDates>,
        accessLines: NIOLoopBoundBox<AccessLogLines>? = nil,
        playlists: NIOLoopBoundBox<PreencodedPlaylists>? = nil,
        fileHeads: NIOLoopBoundBox<PreencodedFileHeads>? = nil,
        progress: FullPathProgress = FullPathProgress(),
        idleTimeout: TimeAmount,
        maxHeadBytes: Int,
        fileBodies: FileBodySending = .sendfile,
        http2: HTTP2Limits? = nil,
        fastPathAnswers: Bool = true,
        tally: FastPathTally? = nil
    ) throws {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = maxHeadBytes
        limits.maxHeaderListSize = maxHeadBytes
        // Handlers run on the pipeline's loop, so they hold its access log itself, not the box.
        let accessLines = accessLines?.value ?? AccessLogLines(logger: environment.accessLogger, eventLoop: pipeline.eventLoop)
        try pipeline.addHandler(
            OriginFastPath(
                environment: environment,
                dates: dates,
                accessLines: accessLines,
                playlists: playlists ?? NIOLoopBoundBox.makeBoxSendingValue(PreencodedPlaylists(), eventLoop: pipeline.eventLoop),
                fileHeads: fileHeads ?? NIOLoopBoundBox.makeBoxSendingValue(PreencodedFileHeads(), eventLoop: pipeline.eventLoop),
                progress: progress,
                maxHeadBytes: maxHeadBytes,
                idleTimeout: idleTimeout,
                fileBodies: fileBodies,
                answers: fastPathAnswers,
                tally: tally,
                installHTTP2: http2.map { limits in
                    { pipeline in
                        try HTTP2Connection.configure(
                            pipeline, environment: environment, dates: dates,
                            accessLines: accessLines, limits: limits, idleTimeout: idleTimeout)
                    }
                }
            ) { pipeline in
                // The full path, added by the fast path when it first hands a request over: NIO's
                // request decoder, pipelining assistance (pipelined requests answered in order, one
                // at a time) and protocol-error handling (400 and close), with Headwater's one
                // HTTP/1.1 writer as the encoder (it also refuses invalid fields).
                try pipeline.addHandlers([
                    HTTP1ResponseEncoder(),
                    ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: limits)),
                    HTTPServerPipelineHandler(),
                    HTTPServerProtocolErrorHandler(),
                ])
                try pipeline.addHandler(
                    OriginHTTPHandler(
                        environment: environment, dates: dates, accessLines: accessLines, progress: progress,
                        fileBodies: fileBodies, uploadReads: UploadReadPacing(messagesPerRead: 16)))  // the bootstrap's
            }
        )
    }
}
