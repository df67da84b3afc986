import HeadwaterHLS
import HeadwaterTesting

/// Generates valid live LL-HLS media playlists for the delta-update property tests: every playlist
/// passes ``PlaylistValidator`` with no issue, so a delta that fails validation is the delta's fault.
///
/// Unlike ``PlaylistGenerator`` (which covers every syntax), it builds what a live origin serves:
/// segment durations ≤ TD, EXT-X-PROGRAM-DATE-TIME on the first segment and on every DISCONTINUITY
/// (sometimes continuing the timeline, sometimes jumping), KEY rotations in one or two KEYFORMATs,
/// MAP changes at discontinuities, BITRATE changes, date ranges (some closed later by a same-ID tag
/// with END-DATE, some announced in the trailing tags), parts on the last segments and on the open
/// parent, a preload hint and rendition reports. It writes no tag that repeats the context in
/// effect, so ``PlaylistDeltaUpdate/expand(_:previous:)`` reproduces its text exactly.
struct LowLatencyPlaylistGenerator {
    var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    mutating func playlist() -> MediaPlaylist {
        let targetDuration = random.int(2...6)
        let td = Int64(targetDuration) * 1_000_000
        let partTarget = HLSDuration(microseconds: td / 4 / 1_000 * 1_000)
        let count = random.int(8...60)
        let withParts = min(count, random.int(0...3))
        let firstMSN = UInt64(random.int(0...1_000_000))

        var playlist = MediaPlaylist(targetDuration: targetDuration, mediaSequence: firstMSN)
        playlist.independentSegments = random.chance(0.5)
        playlist.partInformation = PartInformation(partTarget: partTarget)
        var control: AttributeList = [
            Attribute("CAN-BLOCK-RELOAD", .token("YES")),
            Attribute("PART-HOLD-BACK", .decimal(HLSDuration(microseconds: partTarget.microseconds * 3))),
            Attribute("CAN-SKIP-UNTIL", .decimal(.seconds(Int64(targetDuration) * 6))),
        ]
        if random.chance(0.7) { control["CAN-SKIP-DATERANGES"] = .token("YES") }
        playlist.serverControl = ServerControl(attributes: control)

        var date = ProgramDateTime(millisecondsSinceEpoch: 1_795_000_000_000 + Int64(random.int(0...1_000_000)) * 1_000)
        var keys = KeyState(random: random.chance(0.5), second: random.chance(0.3))
        var mapNumber = 0
        var bitrate: UInt64?
        var openRanges: [String] = []
        var rangeNumber = 0
        for index in 0..<count {
            let msn = firstMSN + UInt64(index)
            var tags = SegmentTags()
            if index > 0, random.chance(0.1) {
                tags.discontinuity = true
                if random.chance(0.5) { date = date.adding(.seconds(Int64(random.int(1...3_600)))) }
                if random.chance(0.6) {
                    mapNumber += 1
                    tags.map = MediaInitializationSection(uri: "init\(mapNumber).mp4")
                }
            }
            if index == 0 {
                tags.map = MediaInitializationSection(uri: "init0.mp4")
                tags.programDateTime = date
            } else if tags.discontinuity {
                tags.programDateTime = date
            }
            tags.keys = keys.next(&random, first: index == 0)
            if random.chance(0.05) {
                let changed = UInt64(random.int(100...20_000))
                if changed != bitrate { tags.bitrate = changed }  // never repeat the BITRATE in effect
                bitrate = changed
            }
            tags.dateRanges = dateRanges(at: date, open: &openRanges, number: &rangeNumber)
            var segment: MediaSegment
            if index >= count - withParts {
                let parts = parts(msn: msn, count: 4, partTarget: partTarget, lastShorter: true)
                tags.parts = parts
                segment = MediaSegment(uri: "s\(msn).m4s", duration: parts.map(\.duration).reduce(.zero, +), tags: tags)
            } else {
                let duration = HLSDuration.milliseconds(Int64(random.int(targetDuration * 500...targetDuration * 1_000)))
                segment = MediaSegment(uri: "s\(msn).m4s", duration: duration, tags: tags)
            }
            date = date.adding(segment.duration)
            playlist.segments.append(segment)
        }
        if playlist.segments.contains(where: { $0.tags.discontinuity }) || random.chance(0.3) {
            playlist.discontinuitySequence = UInt64(random.int(0...1_000))
        }

        let openMSN = firstMSN + UInt64(count)
        let trailingCount = random.int(1...3)
        playlist.trailingTags.parts = parts(msn: openMSN, count: trailingCount, partTarget: partTarget, lastShorter: false)
        if random.chance(0.2) {
            rangeNumber += 1
            playlist.trailingTags.dateRanges = [DateRange(id: "next\(rangeNumber)", class: "com.example.ad", startDate: date)]
        }
        playlist.preloadHints = [
            PreloadHint(attributes: [
                Attribute("TYPE", .token("PART")), Attribute("URI", .quoted("p\(openMSN).\(trailingCount).m4s")),
            ])
        ]
        playlist.renditionReports = (0..<random.int(0...2)).map { rendition in
            RenditionReport(attributes: [
                Attribute("URI", .quoted("../r\(rendition)/index.m3u8")), Attribute("LAST-MSN", .integer(openMSN)),
                Attribute("LAST-PART", .integer(trailingCount - 1)),
            ])
        }
        playlist.version = PlaylistValidator.requiredVersion(playlist).version
        return playlist
    }

    /// A random subset of the DATERANGE tags of `playlist` (the ones a v2 test calls "old").
    mutating func someDateRanges(of playlist: MediaPlaylist) -> Set<DateRange> {
        let all = playlist.segments.flatMap(\.tags.dateRanges) + playlist.trailingTags.dateRanges
        return Set(all.filter { _ in random.chance(0.5) })
    }

    /// IDs of ranges the server removed recently (never ones still in the playlist).
    mutating func removedIDs() -> [String] { (0..<random.int(0...2)).map { "gone\($0)" } }

    // MARK: -

    private mutating func parts(msn: UInt64, count: Int, partTarget: HLSDuration, lastShorter: Bool)
        -> [PartialSegment]
    {
        (0..<count).map { index in
            var duration = partTarget
            if lastShorter, index == count - 1 {
                duration = .milliseconds(Int64(random.int(Int(partTarget.microseconds / 4_000)...Int(partTarget.microseconds / 1_000))))
            }
            return PartialSegment(uri: "p\(msn).\(index).m4s", duration: duration, independent: index == 0)
        }
    }

    /// Sometimes opens a range here, sometimes closes an open one with a same-ID END-DATE tag.
    private mutating func dateRanges(at date: ProgramDateTime, open: inout [String], number: inout Int) -> [DateRange] {
        var ranges: [DateRange] = []
        if !open.isEmpty, random.chance(0.15) {
            let id = open.remove(at: random.int(0...(open.count - 1)))
            ranges.append(DateRange(id: id, startDate: nil, endDate: date))
        }
        if random.chance(0.12) {
            number += 1
            let id = "dr\(number)"
            if random.chance(0.5) {
                let client = random.chance(0.5) ? [Attribute("X-COM-EXAMPLE-ID", .quoted("v\(number)"))] : []
                ranges.append(
                    DateRange(
                        id: id, class: "com.example.ad", startDate: date,
                        duration: .milliseconds(Int64(random.int(1_000...60_000))), clientAttributes: client))
            } else {
                ranges.append(DateRange(id: id, startDate: date, plannedDuration: .seconds(30)))
                open.append(id)
            }
        }
        return ranges
    }
}

/// The KEY tags of a stream encrypted in one or two KEYFORMATs (SAMPLE-AES; the second with a
/// KEYFORMAT), rotated independently: a segment gets a KEY only for the formats that change there.
private struct KeyState {
    var encrypted: Bool
    var formats: Int
    var generation = 0

    init(random encrypted: Bool, second: Bool) {
        self.encrypted = encrypted
        formats = second ? 2 : 1
    }

    mutating func next(_ random: inout SeededRandom, first: Bool) -> [Key] {
        guard encrypted else { return [] }
        let rotating = (0..<formats).filter { _ in first || random.chance(0.08) }
        guard !rotating.isEmpty else { return [] }
        generation += 1
        // Rotate in either order, so a segment's own keys are not always in first-seen order.
        let order = random.chance(0.5) ? rotating : rotating.reversed()
        return order.map { format in
            format == 0
                ? Key(method: "SAMPLE-AES", uri: "k\(generation).key")
                : Key(attributes: [
                    Attribute("METHOD", .token("SAMPLE-AES")), Attribute("URI", .quoted("skd://k\(generation)")),
                    Attribute("KEYFORMAT", .quoted("com.apple.streamingkeydelivery")),
                    Attribute("KEYFORMATVERSIONS", .quoted("1")),
                ])
        }
    }
}
