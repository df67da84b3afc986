/// Measures the bit rates an HLS variant must declare (RFC 8216bis §4.1, §4.4.6.2; HLS-RULES E2).
///
/// - **Peak segment bit rate**: the largest bit rate of any contiguous set of segments whose total
///   duration is between 0.5 × target duration and 1.5 × target duration + 0.5 s (both inclusive).
///   BANDWIDTH must not be lower.
/// - **Average segment bit rate**: total bits over total duration (AVERAGE-BANDWIDTH).
///
/// Bit rates are bits per second, rounded up. Arithmetic is exact (integers, microseconds).
/// Computing the peak visits every qualifying set: O(segments × segments per window).
public struct BitrateMeter: Sendable, Hashable {
    public struct Segment: Sendable, Hashable {
        public var byteCount: Int
        public var durationMicroseconds: Int64
    }

    /// EXT-X-TARGETDURATION in seconds.
    public let targetDuration: Int
    /// The most segments kept: older ones are dropped first (a live "representative period").
    public let capacity: Int
    public private(set) var segments: [Segment] = []

    /// - Parameters:
    ///   - targetDuration: EXT-X-TARGETDURATION, in seconds (negative values count as 0).
    ///   - capacity: the most recent segments to keep (at least 1); unlimited by default.
    public init(targetDuration: Int, capacity: Int = .max) {
        self.targetDuration = max(targetDuration, 0)
        self.capacity = max(capacity, 1)
    }

    /// Records one segment. Negative values count as 0.
    public mutating func add(byteCount: Int, durationMicroseconds: Int64) {
        segments.append(Segment(byteCount: max(byteCount, 0), durationMicroseconds: max(durationMicroseconds, 0)))
        if segments.count > capacity { segments.removeFirst(segments.count - capacity) }
    }

    /// Records a probed segment by its byte count and measured duration.
    public mutating func add(_ probe: SegmentProbe) {
        add(byteCount: probe.byteCount, durationMicroseconds: probe.durationMicroseconds)
    }

    /// Shortest qualifying set duration: 0.5 × target duration.
    public var minimumWindowMicroseconds: Int64 { Int64(clamping: Int128(targetDuration) * 500_000) }

    /// Longest qualifying set duration: 1.5 × target duration + 0.5 s.
    public var maximumWindowMicroseconds: Int64 { Int64(clamping: Int128(targetDuration) * 1_500_000 + 500_000) }

    /// The peak segment bit rate, or `nil` while no contiguous set of segments has a total duration
    /// within the window (for example, a single segment shorter than half the target duration).
    public var peakBitRate: Int? {
        let lower = Int128(minimumWindowMicroseconds)
        let upper = Int128(maximumWindowMicroseconds)
        var peak: Int?
        for start in segments.indices {
            var bytes: Int128 = 0
            var duration: Int128 = 0
            for segment in segments[start...] {
                bytes += Int128(segment.byteCount)
                duration += Int128(segment.durationMicroseconds)
                if duration > upper { break }
                if duration >= lower, duration > 0 {
                    let rate = Self.bitRate(bytes: bytes, microseconds: duration)
                    peak = max(peak ?? rate, rate)
                }
            }
        }
        return peak
    }

    /// The average segment bit rate over all kept segments, or `nil` while their total duration is 0.
    public var averageBitRate: Int? {
        let bytes = segments.reduce(Int128(0)) { $0 + Int128($1.byteCount) }
        let duration = segments.reduce(Int128(0)) { $0 + Int128($1.durationMicroseconds) }
        return duration > 0 ? Self.bitRate(bytes: bytes, microseconds: duration) : nil
    }

    /// ⌈bytes × 8 / seconds⌉.
    static func bitRate(bytes: Int128, microseconds: Int128) -> Int {
        let bits = bytes * 8 * 1_000_000
        return Int(clamping: (bits + microseconds - 1) / microseconds)
    }
}
