import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP/1.1 side of the blocking-reload row: one blocking playlist request sent on each of many
/// open keep-alive connections, then every response read whole, with the wall-clock instant its
/// last byte arrived.
///
/// The bench's own client rather than `h2load --h1`: h2load closes each connection as soon as its
/// one request is answered, so the server would spend the release closing thousands of connections
/// (in its CPU and in the latency of the later responses), and it sends as it connects, so there is
/// no instant at which all requests are known to be out. Here the connections are opened (and idle)
/// first, the requests sent at a chosen instant, and nothing is closed until the last response.
/// One thread, `poll`, non-blocking reads.
final class HeldRequestClient {
    /// One response: its status, when its last byte arrived (µs since the epoch, `CLOCK_REALTIME`,
    /// the clock the loop channel's dates are on), and its body.
    struct Response {
        var status: Int
        var completedMicros: Int64
        var body: [UInt8]
    }

    private let sockets: [Int32]
    private let poller: Poller
    /// When the last request was written (µs since the epoch).
    private(set) var sentMicros: Int64 = 0

    /// `sockets`: open keep-alive connections with no request outstanding (``IdleConnections``);
    /// they are made non-blocking (reads only: requests are written before any response can come).
    init(sockets: [Int32]) throws {
        self.sockets = sockets
        for socket in sockets { _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK) }
        self.poller = Poller(sockets: sockets)
    }

    /// Writes `request` on every connection (a request is a few hundred bytes: each fits the empty
    /// send buffer whole).
    func send(_ request: [UInt8]) throws {
        for (index, socket) in sockets.enumerated() {
            let sent = request.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == request.count else { throw ValidationError("held request \(index + 1): send failed: errno \(errno)") }
        }
        sentMicros = Self.wallMicroseconds()
    }

    /// How many connections have something to read now (none should, while their requests are held).
    func readableNow() -> Int {
        poller.wait(Array(sockets.indices), milliseconds: 0).count
    }

    /// Reads one whole response (`Content-Length` bodies) from every connection, stamping each when
    /// its last byte arrives; gives up `timeoutSeconds` after the call.
    func receive(timeoutSeconds: Int) throws -> [Response] {
        var partial = [[UInt8]](repeating: [], count: sockets.count)
        var responses = [Response?](repeating: nil, count: sockets.count)
        var pending = Array(sockets.indices)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = Self.wallMicroseconds() + Int64(timeoutSeconds) * 1_000_000
        while !pending.isEmpty {
            let left = deadline - Self.wallMicroseconds()
            guard left > 0 else { throw ValidationError("\(pending.count) of \(sockets.count) held requests unanswered after \(timeoutSeconds) s") }
            let ready = poller.wait(pending, milliseconds: Int32(min(left / 1000 + 1, 1000)))
            for index in ready {
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(sockets[index], $0.baseAddress, $0.count, 0) }
                    if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { break }
                    guard count > 0 else {
                        throw ValidationError("held request \(index + 1): the connection ended before the response (recv \(count), errno \(errno))")
                    }
                    partial[index].append(contentsOf: buffer[0..<count])
                    if let response = try Self.complete(partial[index], connection: index + 1) {
                        responses[index] = response
                        partial[index] = []
                        break
                    }
                }
            }
            if !ready.isEmpty { pending.removeAll { responses[$0] != nil } }
        }
        return responses.map { $0! }
    }

    /// The response in `bytes` if it is whole, stamped now.
    private static func complete(_ bytes: [UInt8], connection: Int) throws -> Response? {
        guard let end = RawHTTP.headEnd(bytes) else { return nil }
        let head = String(decoding: bytes[0..<end], as: UTF8.self).lowercased()
        guard let length = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") })
            .flatMap({ Int(String($0.dropFirst("content-length:".count).filter { !$0.isWhitespace })) })
        else { throw ValidationError("held request \(connection): no Content-Length") }
        guard bytes.count >= end + 4 + length else { return nil }
        let completed = wallMicroseconds()
        guard let response = RawHTTP.split(bytes) else { throw ValidationError("held request \(connection): no status line") }
        return Response(status: response.status, completedMicros: completed, body: Array(response.body.prefix(length)))
    }

    /// `CLOCK_REALTIME` in µs: the clock of the loop channel's `EXT-X-PROGRAM-DATE-TIME` and of
    /// h2load's per-request log.
    static func wallMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    /// `poll(2)` over some of the connections (Glibc's module map has no `epoll`; each call costs
    /// O(connections still waiting), and that set shrinks as responses complete).
    private struct Poller {
        let sockets: [Int32]

        /// Those of `indices` whose connections are readable within `milliseconds`.
        func wait(_ indices: [Int], milliseconds: Int32) -> [Int] {
            var descriptors = indices.map { pollfd(fd: sockets[$0], events: Int16(POLLIN), revents: 0) }
            let count = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
            guard count > 0 else { return [] }
            return zip(indices, descriptors).filter { $0.1.revents != 0 }.map(\.0)
        }
    }
}
