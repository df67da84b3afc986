import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// Keep-alive connections held open and idle by the bench itself (plain blocking sockets): each
/// sends one `GET` and reads the whole response, then stays open until ``closeAll()``.
final class IdleConnections {
    private(set) var sockets: [Int32] = []
    /// Response bytes read over all connections.
    private(set) var bytesRead = 0

    deinit { closeAll() }

    /// Opens `count` connections to 127.0.0.1:`port`, one after another (so the server's accept
    /// queue never fills), each with one request for `path` answered 200.
    func open(count: Int, port: Int, path: String) throws {
        sockets.reserveCapacity(sockets.count + count)
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: headwater-bench\r\n\r\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        for index in 0..<count {
            let socket = try Self.connect(port: port)
            sockets.append(socket)
            let sent = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == request.count else { throw ValidationError("connection \(index + 1): send failed: errno \(errno)") }
            bytesRead += try Self.readResponse(socket, buffer: &buffer, connection: index + 1)
        }
    }

    func closeAll() {
        for socket in sockets { close(socket) }
        sockets.removeAll()
    }

    private static func connect(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ValidationError("socket() failed: errno \(errno) (open-file limit?)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
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
        guard connected else {
            let code = errno
            close(socket)
            throw ValidationError("connect to 127.0.0.1:\(port) failed: errno \(code)")
        }
        return socket
    }

    /// Reads one response (Content-Length or chunked body) and checks it is a 200; returns its size.
    private static func readResponse(_ socket: Int32, buffer: inout [UInt8], connection: Int) throws -> Int {
        var received: [UInt8] = []
        var headerEnd: Int?
        var expected: Int?
        var chunked = false
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                throw ValidationError("connection \(connection): the response ended early (recv \(count), errno \(errno))")
            }
            received.append(contentsOf: buffer[0..<count])
            if headerEnd == nil, let end = Self.find([13, 10, 13, 10], in: received) {
                headerEnd = end + 4
                let head = String(decoding: received[0..<end], as: UTF8.self).lowercased()
                guard head.hasPrefix("http/1.1 200") else {
                    throw ValidationError("connection \(connection): \(head.split(separator: "\r\n").first ?? "no status line")")
                }
                for line in head.split(separator: "\r\n") {
                    if line.hasPrefix("content-length:") {
                        expected = Int(String(line.dropFirst("content-length:".count).filter { !$0.isWhitespace }))
                    }
                    if line.hasPrefix("transfer-encoding:"), line.contains("chunked") { chunked = true }
                }
            }
            if let headerEnd {
                if let expected, received.count >= headerEnd + expected { return received.count }
                if chunked, received.count >= headerEnd + 5, Array(received.suffix(5)) == [48, 13, 10, 13, 10] {
                    return received.count
                }
                if expected == nil, !chunked { throw ValidationError("connection \(connection): no Content-Length") }
            }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return start }
        }
        return nil
    }
}
