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

        // MARK: - Helpers

        /// Headless Chromium as CI runs it, with its own profile, 1280×800, and 6 s of virtual time:
        /// the page loads, fetches /api/status and polls a few more times before the DOM is taken.
        static func flags(profile: URL) -> [String] {
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio", "--no-first-run",
                "--window-size=1280,800", "--virtual-time-budget=6000", "--user-data-dir=\(profile.path)",
            ]
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
        static func lane(_ name: String, in dom: String) -> Substring? {
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
