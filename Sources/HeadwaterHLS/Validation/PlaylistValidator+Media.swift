/// Media playlist rules: segments (B1, B7–B12), header (B13, B17, C5, C6) and keys (B10).
extension PlaylistValidator {
    /// The methods of EXT-X-KEY that RFC 8216bis defines (§4.4.4.4).
    static let keyMethods: Set<String> = ["NONE", "AES-128", "SAMPLE-AES", "SAMPLE-AES-CTR", "AES-256-GCM"]

    static func checkSegments(_ playlist: MediaPlaylist, into report: inout IssueReport) {
        let segments = playlist.segments
        let targetDuration = Int64(playlist.targetDuration)
        let dates = playlist.programDateTimes()
        let hasDates = segments.contains { $0.tags.programDateTime != nil }
        let fragmented =
            segments.contains { isFragmentedMP4($0.uri) || $0.tags.map != nil } || playlist.trailingTags.map != nil
        var mapInEffect: MediaInitializationSection?
        var missingMapRun: Int?  // first index of a run of segments without a MAP in effect

        for (index, segment) in segments.enumerated() {
            let tags = segment.tags

            // B1: EXTINF rounded half up ≤ TARGETDURATION.
            let rounded = segment.duration.roundedSeconds
            if rounded > targetDuration {
                report.error(
                    "B1",
                    "EXTINF \(show(segment.duration)) rounds to \(rounded) > EXT-X-TARGETDURATION \(targetDuration)",
                    at: .segment(index))
            }

            // B7: a date on every discontinuity; no zone-less dates; never an ambiguous mapping.
            if hasDates, tags.discontinuity, tags.programDateTime == nil {
                report.warning(
                    "B7",
                    "EXT-X-DISCONTINUITY without EXT-X-PROGRAM-DATE-TIME; a playlist with dates should date every discontinuity",
                    at: .segment(index))
            }
            if let date = tags.programDateTime {
                if date.zone == .unspecified {
                    report.warning(
                        "B7", "EXT-X-PROGRAM-DATE-TIME \(date) has no time zone; it should include one",
                        at: .segment(index))
                }
                if index > 0, let previous = dates[index - 1] {
                    let previousEnd = previous.adding(segments[index - 1].duration)
                    let (overlapMs, overflow) = previousEnd.millisecondsSinceEpoch.subtractingReportingOverflow(
                        date.millisecondsSinceEpoch)
                    let overlap = HLSDuration.milliseconds(1).saturatingTimes(
                        overflow ? (previousEnd > date ? .max : .min) : overlapMs)
                    if date < previous {
                        report.error(
                            "B7",
                            "EXT-X-PROGRAM-DATE-TIME \(date) goes back before the previous segment's \(previous); the date mapping must not be ambiguous",
                            at: .segment(index))
                    } else if overlap >= .seconds(1) {
                        report.error(
                            "B7",
                            "EXT-X-PROGRAM-DATE-TIME \(date) overlaps the previous segment by \(show(overlap)) s; only a sub-second overlap is allowed",
                            at: .segment(index))
                    }
                }
            }

            // B8: an offset-less byte range continues the previous sub-range of the same resource.
            if let range = segment.byteRange, range.offset == nil {
                if index == 0 {
                    report.error(
                        "B8",
                        "EXT-X-BYTERANGE \(range) has no offset on the first segment; the head segment must carry @o",
                        at: .segment(0))
                } else if segments[index - 1].uri != segment.uri || segments[index - 1].byteRange == nil {
                    report.error(
                        "B8",
                        "EXT-X-BYTERANGE \(range) has no offset but the previous segment is not a sub-range of \(segment.uri)",
                        at: .segment(index))
                }
            }

            // B9: every fragmented MP4 segment has a MAP in effect.
            if let map = tags.map {
                mapInEffect = map
                checkMap(map, keys: playlist.effectiveKeys(at: index), at: .segment(index), into: &report)
            }
            if fragmented, mapInEffect == nil {
                if missingMapRun == nil { missingMapRun = index }
            } else if let start = missingMapRun {
                reportMissingMap(from: start, to: index - 1, into: &report)
                missingMapRun = nil
            }

            // B10
            for key in tags.keys { checkKey(key, rule: "B10", at: .segment(index), into: &report) }

            // B12: sanity only (the 90–110 % check needs the segment bytes).
            if let bitrate = tags.bitrate, bitrate == 0 {
                report.error(
                    "B12", "EXT-X-BITRATE 0 cannot be within 90–110% of a segment's bit rate", at: .segment(index))
            }
        }
        if let start = missingMapRun { reportMissingMap(from: start, to: segments.count - 1, into: &report) }
        for key in playlist.trailingTags.keys { checkKey(key, rule: "B10", at: .tag("EXT-X-KEY"), into: &report) }
        if let map = playlist.trailingTags.map {
            checkMap(
                map, keys: playlist.segments.isEmpty ? [] : playlist.effectiveKeys(at: segments.count - 1),
                at: .tag("EXT-X-MAP"), into: &report)
        }
    }

    /// A warning, not an error: whether a segment is fragmented MP4 is inferred from its URI's
    /// extension or from a MAP elsewhere in the playlist, and only the segment's bytes could tell.
    private static func reportMissingMap(from start: Int, to end: Int, into report: inout IssueReport) {
        let which = start == end ? "segment \(start) has" : "segments \(start)–\(end) have"
        report.warning(
            "B9",
            "\(which) no EXT-X-MAP in effect and look like fragmented MP4 (by extension or a MAP elsewhere); a fragmented MP4 segment must have one",
            at: .segment(start))
    }

    private static func checkMap(
        _ map: MediaInitializationSection, keys: [Key], at location: PlaylistLocation, into report: inout IssueReport
    ) {
        if let range = map.byteRange, range.offset == nil {
            report.error("B9", "EXT-X-MAP BYTERANGE \"\(range)\" has no offset; the offset is required", at: location)
        }
        if let key = keys.first(where: { $0.method == "AES-128" }), key.iv == nil {
            report.error(
                "B9", "EXT-X-MAP is encrypted with AES-128 by a key without IV; the EXT-X-KEY must have an IV",
                at: location)
        }
    }

    /// B10 (and E11 for EXT-X-SESSION-KEY): METHOD, URI, IV.
    static func checkKey(_ key: Key, rule: String, at location: PlaylistLocation, into report: inout IssueReport) {
        let method = key.method
        guard keyMethods.contains(method) else {
            report.error(
                rule, "METHOD=\(method) is not one of NONE, AES-128, SAMPLE-AES, SAMPLE-AES-CTR, AES-256-GCM",
                at: location)
            return
        }
        if method == "NONE" {
            let others = key.attributes.names.filter { $0 != "METHOD" }
            if !others.isEmpty {
                report.error(
                    rule, "METHOD=NONE with \(others.joined(separator: ", ")); no other attributes are allowed",
                    at: location)
            }
            return
        }
        if key.uri == nil {
            report.error(rule, "METHOD=\(method) without URI; URI is required unless METHOD=NONE", at: location)
        }
        if case .token(let iv)? = key.attributes["IV"] {
            if method == "SAMPLE-AES-CTR" || method == "AES-256-GCM" {
                report.error(rule, "IV with METHOD=\(method); IV is not allowed for this method", at: location)
            } else if iv.utf8.count != 34 {
                report.error(
                    rule, "IV \(iv) has \(iv.utf8.count - 2) hex digits; it must be 128 bits (32 hex digits)",
                    at: location)
            }
            checkUppercaseHex(iv, attribute: "IV", at: location, into: &report)
        }
    }

    /// A7: a hexadecimal-sequence uses the digits `[0-9A-F]`.
    static func checkUppercaseHex(
        _ text: String, attribute: String, at location: PlaylistLocation, into report: inout IssueReport
    ) {
        if text.utf8.dropFirst(2).contains(where: { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f") }) {
            report.error(
                "A7", "\(attribute) has lower-case hex digits; a hexadecimal-sequence is 0x followed by [0-9A-F]",
                at: location)
        }
    }

    static func checkHeader(_ playlist: MediaPlaylist, into report: inout IssueReport) {
        let targetDuration = HLSDuration.seconds(Int64(playlist.targetDuration))
        let live = !playlist.endList && playlist.playlistType != .vod

        // B13: a VOD playlist holds the whole presentation, so it ends with ENDLIST.
        if playlist.playlistType == .vod, !playlist.endList {
            report.warning(
                "B13",
                "EXT-X-PLAYLIST-TYPE:VOD without EXT-X-ENDLIST; a playlist holding the final segment must end with it",
                at: .tag("EXT-X-PLAYLIST-TYPE"))
        }

        // B17: EXT-X-START.
        if let start = playlist.start {
            let offset = start.timeOffset
            let duration = HLSDuration.saturatingSum(playlist.segments.map(\.duration))
            let magnitude = HLSDuration(microseconds: abs(offset.microseconds))
            if let precise = start.attributes.enumerated("PRECISE"), precise != "YES", precise != "NO" {
                report.error("B17", "EXT-X-START PRECISE=\(precise) must be YES or NO", at: .tag("EXT-X-START"))
            }
            if playlist.skip == nil, magnitude > duration {
                report.warning(
                    "B17", "EXT-X-START TIME-OFFSET \(show(offset)) exceeds the playlist duration \(show(duration))",
                    at: .tag("EXT-X-START"))
            } else if live, playlist.skip == nil {
                let fromEnd = offset.microseconds < 0 ? magnitude : duration - offset
                let limit = targetDuration.saturatingTimes(3)
                if fromEnd < limit {
                    report.warning(
                        "B17",
                        "EXT-X-START TIME-OFFSET \(show(offset)) is \(show(fromEnd)) s from the end of a live playlist; it should be at least 3×TD (\(show(limit)) s)",
                        at: .tag("EXT-X-START"))
                }
            }
        }

        // C5: a live window shorter than three target durations.
        if !playlist.endList, playlist.playlistType == nil, playlist.skip == nil {
            let duration = HLSDuration.saturatingSum(playlist.segments.map(\.duration))
            let limit = targetDuration.saturatingTimes(3)
            if duration < limit {
                report.warning(
                    "C5", "live playlist lasts \(show(duration)) s, less than 3×TD (\(show(limit)) s)", at: .playlist)
            }
        }

        // C6: once segments have slid out, discontinuities need a DISCONTINUITY-SEQUENCE.
        if playlist.discontinuitySequence == nil, playlist.effectiveMediaSequence > 0,
            let first = playlist.segments.firstIndex(where: { $0.tags.discontinuity })
        {
            report.warning(
                "C6",
                "EXT-X-DISCONTINUITY (segment \(first)) with EXT-X-MEDIA-SEQUENCE \(playlist.effectiveMediaSequence) but no EXT-X-DISCONTINUITY-SEQUENCE; a sliding playlist with discontinuities must carry it",
                at: .tag("EXT-X-MEDIA-SEQUENCE"))
        }

        // F14: a delta update only exists for a live playlist that allows skipping.
        if let skip = playlist.skip {
            if playlist.serverControl?.canSkipUntil == nil {
                report.error(
                    "F14",
                    "EXT-X-SKIP in a playlist without EXT-X-SERVER-CONTROL CAN-SKIP-UNTIL; delta updates need a skip boundary",
                    at: .tag("EXT-X-SKIP"))
            }
            if playlist.endList {
                report.error(
                    "F14",
                    "EXT-X-SKIP in a playlist with EXT-X-ENDLIST; the server must ignore _HLS_skip once the playlist ends",
                    at: .tag("EXT-X-SKIP"))
            }
            if skip.attributes.contains("RECENTLY-REMOVED-DATERANGES"),
                playlist.serverControl?.canSkipDateRanges != true
            {
                report.warning(
                    "F15",
                    "EXT-X-SKIP RECENTLY-REMOVED-DATERANGES without CAN-SKIP-DATERANGES=YES in EXT-X-SERVER-CONTROL",
                    at: .tag("EXT-X-SKIP"))
            }
        }
    }
}
