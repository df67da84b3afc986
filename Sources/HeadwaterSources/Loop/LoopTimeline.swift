public import HeadwaterHLS

/// Where a looping channel is at any instant — a pure function of wall-clock time.
///
/// The loop is laid on the Unix epoch: loop `k` starts at `k × L` (L = the package's duration), and
/// segment `g` (global index since the epoch) is file `g mod N` of loop `g / N`. So the media
/// sequence number is `g`, the discontinuity sequence number is `g / N` (one discontinuity at each
/// loop point), and PROGRAM-DATE-TIME is the segment's start on the wall clock. Nothing is stored:
/// numbering survives restarts, and every node serving the same package serves identical playlists.
public struct LoopTimeline: Sendable, Hashable {
    /// Segment durations of one loop, µs.
    public let durations: [Int64]
    /// Start offset of each segment within the loop, µs.
    public let starts: [Int64]
    /// Duration of one loop, µs.
    public let loopDuration: Int64

    public init(durations: [HLSDuration]) {
        precondition(!durations.isEmpty && durations.allSatisfy { $0.microseconds > 0 }, "a loop needs segments of positive duration")
        self.durations = durations.map(\.microseconds)
        var starts: [Int64] = []
        var offset: Int64 = 0
        for duration in self.durations {
            starts.append(offset)
            offset += duration
        }
        self.starts = starts
        self.loopDuration = offset
    }

    public var segmentCount: Int { durations.count }

    /// The file index of segment `g`.
    public func fileIndex(of g: UInt64) -> Int { Int(g % UInt64(segmentCount)) }

    /// Start of segment `g`, µs since the epoch.
    public func start(of g: UInt64) -> Int64 {
        Int64(g / UInt64(segmentCount)) * loopDuration + starts[fileIndex(of: g)]
    }

    public func duration(of g: UInt64) -> Int64 { durations[fileIndex(of: g)] }

    /// The discontinuity sequence number of segment `g`.
    public func discontinuitySequenceNumber(of g: UInt64) -> UInt64 { g / UInt64(segmentCount) }

    /// The newest segment completely produced at `now` (µs since the epoch): its end is ≤ now.
    public func lastPublished(at now: Int64) -> UInt64 {
        let loop = now / loopDuration
        let offset = now - loop * loopDuration
        var index = -1
        for i in 0..<segmentCount where starts[i] + durations[i] <= offset { index = i }
        return UInt64(loop) * UInt64(segmentCount) &+ UInt64(bitPattern: Int64(index))
    }

    /// When the segment after `g` completes (µs since the epoch): the next playlist version.
    public func nextPublication(after g: UInt64) -> Int64 { start(of: g + 1) + duration(of: g + 1) }

    /// The first segment of a window ending at `last` that lasts at least `window` µs, and never less
    /// than three target durations plus one segment (C5, C16), counting back from `last`.
    public func windowStart(endingAt last: UInt64, window: Int64, targetDuration: Int) -> UInt64 {
        let minimum = max(window, Int64(targetDuration) * 3_000_000 + durations.max()!)
        var first = last
        var total = duration(of: last)
        while total < minimum && first > 0 {
            first -= 1
            total += duration(of: first)
        }
        return first
    }
}
