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
    private let listening = Mutex(Listening.pending([]))

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
        listening.withLock { state in
            if case .listening(let address) = state { return address }
            return nil
        }
    }

    /// Waits until ``run()`` has bound its socket and returns the address (with the real port when
    /// ``OriginServerConfiguration/port`` is 0). Throws if binding failed or the server stopped.
    public func waitUntilListening() async throws -> SocketAddress {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SocketAddress, any Error>) in
            let result: Result<SocketAddress, any Error>? = listening.withLock { state in
                switch state {
                case .pending(var waiters):
                    waiters.append(continuation)
                    state = .pending(waiters)
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

    private func setListening(_ result: Result<SocketAddress, any Error>) {
        let waiters = listening.withLock { state -> [CheckedContinuation<SocketAddress, any Error>] in
            var waiters: [CheckedContinuation<SocketAddress, any Error>] = []
            if case .pending(let pending) = state { waiters = pending }
            switch result {
            case .success(let address): state = .listening(address)
            case .failure(let error): state = .stopped(error)
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
        let serverChannel: any Channel
        do {
            serverChannel = try await bootstrap(group: group, connections: connections)
                .bind(host: configuration.host, port: configuration.port).get()
        } catch {
            setListening(.failure(error))
            if ownsGroup { try? await group.shutdownGracefully() }
            throw error
        }
        guard let address = serverChannel.localAddress else {
            preconditionFailure("a bound server channel has a local address")
        }
        setListening(.success(address))
        logger.info(
            "listening",
            metadata: [
                "server.address": "\(configuration.host)", "server.port": "\(address.port ?? 0)",
                "server.event_loops": "\(group.makeIterator().reduce(0) { count, _ in count + 1 })",
            ]
        )

        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                try? await serverChannel.closeFuture.get()
                await drain(connections)
            } onGracefulShutdown: { [logger] in
                logger.info("shutting down: no new connections; finishing requests in flight")
                serverChannel.close(promise: nil)
                connections.quiesceAll()
            }
        } onCancel: {
            serverChannel.close(promise: nil)
            connections.closeAll()
        }

        setListening(.failure(NotListening(description: "the server has stopped")))
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

    private func bootstrap(group: any EventLoopGroup, connections: ConnectionTracker) -> ServerBootstrap {
        let environment = OriginHTTPHandler.Environment(
            responder: OriginResponder(
                content: content,
                publicDirectory: configuration.publicDirectory,
                cors: configuration.cors,
                ingestEnabled: ingest != nil,
                logger: logger,
                statusAPI: statusAPI,
                metrics: configuration.metrics,
                clock: clock,
                adInsertion: adInsertion
            ),
            ingest: ingest,
            maxIngestBodyBytes: configuration.maxIngestBodyBytes,
            cors: configuration.cors,
            logger: logger,
            accessLogger: accessLogger,
            metrics: configuration.metrics
        )
        let dates = LoopLocal(group: group) { _ in ResponseDates() }
        let accessLines = LoopLocal(group: group) { [accessLogger] in AccessLogLines(logger: accessLogger, eventLoop: $0) }
        let playlists = LoopLocal(group: group) { _ in PreencodedPlaylists() }
        let fileHeads = LoopLocal(group: group) { _ in PreencodedFileHeads() }
        let idleTimeout = TimeAmount(configuration.idleTimeout)
        let maxHeadBytes = configuration.maxRequestHeadBytes
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
                    try Self.configure(
                        channel.pipeline.syncOperations,
                        environment: environment,
                        dates: dates.box(for: channel.eventLoop),
                        accessLines: accessLines.box(for: channel.eventLoop),
                        playlists: playlists.box(for: channel.eventLoop),
                        fileHeads: fileHeads.box(for: channel.eventLoop),
                        idleTimeout: idleTimeout,
                        maxHeadBytes: maxHeadBytes
                    )
                    connections.add(channel)
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
        maxHeadBytes: Int
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
                idleTimeout: idleTimeout
            ) { pipeline in
                // The full path, added by the fast path when it first hands a request over.
                try pipeline.configureHTTPServerPipeline(
                    withPipeliningAssistance: true,
                    withErrorHandling: true,
                    withOutboundHeaderValidation: true,
                    withEncoderConfiguration: HTTPResponseEncoder.Configuration(),
                    withDecoderLimitConfiguration: limits
                )
                try pipeline.addHandler(OriginHTTPHandler(environment: environment, dates: dates, accessLines: accessLines, progress: progress))
            }
        )
    }
}
