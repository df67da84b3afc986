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
/// protocol-error handling (``ProtocolErrorResponder``: a malformed request gets 431, 501 or 400 with
/// its reason, and a close) → ``OriginHTTPHandler``.
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
    /// Each listener's state, by ``Listener/rawValue``.
    /// Requests waiting for a later version of their channel (blocking reloads), by event loop;
    /// every publish of a channel retries those held for it.
    let heldRequests: HeldRequestsByLoop
    private let listening = Mutex([Listening.pending([]), Listening.pending([]), Listening.pending([])])

    /// The server's listeners.
    enum Listener: Int, CaseIterable {
        /// HTTP/1.1 and h2c: everything, or everything but ingest and admin when ``ingest`` exists.
        case plain
        /// HTTP/1.1 and h2 by ALPN (``OriginServerConfiguration/tls``).
        case tls
        /// Ingest and admin, and the rest too (``OriginServerConfiguration/ingestListener``):
        /// uncapped, for encoders and operators on a private interface.
        case ingest
    }

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
        self.heldRequests = HeldRequestsByLoop(metrics: configuration.metrics)
        content.observePublishes { [heldRequests] channel in heldRequests.channelPublished(channel) }
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
        try await waitUntilListening(.plain)
    }

    /// Like ``waitUntilListening()``, for the TLS listener (``OriginServerConfiguration/tls``);
    /// throws if there is none.
    public func waitUntilTLSListening() async throws -> SocketAddress {
        try await waitUntilListening(.tls)
    }

    /// Like ``waitUntilListening()``, for the ingest listener
    /// (``OriginServerConfiguration/ingestListener``); throws if there is none.
    public func waitUntilIngestListening() async throws -> SocketAddress {
        try await waitUntilListening(.ingest)
    }

    private func waitUntilListening(_ listener: Listener) async throws -> SocketAddress {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SocketAddress, any Error>) in
            let result: Result<SocketAddress, any Error>? = listening.withLock { states in
                let index = listener.rawValue
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

    private func setListening(_ result: Result<SocketAddress, any Error>, _ listener: Listener) {
        let waiters = listening.withLock { states -> [CheckedContinuation<SocketAddress, any Error>] in
            let index = listener.rawValue
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

        let connections = ConnectionTracker(metrics: configuration.metrics, limits: configuration.limits)
        let handlers = ConnectionHandlers(server: self, group: group)
        var listeners: [(Listener, String, any Channel)] = []
        do {
            var addresses = [(Listener.plain, configuration.host, configuration.port)]
            if let tls = configuration.tls { addresses.append((.tls, tls.host, tls.port)) }
            if let ingest = configuration.ingestListener { addresses.append((.ingest, ingest.host, ingest.port)) }
            for (listener, host, port) in addresses {
                let channel = try await bootstrap(listener, group: group, connections: connections, handlers: handlers)
                    .bind(host: host, port: port).get()
                listeners.append((listener, host, channel))
            }
        } catch {
            for (_, _, channel) in listeners { try? await channel.close() }
            for listener in Listener.allCases { setListening(.failure(error), listener) }
            if ownsGroup { try? await group.shutdownGracefully() }
            throw error
        }
        let eventLoops = group.makeIterator().reduce(0) { count, _ in count + 1 }
        for (listener, host, channel) in listeners {
            guard let address = channel.localAddress else {
                preconditionFailure("a bound server channel has a local address")
            }
            setListening(.success(address), listener)
            logger.info(
                "listening",
                metadata: [
                    "server.listener": "\(listener)",
                    "server.tls": "\(listener == .tls)",
                    "network.protocol.names": listener == .tls ? "http/1.1,h2" : "http/1.1,h2c",
                    "server.address": "\(host)",
                    "server.port": "\(address.port ?? 0)",
                    "server.event_loops": "\(eventLoops)",
                    "limits.max_connections": "\(listener == .ingest ? "none" : String(configuration.limits.maxConnections))",
                ]
            )
        }
        if configuration.tls == nil {
            setListening(.failure(NotListening(description: "no TLS listener is configured")), .tls)
        }
        if configuration.ingestListener == nil {
            setListening(.failure(NotListening(description: "no ingest listener is configured")), .ingest)
        }
        let boundChannels = listeners.map(\.2)

        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                for channel in boundChannels { try? await channel.closeFuture.get() }
                await drain(connections)
            } onGracefulShutdown: { [logger] in
                logger.info("shutting down: no new connections; finishing requests in flight")
                for channel in boundChannels { channel.close(promise: nil) }
                connections.quiesceAll()
            }
        } onCancel: {
            for channel in boundChannels { channel.close(promise: nil) }
            connections.closeAll()
        }

        for listener in Listener.allCases {
            setListening(.failure(NotListening(description: "the server has stopped")), listener)
        }
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
        /// What the public listeners' connections share: without ingest and admin when the ingest
        /// listener serves those.
        let environment: OriginHTTPHandler.Environment
        /// What the ingest listener's connections share: every route.
        let ingestEnvironment: OriginHTTPHandler.Environment
        let dates: LoopLocal<ResponseDates>
        let accessLines: LoopLocal<AccessLogLines>
        let playlists: LoopLocal<PreencodedPlaylists>
        let fileHeads: LoopLocal<PreencodedFileHeads>
        let refusals: ConnectionRefusalLog

        init(server: OriginServer, group: any EventLoopGroup) {
            let configuration = server.configuration
            var environment = OriginHTTPHandler.Environment(
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
                metrics: configuration.metrics,
                limits: configuration.limits,
                deadlineCloses: configuration.metrics.deadlineCloses(ConnectionDeadlines.Expired.self),
                held: server.heldRequests
            )
            environment.responder.symlinks = configuration.followSymlinks
            environment.responder.refusals = RefusalCounters(metrics: configuration.metrics)
            ingestEnvironment = environment
            if configuration.ingestListener != nil {
                environment.responder.servesControlRoutes = false
                environment.ingest = nil
            }
            self.environment = environment
            dates = LoopLocal(group: group) { _ in ResponseDates() }
            accessLines = LoopLocal(group: group) { [accessLogger = server.accessLogger] in
                AccessLogLines(logger: accessLogger, eventLoop: $0)
            }
            playlists = LoopLocal(group: group) { _ in PreencodedPlaylists() }
            fileHeads = LoopLocal(group: group) { _ in PreencodedFileHeads() }
            refusals = ConnectionRefusalLog(
                metrics: configuration.metrics, logger: server.logger, limits: configuration.limits)
        }
    }

    /// A listener's bootstrap: the plain one (HTTP/1.1, and h2c by prior knowledge), the TLS one
    /// (HTTP/1.1 or `h2` by ALPN, with the certificate current at each handshake) or the ingest one
    /// (as the plain one, uncapped). A connection over a cap is refused before any of it is set up.
    private func bootstrap(
        _ listener: Listener, group: any EventLoopGroup, connections: ConnectionTracker, handlers: ConnectionHandlers
    ) -> ServerBootstrap {
        let idleTimeout = TimeAmount(configuration.idleTimeout)
        let handshakeTimeout = TimeAmount(configuration.limits.requestHeadTimeout)
        let maxHeadBytes = configuration.maxRequestHeadBytes
        let http2 = configuration.http2
        let fastPathAnswers = configuration.fastPathAnswers
        let tally = configuration.fastPathTally
        let tls = listener == .tls ? configuration.tls?.certificates : nil
        let environment = listener == .ingest ? handlers.ingestEnvironment : handlers.environment
        let retryAfter = configuration.limits.retryAfterSeconds
        return ServerBootstrap(group: group)
            // A burst of connections (a flood, a CDN's edges all reconnecting) must not overflow the
            // accept queue: a dropped SYN costs a viewer a one-second retransmission. The kernel
            // caps the backlog at `net.core.somaxconn` (4096 on current kernels); each wake-up
            // accepts up to 64.
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.maxMessagesPerRead, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // TCP_NODELAY is a TCP-level option: `.socketOption(.tcp_nodelay)` would set SOL_SOCKET's
            // option 1, SO_DEBUG, which needs CAP_NET_ADMIN and resets every connection of an
            // unprivileged server (the systemd unit's user).
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: UploadReadPacing.connectionMessagesPerRead)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let loop = channel.eventLoop
                    let pipeline = channel.pipeline.syncOperations
                    if let refusal = connections.add(channel, capped: listener != .ingest) {
                        let client = channel.remoteAddress?.ipAddress ?? "-"
                        handlers.refusals.refused(refusal, client: client)
                        let answer =
                            tls != nil
                            ? nil
                            : handlers.dates.box(for: loop).withValue { dates in
                                ConnectionErrorResponse.bytes(
                                    .serviceUnavailable,
                                    refusal == .capacity
                                        ? "the server is at its connection limit; retry later"
                                        : "too many connections from \(client); retry later",
                                    retryAfterSeconds: retryAfter, now: environment.now(), dates: &dates,
                                    allocator: channel.allocator)
                            }
                        try pipeline.addHandler(RefusedConnection(answer: answer))
                        return
                    }
                    guard let tls else {
                        try Self.configure(
                            pipeline, environment: environment, dates: handlers.dates.box(for: loop),
                            accessLines: handlers.accessLines.box(for: loop), playlists: handlers.playlists.box(for: loop),
                            fileHeads: handlers.fileHeads.box(for: loop), idleTimeout: idleTimeout, maxHeadBytes: maxHeadBytes,
                            http2: http2, fastPathAnswers: fastPathAnswers, tally: tally)
                        return
                    }
                    try TLSConnection.configure(channel, context: tls.context, handshakeTimeout: handshakeTimeout) {
                        negotiated, pipeline in
                        if negotiated == "h2" {
                            try HTTP2Connection.configure(
                                pipeline, environment: environment, dates: handlers.dates.box(for: loop),
                                accessLines: handlers.accessLines.box(for: loop).value, limits: http2, idleTimeout: idleTimeout)
                        } else {
                            try Self.configure(
                                pipeline, environment: environment, dates: handlers.dates.box(for: loop),
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
                // at a time) and protocol errors (``ProtocolErrorResponder``: 431, 501, 400 for a bad
                // Host, each with its reason, and close), with Headwater's one
                // HTTP/1.1 writer as the encoder (it also refuses invalid fields).
                try pipeline.addHandlers([
                    HTTP1ResponseEncoder(),
                    ByteToMessageHandler(HTTP1RequestDecoder(limits: limits)),
                    HTTPServerPipelineHandler(),
                    ProtocolErrorResponder(environment: environment, dates: dates, accessLines: accessLines, maxHeadBytes: maxHeadBytes),
                ])
                try pipeline.addHandler(
                    OriginHTTPHandler(
                        environment: environment, dates: dates, accessLines: accessLines, progress: progress,
                        fileBodies: fileBodies, uploadReads: UploadReadPacing(readsOnParent: false)))
            }
        )
    }
}
