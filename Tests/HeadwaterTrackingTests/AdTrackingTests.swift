import HeadwaterHLS
import Testing

@testable import HeadwaterTracking

/// Which beacons a stitched playlist makes due, at every point of an ad's passage through the
/// window.
@Suite("Due ad beacons")
struct AdTrackingTests {
    /// 2026-01-01T00:00:00Z.
    static let t0: Int64 = 1_767_225_600_000
    static let ad = AdTrackingEvent.allCases

    /// A channel of `count` 2-second segments; the ad (10 s, five segments) starts at segment 5,
    /// i.e. at t0 + 10 s, and its DATERANGE is on its first segment.
    struct Timeline {
        var count = 20
        var segmentDuration = HLSDuration.seconds(2)
        var adFirstSegment = 5
        var adSegments = 5
        var dateRange: DateRange

        init(dateRange: DateRange? = nil) {
            self.dateRange = dateRange ?? AdTrackingTests.adRange()
        }

        var full: MediaPlaylist {
            var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: 0)
            for index in 0..<count {
                var segment = MediaSegment(uri: "s\(index).ts", duration: segmentDuration)
                if index == 0 || index == adFirstSegment || index == adFirstSegment + adSegments {
                    let offset = segmentDuration.microseconds * Int64(index) / 1000
                    segment.programDateTime = ProgramDateTime(millisecondsSinceEpoch: AdTrackingTests.t0 + offset)
                }
                if index == adFirstSegment || index == adFirstSegment + adSegments { segment.discontinuity = true }
                if index == adFirstSegment { segment.dateRanges = [dateRange] }
                playlist.segments.append(segment)
            }
            return playlist
        }

        /// The playlist listing segments `range` (the head slid by `range.lowerBound`).
        func window(_ range: Range<Int>) -> MediaPlaylist {
            var playlist = full.removingSegmentsFromHead(range.lowerBound)
            playlist.segments.removeLast(count - range.upperBound)
            return playlist
        }
    }

    static func urls(_ event: AdTrackingEvent) -> [String] {
        ["https://ads.example/\(event.rawValue)?s=1", "http://verify.example/e?n=\(event.rawValue)"]
    }

    static func adRange(
        id: String = "ad-1",
        class adClass: String? = AdTracking.defaultAdClass,
        start: Int64 = t0 + 10_000,
        duration: HLSDuration? = .seconds(10),
        planned: HLSDuration? = .seconds(10),
        events: [AdTrackingEvent] = AdTrackingEvent.allCases
    ) -> DateRange {
        DateRange(
            id: id,
            class: adClass,
            startDate: ProgramDateTime(millisecondsSinceEpoch: start),
            duration: duration,
            plannedDuration: planned,
            clientAttributes: [Attribute("X-AD-ID", .quoted("a1")), Attribute("X-CREATIVE-ID", .quoted("c1"))]
                + events.map { Attribute($0.attributeName, .quoted(urls($0).joined(separator: " "))) }
        )
    }

    static func events(_ playlist: MediaPlaylist, adClass: String = AdTracking.defaultAdClass) -> [AdTrackingEvent] {
        AdTracking.dueBeacons(in: playlist, adClass: adClass).map(\.event)
    }

    // MARK: - Points of the ad

    @Test func nothingIsDueBeforeTheAdsFirstSegmentIsListed() {
        let timeline = Timeline()
        #expect(Self.events(timeline.window(0..<5)).isEmpty)
        // Even when the range is announced ahead, in the tags after the last segment.
        var announced = timeline.window(0..<5)
        announced.trailingTags.dateRanges = [timeline.dateRange]
        #expect(Self.events(announced).isEmpty)
    }

    @Test func firstAdSegmentMakesTheImpressionDue() {
        let beacons = AdTracking.dueBeacons(in: Timeline().window(0..<6), adClass: AdTracking.defaultAdClass)
        #expect(beacons == [DueBeacon(dateRangeID: "ad-1", event: .impression, urls: Self.urls(.impression))])
    }

    @Test func listedMediaReachingAPointMakesItsEventDue() {
        let timeline = Timeline()
        // Segments of the ad end at 2, 4, 6, 8, 10 s; the points are 0, 2.5, 5, 7.5, 10 s.
        #expect(Self.events(timeline.window(0..<6)) == [.impression])
        #expect(Self.events(timeline.window(0..<7)) == [.impression, .firstQuartile])
        #expect(Self.events(timeline.window(0..<8)) == [.impression, .firstQuartile, .midpoint])
        #expect(Self.events(timeline.window(0..<9)) == [.impression, .firstQuartile, .midpoint, .thirdQuartile])
        #expect(Self.events(timeline.window(0..<10)) == Self.ad)
        #expect(Self.events(timeline.window(0..<11)) == Self.ad)
        #expect(Self.events(timeline.window(3..<20)) == Self.ad)
        let all = AdTracking.dueBeacons(in: timeline.window(0..<11))
        #expect(all.map(\.urls) == Self.ad.map(Self.urls))
        #expect(all.allSatisfy { $0.dateRangeID == "ad-1" })
    }

    @Test func pointOnASegmentBoundaryIsDueWithTheSegmentEndingThere() {
        // A 8-second ad of 2-second segments: the quartiles fall on segment boundaries.
        var timeline = Timeline(dateRange: Self.adRange(duration: .seconds(8), planned: nil))
        timeline.adSegments = 4
        #expect(Self.events(timeline.window(0..<6)) == [.impression, .firstQuartile])
        #expect(Self.events(timeline.window(0..<7)) == [.impression, .firstQuartile, .midpoint])
        #expect(Self.events(timeline.window(0..<9)) == Self.ad)
        // Listed only from the boundary on: media up to the point was never listed.
        #expect(Self.events(timeline.window(6..<20)) == [.midpoint, .thirdQuartile, .complete])
    }

    @Test func headThatSlidPastTheAdStartStillYieldsTheListedPoints() {
        let timeline = Timeline()
        // The DATERANGE moved to the new head with the slide (its segment is gone).
        #expect(timeline.window(6..<20).segments.first?.dateRanges.first?.id == "ad-1")
        #expect(Self.events(timeline.window(6..<7)) == [.firstQuartile])
        #expect(Self.events(timeline.window(6..<8)) == [.firstQuartile, .midpoint])
        #expect(Self.events(timeline.window(6..<20)) == [.firstQuartile, .midpoint, .thirdQuartile, .complete])
        #expect(Self.events(timeline.window(7..<20)) == [.midpoint, .thirdQuartile, .complete])
        #expect(Self.events(timeline.window(9..<20)) == [.complete])
        // Once the whole ad slid out, nothing is due, even if the range is still announced.
        var after = timeline.window(10..<20)
        after.segments[0].dateRanges = [timeline.dateRange]
        #expect(Self.events(after).isEmpty)
    }

    // MARK: - Durations

    @Test func durationWinsOverPlannedDuration() {
        let actual = Timeline(dateRange: Self.adRange(duration: .seconds(10), planned: .seconds(30)))
        #expect(Self.events(actual.window(0..<11)) == Self.ad)
        let planned = Timeline(dateRange: Self.adRange(duration: nil, planned: .seconds(10)))
        #expect(Self.events(planned.window(0..<8)) == [.impression, .firstQuartile, .midpoint])
        #expect(Self.events(planned.window(0..<11)) == Self.ad)
        let plannedLonger = Timeline(dateRange: Self.adRange(duration: nil, planned: .seconds(30)))
        #expect(Self.events(plannedLonger.window(0..<11)) == [.impression, .firstQuartile])
    }

    @Test func withoutAnyDurationOnlyTheImpressionIsDue() {
        let timeline = Timeline(dateRange: Self.adRange(duration: nil, planned: nil))
        #expect(Self.events(timeline.window(0..<20)) == [.impression])
    }

    @Test func aLaterTagOfTheSameIDAddsTheFinalDuration() {
        let timeline = Timeline(dateRange: Self.adRange(duration: nil, planned: .seconds(30)))
        var playlist = timeline.window(0..<11)
        #expect(Self.events(playlist) == [.impression, .firstQuartile])
        var final = DateRange(id: "ad-1", startDate: nil, duration: .seconds(10))
        final.attributes["X-TRACKING-COMPLETE"] = .quoted("https://other.example/never-used")
        playlist.segments[10].dateRanges = [final]
        #expect(Self.events(playlist) == Self.ad)
        // The first tag's URLs stand: a later tag only adds attributes.
        #expect(AdTracking.dueBeacons(in: playlist).last?.urls == Self.urls(.complete))
    }

    @Test func millisecondRoundingIsTolerated() {
        // Five 2.002 s ad segments (5…9): the ad media ends 10.010 s after START-DATE.
        func events(duration microseconds: Int64) -> [AdTrackingEvent] {
            var timeline = Timeline(
                dateRange: Self.adRange(
                    start: Self.t0 + 10_010, duration: HLSDuration(microseconds: microseconds), planned: nil))
            timeline.segmentDuration = HLSDuration(microseconds: 2_002_000)
            return Self.events(timeline.window(0..<10))
        }
        #expect(events(duration: 10_010_000) == Self.ad)
        #expect(events(duration: 10_014_000) == Self.ad)
        #expect(events(duration: 10_030_000) == [.impression, .firstQuartile, .midpoint, .thirdQuartile])
    }

    @Test func impressionNeedsTheAdStartInsideAListedSegment() {
        // Start 3 ms after a segment boundary (rounding): the segment starting at the boundary
        // holds it; the content segment before does not.
        let timeline = Timeline(dateRange: Self.adRange(start: Self.t0 + 10_003))
        #expect(Self.events(timeline.window(0..<5)).isEmpty)
        #expect(Self.events(timeline.window(0..<6)) == [.impression])
        let early = Timeline(dateRange: Self.adRange(start: Self.t0 + 9_997))
        #expect(Self.events(early.window(0..<5)).isEmpty)
        #expect(Self.events(early.window(0..<6)) == [.impression])
    }

    // MARK: - What counts as an ad, and its URLs

    @Test func rangesWithoutTrackingAttributesYieldNothing() {
        let timeline = Timeline(dateRange: Self.adRange(events: []))
        #expect(Self.events(timeline.window(0..<20)).isEmpty)
        let some = Timeline(dateRange: Self.adRange(events: [.impression, .complete]))
        #expect(Self.events(some.window(0..<20)) == [.impression, .complete])
    }

    @Test func otherClassesAreIgnored() {
        for other in ["com.apple.hls.interstitial", "com.example.program", nil] as [String?] {
            let timeline = Timeline(dateRange: Self.adRange(class: other))
            #expect(Self.events(timeline.window(0..<20)).isEmpty, "\(other ?? "no class")")
        }
        let custom = Timeline(dateRange: Self.adRange(class: "net.operator.ad"))
        #expect(Self.events(custom.window(0..<20)).isEmpty)
        #expect(Self.events(custom.window(0..<20), adClass: "net.operator.ad") == Self.ad)
    }

    @Test func onlyAbsoluteHTTPURLsAreKept() {
        #expect(AdTracking.trackingURLs("https://a.example/x http://b.example/y") == ["https://a.example/x", "http://b.example/y"])
        #expect(AdTracking.trackingURLs("HTTPS://a.example/x") == ["HTTPS://a.example/x"])
        #expect(AdTracking.trackingURLs("ftp://a.example/x /relative javascript:alert(1) https://") == nil)
        #expect(AdTracking.trackingURLs("  https://a.example/x  ") == ["https://a.example/x"])
        #expect(AdTracking.trackingURLs("") == nil)
        #expect(AdTracking.trackingURLs(nil) == nil)
    }

    @Test func twoAdsInOneWindowAreBothTracked() {
        let second = Self.adRange(id: "ad-2", start: Self.t0 + 20_000)
        var playlist = Timeline().window(0..<13)
        playlist.segments[10].discontinuity = true
        playlist.segments[10].dateRanges = [second]
        let beacons = AdTracking.dueBeacons(in: playlist)
        #expect(beacons.filter { $0.dateRangeID == "ad-1" }.map(\.event) == Self.ad)
        #expect(beacons.filter { $0.dateRangeID == "ad-2" }.map(\.event) == [.impression, .firstQuartile, .midpoint])
        #expect(beacons.map(\.dateRangeID) == Array(repeating: "ad-1", count: 5) + Array(repeating: "ad-2", count: 3))
    }

    @Test func playlistWithoutDatesYieldsNothing() {
        var playlist = Timeline().window(0..<20)
        for index in playlist.segments.indices { playlist.segments[index].programDateTime = nil }
        #expect(Self.events(playlist).isEmpty)
    }
}
