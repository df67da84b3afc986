
/// Settings of the origin (``OriginServer``): the plain listener (HTTP/1.1, and HTTP/2 with prior
/// knowledge), the optional TLS listener (HTTP/1.1 and `h2`), and the limits both share.
public struct OriginServerConfiguration: Sendable {
    /// Address to bind. Default `127.0.0.1`: put a CDN or reverse proxy in front, or bind `0.0.0.0`.
    public var host: String
    /// Port to bind. `0` asks the kernel for any free port (tests); read it back from
    /// ``OriginServer/localAddress`` or ``OriginServer/waitUntilListening()``.
    public var port: Int
    /// Root of the static files served for every path no other route claims (`/` → `index.html`).
    /// `nil` serves no static files.
    public var publicDirectory: String?
    /// Which symbolic links below ``publicDirectory`` (and in segment directories) are followed;
    /// one leading out of its root never is.
    public var followSymlinks = SymlinkPolicy.never
    /// Send `Access-Control-Allow-Origin: *` and answer CORS preflights, for browser players
    /// (hls.js) on another origin.
    public var cors: Bool
    /// Event-loop threads. `nil` (the default) uses NIO's shared singleton group, which has one
    /// thread per core of the machine (or of its cgroup); a number makes a group of that size owned
    /// (and shut down) by the server. ``availableCPUs()`` is one per CPU the process may run on.
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
    /// The TLS listener; `nil` serves plain HTTP only.
    public var tls: TLSListenerConfiguration?
    /// HTTP/2's limits (streams per connection, header list size, reset floods).
    public var http2: HTTP2Limits
    /// Deadlines (request head, upload progress, send progress) and connection caps.
    public var limits: ConnectionLimits
    /// A listener of its own for push ingest (`/ingest/…`) and the admin API (`/admin/…`), which the
    /// public listeners then do not serve; `nil` serves them on the public listeners. Bind it to a
    /// private interface: a flood of viewers on the public port, up to its connection cap, then
    /// cannot lock encoders out.
    public var ingestListener: ListenAddress?
    /// Whether ``OriginFastPath`` answers the requests it can (always, in production). Tests turn it
    /// off to have NIO's HTTP/1 path answer the same requests, and compare the two.
    var fastPathAnswers = true
    /// Counts the requests ``OriginFastPath`` answered (tests only: that a comparison of the two
    /// paths really had the fast one answer).
    var fastPathTally: FastPathTally?

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
        metrics: OriginMetrics = .shared,
        tls: TLSListenerConfiguration? = nil,
        http2: HTTP2Limits = HTTP2Limits(),
        limits: ConnectionLimits = ConnectionLimits(),
        ingestListener: ListenAddress? = nil
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
        self.tls = tls
        self.http2 = http2
        self.limits = limits
        self.ingestListener = ingestListener
    }

    /// A listener's address.
    public struct ListenAddress: Sendable, Hashable {
        public var host: String
        /// `0` for any free port (tests).
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import NIOCore
public import HeadwaterRuntime

extension OriginServerConfiguration {
    /// CPUs this process may run on: its affinity mask (`taskset`, systemd `CPUAffinity=`), within
    /// NIO's count of the machine's or cgroup's cores. One event loop per such CPU: NIO's own
    /// count ignores the affinity mask, so a server pinned to one core would otherwise run two or
    /// more loops on it, which then take turns on that core (a context switch between every batch).
    public static func availableCPUs() -> Int {
        let cores = System.coreCount
        #if os(Linux)
        // `Cpus_allowed:` in /proc/self/status: the affinity mask in hex, 32-bit groups separated by
        // commas (`sched_getaffinity` needs `_GNU_SOURCE`, which Swift's Glibc module lacks).
        guard let status = ProcessSample.readSmallFile("/proc/self/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
        else { return cores }
        let allowed = line.dropFirst("Cpus_allowed:".count).reduce(0) { count, character in
            count + (character.hexDigitValue?.nonzeroBitCount ?? 0)
        }
        return allowed > 0 ? min(cores, allowed) : cores
        #else
        return cores
        #endif
    }

}
