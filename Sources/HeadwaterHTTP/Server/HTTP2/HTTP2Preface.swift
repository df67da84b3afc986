import NIOCore

/// The client connection preface of HTTP/2 (RFC 9113 §3.4), by which a client with prior knowledge
/// opens h2c on the plain port. No HTTP/1.1 request can start with it (`PRI` is not a method
/// Headwater or anyone answers), so its first bytes decide the connection's protocol.
enum HTTP2Preface {
    static let bytes = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    enum Match: Equatable {
        /// Starts with the preface.
        case http2
        /// Too short to tell, and a prefix of it so far.
        case incomplete
        case notHTTP2
    }

    static func match(_ input: ByteBuffer) -> Match {
        input.withUnsafeReadableBytes { raw in
            let count = min(raw.count, bytes.count)
            for i in 0..<count where raw[i] != bytes[i] { return .notHTTP2 }
            return count == bytes.count ? .http2 : .incomplete
        }
    }
}
