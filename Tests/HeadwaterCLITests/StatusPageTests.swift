import Foundation
import Testing

extension RealClients {
    /// The status page (`Public/index.html` + `Public/status/`) as an operator opens it: the real
    /// `headwater serve` with the repository's demo configuration, and headless Chromium (Debian's
    /// `chromium` package) loading `/`, letting the page poll `/api/status`, then dumping the DOM and
    /// taking a 1280×800 screenshot. `Tests/tools/install-test-clients.sh` (run by .ci/run) installs
    /// Chromium; without it this test fails and says so, rather than skipping.
    @Suite("Status page in headless Chromium", .serialized)
    struct StatusPageTests {
        /// Where the last screenshot is kept, for a human to look at.
        static let screenshotPath = ServeCommandTests.repository.appendingPathComponent(".build/status-page.png")

        @Test("the page draws the demo channel from /api/status: card, renditions, live-edge age, SVG timeline; screenshot is 1280×800 and not blank")
        func rendersDemoChannel() throws {
            let chromium = try #require(
                ServeCommandTests.which("chromium"),
                "chromium is required: CI installs it (Tests/tools/install-test-clients.sh, or apt-get install -y chromium)")
            let (server, port, log) = try ServeCommandTests.startServer()
            defer {
                if server.isRunning { server.terminate() }
                try? FileManager.default.removeItem(at: log)
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-status-page-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = "http://127.0.0.1:\(port)/"

            // `/` is the page, and what the API says about the demo channel is what the page must show.
            let index = ServeCommandTests.get(port: port, path: "/")
            #expect(index.hasPrefix("HTTP/1.1 200"), "\(index.prefix(200))")
            #expect(index.contains("src=\"status/status.js\""))
            let api = try Self.json(ServeCommandTests.get(port: port, path: "/api/status"))
            let channels = try #require(api["channels"] as? [[String: Any]])
            let demo = try #require(channels.first { $0["name"] as? String == "demo" }, "demo channel in \(channels)")
            let status = try #require(demo["status"] as? [String: Any])
            let renditions = try #require(status["renditions"] as? [[String: Any]])
            let names = renditions.compactMap { $0["name"] as? String }
            #expect(names.sorted() == ["audio-alt", "v0", "v1", "v2"])
            // The demo loops every 20 s with a discontinuity and lists 30 s: every window has one.
            for rendition in renditions {
                let segments = try #require(rendition["segments"] as? [[String: Any]])
                #expect(segments.contains { $0["discontinuity"] as? Bool == true }, "\(rendition["name"] ?? "?")")
            }
            let version = try #require((api["server"] as? [String: Any])?["version"] as? String)

            // The DOM once the page has fetched the API (virtual time: a few polls without waiting).
            let dom = try Self.run(
                chromium, Self.flags(profile: directory.appendingPathComponent("dom")) + ["--dump-dom", url])
            try #require(dom.contains("data-channel=\"demo\""), "no demo card in the DOM: \(dom.prefix(2000))")
            #expect(dom.contains("data-state=\"live\""))
            #expect(dom.contains("<dd id=\"server-version\">\(version)</dd>"))
            #expect(dom.contains("<span class=\"badge\" title=\"source type\">loop</span>"))
            #expect(dom.contains("<span class=\"value\">2 s</span>"), "target duration")
            #expect(dom.contains("<span class=\"value\">30 s</span>"), "window")
            #expect(dom.contains("aria-label=\"Ad breaks\""), "the ad-break panel (the demo stitches ads)")
            // The demo stitches ads: its timeline has the ad-break row, its card viewer traffic and
            // sessions, and the page the server-wide stitched and beacon outcomes.
            #expect(dom.contains("<g class=\"ad-breaks\">"), "the ad-break row on the timeline")
            #expect(dom.contains(">ad breaks</text>"))
            for stat in ["requests", "client-errors", "server-errors", "sessions"] {
                #expect(dom.contains("data-stat=\"\(stat)\""), "traffic figure \(stat)")
            }
            #expect(dom.contains(#"data-stat="sessions"><dt>Sessions started</dt><dd><span class="value">0</span>"#), "no session yet")
            #expect(dom.contains("aria-label=\"Ad insertion, all channels\""), "the stitched and beacon outcomes")
            #expect(dom.contains("data-summary=\"beacons\""))
            #expect(!dom.contains("data-flag=\"ads-unfit\""), "the demo's ads fit its ladder")

            let age = try #require(
                Self.firstMatch(#"data-stat="live-edge-age">.*?<span class="value">([0-9.]+) s</span>"#, in: dom),
                "a live-edge age in seconds")
            let ageSeconds = try #require(Double(age))
            // A loop channel's newest segment ended less than one 2 s segment ago, unless its publisher
            // ran late on a loaded machine: a generous bound that still catches ms-vs-s mistakes.
            #expect(ageSeconds >= 0 && ageSeconds < 10, "live-edge age \(ageSeconds) s")

            let svgs = Self.count("<svg class=\"timeline\"", in: dom)
            #expect(svgs == 1, "one timeline for the one channel")
            #expect(dom.contains("role=\"img\""))
            for (name, rendition) in zip(names, renditions) {
                let expected = (rendition["segments"] as? [[String: Any]])?.count ?? -1
                #expect(dom.contains("<tr data-rendition=\"\(name)\">"), "renditions table row \(name)")
                let lane = try #require(Self.lane(name, in: dom), "timeline lane \(name)")
                // One rect per listed segment, each with a <title>; all demo segments are content.
                let rects = Self.count(" class=\"segment segment-", in: lane)
                let msns = Self.allMatches(#"data-msn="([0-9]+)""#, in: lane).compactMap { UInt64($0) }
                #expect(msns.count == expected, "\(name): \(msns.count) segment rects, the API listed \(expected)")
                #expect(rects == msns.count, "\(name): every segment is a rect")
                #expect(msns == Array((msns.first ?? 0)..<((msns.first ?? 0) + UInt64(msns.count))), "\(name): consecutive MSNs")
                #expect(Self.count("segment-content", in: lane) == msns.count)
                #expect(Self.count("<title>\(name) · MSN ", in: lane) == msns.count)
                // MSN labels at both ends of the lane.
                if let first = msns.first, let last = msns.last {
                    #expect(lane.contains(">#\(first)</text>"), "\(name): first MSN label")
                    #expect(lane.contains(">#\(last)</text>"), "\(name): last MSN label")
                }
                // At least one discontinuity mark on this lane (the loop point).
                #expect(dom.contains("<title>\(name) · discontinuity before MSN "), "\(name): discontinuity mark")
            }
            #expect(Self.count("class=\"discontinuity\"", in: dom) >= names.count)
            #expect(dom.contains("class=\"live-edge\""))
            #expect(dom.contains("No stalls since the channel started."))

            // The picture: a PNG of exactly 1280×800 with something drawn on it.
            let shot = directory.appendingPathComponent("status.png")
            _ = try Self.run(
                chromium,
                Self.flags(profile: directory.appendingPathComponent("shot")) + ["--screenshot=\(shot.path)", url])
            let png = try Data(contentsOf: shot)
            let size = try #require(Self.pngSize(png), "a PNG file")
            #expect(size.width == 1280 && size.height == 800, "screenshot is \(size.width)×\(size.height)")
            // Not blank, without decoding the PNG (no zlib here): deflate shrinks a uniform page to a
            // few KB (about:blank at 1280×800 is ~5 KB), while text, tables and the timeline make tens
            // of KB. A size check, not a pixel check: it tells a drawn page from an empty one.
            let blank = directory.appendingPathComponent("blank.png")
            _ = try Self.run(
                chromium,
                Self.flags(profile: directory.appendingPathComponent("blank")) + ["--screenshot=\(blank.path)", "about:blank"])
            let blankSize = try Data(contentsOf: blank).count
            #expect(png.count > 30_000 && png.count > 6 * blankSize, "screenshot \(png.count) bytes, about:blank \(blankSize)")
            try? FileManager.default.removeItem(at: Self.screenshotPath)
            try? FileManager.default.copyItem(at: shot, to: Self.screenshotPath)
        }

        @Test("the page draws what a known /api/status says: breaks on the timeline (aired, planned, early return, on air), slate ending at the live edge in a stall, traffic, outcomes, the unstitchable-ads flag")
        func rendersBreaksStallsAndFlags() throws {
            let chromium = try #require(
                ServeCommandTests.which("chromium"),
                "chromium is required: CI installs it (Tests/tools/install-test-clients.sh, or apt-get install -y chromium)")
            // The page as files under /fixture/, with a fixed api/status next to it: the page
            // fetches `api/status` relative to itself, so it reads the file, served by the real server.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-status-fixture-\(UUID())")
            let fixture = directory.appendingPathComponent("public/fixture")
            try FileManager.default.createDirectory(at: fixture.appendingPathComponent("api"), withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let publicDirectory = ServeCommandTests.repository.appendingPathComponent("Public")
            try FileManager.default.copyItem(
                at: publicDirectory.appendingPathComponent("index.html"), to: fixture.appendingPathComponent("index.html"))
            try FileManager.default.copyItem(
                at: publicDirectory.appendingPathComponent("status"), to: fixture.appendingPathComponent("status"))
            try JSONSerialization.data(withJSONObject: Self.fixtureDocument(), options: [.sortedKeys])
                .write(to: fixture.appendingPathComponent("api/status"))
            let config = directory.appendingPathComponent("headwater.yaml")
            try """
                server:
                  public: \(directory.appendingPathComponent("public").path)
                channels:
                  unused:
                    source:
                      type: push
                      token_env: HW_TEST_STATUS_TOKEN
                      target_duration: 2
                    window: 12
                """.write(to: config, atomically: true, encoding: .utf8)
            let (server, port, log) = try ServeCommandTests.startServer(config: config.path, environment: ["HW_TEST_STATUS_TOKEN": "s3cret"])
            defer {
                if server.isRunning { server.terminate() }
                try? FileManager.default.removeItem(at: log)
            }
            let url = "http://127.0.0.1:\(port)/fixture/index.html"
            #expect(ServeCommandTests.get(port: port, path: "/fixture/api/status").hasPrefix("HTTP/1.1 200"))

            let dom = try Self.run(chromium, Self.flags(profile: directory.appendingPathComponent("dom")) + ["--dump-dom", url])
            try #require(dom.contains("data-channel=\"tv\""), "no tv card in the DOM: \(dom.prefix(2000))")
            #expect(dom.contains("<title>(1 degraded, 1 without ads) Headwater · status</title>"))

            // Server-wide outcomes above 0, the ones that are the server's or the ad server's failures marked.
            #expect(dom.contains(#"<span class="outcome" data-outcome="ok">ok 300</span>"#))
            #expect(dom.contains(#"<span class="outcome" data-outcome="forbidden">forbidden 2</span>"#))
            #expect(dom.contains(#"<span class="outcome bad" data-outcome="error">error 1</span>"#))
            #expect(!dom.contains(#"data-outcome="conflict""#), "outcomes at 0 are not listed")
            #expect(dom.contains(#"<span class="outcome bad" data-outcome="failed">failed 3</span>"#))
            #expect(dom.contains(#"<span class="outcome" data-outcome="sent">sent 40</span>"#))

            // Traffic per channel.
            let tv = try #require(Self.card("tv", in: dom))
            let news = try #require(Self.card("news", in: dom))
            #expect(tv.contains(#"data-stat="requests"><dt>Requests</dt><dd><span class="value">2.15/s</span><span class="detail">last 60 s · 1,290 total</span>"#))
            #expect(tv.contains(#"<div class="stat age-warn" data-stat="client-errors"><dt>4xx</dt><dd><span class="value">0.10/s</span>"#))
            #expect(tv.contains(#"<div class="stat" data-stat="server-errors"><dt>5xx</dt><dd><span class="value">0.00/s</span>"#))
            #expect(tv.contains(#"data-stat="sessions"><dt>Sessions started</dt><dd><span class="value">12</span>"#))
            #expect(news.contains(#"<div class="stat age-bad" data-stat="server-errors"><dt>5xx</dt><dd><span class="value">0.20/s</span>"#))

            // The unstitchable channel is flagged in its head and says why; the other is not.
            #expect(news.contains(#"data-flag="ads-unfit""#))
            #expect(news.contains("role=\"alert\""))
            #expect(news.contains(Self.unfitReason))
            #expect(!tv.contains("ads-unfit"))

            // tv's timeline: 15 segments of 2 s, MSN 100–114, the newest ended 0.5 s ago.
            let geometry = try #require(Self.timelineGeometry(in: tv))
            let x = { (age: Double) in geometry.plotRight - age * geometry.scale }
            // The early return: aired from MSN 101 (28.5 s ago) to MSN 105 (20.5 s ago), planned to 8.5 s ago.
            let early = try #require(Self.breakGroup("early", in: tv))
            #expect(early.contains(#"data-break-state="early""#))
            #expect(early.contains("class=\"break-early-return\""))
            #expect(early.contains(">early return</text>"))
            let aired = try #require(Self.rect("break-aired", in: early))
            #expect(abs(aired.x - x(28.5)) < 1 && abs(aired.x + aired.width - x(20.5)) < 1, "aired \(aired), expected \(x(28.5))…\(x(20.5))")
            let planned = try #require(Self.rect("break-planned", in: early))
            #expect(abs(planned.x + planned.width - x(8.5)) < 1, "planned end \(planned), expected \(x(8.5))")
            // The break on air: from MSN 108 (14.5 s ago) to the live edge; its planned end is 5.5 s ahead.
            let onAir = try #require(Self.breakGroup("air", in: tv))
            #expect(onAir.contains(#"data-break-state="on-air""#))
            #expect(!onAir.contains("break-early-return"))
            #expect(onAir.contains(">+6 s<"))
            let airing = try #require(Self.rect("break-aired", in: onAir))
            #expect(abs(airing.x - x(14.5)) < 1 && abs(airing.x + airing.width - x(0.5)) < 1, "on air \(airing)")
            // And the table marks the early one.
            #expect(tv.contains(#"<span class="pill early" title="ended before its planned end">early</span>"#))

            // news stalled: its source's newest segment arrived 9 s ago; the stall was detected
            // 6.1 s ago (1½ target durations less a tick later) and a 2 s slate segment listed then and
            // every 2 s since, the newest 0.1 s ago. So the slate ends at the live edge, 0.1 s ago —
            // not 9 s in the past — and the source's last segment is marked where its segment ends.
            let stalled = try #require(Self.timelineGeometry(in: news))
            let lane = try #require(Self.lane("v1", in: news))
            let lastSlate = try #require(Self.rect(msn: 205, in: lane))
            #expect(lane.contains(#"data-msn="205" data-kind="slate""#))
            let slateEnd = lastSlate.x + lastSlate.width + 1.5
            let liveEdge = stalled.plotRight - 0.1 * stalled.scale
            #expect(abs(slateEnd - liveEdge) < 1, "slate ends at \(slateEnd), the live edge is at \(liveEdge)")
            let edgeX = try #require(Self.firstMatch(#"<g class="live-edge"><line x1="([0-9.]+)""#, in: String(news)).flatMap(Double.init))
            #expect(abs(edgeX - liveEdge) < 1, "live-edge line at \(edgeX)")
            let sourceX = try #require(Self.firstMatch(#"<g class="source-edge"><line x1="([0-9.]+)""#, in: String(news)).flatMap(Double.init))
            #expect(abs(sourceX - (stalled.plotRight - 8.1 * stalled.scale)) < 1, "source's last segment ends at \(sourceX)")
            #expect(news.contains("source last seen 9.0 s ago"))
            #expect(news.contains(#"data-stall="ongoing""#))
            #expect(news.contains("stall · slate · ongoing"))
            #expect(!tv.contains("data-stall="))

            let shot = directory.appendingPathComponent("fixture.png")
            _ = try Self.run(
                chromium, Self.flags(profile: directory.appendingPathComponent("shot"), height: 1400) + ["--screenshot=\(shot.path)", url])
            #expect(Self.pngSize(try Data(contentsOf: shot))?.height == 1400)
            let kept = ServeCommandTests.repository.appendingPathComponent(".build/status-page-fixture.png")
            try? FileManager.default.removeItem(at: kept)
            try? FileManager.default.copyItem(at: shot, to: kept)
        }

        static let unfitReason = #"creative "bumper" has no rendition "v9""#

        /// `/api/status` as the fixture serves it, at 2026-11-21T17:36:30Z.
        static func fixtureDocument() -> [String: Any] {
            let now: Int64 = 1_795_282_590_000_000  // µs
            func segments(_ msns: ClosedRange<Int>, kind: (Int) -> String = { _ in "content" }, discontinuity: Set<Int> = [], markers: [Int: String] = [:]) -> [[String: Any]] {
                msns.map { msn in
                    var segment: [String: Any] = ["msn": msn, "duration": 2.0, "kind": kind(msn), "discontinuity": discontinuity.contains(msn)]
                    if let marker = markers[msn] { segment["marker"] = marker }
                    return segment
                }
            }
            func traffic(_ requests: Int, _ rate: Double, clientErrors: Double, serverErrors: Double) -> [String: Any] {
                [
                    "windowSeconds": 60, "requests": requests, "clientErrors": 6, "serverErrors": Int(serverErrors * 60),
                    "requestsPerSecond": rate, "clientErrorsPerSecond": clientErrors, "serverErrorsPerSecond": serverErrors,
                ]
            }
            let tv: [String: Any] = [
                "name": "tv", "state": "live", "liveEdgeAgeSeconds": 0.5, "sessionsStarted": 12,
                "traffic": traffic(1290, 2.15, clientErrors: 0.1, serverErrors: 0),
                "breaks": [
                    [
                        "id": "early", "startMediaSequence": 101, "startedAt": now - 28_500_000, "plannedDurationSeconds": 20.0,
                        "endMediaSequence": 105, "endedAt": now - 20_500_000, "durationSeconds": 8.0, "endedEarly": true,
                    ],
                    ["id": "air", "startMediaSequence": 108, "startedAt": now - 14_500_000, "plannedDurationSeconds": 20.0],
                ],
                "status": [
                    "source": "loop", "targetDuration": 2, "windowSeconds": 30, "stalls": [] as [Any],
                    "ingest": ["segments": 0, "bytes": 0, "rejected": 0],
                    "renditions": [
                        [
                            "name": "v1", "mediaSequence": 100, "discontinuitySequence": 3, "lastSegmentAt": now - 500_000,
                            "segments": segments(100...114, discontinuity: [101, 105, 108], markers: [101: "daterange", 105: "cue-in", 108: "daterange"]),
                        ]
                    ],
                ],
            ]
            let news: [String: Any] = [
                "name": "news", "state": "degraded", "degradedReason": "source stalled", "liveEdgeAgeSeconds": 9.0,
                "adsUnfitReason": unfitReason, "sessionsStarted": 0,
                "traffic": traffic(90, 1.5, clientErrors: 0, serverErrors: 0.2),
                "status": [
                    "source": "push", "targetDuration": 2, "windowSeconds": 12,
                    "stalls": [["startedAt": now - 6_100_000, "fill": "slate"]],
                    "ingest": ["segments": 40, "bytes": 4_000_000, "rejected": 0],
                    "renditions": [
                        [
                            "name": "v1", "mediaSequence": 200, "discontinuitySequence": 0, "lastSegmentAt": now - 9_000_000,
                            "segments": segments(200...205, kind: { $0 >= 202 ? "slate" : "content" }, discontinuity: [202]),
                        ]
                    ],
                ],
            ]
            return [
                "generatedAt": now / 1000,
                "server": [
                    "version": "9.9.9-test", "uptimeSeconds": 600,
                    "stitchedPlaylists": ["ok": 300, "forbidden": 2, "error": 1, "conflict": 0], "beacons": ["sent": 40, "failed": 3, "dropped": 0],
                ],
                "channels": [tv, news],
            ]
        }

        // MARK: - Helpers

        /// Headless Chromium as CI runs it, with its own profile, 1280×800, and 6 s of virtual time:
        /// the page loads, fetches /api/status and polls a few more times before the DOM is taken.
        static func flags(profile: URL, height: Int = 800) -> [String] {
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio", "--no-first-run",
                "--window-size=1280,\(height)", "--virtual-time-budget=6000", "--user-data-dir=\(profile.path)",
            ]
        }

        /// One channel's card (`<section class="channel …" data-channel="…">…</section>`; cards hold sections, so up to the next card).
        static func card(_ name: String, in dom: String) -> Substring? {
            guard let start = dom.range(of: "data-channel=\"\(name)\"") else { return nil }
            let end = dom.range(of: "data-channel=\"", range: start.upperBound..<dom.endIndex)?.lowerBound ?? dom.endIndex
            return dom[start.lowerBound..<end]
        }

        /// One ad break's group on the timeline.
        static func breakGroup(_ id: String, in card: Substring) -> Substring? {
            guard let start = card.range(of: "data-break=\"\(id)\" data-break-state="),
                let end = card.range(of: "</g>", range: start.upperBound..<card.endIndex)
            else { return nil }
            return card[start.lowerBound..<end.upperBound]
        }

        /// The timeline's right edge ("now") and pixels per second, as the page laid them out: the
        /// "now" line, and the first grid line with its label (`−N s`).
        static func timelineGeometry(in card: Substring) -> (plotRight: Double, scale: Double)? {
            let text = String(card)
            guard let right = firstMatch(#"<g class="now"><line x1="([0-9.]+)""#, in: text).flatMap(Double.init) else { return nil }
            let ticks = allMatches(#"<line x1="([0-9.]+)" x2="[0-9.]+" y1="[0-9.]+" y2="[0-9.]+" class="gridline">"#, in: card)
                .compactMap(Double.init)
            let labels = allMatches(#"class="axis-label" text-anchor="middle">−([0-9]+) s</text>"#, in: card).compactMap(Double.init)
            guard let tick = ticks.first, let seconds = labels.first, seconds > 0 else { return nil }
            return (right, (right - tick) / seconds)
        }

        /// The first rect with `class` in `markup`: its x and width.
        static func rect(_ className: String, in markup: Substring) -> (x: Double, width: Double)? {
            let pattern = #"<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"[^>]* class="\#(className)""#
            return rectMatch(pattern, in: markup)
        }

        /// The segment rect of `msn` in a lane.
        static func rect(msn: Int, in lane: Substring) -> (x: Double, width: Double)? {
            rectMatch(#"<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"[^>]* data-msn="\#(msn)""#, in: lane)
        }

        private static func rectMatch(_ pattern: String, in markup: Substring) -> (x: Double, width: Double)? {
            guard let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
            let string = String(markup)
            guard let match = regex.firstMatch(in: string, range: NSRange(string.startIndex..., in: string)),
                let x = Range(match.range(at: 1), in: string).flatMap({ Double(string[$0]) }),
                let width = Range(match.range(at: 2), in: string).flatMap({ Double(string[$0]) })
            else { return nil }
            return (x, width)
        }

        /// Runs `tool` and returns its standard output; kills it after 90 s.
        static func run(_ tool: String, _ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
            DispatchQueue.global().asyncAfter(deadline: .now() + 90, execute: watchdog)
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            watchdog.cancel()
            return String(decoding: data, as: UTF8.self)
        }

        /// The JSON body of a raw HTTP response.
        static func json(_ response: String) throws -> [String: Any] {
            let body = try #require(response.range(of: "\r\n\r\n").map { response[$0.upperBound...] }, "a response")
            return try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        }

        /// The markup of one timeline lane (`<g class="lane" data-rendition="…">…</g>`; lanes hold no `<g>`).
        static func lane(_ name: String, in markup: some StringProtocol) -> Substring? {
            let dom = Substring(markup)
            guard let start = dom.range(of: "<g class=\"lane\" data-rendition=\"\(name)\">"),
                let end = dom.range(of: "</g>", range: start.upperBound..<dom.endIndex)
            else { return nil }
            return dom[start.lowerBound..<end.upperBound]
        }

        static func count(_ needle: String, in text: some StringProtocol) -> Int {
            text.components(separatedBy: needle).count - 1
        }

        static func firstMatch(_ pattern: String, in text: String) -> String? {
            allMatches(pattern, in: Substring(text)).first
        }

        /// The first capture group of every match.
        static func allMatches(_ pattern: String, in text: Substring) -> [String] {
            guard let regex = try? NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators]) else { return [] }
            let string = String(text)
            return regex.matches(in: string, range: NSRange(string.startIndex..., in: string)).compactMap { match in
                Range(match.range(at: 1), in: string).map { String(string[$0]) }
            }
        }

        /// Width and height from a PNG's IHDR chunk (the signature, then length, "IHDR", width, height).
        static func pngSize(_ data: Data) -> (width: Int, height: Int)? {
            let bytes = [UInt8](data.prefix(24))
            guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
                bytes[12..<16] == Array("IHDR".utf8)[...]
            else { return nil }
            let integer = { (offset: Int) in bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) } }
            return (integer(16), integer(20))
        }
    }
}
