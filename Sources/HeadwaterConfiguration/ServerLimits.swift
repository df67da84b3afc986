import Yams

/// `server.limits`: the deadlines and connection caps of client connections, each `nil` when not
/// set (the server's defaults apply: `Config/README.md` "`server.limits`"). Durations are whole
/// seconds.
public struct ServerLimits: Sendable, Hashable {
    /// `max_connections`: connections open at once on the public listeners.
    public var maxConnections: Int?
    /// `max_connections_per_client`: from one client address; `0` for no cap.
    public var maxConnectionsPerClient: Int?
    /// `request_head_timeout`: a request head must arrive whole within this many seconds.
    public var requestHeadTimeoutSeconds: Int?
    /// `body_timeout`: the period over which an upload's rate is judged.
    public var bodyTimeoutSeconds: Int?
    /// `min_body_rate`: bytes per second an upload must average over each `body_timeout`.
    public var minimumBodyRate: Int?
    /// `send_timeout`: a client that reads nothing of a response for this long is disconnected.
    public var sendTimeoutSeconds: Int?
    /// `idle_timeout`: a connection that sends nothing for this long between requests is closed.
    public var idleTimeoutSeconds: Int?
    /// `http2_max_streams`: requests open at once on one HTTP/2 connection.
    public var http2MaxStreams: Int?
    /// `http2_max_resets`: streams a client may reset within 30 s before its connection is ended.
    public var http2MaxResets: Int?

    public init() {}

    static let keys: Set<String> = [
        "max_connections", "max_connections_per_client", "request_head_timeout", "body_timeout", "min_body_rate",
        "send_timeout", "idle_timeout", "http2_max_streams", "http2_max_resets",
    ]
}

extension HeadwaterConfiguration {
    /// `server.limits` at `path`, every problem recorded in `reader`.
    static func parseLimits(_ node: Node, path: String, reader: inout YAMLReader) -> ServerLimits {
        var limits = ServerLimits()
        for (name, value, _) in reader.mapping(node, path, allowed: ServerLimits.keys) {
            let keyPath = "\(path).\(name)"
            switch name {
            case "max_connections": limits.maxConnections = reader.integer(value, keyPath, in: 1...1_000_000)
            case "max_connections_per_client":
                limits.maxConnectionsPerClient = reader.integer(value, keyPath, in: 0...1_000_000)
            case "request_head_timeout": limits.requestHeadTimeoutSeconds = reader.integer(value, keyPath, in: 1...600)
            case "body_timeout": limits.bodyTimeoutSeconds = reader.integer(value, keyPath, in: 1...600)
            case "min_body_rate": limits.minimumBodyRate = reader.integer(value, keyPath, in: 0...1_000_000_000)
            case "send_timeout": limits.sendTimeoutSeconds = reader.integer(value, keyPath, in: 1...3600)
            case "idle_timeout": limits.idleTimeoutSeconds = reader.integer(value, keyPath, in: 1...3600)
            case "http2_max_streams": limits.http2MaxStreams = reader.integer(value, keyPath, in: 1...10_000)
            case "http2_max_resets": limits.http2MaxResets = reader.integer(value, keyPath, in: 1...100_000)
            default: break
            }
        }
        return limits
    }
}
