#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The wall clock, injected so that time-driven behaviour (the loop channel's live edge, stall
/// detection) is tested with a fixed or stepped clock instead of sleeps.
public protocol WallClock: Sendable {
    /// Microseconds since the Unix epoch.
    func now() -> Int64
}

/// `CLOCK_REALTIME`.
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
    }
}
