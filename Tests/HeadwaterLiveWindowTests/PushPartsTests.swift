import HeadwaterHLS
import HeadwaterLiveWindow
import Testing

/// Push ingest of low-latency HLS, on the window: an encoder's parts and hints in, Headwater's own
/// low-latency playlist out (HLS-RULES F1–F5, F17), every version valid with no issue; bad part
/// lists refused without touching what is published.
@Suite("Push window: low-latency parts")
struct PushPartsTests {
    static func window() -> LiveWindow {
        LiveWindow(configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 8, runTag: "t1"))
    }

    /// Runs `parts` parts of a well-behaved encoder through a window, checking every version.
    static func run(_ encoder: inout LowLatencyEncoder, _ window: inout LiveWindow, parts: Int, _ checker: inout PartsChecker)
        throws
    {
        for step in 0..<parts {
            _ = try encoder.step(&window)
            checker.check(&window, now: encoder.clock, "part \(step)")
        }
    }

    @Test("an encoder's parts are published with Headwater's PART-INF, SERVER-CONTROL and one hint", arguments: [false, true])
    func published(byteRanges: Bool) throws {
        var encoder = LowLatencyEncoder()
        encoder.byteRanges = byteRanges
        var window = Self.window()
        var checker = PartsChecker()
        try Self.run(&encoder, &window, parts: 4 * 12 + 2, &checker)
        #expect(checker.problems.isEmpty, "\(checker.problems.prefix(5))")
        let playlist = try #require(window.snapshot(now: encoder.clock).media["v0"]).model
        #expect(playlist.partInformation?.partTarget == .milliseconds(500))
        let control = try #require(playlist.serverControl)
        #expect(control.canBlockReload && control.partHoldBack == .milliseconds(1500))
        #expect(control.canSkipUntil == .seconds(12) && control.holdBack == nil && !control.canSkipDateRanges)
        // The parts of the last three target durations (with the open segment's): the newest three segments.
        let withParts = playlist.segments.filter { !$0.tags.parts.isEmpty }
        #expect(withParts.count == 2 && playlist.segments.last?.tags.parts.count == 4)
        #expect(playlist.trailingTags.parts.count == 2)
        #expect(playlist.trailingTags.parts.first?.isIndependent == true)
        #expect(playlist.preloadHints.count == 1 && playlist.preloadHints.first?.type == "PART")
        // Parts change the playlist between segments: versions of every part were published, and
        // every hint became a part under the same URI (F4).
        #expect(Set(checker.versions).count > 30)
        #expect(checker.hintsFulfilled > 30)
        if byteRanges {
            #expect(playlist.trailingTags.parts.map { $0.byteRange?.offset } == [0, LowLatencyEncoder.partBytes])
        }
    }

    @Test("a part is listed only once its upload is complete; until then it is the hinted part")
    func listedWhenUploaded() throws {
        var encoder = LowLatencyEncoder()
        var window = Self.window()
        var checker = PartsChecker()
        try Self.run(&encoder, &window, parts: 4 * 4 + 1, &checker)
        // Part 1 of the open segment: listed by the encoder, its upload still in flight.
        let late = encoder.producePart(upload: false)
        #expect(late.isEmpty)
        _ = try window.playlistReceived(path: "v0.m3u8", encoder.playlist(), now: encoder.clock)
        checker.check(&window, now: encoder.clock, "late")
        var playlist = try #require(window.mediaPlaylist(rendition: "v0"))
        #expect(playlist.trailingTags.parts.count == 1)
        let hint = try #require(playlist.preloadHints.first)
        // The upload completes: the part is listed under the hinted URI.
        let path = encoder.partURI(encoder.open, 1)
        _ = window.segmentStored(path: path, file: encoder.file(path, length: 1000), completedAt: encoder.clock + 100_000)
        checker.check(&window, now: encoder.clock + 100_000, "arrived")
        playlist = try #require(window.mediaPlaylist(rendition: "v0"))
        #expect(playlist.trailingTags.parts.map(\.uri).last == hint.uri)
        #expect(playlist.preloadHints.first?.uri != hint.uri)
        #expect(checker.problems.isEmpty, "\(checker.problems.prefix(5))")
    }

    /// Runs a good encoder, then offers `bad`: it must be refused with 422 and change nothing.
    static func expectRefused(_ containing: String, _ bad: (LowLatencyEncoder) -> MediaPlaylist) throws {
        var encoder = LowLatencyEncoder()
        var window = Self.window()
        var checker = PartsChecker()
        try Self.run(&encoder, &window, parts: 4 * 5 + 2, &checker)
        let before = try #require(window.snapshot(now: encoder.clock).media["v0"])
        let playlist = bad(encoder)
        do {
            _ = try window.playlistReceived(path: "v0.m3u8", playlist, now: encoder.clock)
            Issue.record("accepted: \(containing)")
        } catch {
            #expect(error.kind == .unprocessable && error.reason == .malformedPlaylist)
            #expect(error.message.contains(containing), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
        let after = try #require(window.snapshot(now: encoder.clock).media["v0"])
        #expect(after.model == before.model && after.version == before.version && after.tag == before.tag)
        // The encoder's next good playlist is followed as if nothing happened.
        _ = try encoder.step(&window)
        checker.check(&window, now: encoder.clock, "after")
        #expect(checker.problems.isEmpty, "\(checker.problems.prefix(5))")
        #expect(checker.versions.last! > before.version)
    }

    @Test("(a) parts of a complete segment that do not add up to its EXTINF are refused")
    func partsDoNotAddUp() throws {
        try Self.expectRefused("add up to") { encoder in
            var playlist = encoder.playlist()
            playlist.segments[playlist.segments.count - 1].duration = .milliseconds(2_002)
            return playlist
        }
    }

    @Test("(a) parts that contradict an earlier playlist's parts of the same segment are refused")
    func contradiction() throws {
        try Self.expectRefused("contradict") { encoder in
            var playlist = encoder.playlist()
            playlist.trailingTags.parts[0].attributes["URI"] = .quoted("other-\(encoder.open).part0.ts")
            return playlist
        }
        try Self.expectRefused("contradict") { encoder in
            // A complete segment whose parts were cut elsewhere (same total, each part valid).
            var playlist = encoder.playlist()
            let last = playlist.segments.count - 1
            let n = playlist.mediaSequenceNumber(at: last)
            playlist.segments[last].tags.parts[3].attributes["DURATION"] = .decimal(.milliseconds(450))
            playlist.segments[last].tags.parts.append(
                PartialSegment(uri: "seg-\(n).part4.ts", duration: .milliseconds(50)))
            return playlist
        }
    }

    @Test("(b) a part longer than PART-TARGET is refused")
    func partTooLong() throws {
        try Self.expectRefused("longer than PART-TARGET") { encoder in
            var playlist = encoder.playlist()
            playlist.trailingTags.parts.append(
                PartialSegment(uri: encoder.partURI(encoder.open, 2), duration: .milliseconds(501)))
            return playlist
        }
    }

    @Test("(c) a hinted part that never arrives is given up after 3×PART-TARGET: GAP=YES, hint dropped, reported once")
    func hintNeverCompletes() throws {
        var encoder = LowLatencyEncoder()
        var window = Self.window()
        var checker = PartsChecker()
        try Self.run(&encoder, &window, parts: 4 * 4 + 1, &checker)
        // Part 1 is hinted; the encoder lists it and moves on, but its upload never arrives.
        let missing = encoder.partURI(encoder.open, 1)
        _ = try encoder.step(&window, upload: false)
        checker.check(&window, now: encoder.clock, "missing")
        var reports: [PushReport] = []
        var playlist = try #require(window.mediaPlaylist(rendition: "v0"))
        let hinted = try #require(playlist.preloadHints.first?.uri)
        #expect(playlist.trailingTags.parts.count == 1)
        // Within 3×PART-TARGET (1.5 s) it is still awaited and hinted; the part after it waits.
        reports += try encoder.step(&window).flatMap(\.reports)
        checker.check(&window, now: encoder.clock, "waiting")
        reports += window.expire(now: encoder.clock + 900_000).reports
        playlist = try #require(window.mediaPlaylist(rendition: "v0"))
        #expect(playlist.trailingTags.parts.count == 1 && playlist.preloadHints.first?.uri == hinted)
        #expect(!reports.contains { $0.kind == .missingPart })
        // The clock reaches 1.5 s after the encoder listed it: GAP=YES, the part after it listed.
        encoder.clock += 1_000_000
        reports += window.expire(now: encoder.clock).reports
        checker.check(&window, now: encoder.clock, "given up")
        playlist = try #require(window.mediaPlaylist(rendition: "v0"))
        #expect(playlist.trailingTags.parts.count == 3)
        #expect(playlist.trailingTags.parts.filter(\.isGap).map(\.uri) == [hinted])
        #expect(playlist.preloadHints.count == 1 && playlist.preloadHints.first?.uri != hinted)
        reports += window.expire(now: encoder.clock + 100_000).reports
        try Self.run(&encoder, &window, parts: 8, &checker)
        let missingReports = reports.filter { $0.kind == .missingPart }
        #expect(missingReports.count == 1 && missingReports.first?.message.contains(missing) == true)
        #expect(checker.problems.isEmpty, "\(checker.problems.prefix(5))")
    }

    @Test("after an encoder restart that reuses names, a part is never listed with the previous run's file")
    func restartReusingNames() throws {
        var encoder = LowLatencyEncoder()
        var window = Self.window()
        var checker = PartsChecker()
        try Self.run(&encoder, &window, parts: 4 * 6, &checker)
        encoder.restart()
        try Self.run(&encoder, &window, parts: 3, &checker)
        // The last part of the new run's first segment is listed before its upload arrives: the
        // previous run's file of that name must not stand in for it.
        _ = try encoder.step(&window, upload: false)
        checker.check(&window, now: encoder.clock, "restarted")
        let snapshot = window.snapshot(now: encoder.clock)
        let playlist = try #require(snapshot.media["v0"]).model
        let parts = try #require(playlist.segments.last?.tags.parts)
        #expect(parts.count == 4 && parts[3].isGap && !parts[2].isGap)
        let files = snapshot.segments["v0"] ?? [:]
        for part in parts where !part.isGap {
            #expect(files[PushChecker.name(part.uri)]?.path.hasPrefix("/store/r1/") == true, "\(part.uri)")
        }
        try Self.run(&encoder, &window, parts: 4 * 4, &checker)
        #expect(checker.problems.isEmpty, "\(checker.problems.prefix(5))")
    }

    @Test("with two low-latency renditions, each playlist reports the other's last segment and part (F6)")
    func renditionReports() throws {
        var video = LowLatencyEncoder()
        var audio = LowLatencyEncoder()
        audio.rendition = "a0"
        var window = Self.window()
        var checkers = [PartsChecker(), PartsChecker(rendition: "a0")]
        var reported = 0
        for step in 0..<(4 * 8 + 1) {
            _ = try video.step(&window)
            checkers[0].check(&window, now: video.clock, "v0 \(step)")
            _ = try audio.step(&window)
            checkers[1].check(&window, now: audio.clock, "a0 \(step)")
            let snapshot = window.snapshot(now: audio.clock)
            guard let v0 = snapshot.media["v0"]?.model, let a0 = snapshot.media["a0"]?.model else { continue }
            for (playlist, other, name) in [(v0, a0, "a0"), (a0, v0, "v0")] {
                let edge = try #require(LowLatencyPolicy.reportedEdge(of: other))
                let report = try #require(playlist.renditionReports.first)
                #expect(playlist.renditionReports.count == 1 && report.uri == "\(name).m3u8")
                #expect(report.lastMediaSequence == edge.lastMSN && report.lastPart == edge.lastPart.map(UInt64.init))
                reported += 1
            }
        }
        #expect(reported > 30)
        #expect(checkers[0].problems.isEmpty && checkers[1].problems.isEmpty, "\(checkers.map(\.problems))")
    }

    @Test("a window saved and restored mid-stream (Headwater restarted) goes on publishing valid parts")
    func restored() throws {
        var encoder = LowLatencyEncoder()
        var window = Self.window()
        var checker = PartsChecker()
        try Self.run(&encoder, &window, parts: 4 * 6 + 2, &checker)
        let record = window.record(directory: "/store", savedAt: encoder.clock)
        encoder.clock += 1_000_000
        var restored = try LiveWindow.restored(
            from: record,
            configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 8, runTag: "t2"),
            directory: "/store", now: encoder.clock, isIntact: { _ in true }
        ).window
        // A client that polled the old run goes on polling the new one (ETags differ: a new run tag).
        var after = PartsChecker()
        after.previous = checker.previous
        try Self.run(&encoder, &restored, parts: 4 * 5, &after)
        #expect(checker.problems.isEmpty && after.problems.isEmpty, "\(after.problems.prefix(5))")
        let playlist = try #require(restored.mediaPlaylist(rendition: "v0"))
        #expect(playlist.partInformation != nil && playlist.segments.last?.tags.parts.count == 4)
        #expect(after.hintsFulfilled > 10)
    }

    @Test("the encoder's SERVER-CONTROL is checked against F1 and each deviation reported once, not passed through")
    func serverControlDeviations() throws {
        var encoder = LowLatencyEncoder()
        encoder.serverControl = ServerControl(attributes: [
            Attribute("PART-HOLD-BACK", .decimal(.milliseconds(1000))), Attribute("CAN-SKIP-UNTIL", .decimal(.seconds(4))),
        ])
        var window = Self.window()
        var reports: [PushReport] = []
        for _ in 0..<(4 * 6) { reports += try encoder.step(&window).flatMap(\.reports) }
        let deviations = reports.filter { $0.kind == .serverControlDeviation }.map(\.message)
        #expect(deviations.count == 3, "\(deviations)")
        #expect(deviations.contains { $0.contains("CAN-BLOCK-RELOAD") })
        #expect(deviations.contains { $0.contains("PART-HOLD-BACK") })
        #expect(deviations.contains { $0.contains("CAN-SKIP-UNTIL") })
        let control = try #require(window.mediaPlaylist(rendition: "v0")?.serverControl)
        #expect(control.canBlockReload && control.partHoldBack == .milliseconds(1500) && control.canSkipUntil == .seconds(12))
    }

    @Test("an encoder without parts is published as before: no PART-INF, SERVER-CONTROL or hint, versioned by MSN")
    func withoutParts() throws {
        var encoder = FakeEncoder()
        var window = Self.window()
        for _ in 0..<6 {
            let segment = encoder.produce()
            try encoder.push(segment, into: &window)
        }
        let published = try #require(window.snapshot(now: encoder.clock).media["x_0"])
        let playlist = published.model
        #expect(playlist.partInformation == nil && playlist.serverControl == nil && playlist.preloadHints.isEmpty)
        #expect(playlist.segments.allSatisfy { $0.tags.parts.isEmpty } && playlist.trailingTags.parts.isEmpty)
        #expect(published.version == playlist.mediaSequenceNumber(at: playlist.segments.count - 1))
        #expect(published.tag == "live-x_0-t1")
        var rendered = playlist
        rendered.version = max(rendered.version ?? 0, 3)
        #expect(PlaylistValidator.validate(rendered).isEmpty)
    }
}
