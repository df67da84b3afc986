public import HeadwaterCore

/// Settings of the HTTP/1.1 origin (``OriginServer``).
public struct OriginServerConfiguration: Sendable, Hashable {
    /// Address to bind. Default `127.0.0.1`: put a CDN or reverse proxy in front, or bind `0.0.0.0`.
    public var host: String
    /// Port to bind. `0` asks the kernel for any free port (tests); read it back from
    /// ``OriginServer/localAddress`` or ``OriginServer/waitUntilListening()``.
    public var port: Int
    /// Root of the static files served for every path no other route claims (`/` → `index.html`).
    /// `nil` serves no static files.
    public var publicDirectory: String?
    /// Send `Access-Control-Allow-Origin: *` and answer CORS preflights, for browser players
    /// (hls.js) on another origin.
    public var cors: Bool
    /// Event-loop threads. `nil` (the default) uses NIO's shared singleton group, which has one
    /// thread per core; a number makes a group of that size owned (and shut down) by the server.
    public var eventLoopThreads: Int?
    /// Largest request head (all header names and values together, and any single field); a larger
    /// one is answered 400 and the connection closed.
    public var maxRequestHeadBytes: Int
    /// How long a keep-alive connection may sit without sending anything while no response is
    /// being written; then it is closed. Also bounds a stalled upload or a half-sent request head.
    public var idleTimeout: Duration
    /// Largest ingest request body. A larger upload is answered 413 as soon as the limit is passed
    /// (or at once when `Content-Length` says so), aborted, and the connection closed.
    public var maxIngestBodyBytes: Int64
    /// On graceful shutdown, how long in-flight responses and uploads may take to finish before
    /// their connections are closed anyway.
    public var shutdownGracePeriod: Duration
    /// Where requests are counted and what `/metrics` exports. Default: ``OriginMetrics/shared``,
    /// the process's registry; tests pass their own.
    public var metrics: OriginMetrics

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        publicDirectory: String? = nil,
        cors: Bool = false,
        eventLoopThreads: Int? = nil,
        maxRequestHeadBytes: Int = 16 * 1024,
        idleTimeout: Duration = .seconds(60),
        maxIngestBodyBytes: Int64 = 64 * 1024 * 1024,
        shutdownGracePeriod: Duration = .seconds(30),
        metrics: OriginMetrics = .shared
    ) {
        self.host = host
        self.port = port
        self.publicDirectory = publicDirectory
        self.cors = cors
        self.eventLoopThreads = eventLoopThreads
        self.maxRequestHeadBytes = maxRequestHeadBytes
        self.idleTimeout = idleTimeout
        self.maxIngestBodyBytes = maxIngestBodyBytes
        self.shutdownGracePeriod = shutdownGracePeriod
        self.metrics = metrics
    }
}
