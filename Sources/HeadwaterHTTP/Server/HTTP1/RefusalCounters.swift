import HeadwaterRuntime

/// Refusals counted by their reason, where `headwater_http_requests_total`'s status alone would
/// hide it: a 400 for a missing `Host` looks like any 400 there, and a 404 for a symbolic link the
/// server does not follow like any missing file (on purpose: the client must not tell them apart;
/// the operator should). Every series is made, at 0, with the server.
struct RefusalCounters: Sendable {
    /// Where a refused link was met.
    enum SymlinkRoot: String, CaseIterable, Sendable {
        /// Below the public directory (static files, ad creatives, the demo's media).
        case staticFile = "static"
        /// A listed segment's file (its directory is Headwater's or the packager's).
        case segment
    }

    private let protocolErrors: OriginMetrics.LabelledCounters<ProtocolError>?
    private let symlinks: OriginMetrics.LabelledCounters<SymlinkRoot>?

    /// Counts nothing (a responder made by a test).
    init() {
        protocolErrors = nil
        symlinks = nil
    }

    init(metrics: OriginMetrics) {
        protocolErrors = metrics.counters(
            "headwater_http_protocol_errors_total",
            help: "HTTP/1 requests refused before routing: a head the decoder could not read (too large: 431; unknown method: 501; else 400) or a Host field missing, repeated or invalid (400).",
            by: "reason", values: ProtocolError.self)
        symlinks = metrics.counters(
            "headwater_symlinks_refused_total",
            help: "Files not served (404) because a symbolic link on their path is not followed (server.follow_symlinks), by where.",
            by: "root", values: SymlinkRoot.self)
    }

    func protocolError(_ error: ProtocolError) { protocolErrors?.increment(error) }

    func refusedSymlink(_ root: SymlinkRoot) { symlinks?.increment(root) }
}
