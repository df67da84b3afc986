import Foundation
import HeadwaterHLS
import HeadwaterSCTE35
import HeadwaterStitching

/// A channel's cue rendition for the tracker tests: segments from MSN 1000, dated from
/// 2026-03-01T12:00:00Z, 2 s each unless a test says otherwise, carrying whatever tags a test puts
/// on them. A version is the window of `window` segments ending at a given MSN, slid the way the
/// origin slides it (date ranges carried onto the head).
struct TrackerChannel {
    static let firstMSN: UInt64 = 1000
    static let firstDate = ProgramDateTime(millisecondsSinceEpoch: 1_772_366_400_000)

    var durations: [HLSDuration]
    var tags: [UInt64: SegmentTags] = [:]
    /// A DISCONTINUITY before these segments, with the date jumping forward by the given amount.
    var dateJumps: [UInt64: HLSDuration] = [:]
    var window = 6
    var datesOnEverySegment = true
    var withoutDates = false

    init(count: Int, duration: HLSDuration = .seconds(2)) {
        durations = Array(repeating: duration, count: count)
    }

    var lastMSN: UInt64 { Self.firstMSN + UInt64(durations.count - 1) }

    func date(of msn: UInt64) -> ProgramDateTime {
        var date = Self.firstDate
        for earlier in Self.firstMSN..<msn {
            date = date.adding(durations[Int(earlier - Self.firstMSN)])
            if let jump = dateJumps[earlier + 1] { date = date.adding(jump) }
        }
        return date
    }

    func millis(_ msn: UInt64) -> Int64 { date(of: msn).millisecondsSinceEpoch }

    mutating func add(_ marker: AdMarker, at msn: UInt64) {
        tags[msn, default: SegmentTags()].adMarkers.append(marker)
    }

    mutating func add(_ range: DateRange, at msn: UInt64) {
        tags[msn, default: SegmentTags()].dateRanges.append(range)
    }

    /// The whole channel through `last`.
    func playlist(through last: UInt64) -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: 3, mediaSequence: Self.firstMSN)
        playlist.version = 3
        for msn in Self.firstMSN...last {
            var segment = MediaSegment(uri: "video/\(msn).ts", duration: durations[Int(msn - Self.firstMSN)])
            if let extra = tags[msn] { segment.tags = extra }
            segment.tags.discontinuity = dateJumps[msn] != nil
            if !withoutDates, msn == Self.firstMSN || datesOnEverySegment || dateJumps[msn] != nil {
                segment.tags.programDateTime = date(of: msn)
            }
            playlist.segments.append(segment)
        }
        return playlist
    }

    /// The version whose last segment is `last`.
    func version(through last: UInt64) -> MediaPlaylist {
        let playlist = playlist(through: last)
        return playlist.removingSegmentsFromHead(max(0, playlist.segments.count - window))
    }

    /// Feeds the versions ending at `first`, `first + 1`, … `last` (one new segment each); returns
    /// every event.
    @discardableResult
    func feed(_ tracker: inout BreakTracker, from first: UInt64, through last: UInt64? = nil, ruleSetVersion: UInt64 = 1)
        -> [BreakEvent]
    {
        var events: [BreakEvent] = []
        for end in first...(last ?? lastMSN) {
            events += tracker.advance(to: version(through: end), ruleSetVersion: ruleSetVersion)
        }
        return events
    }
}

/// Real cues, built with HeadwaterSCTE35.
enum TestCues {
    static func seconds(_ value: Double) -> UInt64 { UInt64(value * 90_000) }

    static func spliceOut(event: UInt32, seconds duration: Double?) -> SpliceInfoSection {
        .spliceInsert(
            eventID: event, outOfNetwork: true, ptsTime: 1_000_000 + UInt64(event) * 90_000,
            duration: duration.map(Self.seconds))
    }

    static func spliceIn(event: UInt32) -> SpliceInfoSection {
        .spliceInsert(eventID: event, outOfNetwork: false, ptsTime: 2_000_000 + UInt64(event) * 90_000)
    }

    static func segmentation(_ type: UInt8, event: UInt32, seconds duration: Double? = nil) -> SpliceDescriptor {
        .segmentation(
            SegmentationDescriptor(
                eventID: event,
                scheduledEvent: .init(duration: duration.map(Self.seconds), typeID: .init(type))))
    }

    static func timeSignal(_ descriptors: SpliceDescriptor...) -> SpliceInfoSection {
        .timeSignal(ptsTime: 3_000_000, descriptors: descriptors)
    }

    static func segmentationCancel(event: UInt32) -> SpliceInfoSection {
        .timeSignal(ptsTime: nil, descriptors: [.segmentation(SegmentationDescriptor(eventID: event, scheduledEvent: nil))])
    }

    static func bytes(_ section: SpliceInfoSection) -> [UInt8] { try! section.encoded() }

    static func base64(_ section: SpliceInfoSection) -> String { try! section.base64String() }

    /// The section with one bit of its command flipped: the CRC no longer matches.
    static func corrupted(_ section: SpliceInfoSection) -> [UInt8] {
        var bytes = self.bytes(section)
        bytes[15] ^= 0x01
        return bytes
    }

    static func oatcls(_ section: SpliceInfoSection) -> AdMarker { .oatclsSCTE35(base64: base64(section)) }

    static func oatcls(bytes: [UInt8]) -> AdMarker { .oatclsSCTE35(base64: Data(bytes).base64EncodedString()) }
}

extension BreakEvent {
    var isStarted: Bool {
        if case .started = self { return true }
        return false
    }

    var isIgnoredCue: Bool {
        if case .ignoredCue = self { return true }
        return false
    }

    var isInvalidCue: Bool {
        if case .invalidCue = self { return true }
        return false
    }

    var isSkippedSchedule: Bool {
        if case .skippedScheduledBreak = self { return true }
        return false
    }
}

/// A break's shape, for comparisons.
struct BreakShape: Hashable, CustomStringConvertible {
    var id: String
    var start: UInt64
    var end: UInt64?
    var planned: HLSDuration

    init(_ adBreak: AdBreak) {
        id = adBreak.id
        start = adBreak.startMediaSequence
        end = adBreak.end?.mediaSequence
        planned = adBreak.plannedDuration
    }

    init(id: String, start: UInt64, end: UInt64?, planned: HLSDuration) {
        self.id = id
        self.start = start
        self.end = end
        self.planned = planned
    }

    var description: String { "\(id) [\(start), \(end.map(String.init) ?? "open")) planned \(planned)" }
}

extension BreakTracker {
    var shapes: [BreakShape] { log.breaks.map(BreakShape.init) }
}
