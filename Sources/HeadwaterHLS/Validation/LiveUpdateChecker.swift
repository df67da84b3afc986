/// Checks a pair of consecutive versions of one live media playlist against the server rules of
/// RFC 8216bis §6.2.1–6.2.2 (HLS-RULES C1, C3–C6, B2, B13, B15, D8, C12, F14).
///
/// `next` may be a Playlist Delta Update (EXT-X-SKIP): its skipped segments are restored from
/// `previous` as a client would, only the listed tail is compared, and SKIPPED-SEGMENTS counts in
/// the media sequence arithmetic. Issues are located in `next`.
///
/// Out of scope, by design:
/// - C9 (a new segment at most 1.5×TD after the previous one) is about time, not content: the origin
///   measures it when it publishes, and a poller measures it from response times.
/// - C14 (renditions agree with each other) needs every rendition of a session at one instant.
/// - D16 / C12's "never reuse an ID" needs the whole history of IDs, not two versions.
public enum LiveUpdateChecker {
    /// Server rules of RFC 8216bis §6.2.1–6.2.2 between two consecutive versions of one live playlist.
    public static func check(previous: MediaPlaylist, next: MediaPlaylist) -> [ValidationIssue] {
        var report = IssueReport()
        checkPlaylistLevel(previous: previous, next: next, into: &report)
        let before = LiveTimeline(previous, previous: nil)
        let after = LiveTimeline(next, previous: previous)
        checkSequence(previous: previous, next: next, before: before, after: after, into: &report)
        checkDateRanges(previous: previous, next: next, after: after, into: &report)
        checkSkip(next: next, after: after, into: &report)
        return report.sorted(by: LocationOrder(next))
    }

    // MARK: B2, B13, B15

    private static func checkPlaylistLevel(previous: MediaPlaylist, next: MediaPlaylist, into report: inout IssueReport)
    {
        if previous.targetDuration != next.targetDuration {
            report.error(
                "B2",
                "EXT-X-TARGETDURATION changed from \(previous.targetDuration) to \(next.targetDuration); it must never change",
                at: .tag("EXT-X-TARGETDURATION"))
        }
        if previous.endList, previous != next {
            let what = next.endList ? "the playlist changed" : "EXT-X-ENDLIST disappeared"
            report.error("B13", "\(what) after EXT-X-ENDLIST; a finished playlist must not change", at: .playlist)
        }
        if previous.playlistType != next.playlistType {
            report.error(
                "B15",
                "EXT-X-PLAYLIST-TYPE changed from \(previous.playlistType?.rawValue ?? "none") to \(next.playlistType?.rawValue ?? "none"); it must not change",
                at: .tag("EXT-X-PLAYLIST-TYPE"))
        } else if previous.playlistType == .vod, !previous.endList, previous != next {
            report.error("B15", "a PLAYLIST-TYPE:VOD playlist changed; it must never change", at: .playlist)
        } else if previous.playlistType == .event, next.effectiveMediaSequence != previous.effectiveMediaSequence {
            report.error(
                "B15",
                "a PLAYLIST-TYPE:EVENT playlist moved EXT-X-MEDIA-SEQUENCE from \(previous.effectiveMediaSequence) to \(next.effectiveMediaSequence); an event playlist only appends",
                at: .tag("EXT-X-MEDIA-SEQUENCE"))
        }
    }

    // MARK: C1, C3, C4, C5, C6

    private static func checkSequence(
        previous: MediaPlaylist, next: MediaPlaylist, before: LiveTimeline, after: LiveTimeline,
        into report: inout IssueReport
    ) {
        let oldSequence = previous.effectiveMediaSequence
        let newSequence = next.effectiveMediaSequence
        let previousCount = UInt64(previous.segments.count) &+ (previous.skip?.skippedSegments ?? 0)

        // C3: MEDIA-SEQUENCE moves forward by exactly the segments removed from the head. When the
        // listed segments match the previous ones under another numbering, say which.
        let shift = sequenceShift(before: before, after: after)
        let expected = shift.map { Int64(bitPattern: newSequence) + $0 }
        let sequence = next.skip == nil ? "EXT-X-MEDIA-SEQUENCE" : "EXT-X-MEDIA-SEQUENCE + SKIPPED-SEGMENTS"
        if newSequence < oldSequence {
            let hint = expected.map { " (the listed segments say it must be \($0))" } ?? ""
            report.error(
                "C3",
                "EXT-X-MEDIA-SEQUENCE decreased from \(oldSequence) to \(newSequence)\(hint); it must never decrease",
                at: .tag("EXT-X-MEDIA-SEQUENCE"))
        } else if newSequence - oldSequence > previousCount {
            report.error(
                "C3",
                "EXT-X-MEDIA-SEQUENCE increased by \(newSequence - oldSequence) but the previous version listed only \(previousCount) segments",
                at: .tag("EXT-X-MEDIA-SEQUENCE"))
        } else if let shift {
            let first = after.entries.first { $0.listedIndex != nil }!
            let was = Int64(bitPattern: first.msn) + shift
            let name =
                next.skip.map { "EXT-X-MEDIA-SEQUENCE \(newSequence) with SKIPPED-SEGMENTS \($0.skippedSegments)" }
                ?? "EXT-X-MEDIA-SEQUENCE \(newSequence)"
            report.error(
                "C3",
                "\(name) does not match the removed segments: \(first.segment.uri) was MSN \(was) in the previous version, so \(sequence) must be \(was)",
                at: .tag("EXT-X-MEDIA-SEQUENCE"))
        }
        if shift != nil { return }  // Every per-MSN comparison would only repeat this.

        // C6: DISCONTINUITY-SEQUENCE moves by the DISCONTINUITY tags that left with the head.
        var dsnReported = false
        let oldDS = previous.effectiveDiscontinuitySequence
        let newDS = next.effectiveDiscontinuitySequence
        if newDS < oldDS {
            report.error(
                "C6", "EXT-X-DISCONTINUITY-SEQUENCE decreased from \(oldDS) to \(newDS); it must never decrease",
                at: .tag("EXT-X-DISCONTINUITY-SEQUENCE"))
            dsnReported = true
        } else if newSequence >= oldSequence,
            let removed = removedDiscontinuities(before, from: oldSequence, to: newSequence)
        {
            let expectedDS = oldDS &+ removed
            if newDS != expectedDS {
                let left =
                    removed == 0
                    ? "no DISCONTINUITY tag left with the removed segments"
                    : "\(removed) DISCONTINUITY tag\(removed == 1 ? "" : "s") left with the removed segments"
                report.error(
                    "C6", "EXT-X-DISCONTINUITY-SEQUENCE is \(newDS) but \(left), so it must be \(expectedDS)",
                    at: .tag("EXT-X-DISCONTINUITY-SEQUENCE"))
                dsnReported = true
            }
        }

        compareSegments(before: before, after: after, skipDSN: dsnReported, into: &report)

        // C4: nothing disappears from the tail.
        if before.endMSN > after.endMSN, after.endMSN >= before.firstMSN {
            report.error(
                "C4",
                "MSN \(range(after.endMSN, before.endMSN - 1)) disappeared from the tail; segments are only removed from the head",
                at: .playlist)
        }

        // C5: a live window that lost segments keeps at least three target durations.
        if newSequence > oldSequence, !next.endList, after.isComplete {
            let duration = after.duration
            let limit = HLSDuration.seconds(3 * Int64(next.targetDuration))
            if duration < limit {
                report.error(
                    "C5",
                    "segments were removed leaving \(duration) s, less than 3×TD (\(limit) s); a live playlist must not shrink below it",
                    at: .playlist)
            }
        }
    }

    /// The number of DISCONTINUITY tags on the segments with MSN in `from..<to`, if all are known.
    private static func removedDiscontinuities(_ timeline: LiveTimeline, from: UInt64, to: UInt64) -> UInt64? {
        guard from < to else { return 0 }
        guard from >= timeline.firstMSN, to <= timeline.endMSN else { return nil }
        var count: UInt64 = 0
        var msn = from
        while msn < to {
            if timeline.entry(msn: msn)!.segment.tags.discontinuity { count += 1 }
            msn += 1
        }
        return count
    }

    /// When the listed segments of `after` are exactly those of `before` under a different
    /// numbering, the offset to add to `after`'s MSNs to get `before`'s (C3). `nil` when numbering
    /// by MSN already matches, or no other numbering fits.
    private static func sequenceShift(before: LiveTimeline, after: LiveTimeline) -> Int64? {
        let listed = after.entries.filter { $0.listedIndex != nil }
        guard let first = listed.first else { return nil }
        /// Whether numbering `after` by MSN + `shift` makes every overlapping segment match.
        func fits(_ shift: Int64) -> Bool {
            var compared = 0
            for entry in listed {
                let msn = Int64(bitPattern: entry.msn) + shift
                guard msn >= 0, let old = before.entry(msn: UInt64(msn)) else { continue }
                if old.identity != entry.identity { return false }
                compared += 1
            }
            return compared > 0
        }
        if fits(0) { return nil }
        for (index, old) in before.entries.enumerated() where old.identity == first.identity {
            let shift = Int64(bitPattern: before.firstMSN) + Int64(index) - Int64(bitPattern: first.msn)
            if shift != 0, fits(shift) { return shift }
        }
        return nil
    }

    private struct Difference {
        var field: String
        var msn: UInt64
        var listedIndex: Int
        var before: String
        var after: String
    }

    /// C1 for every MSN listed in both versions, and C4 for holes or insertions in the middle.
    private static func compareSegments(
        before: LiveTimeline, after: LiveTimeline, skipDSN: Bool, into report: inout IssueReport
    ) {
        var differences: [Difference] = []
        let listed = after.entries.filter { $0.listedIndex != nil }
        for (position, entry) in listed.enumerated() {
            guard let old = before.entry(msn: entry.msn), let index = entry.listedIndex else { continue }
            if old.identity != entry.identity {
                if let issue = holeOrInsertion(at: position, listed: listed, before: before) {
                    report.error("C4", issue, at: .segment(index))
                    break
                }
                report.error(
                    "C1",
                    "MSN \(entry.msn) changed from \(describe(old)) to \(describe(entry)); an MSN must always name the same segment",
                    at: .segment(index))
                continue
            }
            func differ(_ field: String, _ a: String, _ b: String) {
                differences.append(Difference(field: field, msn: entry.msn, listedIndex: index, before: a, after: b))
            }
            if old.byteRange != entry.byteRange, old.byteRange?.offset != nil, entry.byteRange?.offset != nil {
                differ(
                    "byte range", old.byteRange.map(\.description) ?? "none",
                    entry.byteRange.map(\.description) ?? "none")
            }
            if old.segment.duration != entry.segment.duration {
                differ("EXTINF", old.segment.duration.description, entry.segment.duration.description)
            }
            if old.segment.tags.discontinuity != entry.segment.tags.discontinuity {
                differ(
                    "EXT-X-DISCONTINUITY", yesNo(old.segment.tags.discontinuity),
                    yesNo(entry.segment.tags.discontinuity))
            }
            if !skipDSN, let a = old.dsn, let b = entry.dsn, a != b {
                differ("discontinuity sequence number", "\(a)", "\(b)")
            }
            if let a = old.date, let b = entry.date, PlaylistValidator.differ(a, b) {
                differ("PROGRAM-DATE-TIME", a.description, b.description)
            }
            if old.segment.tags.gap != entry.segment.tags.gap {
                differ("EXT-X-GAP", yesNo(old.segment.tags.gap), yesNo(entry.segment.tags.gap))
            }
            if let a = old.context, let b = entry.context {
                if a.map != b.map {
                    differ("EXT-X-MAP in effect", a.map?.uri ?? "none", b.map?.uri ?? "none")
                }
                if a.keys != b.keys {
                    differ("EXT-X-KEY in effect", describe(a.keys), describe(b.keys))
                }
            }
        }
        reportRuns(differences, into: &report)
    }

    /// Reports runs of consecutive MSNs with the same changed field as one issue.
    private static func reportRuns(_ differences: [Difference], into report: inout IssueReport) {
        var fields: [String] = []
        var byField: [String: [Difference]] = [:]
        for difference in differences {
            if byField[difference.field] == nil { fields.append(difference.field) }
            byField[difference.field, default: []].append(difference)
        }
        for field in fields {
            var run: [Difference] = []
            func flush() {
                guard let first = run.first, let last = run.last else { return }
                let msns = run.count == 1 ? "MSN \(first.msn)" : "MSN \(first.msn)–\(last.msn)"
                let example = run.count == 1 ? "" : " (MSN \(first.msn))"
                report.error(
                    "C1",
                    "\(msns) \(field) changed from \(first.before) to \(first.after)\(example); a listed segment must not change",
                    at: .segment(first.listedIndex))
                run = []
            }
            for difference in byField[field]! {
                if let last = run.last, last.msn + 1 != difference.msn { flush() }
                run.append(difference)
            }
            flush()
        }
    }

    /// C4: at the first segment whose identity changed, whether segments were removed from the
    /// middle (the rest of the old list follows, shifted down) or inserted before the tail.
    private static func holeOrInsertion(at position: Int, listed: [LiveTimeline.Entry], before: LiveTimeline) -> String?
    {
        let entry = listed[position]
        /// Whether the entries from `start` on match the previous version shifted by `shift` MSNs.
        func fits(_ shift: Int64, from start: Int) -> Bool {
            var compared = 0
            for later in listed[start...] {
                let msn = Int64(bitPattern: later.msn) + shift
                guard msn >= Int64(bitPattern: before.firstMSN), msn < Int64(bitPattern: before.endMSN) else {
                    continue
                }
                compared += 1
                if before.entry(msn: UInt64(msn))!.identity != later.identity { return false }
            }
            return compared > 0
        }
        let remaining = Int64(bitPattern: before.endMSN) - Int64(bitPattern: entry.msn)
        if remaining > 1 {
            for removed in 1..<remaining where fits(removed, from: position) {
                let first = entry.msn
                let last = entry.msn &+ UInt64(removed) &- 1
                let uris = (first...last).compactMap { before.entry(msn: $0)?.segment.uri }.joined(separator: ", ")
                return
                    "MSN \(range(first, last)) (\(uris)) removed from the middle; segments may only be removed from the head"
            }
        }
        let available = listed.count - position
        if available > 1 {
            for inserted in 1..<available where fits(-Int64(inserted), from: position + inserted) {
                return
                    "\(inserted) segment\(inserted == 1 ? "" : "s") inserted before MSN \(entry.msn); new segments may only be appended at the tail"
            }
        }
        return nil
    }

    // MARK: D8, C12

    private static func checkDateRanges(
        previous: MediaPlaylist, next: MediaPlaylist, after: LiveTimeline, into report: inout IssueReport
    ) {
        let old = DateRangeGroup.groups(in: previous)
        guard !old.isEmpty else { return }
        let new = Dictionary(DateRangeGroup.groups(in: next).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        // A v2 delta update leaves out old date ranges and lists the removed ones (F15).
        let recentlyRemoved = next.skip?.recentlyRemovedDateRanges.map(Set.init)
        let window = windowDates(after)
        for group in old {
            let name = "EXT-X-DATERANGE \"\(group.id)\""
            if let current = new[group.id] {
                for attribute in group.merged.attributes {
                    if let value = current.merged[attribute.name] {
                        if !PlaylistValidator.sameValue(attribute.value, value) {
                            report.error(
                                "D8",
                                "\(name) changed \(attribute.name) from \(PlaylistValidator.show(attribute.value)) to \(PlaylistValidator.show(value)); a date range may only add attributes",
                                at: .dateRange(id: group.id))
                        }
                    } else if recentlyRemoved == nil {
                        report.error(
                            "D8",
                            "\(name) lost \(attribute.name)=\(PlaylistValidator.show(attribute.value)); a date range may only add attributes",
                            at: .dateRange(id: group.id))
                    }
                }
                continue
            }
            if let recentlyRemoved, !recentlyRemoved.contains(group.id) { continue }  // skipped, not removed
            guard let window else { continue }
            let range = group.range
            let startsInWindow = range.startDate.map { $0 < window.end } ?? true
            if startsInWindow, MediaPlaylist.dateRange(range, mayCover: window.start) {
                report.error(
                    "C12",
                    "\(name) was removed while it still covers listed segments (from \(range.startDate?.description ?? "an unknown date")); a range stays until no listed segment falls in it",
                    at: .playlist)
            }
        }
    }

    /// The dates of the first listed segment's start and of the last one's end.
    private static func windowDates(_ timeline: LiveTimeline) -> (start: ProgramDateTime, end: ProgramDateTime)? {
        guard let first = timeline.entries.first?.date, let last = timeline.entries.last, let lastDate = last.date
        else {
            return nil
        }
        return (first, lastDate.adding(last.segment.duration))
    }

    // MARK: F14

    /// A delta update skips only segments further from the end than CAN-SKIP-UNTIL.
    private static func checkSkip(next: MediaPlaylist, after: LiveTimeline, into report: inout IssueReport) {
        guard let skip = next.skip, skip.skippedSegments > 0, after.isComplete,
            let boundary = next.serverControl?.canSkipUntil
        else { return }
        let skipped = Int(skip.skippedSegments)
        guard skipped <= after.entries.count else { return }
        let fromEnd = HLSDuration.saturatingSum(after.entries[(skipped - 1)...].map(\.segment.duration))
        if fromEnd <= boundary {
            let last = after.entries[skipped - 1]
            report.error(
                "F14",
                "EXT-X-SKIP skipped MSN \(last.msn), which starts \(fromEnd) s from the end, within CAN-SKIP-UNTIL \(boundary); only segments beyond the skip boundary may be skipped",
                at: .tag("EXT-X-SKIP"))
        }
    }

    // MARK: Messages

    private static func describe(_ entry: LiveTimeline.Entry) -> String {
        guard let range = entry.byteRange else { return entry.segment.uri }
        return "\(entry.segment.uri) [\(range)]"
    }

    private static func describe(_ keys: [String: Key]) -> String {
        guard !keys.isEmpty else { return "none" }
        return keys.keys.sorted().map { format in
            let key = keys[format]!
            return key.uri.map { "\(key.method) \($0)" } ?? key.method
        }.joined(separator: ", ")
    }

    private static func yesNo(_ flag: Bool) -> String { flag ? "present" : "absent" }

    private static func range(_ first: UInt64, _ last: UInt64) -> String {
        first == last ? "\(first)" : "\(first)–\(last)"
    }
}
