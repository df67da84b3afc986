public import HeadwaterHLS

/// An operator's ad-break schedule for a channel whose source sends no cues (or not enough).
///
/// Scheduled times are absolute instants on the content's PROGRAM-DATE-TIME timeline, never
/// "so many seconds after start-up": a periodic schedule is aligned to the Unix epoch and a daily
/// one to UTC midnight, so every node serving the channel, and every restart of one, puts the same
/// breaks at the same segments (``BreakTracker`` derives the break ids from them too).
public struct BreakSchedule: Sendable, Hashable {
    /// When the breaks fall.
    public enum Rule: Sendable, Hashable {
        /// A break of `duration` at every instant `k × every + offset` since the Unix epoch.
        case periodic(every: HLSDuration, duration: HLSDuration, offset: HLSDuration)
        /// The same breaks every day, at fixed UTC times.
        case daily([DailyBreak])
    }

    /// One break of a daily schedule.
    public struct DailyBreak: Sendable, Hashable {
        /// UTC seconds since midnight, `0 ..< 86_400`.
        public var secondsSinceMidnight: Int
        /// The planned length of the break.
        public var duration: HLSDuration

        public init(secondsSinceMidnight: Int, duration: HLSDuration) {
            self.secondsSinceMidnight = secondsSinceMidnight
            self.duration = duration
        }
    }

    public let rule: Rule

    /// Breaks of `duration` every `every`, at `offset` past each epoch-aligned multiple of `every`
    /// (`every: 15 min, offset: 7 min` → 00:07, 00:22, 00:37, …). Times are taken to the millisecond.
    /// A `duration` longer than `every` is allowed, but a break then hides the next scheduled time
    /// (the tracker skips times that fall inside an open break).
    public init(every: HLSDuration, duration: HLSDuration, offset: HLSDuration = .zero) throws(BreakScheduleError) {
        guard every >= .milliseconds(1) else { throw .nonPositiveInterval(every) }
        guard duration > .zero else { throw .nonPositiveDuration(duration) }
        rule = .periodic(every: every, duration: duration, offset: offset)
    }

    /// Fixed breaks every day at UTC times of day.
    public init(daily breaks: [DailyBreak]) throws(BreakScheduleError) {
        for item in breaks {
            guard (0..<86_400).contains(item.secondsSinceMidnight) else {
                throw .timeOfDayOutOfRange(item.secondsSinceMidnight)
            }
            guard item.duration > .zero else { throw .nonPositiveDuration(item.duration) }
        }
        rule = .daily(breaks.sorted { $0.secondsSinceMidnight < $1.secondsSinceMidnight })
    }

    /// A scheduled break: its instant and planned length.
    public struct Occurrence: Sendable, Hashable {
        public var time: ProgramDateTime
        public var duration: HLSDuration
    }

    /// The latest scheduled break in `(lower, upper]`, if any: O(1) for a periodic schedule, O(n) for
    /// n daily times.
    public func latestOccurrence(after lower: ProgramDateTime, through upper: ProgramDateTime) -> Occurrence? {
        let low = lower.millisecondsSinceEpoch
        let high = upper.millisecondsSinceEpoch
        guard low < high else { return nil }
        switch rule {
        case .periodic(let every, let duration, let offset):
            let period = max(1, Self.milliseconds(every))
            let phase = Self.floorModulo(Self.milliseconds(offset), period)
            // The largest k·period + phase ≤ high.
            let time = Self.floorDivide(high - phase, period) * period + phase
            guard time > low else { return nil }
            return Occurrence(time: ProgramDateTime(millisecondsSinceEpoch: time), duration: duration)
        case .daily(let breaks):
            let day: Int64 = 86_400_000
            var best: Occurrence?
            for item in breaks {
                let timeOfDay = Int64(item.secondsSinceMidnight) * 1000
                let time = Self.floorDivide(high - timeOfDay, day) * day + timeOfDay
                guard time > low, time >= best?.time.millisecondsSinceEpoch ?? .min else { continue }
                best = Occurrence(time: ProgramDateTime(millisecondsSinceEpoch: time), duration: item.duration)
            }
            return best
        }
    }

    /// Whole milliseconds, rounded to nearest; clamped so that date arithmetic cannot overflow.
    private static func milliseconds(_ duration: HLSDuration) -> Int64 {
        let limit: Int64 = 1 << 50
        let us = min(max(duration.microseconds, -limit), limit)
        return floorDivide(us + 500, 1000)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    private static func floorModulo(_ a: Int64, _ b: Int64) -> Int64 { a - floorDivide(a, b) * b }
}

/// Why a schedule could not be built from the configuration.
public enum BreakScheduleError: Error, Hashable, CustomStringConvertible {
    case nonPositiveInterval(HLSDuration)
    case nonPositiveDuration(HLSDuration)
    case timeOfDayOutOfRange(Int)

    public var description: String {
        switch self {
        case .nonPositiveInterval(let every): return "a periodic break schedule needs an interval of at least 1 ms, not \(every) s"
        case .nonPositiveDuration(let duration): return "a scheduled break needs a positive duration, not \(duration) s"
        case .timeOfDayOutOfRange(let seconds):
            return "a daily break time is seconds since UTC midnight (0 to 86399), not \(seconds)"
        }
    }
}
