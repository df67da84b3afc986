#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells systemd how the service is doing: the `sd_notify(3)` protocol, spoken directly rather than
/// through libsystemd, so the binary links nothing extra and runs the same outside systemd.
///
/// With `Type=notify` (systemd/headwater.service) systemd considers the service started only when
/// it sends `READY=1`, so units ordered after it, and `systemctl start`, wait until it really
/// listens. The protocol is one datagram per notification on the `AF_UNIX` socket named by
/// `NOTIFY_SOCKET`: newline-separated `KEY=value` assignments. systemd identifies the sender by the
/// credentials the kernel attaches, so nothing else is needed.
///
/// When `NOTIFY_SOCKET` is unset (run by hand, under another supervisor, in tests) every method does
/// nothing, so callers notify unconditionally. A notification that cannot be delivered throws: the
/// caller logs it and keeps serving (a lost `READY=1` shows up in systemd as a start time-out, and
/// the log then says why).
///
/// Sending opens a socket, sends one datagram and closes it, as libsystemd does; the value holds no
/// descriptor, so it is freely `Sendable` and copyable.
public struct SystemdNotifier: Sendable {
    /// Where notifications go, from `NOTIFY_SOCKET`.
    public enum Socket: Sendable, Hashable {
        /// A socket file (`NOTIFY_SOCKET=/run/systemd/notify`).
        case path(String)
        /// A name in Linux's abstract socket namespace (`NOTIFY_SOCKET=@name`), without the `@`.
        case abstract(String)
    }

    /// A notification that could not be sent, or a `NOTIFY_SOCKET` this type cannot use.
    public struct NotifyError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    private enum Destination: Sendable, Hashable {
        case none
        case socket(Socket)
        /// `NOTIFY_SOCKET` is set but unusable (relative path, `vsock:` of systemd 253+ in VMs,
        /// too long): reported when sending, so a misconfiguration is not silently ignored.
        case unusable(String)
    }

    private let destination: Destination

    /// The socket notifications go to; `nil` when `NOTIFY_SOCKET` is unset or unusable.
    public var socket: Socket? {
        if case .socket(let socket) = destination { return socket }
        return nil
    }

    /// Whether notifications are sent at all (`NOTIFY_SOCKET` is set).
    public var isEnabled: Bool { destination != .none }

    /// The unit's `WatchdogSec=`, from `WATCHDOG_USEC` (ignored when `WATCHDOG_PID` names another
    /// process, which means it was inherited). When set, call ``watchdog()`` at least every half of
    /// it, or systemd considers the service hung and kills it.
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`, or from the
    /// process environment when `nil` (tests inject their own).
    public init(environment: [String: String]? = nil) {
        func value(_ name: String) -> String? {
            if let environment { return environment[name] }
            return getenv(name).map { String(cString: $0) }
        }
        destination = Self.destination(value("NOTIFY_SOCKET"))
        if let text = value("WATCHDOG_USEC"), let microseconds = Int64(text), microseconds > 0,
            value("WATCHDOG_PID").map({ Int32($0) == getpid() }) ?? true
        {
            watchdogInterval = .microseconds(microseconds)
        } else {
            watchdogInterval = nil
        }
    }

    /// `READY=1`: start-up finished, the server listens. With `Type=notify` this is what ends
    /// `systemctl start`.
    public func ready(status: String? = nil) throws(NotifyError) {
        try send(["READY=1"] + Self.status(status))
    }

    /// `RELOADING=1` with `MONOTONIC_USEC` (`CLOCK_MONOTONIC` now, in µs), sent when a reload
    /// (SIGHUP) begins; follow it with ``reloaded(status:)``. systemd shows the unit as reloading
    /// meanwhile. systemd 253+ uses the timestamp to tie the notification to the reload it asked
    /// for (without it `systemctl reload` can return before the reload is done); 252 ignores it.
    public func reloading(status: String? = nil) throws(NotifyError) {
        try send(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"] + Self.status(status))
    }

    /// `READY=1` again: the reload finished, whether the new configuration was taken or rejected
    /// (say which in `status`).
    public func reloaded(status: String? = nil) throws(NotifyError) {
        try send(["READY=1"] + Self.status(status))
    }

    /// `STOPPING=1`: graceful shutdown began (the server drains responses in flight).
    public func stopping(status: String? = nil) throws(NotifyError) {
        try send(["STOPPING=1"] + Self.status(status))
    }

    /// `STATUS=…`: one line shown by `systemctl status`, e.g. channels live.
    public func status(_ text: String) throws(NotifyError) {
        try send(Self.status(text))
    }

    /// `WATCHDOG=1`: still alive. Only useful when ``watchdogInterval`` is set.
    public func watchdog() throws(NotifyError) {
        try send(["WATCHDOG=1"])
    }

    /// Sends `assignments` (`KEY=value`, no newlines) as one datagram. A no-op without
    /// `NOTIFY_SOCKET`.
    public func send(_ assignments: [String]) throws(NotifyError) {
        switch destination {
        case .none:
            return
        case .unusable(let reason):
            throw NotifyError(message: reason)
        case .socket(let socket):
            try Self.send(assignments.joined(separator: "\n"), to: socket)
        }
    }

    /// `STATUS=` with line breaks turned into spaces: a newline would start a new assignment.
    private static func status(_ text: String?) -> [String] {
        guard let text else { return [] }
        return ["STATUS=" + String(text.map { $0.isNewline ? " " : $0 })]
    }

    /// `CLOCK_MONOTONIC` in µs, the clock systemd compares `MONOTONIC_USEC` with.
    static func monotonicMicroseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1_000
    }

    /// The longest name `sockaddr_un.sun_path` holds: 108 bytes with a terminating NUL for a path,
    /// a leading NUL for an abstract name.
    private static let maximumNameLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    private static func destination(_ value: String?) -> Destination {
        guard let value, !value.isEmpty else { return .none }
        let socket: Socket
        if value.hasPrefix("/") {
            socket = .path(value)
        } else if value.hasPrefix("@"), value.utf8.count > 1 {
            socket = .abstract(String(value.dropFirst()))
        } else {
            return .unusable("NOTIFY_SOCKET=\(value): not an absolute socket path or @abstract name")
        }
        let name: String
        switch socket {
        case .path(let path): name = path
        case .abstract(let abstract): name = abstract
        }
        guard name.utf8.count <= maximumNameLength, !name.utf8.contains(0) else {
            return .unusable("NOTIFY_SOCKET=\(value): longer than a socket address holds")
        }
        return .socket(socket)
    }

    private static func send(_ message: String, to socket: Socket) throws(NotifyError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name: [UInt8]
        let label: String
        switch socket {
        case .path(let path):
            name = Array(path.utf8)
            label = path
        case .abstract(let abstract):
            name = [0] + Array(abstract.utf8)
            label = "@" + abstract
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        // A path's length counts its terminating NUL; an abstract name is exactly its bytes.
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let length = pathOffset + name.count + (name.first == 0 ? 0 : 1)
        #if canImport(Darwin)
        address.sun_len = UInt8(length)
        #endif

        let fd = makeDatagramSocket()
        guard fd >= 0 else { throw NotifyError(message: "sd_notify: cannot create a socket: \(errorText())") }
        defer { close(fd) }
        let sent = message.utf8CString.withUnsafeBufferPointer { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    var result: Int
                    repeat {
                        result = sendto(fd, bytes.baseAddress, bytes.count - 1, noSignal, address, socklen_t(length))
                    } while result < 0 && errno == EINTR
                    return result
                }
            }
        }
        guard sent >= 0 else { throw NotifyError(message: "sd_notify to \(label): \(errorText())") }
    }

    #if canImport(Darwin)
    private static let noSignal: Int32 = 0
    #else
    /// As libsystemd does: never SIGPIPE, whatever the socket.
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #endif

    private static func errorText() -> String { String(cString: strerror(errno)) }
}

/// A close-on-exec `AF_UNIX` datagram socket (outside the type, whose `socket` property would
/// shadow the C function).
private func makeDatagramSocket() -> Int32 {
    #if canImport(Glibc)
    socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    #elseif canImport(Musl)
    socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)
    #else
    socket(AF_UNIX, SOCK_DGRAM, 0)
    #endif
}
