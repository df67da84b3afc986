import HeadwaterTesting

extension BlockingSocket {
    /// Reads until one whole final response (with a `Content-Length` body) has arrived; `nil` if the
    /// connection ends or times out first.
    func receiveResponse() -> RawResponse? {
        var bytes: [UInt8] = []
        while true {
            if let response = RawResponse.parseAll(bytes).0.first { return response }
            guard let chunk = receive(), !chunk.isEmpty else { return nil }
            bytes += chunk
        }
    }
}
