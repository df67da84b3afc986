import ArgumentParser
import HeadwaterHLS
import HeadwaterRuntime
import HeadwaterStitching
import HeadwaterTracking

/// The cost of one stitched playlist, in process: `Stitcher.render`, then what the origin adds per
/// request (serialize, gzip level 1; and the token check and due-beacon scan), for a live edge inside
/// a break and between breaks, after 1 hour and after 24 hours of channel history with every break
/// kept in the log. The render cost must not grow with history: the 24 h / 1 h ratio should be ≈ 1.
struct StitchBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stitch",
        abstract: "µs and allocations per stitched playlist at 1 h and 24 h of history, and by window length."
    )

    @Option(help: "Minimum measuring time per case, in milliseconds.") var milliseconds = 500
    @Option(help: "Distinct sessions the renders cycle through.") var sessions = 256
    @Option(help: "Run exactly this many whole requests (24 h, at a break) and print nothing (for callgrind or perf).")
    var iterations: Int?

    /// One measured case: a content window, the log published with it, the sessions and their tokens.
    struct Case {
        var name: String
        var historyHours: Int
        var content: MediaPlaylist
        var log: BreakLog
        var viewers: [ViewerSession]
        var tokens: [String]
    }

    /// The measured cases and what rendering them needs.
    struct Setup {
        var signer: SessionSigner
        var ruleSets: [UInt64: AdRuleSet]
        var cases: [Case]
        /// How long building the cases took.
        var duration: Duration

        func item(_ name: String, hours: Int) -> Case {
            cases.first { $0.name == name && $0.historyHours == hours }!
        }
    }

    /// One row of the window-length table.
    struct WindowRow {
        var segments: Int
        var breaksInWindow: Int
        var render: Measurement
        var compressed: Measurement
        var bytes: Int
        var gzip: Int
    }

    func run() throws {
        guard sessions > 0 else { throw ValidationError("--sessions must be at least 1") }
        let setup = try Self.setUp(sessions: sessions)
        if let iterations {
            let atBreak = setup.item("at a break", hours: 24)
            var pipeline = Pipeline(signer: setup.signer, ruleSets: setup.ruleSets, atBreak)
            for _ in 0..<iterations { blackHole(try pipeline.request(atBreak)) }
            return
        }
        try runMeasurements(setup)
    }

    /// The cases: live edges at a break, joined in it and between breaks, after 1 h and 24 h.
    static func setUp(sessions: Int) throws -> Setup {
        let clock = ContinuousClock()
        let setupStart = clock.now
        let ruleSet = StitchFixture.ruleSet(version: 1)
        let issues = ruleSet.validate(renditions: [StitchFixture.rendition], targetDuration: StitchFixture.targetDuration)
        guard issues.isEmpty else { throw ValidationError("benchmark rule set is invalid: \(issues)") }
        let ruleSets = [ruleSet.version: ruleSet]

        // Live edges: 24 s into the break that starts a minute before the hour (the window shows 3
        // content segments, the break's 10 slots, the return and one more), and 58 s into that
        // minute (content only). That break is the 10th of its 10-minute cap period, so a TV
        // viewer's decision replays all 10 breaks of the period: the most a decision costs here.
        // Also: viewers who joined 10 s into that break, who see the channel's content in its slots
        // (the break's date range and discontinuities, no pod) until the next break.
        let hours = [1, 24]
        var edges: [(name: String, hours: Int, last: UInt64, joined: Int)] = []
        for hour in hours {
            let minute = hour * 3600 - 60
            edges.append(("at a break", hour, StitchFixture.mediaSequence(atSecond: minute + 22), 0))
            edges.append(("joined in it", hour, StitchFixture.mediaSequence(atSecond: minute + 22), minute + 10))
            edges.append(("between breaks", hour, StitchFixture.mediaSequence(atSecond: minute + 56), 0))
        }
        let logs = try StitchFixture.breakLogs(at: Set(edges.map(\.last)).sorted(), ruleSetVersion: ruleSet.version)
        let signer = try SessionSigner(secret: Array("headwater-bench-session-key".utf8))
        let cases = edges.map { edge in
            let start = StitchFixture.channelStart.adding(.seconds(Int64(edge.joined)))
            let viewers = StitchFixture.sessions(count: sessions, device: "tv", start: start)
            let tokens = viewers.map {
                signer.sign(
                    SessionToken(channel: "demo", id: $0.id, start: $0.startDate.millisecondsSinceEpoch, targeting: $0.targeting))
            }
            return Case(
                name: edge.name, historyHours: edge.hours, content: StitchFixture.content(endingAt: edge.last, count: 15),
                log: logs[edge.last]!, viewers: viewers, tokens: tokens)
        }
        return Setup(signer: signer, ruleSets: ruleSets, cases: cases, duration: clock.now - setupStart)
    }

    /// Sanity: a TV viewer who joined with the channel gets a pod in the break; no ads otherwise.
    static func check(_ setup: Setup) throws {
        for item in setup.cases {
            var check = Pipeline(signer: setup.signer, ruleSets: setup.ruleSets, item)
            let text = String(decoding: try check.serialized(item), as: UTF8.self)
            let hasAds = text.contains("/ads/")
            guard hasAds == (item.name == "at a break") else {
                throw ValidationError("\(item.name), \(item.historyHours) h: ads \(hasAds ? "present" : "missing") in the stitched playlist")
            }
        }
    }

    /// Checks, then the tables.
    private func runMeasurements(_ setup: Setup) throws {
        let (signer, ruleSets, cases) = (setup.signer, setup.ruleSets, setup.cases)
        try Self.check(setup)

        print("headwater-bench stitch — one stitched media playlist per request, in process, median of 5 rounds")
        print("content: 15 × 2 s segments with PROGRAM-DATE-TIME, rendition v1 (1 of the demo's 4)")
        print("breaks:  a 20 s break every minute (BreakTracker + schedule), every break kept in the log;")
        print("         live edge in the minute before the 1st / 24th hour ends (the 10th break of a cap period)")
        print("ads:     the demo's rule set (4 creatives with tracking URLs, tv-long capped 1 per 10 min)")
        print(
            "viewers: \(sessions) sessions, device=tv, started with the channel (\"joined in it\": 10 s into the break)")
        print("setup:   \(format(Self.seconds(setup.duration), decimals: 1)) s (a day of 2 s segments through the BreakTracker)")
        print("ops:     render = Stitcher.render; +ser+gzip = then PlaylistSerializer and gzip level 1;")
        print("         request = token check + render + due beacons + serialize + gzip 1 (the origin's work)")
        print("")
        print(
            pad("live edge", 16) + pad("history", 9) + leftPad("breaks", 7) + "  " + pad("op", 11) + leftPad("µs/req", 9)
                + leftPad("allocs", 8) + leftPad("bytes", 8) + leftPad("gzip", 7))
        var results: [String: [String: Measurement]] = [:]
        for item in cases {
            var pipeline = Pipeline(signer: signer, ruleSets: ruleSets, item)
            let bytes = try pipeline.serialized(item)
            let gzip = Gzip.compress(bytes, level: 1)?.count ?? 0
            let measured: [(String, Measurement)] = [
                ("render", measure { blackHole(try pipeline.render(item)) }),
                ("+ser+gzip", measure { blackHole(try pipeline.compressed(item)) }),
                ("request", measure { blackHole(try pipeline.request(item)) }),
            ]
            for (index, (op, m)) in measured.enumerated() {
                results["\(item.name)/\(item.historyHours)", default: [:]][op] = m
                let first = index == 0
                print(
                    pad(first ? item.name : "", 16) + pad(first ? "\(item.historyHours) h" : "", 9)
                        + leftPad(first ? String(item.log.breaks.count) : "", 7) + "  " + pad(op, 11)
                        + leftPad(format(m.nanosecondsPerIteration / 1000, decimals: 1), 9)
                        + leftPad(format(m.allocationsPerIteration, decimals: 0), 8)
                        + leftPad(first ? String(bytes.count) : "", 8) + leftPad(first ? String(gzip) : "", 7))
            }
        }
        print("")
        // The ratio from 1 h and 24 h measured in alternation, so that a change in the machine's load
        // during the run weighs on both sides alike.
        print("24 h / 1 h, measured alternately (median of \(pairedRounds) pairs; ≈ 1.0: no growth with the channel's or")
        print("the session's age; allocations per request are equal when the work is):")
        for name in ["at a break", "joined in it", "between breaks"] {
            let hour = cases.first { $0.name == name && $0.historyHours == 1 }!
            let day = cases.first { $0.name == name && $0.historyHours == 24 }!
            var line = "  " + pad(name, 16)
            for op in ["render", "request"] {
                var hourPipeline = Pipeline(signer: signer, ruleSets: ruleSets, hour)
                var dayPipeline = Pipeline(signer: signer, ruleSets: ruleSets, day)
                let ratio = pairedRatio(
                    { op == "render" ? blackHole(try hourPipeline.render(hour)) : blackHole(try hourPipeline.request(hour)) },
                    { op == "render" ? blackHole(try dayPipeline.render(day)) : blackHole(try dayPipeline.request(day)) })
                let allocations = [hour, day].map { results["\($0.name)/\($0.historyHours)"]![op]!.allocationsPerIteration }
                line += pad(op, 9) + pad(format(ratio, decimals: 2) + "×", 7)
                    + pad("(allocs " + allocations.map { format($0, decimals: 0) }.joined(separator: " → ") + ")", 24)
            }
            print(line)
        }

        // Where a request's time goes, stage by stage, each on its own input.
        print("")
        print("stages of one request (24 h of history; render cycles through the sessions, the others use session 1's):")
        print(pad("stage", 44) + leftPad("at a break", 12) + leftPad("allocs", 8) + leftPad("between", 10) + leftPad("allocs", 8))
        let day = cases.filter { $0.historyHours == 24 && $0.name != "joined in it" }
        var stages: [(String, [Measurement])] = []
        func stage(_ name: String, _ body: (Case) throws -> (() throws -> Void)) rethrows {
            stages.append((name, try day.map { item in measure(try body(item)) }))
        }
        let smallGzip = ReusedGzip(level: 1, windowBits: 12, memLevel: 5)!
        let reusedGzip = ReusedGzip(level: 1)!
        stage("token check (HMAC-SHA256, decode)") { item in
            let now = item.content.segments.last!.programDateTime!.millisecondsSinceEpoch
            return { blackHole(try signer.verify(item.tokens[0], channel: "demo", now: now, maxAge: .seconds(48 * 3600))) }
        }
        stage("Stitcher.render") { item in
            var pipeline = Pipeline(signer: signer, ruleSets: ruleSets, item)
            return { blackHole(try pipeline.render(item)) }
        }
        try stage("AdTracking.dueBeacons") { item in
            let stitched = try Pipeline(signer: signer, ruleSets: ruleSets, item)
                .render(item, session: item.viewers[0])
            return { blackHole(AdTracking.dueBeacons(in: stitched)) }
        }
        try stage("PlaylistSerializer.serialize") { item in
            let stitched = try Pipeline(signer: signer, ruleSets: ruleSets, item)
                .render(item, session: item.viewers[0])
            return { blackHole(PlaylistSerializer.serialize(stitched)) }
        }
        try stage("Gzip.compress level 1 (new zlib state)") { item in
            var pipeline = Pipeline(signer: signer, ruleSets: ruleSets, item)
            let bytes = try pipeline.serialized(item)
            return { blackHole(Gzip.compress(bytes, level: 1)) }
        }
        try stage("  proposal: state reused (deflateReset)") { item in
            var pipeline = Pipeline(signer: signer, ruleSets: ruleSets, item)
            let bytes = try pipeline.serialized(item)
            return { blackHole(reusedGzip.compress(bytes)) }
        }
        try stage("  proposal: reused, windowBits 12, memLevel 5") { item in
            var pipeline = Pipeline(signer: signer, ruleSets: ruleSets, item)
            let bytes = try pipeline.serialized(item)
            return { blackHole(smallGzip.compress(bytes)) }
        }
        for (name, measured) in stages {
            var line = pad(name, 44)
            for (index, m) in measured.enumerated() {
                line += leftPad(format(m.nanosecondsPerIteration / 1000, decimals: 1), index == 0 ? 12 : 10)
                line += leftPad(format(m.allocationsPerIteration, decimals: 0), 8)
            }
            print(line)
        }
        for item in day {
            var pipeline = Pipeline(signer: signer, ruleSets: ruleSets, item)
            let bytes = try pipeline.serialized(item)
            let sizes = [Gzip.compress(bytes, level: 1), reusedGzip.compress(bytes), smallGzip.compress(bytes)].map { $0?.count ?? 0 }
            guard smallGzip.compress(bytes).flatMap({ Gzip.decompress($0) }) == bytes else {
                throw ValidationError("the small-window gzip does not round-trip")
            }
            print("  gzip bytes \(item.name): \(sizes.map(String.init).joined(separator: " / ")) (new / reused / small window)")
        }
        print("  (In one thread the allocator hands zlib the same warm memory on every call; in the server")
        print("  it does not, and a new state costs page faults: see Tests/tools/ab-ssai.sh.)")

        // Window length: the same log (24 h), longer content windows ending at the same live edge.
        print("")
        print("window length (24 h of history, same live edge, at a break):")
        print(
            pad("segments", 10) + leftPad("breaks", 7) + leftPad("render µs", 11) + leftPad("µs/seg", 8)
                + leftPad("allocs", 8) + leftPad("+ser+gzip µs", 14) + leftPad("bytes", 9) + leftPad("gzip", 8))
        for row in try Self.windowLengths(setup, counts: [10, 100, 1_200], milliseconds: milliseconds) {
            print(
                pad(String(row.segments), 10) + leftPad(String(row.breaksInWindow), 7)
                    + leftPad(format(row.render.nanosecondsPerIteration / 1000, decimals: 1), 11)
                    + leftPad(format(row.render.nanosecondsPerIteration / 1000 / Double(row.segments), decimals: 2), 8)
                    + leftPad(format(row.render.allocationsPerIteration, decimals: 0), 8)
                    + leftPad(format(row.compressed.nanosecondsPerIteration / 1000, decimals: 1), 14)
                    + leftPad(String(row.bytes), 9) + leftPad(String(row.gzip), 8))
        }
    }

    /// Window length: the same log (24 h), content windows of `counts` segments ending at the same
    /// live edge (at a break).
    static func windowLengths(_ setup: Setup, counts: [Int], milliseconds: Int) throws -> [WindowRow] {
        let atBreak = setup.item("at a break", hours: 24)
        let last = atBreak.content.mediaSequenceNumber(at: atBreak.content.segments.count - 1)
        return try counts.map { count in
            var item = atBreak
            item.content = StitchFixture.content(endingAt: last, count: count)
            var pipeline = Pipeline(signer: setup.signer, ruleSets: setup.ruleSets, item)
            let bytes = try pipeline.serialized(item)
            let gzip = Gzip.compress(bytes, level: 1)?.count ?? 0
            let first = item.content.effectiveMediaSequence
            let inWindow = item.log.breaks.filter { ($0.end?.mediaSequence ?? .max) >= first }.count
            let render = measure(milliseconds: milliseconds) { blackHole(try pipeline.render(item)) }
            let compressed = measure(milliseconds: milliseconds) { blackHole(try pipeline.compressed(item)) }
            return WindowRow(
                segments: count, breaksInWindow: inWindow, render: render, compressed: compressed, bytes: bytes.count, gzip: gzip)
        }
    }

    /// `Stitcher.render` µs at `name`'s live edge after 1 h and after 24 h of history, and the
    /// 24 h / 1 h ratio measured alternately.
    static func historyRender(_ setup: Setup, name: String, milliseconds: Int, pairs: Int) -> (hour: Measurement, day: Measurement, ratio: Double) {
        let hour = setup.item(name, hours: 1)
        let day = setup.item(name, hours: 24)
        var hourPipeline = Pipeline(signer: setup.signer, ruleSets: setup.ruleSets, hour)
        var dayPipeline = Pipeline(signer: setup.signer, ruleSets: setup.ruleSets, day)
        let hourMeasurement = measure(milliseconds: milliseconds) { blackHole(try hourPipeline.render(hour)) }
        let dayMeasurement = measure(milliseconds: milliseconds) { blackHole(try dayPipeline.render(day)) }
        let ratio = pairedRatio(milliseconds: milliseconds, pairs: pairs,
            { blackHole(try hourPipeline.render(hour)) }, { blackHole(try dayPipeline.render(day)) })
        return (hourMeasurement, dayMeasurement, ratio)
    }

    private var pairedRounds: Int { 9 }

    private func pairedRatio(_ first: () throws -> Void, _ second: () throws -> Void) -> Double {
        Self.pairedRatio(milliseconds: milliseconds, pairs: pairedRounds, first, second)
    }

    /// The median over `pairs` of (time of `second` ÷ time of `first`), each pair measured back to
    /// back.
    static func pairedRatio(milliseconds: Int, pairs: Int, _ first: () throws -> Void, _ second: () throws -> Void) -> Double {
        var ratios: [Double] = []
        for _ in 0..<pairs {
            let a = Measurement.run(minimumDuration: .milliseconds(max(30, milliseconds / 4)), rounds: 3) {
                do { try first() } catch { fatalError("stitching failed while measuring: \(error)") }
            }
            let b = Measurement.run(minimumDuration: .milliseconds(max(30, milliseconds / 4)), rounds: 3) {
                do { try second() } catch { fatalError("stitching failed while measuring: \(error)") }
            }
            ratios.append(b.nanosecondsPerIteration / a.nanosecondsPerIteration)
        }
        return ratios.sorted()[ratios.count / 2]
    }

    private func measure(_ body: () throws -> Void) -> Measurement {
        Self.measure(milliseconds: milliseconds, body)
    }

    static func measure(milliseconds: Int, _ body: () throws -> Void) -> Measurement {
        Measurement.run(minimumDuration: .milliseconds(milliseconds)) {
            do { try body() } catch { fatalError("stitching failed while measuring: \(error)") }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// What the origin does for one stitched playlist request, step by step, cycling over the sessions
/// so that every request is a different viewer (nothing is cached between requests).
struct Pipeline {
    let signer: SessionSigner
    let ruleSets: [UInt64: AdRuleSet]
    let viewers: [ViewerSession]
    let tokens: [String]
    private var next = 0

    init(signer: SessionSigner, ruleSets: [UInt64: AdRuleSet], _ item: StitchBenchmark.Case) {
        self.signer = signer
        self.ruleSets = ruleSets
        self.viewers = item.viewers
        self.tokens = item.tokens
    }

    private mutating func nextIndex() -> Int {
        defer { next = next + 1 == viewers.count ? 0 : next + 1 }
        return next
    }

    mutating func render(_ item: StitchBenchmark.Case) throws -> MediaPlaylist {
        try render(item, session: viewers[nextIndex()])
    }

    func render(_ item: StitchBenchmark.Case, session: ViewerSession) throws -> MediaPlaylist {
        try Stitcher.render(
            content: item.content, rendition: StitchFixture.rendition, breaks: item.log, session: session, ruleSets: ruleSets)
    }

    mutating func serialized(_ item: StitchBenchmark.Case) throws -> [UInt8] {
        PlaylistSerializer.serialize(try render(item))
    }

    mutating func compressed(_ item: StitchBenchmark.Case) throws -> [UInt8]? {
        Gzip.compress(try serialized(item), level: 1)
    }

    /// As `AdInsertion.stitchedPlaylist` and `OriginResponder.personalized` do it.
    mutating func request(_ item: StitchBenchmark.Case) throws -> [UInt8]? {
        let index = nextIndex()
        let now = item.content.segments.last!.programDateTime!.millisecondsSinceEpoch
        let token = try signer.verify(tokens[index], channel: "demo", now: now, maxAge: .seconds(48 * 3600))
        let session = ViewerSession(
            id: token.id, startDate: ProgramDateTime(millisecondsSinceEpoch: token.start), targeting: token.targeting)
        var stitched = try render(item, session: session)
        stitched.version = max(stitched.version ?? 0, 3)
        blackHole(AdTracking.dueBeacons(in: stitched))
        return Gzip.compress(PlaylistSerializer.serialize(stitched), level: 1)
    }
}
