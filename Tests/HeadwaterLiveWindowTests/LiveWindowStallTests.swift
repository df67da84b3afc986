import HeadwaterHLS
import HeadwaterLiveWindow
import Testing

/// Target-duration refresh, enforced: a stalled source never leaves a playlist unchanged for
/// longer than 1½ target durations, and the source comes back after a discontinuity with
/// numbering that only moves forward (HLS-RULES C1–C6, C14).
@Suite("Push window: stalls")
struct PushWindowStallTests {
    static let slate = SlateLibrary(renditions: ["x_0", "x_1"].map { name in
        SlateLibrary.Rendition(
            name: name,
            segments: [
                .init(
                    file: SegmentFile(
                        path: "/public/slate-\(name)/slate/seg0.ts", length: 10_000, entityTag: "\"slate-\(name)\"",
                        contentType: "video/mp2t", lastModified: 0),
                    duration: .seconds(2))
            ],
            resolution: name == "x_0" ? "416x234" : "640x360")
    })

    /// Drives an encoder and the window's clock in 100 ms ticks, checking every published version.
    struct Run {
        var window: LiveWindow
        var encoder = FakeEncoder(renditions: ["x_0", "x_1"])
        var checker = PushChecker()
        var reports: [PushReport] = []
        var lastChange: [String: (playlist: MediaPlaylist, at: Int64)] = [:]
        var longestUnchanged: Int64 = 0
        var deleted: [String] = []

        init(fill: StallPolicy.Fill, slate: SlateLibrary? = PushWindowStallTests.slate) {
            window = LiveWindow(
                configuration: .init(
                    channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "t1",
                    stall: StallPolicy(fill: fill, slate: slate)))
        }

        /// The encoder produces (and pushes) one 2 s segment over 2 s of ticks.
        mutating func produce() throws {
            for _ in 0..<20 { tick() }
            let segment = encoder.produce(.seconds(2))
            encoder.clock -= 2_000_000  // produce() advanced it; the ticks already did
            for rendition in encoder.renditions {
                let outcome = window.segmentStored(
                    path: FakeEncoder.uri(rendition, segment.sequence), file: encoder.file(rendition, segment),
                    completedAt: encoder.clock)
                reports += outcome.reports
                checker.check(&window, after: outcome, now: encoder.clock, "upload \(segment.sequence)")
            }
            for rendition in encoder.renditions {
                let outcome = try window.playlistReceived(
                    path: "\(rendition).m3u8", encoder.playlist(rendition), now: encoder.clock)
                reports += outcome.reports
                checker.check(&window, after: outcome, now: encoder.clock, "playlist \(segment.sequence)")
            }
            observe("segment \(segment.sequence)")
        }

        /// 100 ms of wall clock with nothing from the source.
        mutating func tick() {
            encoder.clock += 100_000
            let outcome = window.expire(now: encoder.clock)
            reports += outcome.reports
            deleted += outcome.filesToDelete
            checker.check(&window, after: outcome, now: encoder.clock, "tick")
            observe("tick")
        }

        mutating func observe(_ label: String) {
            for name in window.liveRenditions {
                let playlist = window.mediaPlaylist(rendition: name)!
                if let last = lastChange[name], last.playlist == playlist {
                    longestUnchanged = max(longestUnchanged, encoder.clock - last.at)
                } else {
                    lastChange[name] = (playlist, encoder.clock)
                }
            }
        }

        var state: ChannelState {
            mutating get { window.snapshot(now: encoder.clock).state }
        }

        /// Where the served segment `uri` of `rendition` is stored.
        mutating func path(_ rendition: String, _ uri: String) -> String? {
            window.snapshot(now: encoder.clock).segments[rendition]?[PushChecker.name(uri)]?.path
        }
    }

    @Test("slate: the playlist advances within 1½ TD through a 3×TD stall, degraded while it lasts, and resumes after a discontinuity")
    func slateFill() throws {
        var run = Run(fill: .slate)
        for _ in 0..<8 { try run.produce() }
        let before = try #require(run.window.mediaPlaylist(rendition: "x_0"))
        run.longestUnchanged = 0
        for _ in 0..<60 { run.tick() }  // 6 s: three target durations
        #expect(run.longestUnchanged <= 3_000_000, "unchanged for \(run.longestUnchanged) µs")
        if case .degraded(let reason) = run.state {
            #expect(reason.contains("slate"))
        } else {
            Issue.record("not degraded during the stall: \(run.state)")
        }
        let stalled = try #require(run.window.mediaPlaylist(rendition: "x_0"))
        // Fillers at 2.9 s and 4.9 s after the last segment (1½ TD less one tick, then every 2 s).
        let slate = stalled.segments.suffix(2)
        #expect(slate.allSatisfy { $0.discontinuity }, "each slate segment restarts timestamps")
        let snapshot = run.window.snapshot(now: run.encoder.clock)
        let lastName = PushChecker.name(stalled.segments.last!.uri)
        #expect(snapshot.segments["x_0"]?[lastName]?.path == "/public/slate-x_0/slate/seg0.ts")
        #expect(snapshot.segments["x_1"]?[lastName]?.path == "/public/slate-x_1/slate/seg0.ts", "matched by rendition")
        #expect(run.reports.filter { $0.kind == .stall }.count == 1, "reported once: \(run.reports)")
        #expect(snapshot.status.stalls.count == 1 && snapshot.status.stalls[0].endedAt == nil)
        #expect(snapshot.status.renditions.first?.segments.suffix(2).allSatisfy { $0.kind == .slate } == true)

        for _ in 0..<2 { try run.produce() }  // the source is back, numbering continuing
        #expect(run.checker.problems.isEmpty, "\(run.checker.problems)")
        #expect(run.longestUnchanged <= 3_000_000, "unchanged for \(run.longestUnchanged) µs")
        #expect(run.state == .live)
        #expect(run.reports.contains { $0.kind == .stallEnded })
        let after = try #require(run.window.mediaPlaylist(rendition: "x_0"))
        let paths = after.segments.map { run.path("x_0", $0.uri) ?? "" }
        let lastSlate = try #require(paths.lastIndex { $0.hasPrefix("/public/") })
        let resumed = after.segments[lastSlate + 1]
        #expect(resumed.discontinuity && resumed.programDateTime != nil, "back to the source after a discontinuity")
        #expect(after.mediaSequenceNumber(at: lastSlate + 1) == after.mediaSequenceNumber(at: lastSlate) + 1)
        #expect(before.effectiveMediaSequence <= after.effectiveMediaSequence)
        for _ in 0..<6 { try run.produce() }  // the slate slides out; its files stay
        #expect(run.checker.problems.isEmpty, "\(run.checker.problems)")
        #expect(!run.deleted.contains { $0.hasPrefix("/public/") }, "slate files are never deleted")
        let status = run.window.snapshot(now: run.encoder.clock).status
        #expect(status.stalls.first?.endedAt != nil && status.stalls.first?.fill == "slate")
    }

    @Test("gap: fillers are EXT-X-GAP of one target duration; the source returns after a discontinuity")
    func gapFill() throws {
        var run = Run(fill: .gap)
        for _ in 0..<8 { try run.produce() }
        run.longestUnchanged = 0
        for _ in 0..<60 { run.tick() }
        #expect(run.longestUnchanged <= 3_000_000, "unchanged for \(run.longestUnchanged) µs")
        let stalled = try #require(run.window.mediaPlaylist(rendition: "x_1"))
        #expect(stalled.segments.suffix(2).allSatisfy { $0.tags.gap && !$0.discontinuity && $0.duration == .seconds(2) })
        for _ in 0..<2 { try run.produce() }
        #expect(run.checker.problems.isEmpty, "\(run.checker.problems)")
        let after = try #require(run.window.mediaPlaylist(rendition: "x_1"))
        let firstBack = try #require(after.segments.lastIndex { $0.tags.gap }.map { $0 + 1 })
        #expect(after.segments[firstBack].discontinuity)
    }

    @Test("an encoder that restarts during the stall: numbering continues above the fillers, never backwards")
    func restartDuringStall() throws {
        var run = Run(fill: .slate)
        for _ in 0..<8 { try run.produce() }
        for _ in 0..<50 { run.tick() }
        let stalledLast = try #require(run.window.mediaPlaylist(rendition: "x_0")).segments.count
        _ = stalledLast
        run.encoder.restart()
        run.encoder.clock -= 3_000_000
        for _ in 0..<6 { try run.produce() }
        #expect(run.checker.problems.isEmpty, "\(run.checker.problems)")
        #expect(run.reports.contains { $0.kind == .encoderRestart })
        #expect(run.longestUnchanged <= 3_000_000)
        #expect(run.state == .live)
    }

    @Test("one rendition 3 TD behind while the other advances: gaps keep it aligned, no slate, no discontinuity mismatch")
    func oneRenditionBehind() throws {
        var run = Run(fill: .slate)
        for _ in 0..<8 { try run.produce() }
        run.longestUnchanged = 0
        for _ in 0..<4 {
            for _ in 0..<20 { run.tick() }
            let segment = run.encoder.produce(.seconds(2))
            run.encoder.clock -= 2_000_000
            // Only x_0 is uploaded and listed.
            _ = run.window.segmentStored(
                path: FakeEncoder.uri("x_0", segment.sequence), file: run.encoder.file("x_0", segment),
                completedAt: run.encoder.clock)
            _ = try run.window.playlistReceived(path: "x_0.m3u8", run.encoder.playlist("x_0"), now: run.encoder.clock)
            run.observe("x_0 only")
            run.checker.check(&run.window, after: .init(), now: run.encoder.clock, "x_0 only")
        }
        // Behind by 3 TD before gaps fill it (a shorter lag is jitter); then it advances with x_0.
        #expect(run.longestUnchanged <= 6_000_000, "unchanged for \(run.longestUnchanged) µs")
        let behind = try #require(run.window.mediaPlaylist(rendition: "x_1"))
        #expect(behind.segments.suffix(2).allSatisfy { $0.tags.gap })
        if case .degraded(let reason) = run.state { #expect(reason.contains("x_1")) } else { Issue.record("not degraded") }
        for _ in 0..<4 { try run.produce() }
        #expect(run.checker.problems.isEmpty, "\(run.checker.problems)")
        #expect(run.state == .live)
    }

    @Test("none: no fillers, but the channel is degraded and the stall reported")
    func noFill() throws {
        var run = Run(fill: .none)
        for _ in 0..<8 { try run.produce() }
        let before = run.window.mediaPlaylist(rendition: "x_0")
        for _ in 0..<60 { run.tick() }
        #expect(run.window.mediaPlaylist(rendition: "x_0") == before)
        guard case .degraded = run.state else {
            Issue.record("not degraded")
            return
        }
        #expect(run.reports.filter { $0.kind == .stall }.count == 1)
    }
}
