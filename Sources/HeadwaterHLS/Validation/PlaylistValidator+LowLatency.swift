/// Low-Latency HLS rules of one playlist: SERVER-CONTROL (F1), PART-INF (F2), parts (F3, B1) and
/// preload hints (F4).
extension PlaylistValidator {
    static func checkLowLatency(_ playlist: MediaPlaylist, into report: inout IssueReport) {
        checkServerControl(playlist, into: &report)
        checkParts(playlist, into: &report)
        checkPreloadHints(playlist, into: &report)
    }

    private static func checkServerControl(_ playlist: MediaPlaylist, into report: inout IssueReport) {
        let targetDuration = HLSDuration.seconds(Int64(playlist.targetDuration))
        let partTarget = playlist.partInformation?.partTarget
        guard let control = playlist.serverControl else {
            if playlist.partInformation != nil {
                report.error(
                    "F1",
                    "EXT-X-PART-INF without EXT-X-SERVER-CONTROL PART-HOLD-BACK; PART-HOLD-BACK is required with parts",
                    at: .tag("EXT-X-PART-INF"))
            }
            return
        }
        let here = PlaylistLocation.tag("EXT-X-SERVER-CONTROL")
        for name in ["CAN-SKIP-DATERANGES", "CAN-BLOCK-RELOAD"] {
            if let value = control.attributes.enumerated(name), value != "YES" {
                report.error("F1", "\(name)=\(value); the only valid value is YES", at: here)
            }
        }
        if let skip = control.canSkipUntil, skip < targetDuration.saturatingTimes(6) {
            report.error(
                "F1",
                "CAN-SKIP-UNTIL \(show(skip)) is less than 6×TD (\(show(targetDuration.saturatingTimes(6))))",
                at: here)
        }
        if control.canSkipDateRanges, control.canSkipUntil == nil {
            report.error("F1", "CAN-SKIP-DATERANGES=YES without CAN-SKIP-UNTIL; it requires CAN-SKIP-UNTIL", at: here)
        }
        if let holdBack = control.holdBack, holdBack < targetDuration.saturatingTimes(3) {
            report.error(
                "F1",
                "HOLD-BACK \(show(holdBack)) is less than 3×TD (\(show(targetDuration.saturatingTimes(3))))",
                at: here)
        }
        if let partHoldBack = control.partHoldBack {
            if let partTarget {
                if partHoldBack < partTarget.saturatingTimes(2) {
                    report.error(
                        "F1",
                        "PART-HOLD-BACK \(show(partHoldBack)) is less than 2×PART-TARGET (\(show(partTarget.saturatingTimes(2))))",
                        at: here)
                } else if partHoldBack < partTarget.saturatingTimes(3) {
                    report.warning(
                        "F1",
                        "PART-HOLD-BACK \(show(partHoldBack)) is less than 3×PART-TARGET (\(show(partTarget.saturatingTimes(3)))); it should be at least that",
                        at: here)
                }
            }
        } else if partTarget != nil {
            report.error(
                "F1", "EXT-X-PART-INF is present but PART-HOLD-BACK is missing; it is required with parts", at: here)
        }
    }

    private static func checkParts(_ playlist: MediaPlaylist, into report: inout IssueReport) {
        let targetDuration = Int64(playlist.targetDuration)
        var parents: [(parts: [PartialSegment], segment: MediaSegment?, location: PlaylistLocation)] =
            playlist.segments.enumerated().compactMap { index, segment in
                segment.tags.parts.isEmpty ? nil : (segment.tags.parts, segment, .segment(index))
            }
        if !playlist.trailingTags.parts.isEmpty {
            parents.append((playlist.trailingTags.parts, nil, .tag("EXT-X-PART")))
        }
        guard let first = parents.first else { return }
        guard let partTarget = playlist.partInformation?.partTarget else {
            report.error(
                "F2", "EXT-X-PART without EXT-X-PART-INF; PART-INF is required when the playlist has parts",
                at: first.location)
            return
        }
        let target = partTarget.microseconds
        let minimum = HLSDuration(microseconds: target / 20 * 17 + (target % 20 * 17 + 19) / 20)  // 85 %, rounded up
        for (parts, parent, location) in parents {
            let total = HLSDuration.saturatingSum(parts.map(\.duration))
            for (index, part) in parts.enumerated() {
                for name in ["INDEPENDENT", "GAP"] {
                    if let value = part.attributes.enumerated(name), value != "YES" {
                        report.error(
                            "F3", "EXT-X-PART \(part.uri) \(name)=\(value); the only valid value is YES", at: location)
                    }
                }
                if part.duration > partTarget {
                    report.error(
                        "F3",
                        "EXT-X-PART \(part.uri) DURATION \(show(part.duration)) > PART-TARGET \(show(partTarget))",
                        at: location)
                    continue
                }
                // The last part of a finished parent may be short; so may the newest part of the
                // parent being produced (it may turn out to be its last).
                let isLast = index == parts.count - 1
                let nextIsGap = !isLast && parts[index + 1].isGap
                if part.duration < minimum, !part.isIndependent, !part.isGap, !nextIsGap, !isLast {
                    report.error(
                        "F3",
                        "EXT-X-PART \(part.uri) DURATION \(show(part.duration)) < 85% of PART-TARGET \(show(partTarget)); only independent, gap or final parts may be shorter",
                        at: location)
                }
            }
            if let parent {
                // The parts of a parent hold exactly its media (1 ms of rounding per part allowed).
                let tolerance = Int64(parts.count) * 1_000
                if abs((total - parent.duration).microseconds) > tolerance {
                    report.error(
                        "F3",
                        "the parts of \(parent.uri) add up to \(show(total)) s but its EXTINF is \(show(parent.duration))",
                        at: location)
                }
            } else if total.roundedSeconds > targetDuration {
                report.error(
                    "B1",
                    "the parts of the segment being produced already add up to \(show(total)), which rounds to \(total.roundedSeconds) > EXT-X-TARGETDURATION \(targetDuration)",
                    at: location)
            }
        }
    }

    private static func checkPreloadHints(_ playlist: MediaPlaylist, into report: inout IssueReport) {
        let here = PlaylistLocation.tag("EXT-X-PRELOAD-HINT")
        guard !playlist.preloadHints.isEmpty else { return }
        if playlist.endList {
            report.error(
                "F4", "EXT-X-PRELOAD-HINT in a playlist with EXT-X-ENDLIST; a finished playlist must not hint", at: here
            )
        }
        var counts: [String: Int] = [:]
        for hint in playlist.preloadHints {
            guard hint.type == "PART" || hint.type == "MAP" else {
                report.error("F4", "EXT-X-PRELOAD-HINT TYPE=\(hint.type) must be PART or MAP", at: here)
                continue
            }
            counts[hint.type, default: 0] += 1
        }
        for type in ["PART", "MAP"] where counts[type, default: 0] > 1 {
            report.warning(
                "F4", "\(counts[type]!) EXT-X-PRELOAD-HINT tags of TYPE=\(type); there should be at most one", at: here)
        }
    }
}
