#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a client connection may cost the server before it is refused or closed: the deadlines that
/// bound how long a request may take to arrive and its response to leave, and the caps on how many
/// connections are open at once. Documented in `Config/README.md` ("`server.limits`").
///
/// The deadlines close what the idle timeout cannot: a client that sends its head one byte a second
/// (slowloris) is never idle, nor is an upload that trickles, nor a client that reads nothing of a
/// large response (its connection is busy, not idle). Each closes the connection and is counted
/// (`headwater_http_deadline_closes_total{deadline}`).
public struct ConnectionLimits: Sendable, Hashable {
    /// A request head (request line and fields) must arrive whole within this time of its first
    /// byte; else the client gets `408` and the connection is closed. nginx's
    /// `client_header_timeout` is 60 s; 10 s is plenty for any real client, even on a phone.
    public var requestHeadTimeout: Duration
    /// An upload must bring at least ``minimumBodyRate`` bytes per second, averaged over each period
    /// of this length; else `408` and close.
    public var bodyTimeout: Duration
    /// Bytes per second an upload must keep up (see ``bodyTimeout``). The default, 1 KiB/s, is far
    /// below any encoder's bitrate (an encoder that streams a segment as it encodes it sends at its
    /// own bitrate), and far above a one-byte-a-second trickle.
    public var minimumBodyRate: Int
    /// A connection whose client reads nothing of the response for this long is closed: its send
    /// buffer stayed full without a break. Progress is the socket turning writable again, which the
    /// kernel reports once half its send buffer is free; a long response goes out in pieces of at
    /// most ``FileBodySending/sendfileSlice`` (64 KiB under TLS and HTTP/2), so there is always a
    /// next piece whose write waits for that. A slow client that reads is not cut off as long as
    /// it frees half a send buffer (a few hundred KB; up to 2 MB on loopback) per timeout.
    /// nginx's `send_timeout` is also 60 s.
    public var sendTimeout: Duration
    /// Connections open at once, on the public listeners together; one over the cap is answered
    /// `503` with `Retry-After` (HTTP) or closed (TLS) at once. ``defaultMaxConnections()`` by default.
    public var maxConnections: Int
    /// Connections open at once from one client address, on the public listeners; `0` for no cap.
    /// Behind a CDN every request comes from a few edge addresses: raise it (or set 0) there.
    public var maxConnectionsPerClient: Int
    /// The `Retry-After` of a refused connection's `503`, in seconds.
    public var retryAfterSeconds: Int

    public init(
        requestHeadTimeout: Duration = .seconds(10),
        bodyTimeout: Duration = .seconds(10),
        minimumBodyRate: Int = 1024,
        sendTimeout: Duration = .seconds(60),
        maxConnections: Int = ConnectionLimits.defaultMaxConnections(),
        maxConnectionsPerClient: Int = 256,
        retryAfterSeconds: Int = 5
    ) {
        self.requestHeadTimeout = requestHeadTimeout
        self.bodyTimeout = bodyTimeout
        self.minimumBodyRate = minimumBodyRate
        self.sendTimeout = sendTimeout
        self.maxConnections = maxConnections
        self.maxConnectionsPerClient = maxConnectionsPerClient
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// Half of the process's descriptor limit (`RLIMIT_NOFILE`, systemd `LimitNOFILE=`) less a
    /// reserve, at least 16: a connection may hold a second descriptor (the file it is sending), and
    /// segment stores, ingest uploads, the access log and outgoing connections need theirs. Past
    /// this, `accept` would fail with `EMFILE` for everyone — the ingest listener included — with
    /// nothing logged; below it, the cap answers and counts.
    public static func defaultMaxConnections() -> Int {
        var limit = rlimit()
        // `RLIM_INFINITY` is all ones; a limit that large is no limit worth halving.
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < 1 << 30 else { return 16_384 }
        let descriptors = Int(limit.rlim_cur)
        return max(16, (descriptors - 128) / 2)
    }
}
