import HeadwaterConfiguration
import HeadwaterHTTP

/// `server.limits` and `server.ingest_listen` into the server's settings: each key set replaces its
/// default (``ConnectionLimits``), each key unset keeps it.
enum ServerLimitsWiring {
    static func apply(_ server: HeadwaterConfiguration.Server, to settings: inout OriginServerConfiguration) {
        let limits = server.limits
        if let value = limits.maxConnections { settings.limits.maxConnections = value }
        if let value = limits.maxConnectionsPerClient { settings.limits.maxConnectionsPerClient = value }
        if let value = limits.requestHeadTimeoutSeconds { settings.limits.requestHeadTimeout = .seconds(value) }
        if let value = limits.bodyTimeoutSeconds { settings.limits.bodyTimeout = .seconds(value) }
        if let value = limits.minimumBodyRate { settings.limits.minimumBodyRate = value }
        if let value = limits.sendTimeoutSeconds { settings.limits.sendTimeout = .seconds(value) }
        if let value = limits.idleTimeoutSeconds { settings.idleTimeout = .seconds(value) }
        if let value = limits.http2MaxStreams { settings.http2.maxConcurrentStreams = value }
        if let value = limits.http2MaxResets { settings.http2.maxResetsPerWindow = value }
        settings.ingestListener = server.ingestListen.map { .init(host: $0.host, port: $0.port) }
    }
}
