import HeadwaterHLS
import HeadwaterTesting
import Testing

// Each reload rule: a pair whose next version breaks it reports exactly that rule at the right place
// (in the next version), and the fixed pair reports nothing.

private func media(_ text: String) throws -> MediaPlaylist { try PlaylistParser().parseMedia(Array(text.utf8)) }

/// A live playlist: `segments` are `uri` or `tags\nuri`; each lasts 5.005 s unless `durations` says otherwise.
private func live(
    mediaSequence: UInt64, discontinuitySequence: UInt64 = 5, targetDuration: Int = 6, header: String = "",
    _ segments: [String], footer: String = ""
) throws -> MediaPlaylist {
    var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:\(targetDuration)\n"
    text += "#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)\n#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitySequence)\n" + header
    for segment in segments {
        var lines = segment.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let uri = lines.removeLast()
        let extinf = lines.firstIndex { $0.hasPrefix("#EXTINF") }.map { lines.remove(at: $0) } ?? "#EXTINF:5.005,"
        text += lines.map { $0 + "\n" }.joined() + extinf + "\n" + uri + "\n"
    }
    return try media(text + footer)
}

/// `s<msn>.ts` with its date (the timeline starts at 17:00:00.000 with MSN 100, 5.005 s each).
private func dated(_ msn: Int) -> String {
    let ms = (msn - 100) * 5005
    let seconds = ms / 1000
    let pad = { (n: Int, w: Int) in String(repeating: "0", count: max(0, w - String(n).count)) + String(n) }
    return
        "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:\(pad(seconds / 60, 2)):\(pad(seconds % 60, 2)).\(pad(ms % 1000, 3))Z\ns\(msn).ts"
}

/// MSN 100–104; a discontinuity on 102.
private func previous(header: String = "", _ extra: [Int: String] = [:]) throws -> MediaPlaylist {
    try live(
        mediaSequence: 100, header: header,
        (100...104).map { msn in
            let tags = extra[msn].map { $0 + "\n" } ?? ""
            switch msn {
            case 100: return tags + dated(100)
            case 102: return "#EXT-X-DISCONTINUITY\n" + tags + dated(102)
            default: return tags + "s\(msn).ts"
            }
        })
}

/// The correct next version: 100 slid out, 105 appended.
private func next(
    mediaSequence: UInt64 = 101, discontinuitySequence: UInt64 = 5, header: String = "", _ extra: [Int: String] = [:],
    replacing: [Int: String] = [:], msns: [Int] = Array(101...105)
) throws -> MediaPlaylist {
    try live(
        mediaSequence: mediaSequence, discontinuitySequence: discontinuitySequence, header: header,
        msns.map { msn in
            if let replaced = replacing[msn] { return replaced }
            let tags = extra[msn].map { $0 + "\n" } ?? ""
            switch msn {
            case msns[0]: return (msn == 102 ? "#EXT-X-DISCONTINUITY\n" : "") + tags + dated(msn)
            case 102: return "#EXT-X-DISCONTINUITY\n" + tags + dated(102)
            default: return tags + "s\(msn).ts"
            }
        })
}

private func expectOnly(
    _ rule: String, at location: PlaylistLocation, previous: MediaPlaylist, next: MediaPlaylist,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let issues = LiveUpdateChecker.check(previous: previous, next: next)
    #expect(issues.map(\.rule) == [rule], "\(issues)", sourceLocation: sourceLocation)
    #expect(
        issues.allSatisfy { $0.severity == .error && $0.location == location }, "\(issues)",
        sourceLocation: sourceLocation)
}

private func expectClean(
    previous: MediaPlaylist, next: MediaPlaylist, sourceLocation: SourceLocation = #_sourceLocation
) {
    let issues = LiveUpdateChecker.check(previous: previous, next: next)
    #expect(issues.isEmpty, "\(issues)", sourceLocation: sourceLocation)
}

@Suite struct LiveUpdateCheckerTests {
    @Test func correctSlidePasses() throws {
        let before = try previous()
        let after = try next()
        expectClean(previous: before, next: after)
        // It is what removingSegmentsFromHead does, plus one appended segment.
        var slid = before.removingSegmentsFromHead(1)
        slid.segments.append(MediaSegment(uri: "s105.ts", duration: .milliseconds(5005)))
        #expect(slid == after)
        expectClean(previous: before, next: before)
    }

    // MARK: C1

    @Test func c1_segmentURIChanged() throws {
        expectOnly("C1", at: .segment(2), previous: try previous(), next: try next(replacing: [103: "x103.ts"]))
        expectClean(previous: try previous(), next: try next())
    }

    @Test func c1_durationChanged() throws {
        expectOnly(
            "C1", at: .segment(3), previous: try previous(), next: try next(replacing: [104: "#EXTINF:4.004,\ns104.ts"])
        )
    }

    @Test func c1_dateChanged() throws {
        // One issue for the run of MSNs whose (extrapolated) date moved.
        let moved = "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:16.015Z\ns103.ts"
        expectOnly("C1", at: .segment(2), previous: try previous(), next: try next(replacing: [103: moved]))
        let same = "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:15.015Z\ns103.ts"
        expectClean(previous: try previous(), next: try next(replacing: [103: same]))
    }

    @Test func c1_keyInEffectChanged() throws {
        let key = "#EXT-X-KEY:METHOD=AES-128,URI=\"k1\",IV=0x000102030405060708090A0B0C0D0E0F"
        let before = try previous([100: key])
        expectOnly("C1", at: .segment(0), previous: before, next: try next())
        expectClean(previous: before, next: try next([101: key]))
    }

    @Test func c1_gapAdded() throws {
        expectOnly("C1", at: .segment(2), previous: try previous(), next: try next([103: "#EXT-X-GAP"]))
    }

    @Test func c1_byteRangeChanged() throws {
        let header = "#EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:00.000Z\n"
        let before = try live(
            mediaSequence: 100, header: "",
            [header + "#EXT-X-BYTERANGE:1000@0\nmain.ts"] + (0..<3).map { _ in "#EXT-X-BYTERANGE:1000\nmain.ts" })
        let after = { (offset: Int) in
            try live(
                mediaSequence: 101, header: "",
                ["#EXT-X-BYTERANGE:1000@\(offset)\nmain.ts"] + (0..<3).map { _ in "#EXT-X-BYTERANGE:1000\nmain.ts" })
        }
        expectOnly("C1", at: .segment(0), previous: before, next: try after(0))
        expectClean(previous: before, next: try after(1000))
    }

    // MARK: C3, C4

    @Test func c3_mediaSequenceDecreased() throws {
        let before = try previous()
        var after = before
        after.mediaSequence = 99
        expectOnly("C3", at: .tag("EXT-X-MEDIA-SEQUENCE"), previous: before, next: after)
    }

    @Test func c3_mediaSequenceDoesNotCountTheRemovedSegments() throws {
        // 100 and 101 slid out, but MEDIA-SEQUENCE moved by one.
        expectOnly(
            "C3", at: .tag("EXT-X-MEDIA-SEQUENCE"), previous: try previous(),
            next: try next(msns: Array(102...106)).with { $0.mediaSequence = 101 })
        expectClean(previous: try previous(), next: try next(mediaSequence: 102, msns: Array(102...106)))
    }

    @Test func c4_segmentRemovedFromTheMiddle() throws {
        expectOnly("C4", at: .segment(2), previous: try previous(), next: try next(msns: [101, 102, 104, 105, 106]))
    }

    @Test func c4_segmentInsertedBeforeTheTail() throws {
        expectOnly(
            "C4", at: .segment(2), previous: try previous(),
            next: try next(replacing: [103: "ad.ts"], msns: [101, 102, 103, 103, 104, 105]).with {
                $0.segments[3].uri = "s103.ts"
            })
    }

    @Test func c4_segmentRemovedFromTheTail() throws {
        expectOnly(
            "C4", at: .playlist, previous: try previous(), next: try next(mediaSequence: 100, msns: Array(100...103)))
    }

    // MARK: C5, C6

    @Test func c5_windowShrunkBelowThreeTargetDurations() throws {
        expectOnly(
            "C5", at: .playlist, previous: try previous(),
            next: try next(mediaSequence: 102, discontinuitySequence: 5, msns: Array(102...104)).with {
                $0.segments[0].tags.discontinuity = true
            })
        expectClean(previous: try previous(), next: try next())
    }

    @Test func c6_discontinuitySequenceNotBumped() throws {
        let bad = try next(mediaSequence: 103, discontinuitySequence: 5, msns: Array(103...106))
        expectOnly("C6", at: .tag("EXT-X-DISCONTINUITY-SEQUENCE"), previous: try previous(), next: bad)
        expectClean(previous: try previous(), next: bad.with { $0.discontinuitySequence = 6 })
    }

    @Test func c6_discontinuitySequenceBumpedSpuriously() throws {
        expectOnly(
            "C6", at: .tag("EXT-X-DISCONTINUITY-SEQUENCE"), previous: try previous(),
            next: try next(discontinuitySequence: 6))
    }

    @Test func c6_discontinuitySequenceDecreased() throws {
        expectOnly(
            "C6", at: .tag("EXT-X-DISCONTINUITY-SEQUENCE"), previous: try previous(),
            next: try next(discontinuitySequence: 4))
    }

    // MARK: B2, B13, B15

    @Test func b2_targetDurationChanged() throws {
        expectOnly(
            "B2", at: .tag("EXT-X-TARGETDURATION"), previous: try previous(),
            next: try next().with { $0.targetDuration = 7 })
    }

    @Test func b13_changedAfterEndList() throws {
        let finished = try previous().with { $0.endList = true }
        var appended = finished
        appended.segments.append(MediaSegment(uri: "s105.ts", duration: .milliseconds(5005)))
        expectOnly("B13", at: .playlist, previous: finished, next: appended)
        expectClean(previous: finished, next: finished)
        expectClean(previous: try previous(), next: finished)  // ENDLIST may be added at any time
    }

    @Test func b15_playlistTypeChanged() throws {
        let event = "#EXT-X-PLAYLIST-TYPE:EVENT\n"
        expectOnly(
            "B15", at: .tag("EXT-X-PLAYLIST-TYPE"), previous: try previous(header: event),
            next: try next(mediaSequence: 100, msns: Array(100...105)))
        expectClean(
            previous: try previous(header: event),
            next: try next(mediaSequence: 100, header: event, msns: Array(100...105)))
    }

    @Test func b15_eventPlaylistRemovedSegments() throws {
        let event = "#EXT-X-PLAYLIST-TYPE:EVENT\n"
        expectOnly(
            "B15", at: .tag("EXT-X-MEDIA-SEQUENCE"), previous: try previous(header: event),
            next: try next(header: event))
    }

    // MARK: D8, C12

    private let opening = "#EXT-X-DATERANGE:ID=\"ad\",START-DATE=\"2026-11-21T17:00:10.010Z\",PLANNED-DURATION=30.0"

    @Test func d8_dateRangeAttributeChanged() throws {
        let before = try previous([102: opening])
        let changed = opening.replacing("30.0", with: "29.5")
        expectOnly("D8", at: .dateRange(id: "ad"), previous: before, next: try next([102: changed]))
        // Adding attributes, in the same tag or a later one, is fine; so is writing 30.0 as 30.000.
        expectClean(
            previous: before,
            next: try next([
                102: opening.replacing("30.0", with: "30.000") + ",X-AD=\"a\"",
                105: "#EXT-X-DATERANGE:ID=\"ad\",DURATION=15.015",
            ]))
    }

    @Test func d8_dateRangeAttributeLost() throws {
        let before = try previous([102: opening])
        expectOnly(
            "D8", at: .dateRange(id: "ad"), previous: before,
            next: try next([102: "#EXT-X-DATERANGE:ID=\"ad\",START-DATE=\"2026-11-21T17:00:10.010Z\""]))
    }

    @Test func c12_dateRangeRemovedWhileItCoversListedSegments() throws {
        let program = { (duration: String) in
            "#EXT-X-DATERANGE:ID=\"show\",START-DATE=\"2026-11-21T17:00:00.000Z\",DURATION=\(duration)"
        }
        expectOnly("C12", at: .playlist, previous: try previous([100: program("30.0")]), next: try next())
        // A range that ended before the first listed segment may go.
        expectClean(previous: try previous([100: program("5.0")]), next: try next())
    }

    // MARK: Delta updates (F14)

    /// MSN 100–109, skippable beyond 36 s from the end.
    private func longWindow(first: Int, last: Int, skipped: Int = 0) throws -> MediaPlaylist {
        let header =
            "#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=36\n"
            + (skipped > 0 ? "#EXT-X-SKIP:SKIPPED-SEGMENTS=\(skipped)\n" : "")
        return try live(
            mediaSequence: UInt64(first), header: header,
            (first + skipped...last).map { $0 == first + skipped ? dated($0) : "s\($0).ts" })
    }

    @Test func f14_deltaUpdateIsComparedByItsListedTail() throws {
        let before = try longWindow(first: 100, last: 109)
        let delta = try longWindow(first: 101, last: 110, skipped: 3)
        expectClean(previous: before, next: delta)
        #expect(PlaylistValidator.validate(delta.with { $0.version = 9 }).isEmpty)
        expectOnly("C1", at: .segment(2), previous: before, next: delta.with { $0.segments[2].uri = "x106.ts" })
    }

    @Test func f14_deltaSkipsInsideTheSkipBoundary() throws {
        // s104 starts 35.035 s from the end, inside CAN-SKIP-UNTIL=36.
        let before = try longWindow(first: 100, last: 109)
        expectOnly(
            "F14", at: .tag("EXT-X-SKIP"), previous: before, next: try longWindow(first: 101, last: 110, skipped: 4))
    }

    @Test func f14_skippedSegmentsMiscounted() throws {
        let before = try longWindow(first: 100, last: 109)
        var delta = try longWindow(first: 101, last: 110, skipped: 3)
        delta.skip = Skip(attributes: [Attribute("SKIPPED-SEGMENTS", .integer(2))])
        expectOnly("C3", at: .tag("EXT-X-MEDIA-SEQUENCE"), previous: before, next: delta)
    }
}

/// The bugs found in `MediaPlaylist.removingSegmentsFromHead(_:)`.
@Suite struct RemovingSegmentsFromHeadTests {
    @Test func keepsTheKeyOfEveryKeyFormat() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-VERSION:5
            #EXT-X-TARGETDURATION:6
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://k1",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="k1",KEYFORMAT="identity"
            #EXTINF:5.005,
            s0.ts
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="k2",KEYFORMAT="identity"
            #EXTINF:5.005,
            s1.ts
            #EXTINF:5.005,
            s2.ts
            #EXTINF:5.005,
            s3.ts
            #EXTINF:5.005,
            s4.ts

            """)
        let slid = playlist.removingSegmentsFromHead(1)
        #expect(Set(slid.effectiveKeys(at: 0)) == Set(playlist.effectiveKeys(at: 1)))
        #expect(slid.segments[0].tags.keys.map(\.uri) == ["skd://k1", "k2"])
        #expect(LiveUpdateChecker.check(previous: playlist, next: slid).isEmpty)
    }

    @Test func keepsTheOpeningDateRangeWhileLaterTagsOfItsIDRemain() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:00.000Z
            #EXT-X-DATERANGE:ID="ad",START-DATE="2026-11-21T17:00:00.000Z",PLANNED-DURATION=5.005
            #EXTINF:5.005,
            ad.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T17:00:05.005Z
            #EXT-X-DATERANGE:ID="ad",DURATION=5.005
            #EXTINF:5.005,
            s1.ts
            #EXTINF:5.005,
            s2.ts
            #EXTINF:5.005,
            s3.ts
            #EXTINF:5.005,
            s4.ts

            """)
        let slid = playlist.removingSegmentsFromHead(1)
        // The head's own same-ID tag absorbs the carried attributes: one tag, nothing lost.
        #expect(slid.segments[0].tags.dateRanges.map(\.id) == ["ad"])
        let merged = try #require(slid.segments[0].tags.dateRanges.first)
        #expect(merged.startDate != nil && merged.plannedDuration == HLSDuration(microseconds: 5_005_000))
        #expect(merged.duration == HLSDuration(microseconds: 5_005_000))
        #expect(PlaylistValidator.validate(slid).isEmpty)
        #expect(LiveUpdateChecker.check(previous: playlist, next: slid).isEmpty)
        // Once no tag of the ID remains and the range has ended, it goes.
        #expect(slid.removingSegmentsFromHead(1).segments[0].tags.dateRanges.isEmpty)
    }

    @Test func writesTheDiscontinuitySequenceWhileDiscontinuitiesRemain() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:10
            #EXTINF:5.005,
            s0.ts
            #EXTINF:5.005,
            s1.ts
            #EXTINF:5.005,
            s2.ts
            #EXT-X-DISCONTINUITY
            #EXTINF:5.005,
            s3.ts
            #EXTINF:5.005,
            s4.ts

            """)
        let slid = playlist.removingSegmentsFromHead(1)
        #expect(slid.discontinuitySequence == 0)
        #expect(PlaylistValidator.validate(slid).isEmpty)
        #expect(playlist.removingSegmentsFromHead(4).discontinuitySequence == 1)
    }
}

extension MediaPlaylist {
    /// A modified copy, for building test cases.
    fileprivate func with(_ change: (inout MediaPlaylist) -> Void) -> MediaPlaylist {
        var copy = self
        change(&copy)
        return copy
    }
}

/// Property tests over ``LiveSimulator``: correct live timelines pass, and each way an origin can
/// break the reload rules is caught, for every seed.
@Suite struct LiveUpdateCheckerPropertyTests {
    static let seeds: [UInt64] = Array(0..<200)
    static let steps = 60

    @Test(.cpuBound, arguments: seeds)
    func simulatedTimelinesPass(seed: UInt64) throws {
        var simulator = LiveSimulator(seed: seed)
        var previous = simulator.playlist
        try expectValid(previous, seed: seed, step: 0, reparse: true)
        for step in 1...Self.steps {
            let next = simulator.step()
            try expectValid(next, seed: seed, step: step, reparse: step % 6 == 0)
            let issues = LiveUpdateChecker.check(previous: previous, next: next)
            #expect(issues.isEmpty, "seed \(seed) step \(step): \(issues)")
            if let delta = LiveSimulator.deltaUpdate(of: next) {
                try expectValid(delta, seed: seed, step: step, reparse: step % 6 == 3)
                let deltaIssues = LiveUpdateChecker.check(previous: previous, next: delta)
                #expect(deltaIssues.isEmpty, "seed \(seed) step \(step) (delta): \(deltaIssues)")
            }
            previous = next
        }
    }

    /// No errors, for the value and (when `reparse`) for its serialized text parsed back.
    private func expectValid(_ playlist: MediaPlaylist, seed: UInt64, step: Int, reparse: Bool) throws {
        let errors = PlaylistValidator.validate(playlist).filter { $0.severity == .error }
        #expect(errors.isEmpty, "seed \(seed) step \(step): \(errors)\n\(PlaylistSerializer.string(playlist))")
        guard reparse else { return }
        let reparsed = try PlaylistParser().parseMedia(PlaylistSerializer.serialize(playlist))
        let reparsedErrors = PlaylistValidator.validate(reparsed).filter { $0.severity == .error }
        #expect(reparsedErrors.isEmpty, "seed \(seed) step \(step) (reparsed): \(reparsedErrors)")
    }

    // MARK: Corruptions

    /// One corruption of `next` (given `previous`), or `nil` when this pair does not lend itself to it.
    typealias Corruption =
        @Sendable (_ previous: MediaPlaylist, _ next: MediaPlaylist, _ random: inout SeededRandom) -> MediaPlaylist?

    static let corruptions: [(name: String, rule: String, corrupt: Corruption)] = [
        (
            "MEDIA-SEQUENCE decremented", "C3",
            { _, next, _ in
                var bad = next
                guard next.effectiveMediaSequence > 0 else { return nil }
                bad.mediaSequence = next.effectiveMediaSequence - 1
                return bad
            }
        ),
        (
            "head segment's URI changed", "C1",
            { previous, next, _ in
                guard next.effectiveMediaSequence < previous.effectiveMediaSequence + UInt64(previous.segments.count)
                else { return nil }
                var bad = next
                bad.segments[0].uri = "replaced/" + bad.segments[0].uri
                return bad
            }
        ),
        (
            "DISCONTINUITY-SEQUENCE not bumped", "C6",
            { previous, next, _ in
                guard next.effectiveDiscontinuitySequence > previous.effectiveDiscontinuitySequence else { return nil }
                var bad = next
                bad.discontinuitySequence = previous.effectiveDiscontinuitySequence
                return bad
            }
        ),
        (
            "DISCONTINUITY-SEQUENCE bumped spuriously", "C6",
            { _, next, _ in
                var bad = next
                bad.discontinuitySequence = next.effectiveDiscontinuitySequence + 1
                return bad
            }
        ),
        (
            "TARGETDURATION changed", "B2",
            { _, next, _ in
                var bad = next
                bad.targetDuration += 1
                return bad
            }
        ),
        (
            "DATERANGE attribute changed", "D8",
            { previous, next, random in
                let kept = Set(previous.segments.flatMap(\.tags.dateRanges).map(\.id))
                let candidates = next.segments.indices.flatMap { index in
                    next.segments[index].tags.dateRanges.indices.compactMap { range in
                        kept.contains(next.segments[index].tags.dateRanges[range].id)
                            && next.segments[index].tags.dateRanges[range].startDate != nil ? (index, range) : nil
                    }
                }
                guard !candidates.isEmpty else { return nil }
                let (index, range) = random.pick(candidates)
                var bad = next
                let id = bad.segments[index].tags.dateRanges[range].id
                // Change START-DATE on every tag of the ID that carries it, so only the reload rule breaks.
                for i in bad.segments.indices {
                    for r in bad.segments[i].tags.dateRanges.indices where bad.segments[i].tags.dateRanges[r].id == id {
                        if let start = bad.segments[i].tags.dateRanges[r].startDate {
                            bad.segments[i].tags.dateRanges[r].attributes["START-DATE"] = .date(
                                start.adding(.seconds(2)))
                        }
                    }
                }
                return bad
            }
        ),
        (
            "middle segment removed", "C4",
            { previous, next, random in
                let overlap =
                    Int(previous.effectiveMediaSequence + UInt64(previous.segments.count))
                    - Int(next.effectiveMediaSequence)
                guard overlap >= 3 else { return nil }
                var bad = next
                bad.segments.remove(at: random.int(1...(overlap - 2)))
                return bad
            }
        ),
        (
            "PDT of a kept segment shifted", "C1",
            { previous, next, random in
                let overlap =
                    Int(previous.effectiveMediaSequence + UInt64(previous.segments.count))
                    - Int(next.effectiveMediaSequence)
                guard overlap >= 1 else { return nil }
                var bad = next
                let index = random.int(0...(overlap - 1))
                let date = bad.programDateTimes()[index]!
                bad.segments[index].tags.programDateTime = date.adding(.milliseconds(2_500))
                return bad
            }
        ),
        (
            "window shrunk below 3×TD", "C5",
            { _, next, _ in
                let limit = HLSDuration.seconds(3 * Int64(next.targetDuration))
                var remaining = next.duration
                var count = 0
                while count < next.segments.count - 1, remaining >= limit {
                    remaining -= next.segments[count].duration
                    count += 1
                }
                guard remaining < limit else { return nil }
                return next.removingSegmentsFromHead(count)
            }
        ),
    ]

    @Test(.cpuBound, arguments: seeds)
    func corruptionsAreDetected(seed: UInt64) {
        let snapshots = LiveSimulator.snapshots(seed: seed, steps: Self.steps)
        var random = SeededRandom(seed: seed ^ 0xC0FF_EE00)
        for (name, rule, corrupt) in Self.corruptions {
            var tried = 0
            for step in 1..<snapshots.count where tried < 3 {
                guard let bad = corrupt(snapshots[step - 1], snapshots[step], &random) else { continue }
                tried += 1
                let issues = LiveUpdateChecker.check(previous: snapshots[step - 1], next: bad)
                #expect(
                    issues.contains { $0.rule == rule && $0.severity == .error },
                    "seed \(seed) step \(step): \(name) should report \(rule), got \(issues)")
            }
            #expect(tried > 0, "seed \(seed): no pair could be corrupted with \(name)")
        }
    }
}

@Test(.cpuBound) func hostileNumbersDoNotTrapTheReloadChecks() throws {
    let playlist = try media(hostilePlaylist())
    _ = LiveUpdateChecker.check(previous: playlist, next: playlist)
    let slid = playlist.removingSegmentsFromHead(7)
    _ = LiveUpdateChecker.check(previous: playlist, next: slid)
    _ = LiveUpdateChecker.check(previous: slid, next: playlist)
    var delta = slid
    delta.skip = Skip(attributes: [Attribute("SKIPPED-SEGMENTS", .integer(UInt64.max))])
    _ = LiveUpdateChecker.check(previous: playlist, next: delta)
    delta.skip = Skip(attributes: [Attribute("SKIPPED-SEGMENTS", .integer(3))])
    _ = LiveUpdateChecker.check(previous: playlist, next: delta)
    _ = PlaylistValidator.validate(delta)
}
