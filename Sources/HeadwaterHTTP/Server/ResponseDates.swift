import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `Date` and `Expires` values, formatted at most once per second (per `max-age` for `Expires`).
/// One per event loop (``LoopLocal``), so the hot path formats no dates.
struct ResponseDates: Sendable {
    private var dates = HTTPDateCache()
    private var expiresSecond: Int64 = .min
    private var expires: [Int: String] = [:]
    private var logSecond: Int64 = .min
    private var logTime = ""

    init() {}

    mutating func date(now: Int64) -> String {
        dates.string(forUnixSeconds: now)
    }

    mutating func expires(now: Int64, maxAge: Int) -> String {
        if now != expiresSecond {
            expiresSecond = now
            expires.removeAll(keepingCapacity: true)
        }
        if let cached = expires[maxAge] { return cached }
        let formatted = HTTPDate.format(unixSeconds: now + Int64(maxAge))
        expires[maxAge] = formatted
        return formatted
    }

    /// The access log's time (``AccessLogEntry/commonLogTime(unixSeconds:)``), formatted once per second.
    mutating func commonLogTime(now: Int64) -> String {
        if now != logSecond {
            logSecond = now
            logTime = AccessLogEntry.commonLogTime(unixSeconds: now)
        }
        return logTime
    }

    /// The wall clock, Unix seconds.
    static func now() -> Int64 {
        Int64(time(nil))
    }
}

/// One `Value` per event loop of a group (``ResponseDates``, ``PreencodedPlaylists``,
/// ``AccessLogLines``), handed to each connection's handlers, so per-loop caches need no locks.
struct LoopLocal<Value>: Sendable {
    private let boxes: [ObjectIdentifier: NIOLoopBoundBox<Value>]
    /// Makes the value of a loop.
    private let make: @Sendable (any EventLoop) -> Value

    init(group: any EventLoopGroup, make: @escaping @Sendable (any EventLoop) -> Value) {
        var boxes: [ObjectIdentifier: NIOLoopBoundBox<Value>] = [:]
        for loop in group.makeIterator() {
            boxes[ObjectIdentifier(loop)] = NIOLoopBoundBox.makeBoxSendingValue(make(loop), eventLoop: loop)
        }
        self.boxes = boxes
        self.make = make
    }

    /// The box of `loop`, or a new one for a loop outside the group (`EmbeddedEventLoop` in tests).
    /// Call on `loop`.
    func box(for loop: any EventLoop) -> NIOLoopBoundBox<Value> {
        boxes[ObjectIdentifier(loop)] ?? NIOLoopBoundBox.makeBoxSendingValue(make(loop), eventLoop: loop)
    }
}
