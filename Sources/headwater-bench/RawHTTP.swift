import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 `GET` over a plain blocking loopback socket, for what AsyncHTTPClient cannot give
/// or cannot give from synchronous code: a response byte for byte, head included (the floor server
/// answers with Headwater's exact bytes), and the current media playlist between two wrk runs (the
/// live-URL row lists the segments of the moment before each run).
enum RawHTTP {
    /// The whole response (head and body, as received) to `GET path` on 127.0.0.1:`port`. The
    /// request is a keep-alive one, as wrk's are, so the head is the one wrk gets; the body is read
    /// by its `Content-Length`.
    static func get(port: Int, path: String, headers: [String] = []) throws -> [UInt8] {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ValidationError("socket() failed: errno \(errno)") }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw ValidationError("connect to 127.0.0.1:\(port) failed: errno \(errno)") }
        let request = Array(
            (["GET \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)"] + headers).joined(separator: "\r\n").utf8) + Array("\r\n\r\n".utf8)
        let sent = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { throw ValidationError("GET \(path) on port \(port): send failed: errno \(errno)") }

        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var expected: Int?
        while expected.map({ received.count < $0 }) ?? true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw ValidationError("GET \(path) on port \(port): the response ended early (errno \(errno))") }
            received.append(contentsOf: buffer[0..<count])
            if expected == nil, let end = headEnd(received) {
                let head = String(decoding: received[0..<end], as: UTF8.self).lowercased()
                guard let length = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") })
                    .flatMap({ Int(String($0.dropFirst("content-length:".count).filter { !$0.isWhitespace })) })
                else { throw ValidationError("GET \(path) on port \(port): no Content-Length") }
                expected = end + 4 + length
            }
        }
        return received
    }

    /// Where the head ends (the index of its `\r\n\r\n`).
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The status code and body of a whole response.
    static func split(_ response: [UInt8]) -> (status: Int, head: String, body: [UInt8])? {
        guard let end = headEnd(response) else { return nil }
        let head = String(decoding: response[0..<end], as: UTF8.self)
        let words = head.split(separator: " ", maxSplits: 2)
        guard words.count >= 2, let status = Int(words[1]) else { return nil }
        return (status, head, Array(response[(end + 4)...]))
    }
}
