#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A stand-in for systemd's notification socket: an `AF_UNIX` datagram socket that receives what
/// `sd_notify` sends (5 s receive timeout).
public struct DatagramReceiver {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let fd: Int32
    /// The value for `NOTIFY_SOCKET`.
    public let notifySocket: String
    /// The directory holding the socket file, removed by `remove()`.
    public let directory: String?

    /// Binds a socket file in a new temporary directory.
    public static func inTemporaryDirectory() throws -> DatagramReceiver {
        var template = Array("/tmp/headwater-notify-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Failure(description: "mkdtemp: \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        let path = directory + "/notify"
        let fd = try makeSocket(boundTo: Array(path.utf8) + [0])
        return DatagramReceiver(fd: fd, notifySocket: path, directory: directory)
    }

    /// Binds a name in the abstract namespace (Linux).
    public static func abstract(_ name: String) throws -> DatagramReceiver {
        let fd = try makeSocket(boundTo: [0] + Array(name.utf8))
        return DatagramReceiver(fd: fd, notifySocket: "@" + name, directory: nil)
    }

    private static func makeSocket(boundTo name: [UInt8]) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        // An abstract name's length is exactly its bytes (a trailing NUL would be part of the name).
        let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + name.count - (name.first == 0 ? 0 : 1)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "bind: \(reason)")
        }
        return fd
    }

    /// The next datagram, as text.
    public func receive() throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { throw Failure(description: "no datagram: \(String(cString: strerror(errno)))") }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    public func remove() {
        close(fd)
        if let directory {
            unlink(directory + "/notify")
            rmdir(directory)
        }
    }
}
