import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A plain blocking TCP client socket, for what misbehaving clients do byte by byte: send a head a
/// byte at a time, never read, connect from another loopback address (127.0.0.2). Its calls block,
/// so tests run them on threads of their own (``onThread(_:)``), never on the concurrency pool.
public final class BlockingSocket: Sendable {
    public let fd: Int32

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Connects to 127.0.0.1:`port`, from `source` if given (any 127.x.y.z address is local).
    /// - Parameter receiveBuffer: `SO_RCVBUF`, set before connecting (a small one makes the
    ///   server's send buffer fill soon when this client does not read).
    public init(port: Int, source: String? = nil, receiveBuffer: Int32? = nil, timeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setReceiveTimeout(timeout)
        if let source {
            var local = Self.address(source, port: 0)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                throw Failure(description: "bind \(source): errno \(errno)")
            }
        }
        var remote = Self.address("127.0.0.1", port: port)
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect: errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// Ends the connection both ways now (the descriptor is closed when the socket goes away).
    public func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// How long ``receive(upTo:)`` waits (a very short one polls).
    public func setReceiveTimeout(_ seconds: Double) {
        var interval = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func address(_ ip: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, ip, &address.sin_addr)
        return address
    }

    /// Sends all of `text`; `false` if the server has closed the connection.
    @discardableResult
    public func send(_ text: String) -> Bool {
        send(Array(text.utf8))
    }

    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// Reads what has arrived (waiting up to the receive timeout); empty at the end of the stream,
    /// `nil` on a timeout or an error (a reset).
    public func receive(upTo count: Int = 65_536) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, count, 0) }
        guard n >= 0 else { return nil }
        return Array(buffer.prefix(n))
    }

    /// Everything until the server closes the connection (or the receive timeout, or a reset).
    public func receiveAll() -> (bytes: [UInt8], closed: Bool) {
        var all: [UInt8] = []
        while true {
            guard let chunk = receive() else { return (all, false) }
            if chunk.isEmpty { return (all, true) }
            all += chunk
        }
    }
}

/// Runs blocking work on a thread of its own and returns its result.
public func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}
