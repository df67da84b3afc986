/// What one HTTP/2 connection may ask of the server, on the TLS listener (`h2`) and on the plain
/// one (h2c with prior knowledge). The defaults are nginx's (`http2_max_concurrent_streams 128`)
/// or tighter.
public struct HTTP2Limits: Sendable, Hashable {
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`: requests open at once on a connection; a client that opens
    /// more gets `REFUSED_STREAM` for each one over.
    public var maxConcurrentStreams: Int
    /// `SETTINGS_MAX_HEADER_LIST_SIZE`: the largest request head (decoded HPACK field list); a larger
    /// one ends the connection with `PROTOCOL_ERROR`. HTTP/1.1's `maxRequestHeadBytes` by default.
    public var maxHeaderListSize: Int
    /// The rapid-reset defence (CVE-2023-44487): more than this many streams reset by the client
    /// within ``resetWindow`` ends the connection with `ENHANCE_YOUR_CALM`.
    public var maxResetsPerWindow: Int
    public var resetWindow: Duration

    public init(
        maxConcurrentStreams: Int = 128,
        maxHeaderListSize: Int = 16 * 1024,
        maxResetsPerWindow: Int = 200,
        resetWindow: Duration = .seconds(30)
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxHeaderListSize = maxHeaderListSize
        self.maxResetsPerWindow = maxResetsPerWindow
        self.resetWindow = resetWindow
    }
}
