import Foundation
import Testing

extension RealClients {
    /// Generated I-frame playlists (issue 19) on the clear demo loop channel with a 6 s ad break
    /// every 15 s: listed in the multivariant playlists, every entry one key frame that decodes
    /// alone, and a stitched session's I-frame playlist read by ffmpeg (as an ordinary byte-range
    /// media playlist, ../shared/CLIENTS.md) through an ad break while it stays aligned with the
    /// session's media playlist, reload after reload.
    @Suite("I-frame playlists with real decoders", .serialized)
    struct IFramePlaybackTests {
        typealias Serve = ServeCommandTests

        static let videoRenditions = ["v0", "v1", "v2"]

        /// The `EXT-X-STREAM-INF` attributes of each variant, by URI.
        static func variants(_ master: String) -> [String: [String: String]] {
            let lines = master.split(separator: "\n").map(String.init)
            var result: [String: [String: String]] = [:]
            for (index, line) in lines.enumerated() where line.hasPrefix("#EXT-X-STREAM-INF:") && index + 1 < lines.count {
                result[lines[index + 1]] = PlaylistText.attributes(String(line.dropFirst("#EXT-X-STREAM-INF:".count)))
            }
            return result
        }

        /// The bytes an I-frame entry stands for: its map's range, then its own, each fetched with `Range`.
        static func entryBytes(port: Int, base: String, _ entry: PlaylistText.Entry) throws -> [UInt8] {
            let map = try #require(entry.map, "\(entry.uri): no EXT-X-MAP")
            let mapRange = try #require(map.range, "\(entry.uri): EXT-X-MAP without BYTERANGE")
            let range = try #require(entry.byteRange, "\(entry.uri): no EXT-X-BYTERANGE")
            var bytes: [UInt8] = []
            let parts: [(uri: String, length: Int, offset: Int)] = [
                (map.uri, mapRange.length, mapRange.offset), (entry.uri, range.length, range.offset),
            ]
            for (uri, length, offset) in parts {
                let path = uri.hasPrefix("/") ? uri : base + uri
                let response = RawResponse.get(port: port, path: path, headers: ["Range": "bytes=\(offset)-\(offset + length - 1)"])
                try #require(response.status == 206, "\(path) \(length)@\(offset): \(response.summary)")
                try #require(response.body.count == length, "\(path): \(response.body.count) bytes for \(length)@\(offset)")
                bytes += response.body
            }
            return bytes
        }

        /// The structural agreement of an I-frame playlist with the media playlist it was made from:
        /// the problems, empty when they are aligned.
        static func misalignment(media: PlaylistText, iframes: PlaylistText) -> [String] {
            var problems: [String] = []
            if !iframes.tagLines.contains("#EXT-X-I-FRAMES-ONLY") { problems.append("no EXT-X-I-FRAMES-ONLY") }
            let version = iframes.tagLines.first { $0.hasPrefix("#EXT-X-VERSION:") }.flatMap { Int($0.dropFirst(15)) } ?? 1
            if version < 4 { problems.append("EXT-X-VERSION \(version): I-frame playlists need 4 or later") }
            if media.targetDuration != iframes.targetDuration {
                problems.append("TARGETDURATION \(iframes.targetDuration ?? "-") vs \(media.targetDuration ?? "-")")
            }
            if media.mediaSequence != iframes.mediaSequence { problems.append("MEDIA-SEQUENCE \(iframes.mediaSequence) vs \(media.mediaSequence)") }
            if media.discontinuitySequence != iframes.discontinuitySequence {
                problems.append("DISCONTINUITY-SEQUENCE \(iframes.discontinuitySequence) vs \(media.discontinuitySequence)")
            }
            if media.entries.map(\.uri) != iframes.entries.map(\.uri) {
                problems.append("segment URIs differ:\n\(media.entries.map(\.uri))\n\(iframes.entries.map(\.uri))")
            }
            for (m, i) in zip(media.entries, iframes.entries) where m.uri == i.uri {
                if m.discontinuity != i.discontinuity { problems.append("\(m.uri): discontinuity \(i.discontinuity) vs \(m.discontinuity)") }
                if m.programDateTime != i.programDateTime {
                    problems.append("\(m.uri): PROGRAM-DATE-TIME \(i.programDateTime ?? "-") vs \(m.programDateTime ?? "-")")
                }
                if m.duration != i.duration { problems.append("\(m.uri): EXTINF \(i.duration) vs \(m.duration)") }
                if !i.gap {
                    if i.byteRange == nil { problems.append("\(i.uri): no EXT-X-BYTERANGE") }
                    if i.map?.uri != i.uri || i.map?.range == nil { problems.append("\(i.uri): EXT-X-MAP \(String(describing: i.map))") }
                }
            }
            return problems
        }

        @Test("the multivariant playlists list one EXT-X-I-FRAME-STREAM-INF per video rendition; lint passes with zero warnings")
        func multivariantListsIFramePlaylists() throws {
            let fixture = try EncryptionFixture(encryption: nil)
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { server.stop() }
            let port = server.port
            try #require(Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8"), "the channel went live")

            let master = SSAIFixture.body(Serve.get(port: port, path: "/live/demo/master.m3u8"))
            let variants = Self.variants(master)
            let iframes = PlaylistText.tags("#EXT-X-I-FRAME-STREAM-INF", in: master)
            #expect(iframes.count == Self.videoRenditions.count, "one per video rendition: \(master)")
            for rendition in Self.videoRenditions {
                let stream = try #require(iframes.first { $0["URI"] == "\(rendition).iframes.m3u8" }, "\(rendition): \(master)")
                let variant = try #require(variants["\(rendition).m3u8"], "\(rendition) variant: \(master)")
                #expect(stream["FRAME-RATE"] == nil, "\(rendition): no FRAME-RATE on an I-frame stream: \(stream)")
                #expect(stream["RESOLUTION"] == variant["RESOLUTION"], "\(rendition): \(stream)")
                let bandwidth = try #require(stream["BANDWIDTH"].flatMap { Int($0) }, "\(rendition): \(stream)")
                let average = try #require(stream["AVERAGE-BANDWIDTH"].flatMap { Int($0) }, "\(rendition): \(stream)")
                #expect(bandwidth > 0 && average > 0 && average <= bandwidth, "\(rendition): \(stream)")
                // Measured from the key-frame ranges: a fraction of the whole variant's.
                let variantBandwidth = variant["BANDWIDTH"].flatMap { Int($0) } ?? 0
                #expect(bandwidth < variantBandwidth, "\(rendition): \(bandwidth) ≥ the variant's \(variantBandwidth)")
                // The I-frame ranges hold video only: the variant's video codec, no audio codec.
                let codecs = try #require(stream["CODECS"], "\(rendition): \(stream)")
                let videoCodec = variant["CODECS"]?.split(separator: ",").first { $0.hasPrefix("avc1") || $0.hasPrefix("hvc1") || $0.hasPrefix("hev1") }
                #expect(videoCodec.map { codecs.contains($0) } == true, "\(rendition): CODECS \(codecs) vs the variant's \(variant["CODECS"] ?? "-")")
                #expect(!codecs.contains("mp4a"), "\(rendition): CODECS of I-frame ranges lists no audio: \(codecs)")
            }
            let findings = try Tool.lintFindings(master)
            #expect(findings.isEmpty, "lint --strict: \(findings)")

            // A session's multivariant playlist: the same, with the session on each URI.
            let response = Serve.get(port: port, path: "/ssai/demo/master.m3u8?device=tv")
            try #require(response.hasPrefix("HTTP/1.1 200"), "\(response.prefix(300))")
            let stitched = SSAIFixture.body(response)
            let sessionIFrames = PlaylistText.tags("#EXT-X-I-FRAME-STREAM-INF", in: stitched)
            #expect(sessionIFrames.count == Self.videoRenditions.count, "\(stitched)")
            for stream in sessionIFrames {
                let uri = stream["URI"] ?? ""
                #expect(uri.contains(".iframes.m3u8?session="), "\(stream)")
                let playlist = RawResponse.get(port: port, path: "/ssai/demo/\(uri)")
                #expect(playlist.status == 200 && playlist.text.contains("#EXT-X-I-FRAMES-ONLY"), "\(uri): \(playlist.summary)")
                #expect(playlist.header("Cache-Control") == "private, no-store", "personalized like the media playlists: \(playlist.summary)")
            }
            // Cached like the shared media playlists; refused like the stitched ones.
            let shared = RawResponse.get(port: port, path: "/live/demo/v1.iframes.m3u8")
            let media = RawResponse.get(port: port, path: "/live/demo/v1.m3u8")
            #expect(shared.status == 200 && shared.header("Content-Type") == "application/vnd.apple.mpegurl", "\(shared.summary)")
            #expect(shared.header("Cache-Control") == media.header("Cache-Control"), "\(shared.summary)")
            let bogus = RawResponse.get(port: port, path: "/ssai/demo/v1.iframes.m3u8?session=bogus")
            #expect(bogus.status == 403 && bogus.text.split(separator: "\n").count == 1, "\(bogus.summary)")
            #expect(RawResponse.get(port: port, path: "/ssai/demo/v1.iframes.m3u8").status == 400, "no session")
            let stitchedFindings = try Tool.lintFindings(stitched)
            #expect(stitchedFindings.isEmpty, "lint --strict stitched: \(stitchedFindings)")
            // No I-frame playlist for audio, nor for a rendition that does not exist.
            #expect(Serve.get(port: port, path: "/live/demo/audio-alt.iframes.m3u8").hasPrefix("HTTP/1.1 404"))
            #expect(Serve.get(port: port, path: "/live/demo/v9.iframes.m3u8").hasPrefix("HTTP/1.1 404"))
        }

        @Test("every entry of every I-frame playlist, fetched with its Range after its EXT-X-MAP range, decodes as exactly one key frame of the rendition's resolution")
        func everyEntryDecodesAsOneKeyFrame() throws {
            let ffmpeg = try #require(Serve.which("ffmpeg"), "ffmpeg is required (.ci/run installs it)")
            let ffprobe = try #require(Serve.which("ffprobe"), "ffprobe is required (.ci/run installs it)")
            let fixture = try EncryptionFixture(encryption: nil)
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { server.stop() }
            let port = server.port
            try #require(Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8"), "the channel went live")
            let variants = Self.variants(SSAIFixture.body(Serve.get(port: port, path: "/live/demo/master.m3u8")))
            var decoded = 0
            for rendition in Self.videoRenditions {
                let resolution = try #require(variants["\(rendition).m3u8"]?["RESOLUTION"], "\(rendition)")
                // The media and I-frame playlists of one window version (refetched if it moved between).
                var pair: (media: PlaylistText, iframes: PlaylistText)?
                for _ in 0..<5 where pair == nil {
                    let before = SSAIFixture.body(Serve.get(port: port, path: "/live/demo/\(rendition).m3u8"))
                    let iframes = Serve.get(port: port, path: "/live/demo/\(rendition).iframes.m3u8")
                    try #require(iframes.hasPrefix("HTTP/1.1 200"), "\(rendition).iframes.m3u8: \(iframes.prefix(300))")
                    let after = SSAIFixture.body(Serve.get(port: port, path: "/live/demo/\(rendition).m3u8"))
                    if before == after { pair = (PlaylistText(before), PlaylistText(SSAIFixture.body(iframes))) }
                }
                let (media, iframes) = try #require(pair, "\(rendition): no stable window in five tries")
                let problems = Self.misalignment(media: media, iframes: iframes)
                #expect(problems.isEmpty, "\(rendition): \(problems)\n\(iframes.text)")
                let findings = try Tool.lintFindings(iframes.text)
                #expect(findings.isEmpty, "lint --strict \(rendition).iframes.m3u8: \(findings)")
                try #require(iframes.entries.count >= 10, "\(rendition): \(iframes.text)")
                // Every demo segment opens with a key frame (2 s GOPs): no gaps on the loop channel.
                #expect(!iframes.entries.contains { $0.gap }, "\(rendition): \(iframes.text)")
                for entry in iframes.entries where !entry.gap {
                    let bytes = try Self.entryBytes(port: port, base: "/live/demo/", entry)
                    let problems = try Tool.decodesAsOneKeyFrame(bytes, resolution: resolution, ffmpeg: ffmpeg, ffprobe: ffprobe)
                    #expect(problems.isEmpty, "\(rendition) \(entry.uri) \(entry.byteRange.map { "\($0.length)@\($0.offset)" } ?? "-"): \(problems)")
                    // The map range is the segment's PAT and PMT: whole TS packets, before the key frame.
                    if let map = entry.map?.range, let range = entry.byteRange {
                        #expect(map.length % 188 == 0 && range.offset % 188 == 0 && range.length % 188 == 0, "TS packets: \(map) \(range)")
                        #expect(map.offset + map.length <= range.offset, "the tables before the key frame: \(map) \(range)")
                    }
                    decoded += 1
                }
            }
            #expect(decoded >= 30, "entries decoded: \(decoded)")
        }

        @Test("ffmpeg reads a stitched session's I-frame playlist for 30 s through an ad break, one key frame per entry; reloads stay aligned with the media playlist")
        func ffmpegReadsStitchedIFrames() throws {
            let ffmpeg = try #require(Serve.which("ffmpeg"), "ffmpeg is required (.ci/run installs it)")
            let ffprobe = try #require(Serve.which("ffprobe"), "ffprobe is required (.ci/run installs it)")
            let fixture = try EncryptionFixture(encryption: nil)
            defer { fixture.remove() }
            let server = try TestServer(config: fixture.config.path, environment: EncryptionFixture.environment())
            defer { server.stop() }
            let port = server.port
            try #require(Serve.waitForPlaylist(port: port, path: "/live/demo/v1.m3u8"), "the channel went live")

            let response = Serve.get(port: port, path: "/ssai/demo/master.m3u8?device=tv")
            try #require(response.hasPrefix("HTTP/1.1 200"), "\(response.prefix(300))")
            let master = SSAIFixture.body(response)
            let mediaPath = try #require(SSAIFixture.mediaURIs(master).first { $0.hasPrefix("v1.m3u8?session=") }.map { "/ssai/demo/\($0)" })
            let iframesPath = try #require(
                PlaylistText.tags("#EXT-X-I-FRAME-STREAM-INF", in: master).first { $0["URI"]?.hasPrefix("v1.iframes.m3u8?session=") == true }?["URI"]
                    .map { "/ssai/demo/\($0)" }, "\(master)")

            // ffmpeg reads the I-frame playlist, video only, its log in a file. The PMT in each map
            // lists the audio stream too, which the key-frame ranges never carry: with the default
            // probesize (5 MB, some 700 entries of 7 KB arriving in real time) ffmpeg would probe
            // for that audio until killed, so it probes 32 KB (a few entries) and gives up on it.
            let logFile = fixture.directory.appendingPathComponent("ffmpeg.log")
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            let reader = Process()
            reader.executableURL = URL(fileURLWithPath: ffmpeg)
            reader.arguments = [
                "-hide_banner", "-nostdin", "-loglevel", "repeat+level+verbose", "-rw_timeout", "10000000",
                "-m3u8_hold_counters", "6", "-max_reload", "3", "-probesize", "32768", "-i", "http://127.0.0.1:\(port)\(iframesPath)",
                "-map", "0:v:0", "-t", "30", "-f", "null", "-",
            ]
            let handle = try FileHandle(forWritingTo: logFile)
            reader.standardOutput = handle
            reader.standardError = handle
            try reader.run()
            defer { if reader.isRunning { reader.terminate() } }

            // Meanwhile, reload both playlists like a player: aligned every time, lint-clean, and
            // each reload a legal update of the previous one.
            var previous: String?
            var compared = 0
            var sawAds = false
            var lastWithAds: PlaylistText?
            var sequences = Set<UInt64>()
            let deadline = Date().addingTimeInterval(75)
            while reader.isRunning, Date() < deadline {
                let before = SSAIFixture.body(Serve.get(port: port, path: mediaPath))
                let iframesText = SSAIFixture.body(Serve.get(port: port, path: iframesPath))
                let after = SSAIFixture.body(Serve.get(port: port, path: mediaPath))
                if before == after, !before.isEmpty {
                    let iframes = PlaylistText(iframesText)
                    let problems = Self.misalignment(media: PlaylistText(before), iframes: iframes)
                    #expect(problems.isEmpty, "reload \(compared): \(problems)\n\(iframesText)")
                    let findings = try Tool.lintFindings(iframesText, previous: previous)
                    #expect(findings.isEmpty, "reload \(compared): lint --strict --previous: \(findings)")
                    if iframes.entries.contains(where: { $0.uri.hasPrefix("/ads/") }) {
                        sawAds = true
                        lastWithAds = iframes
                    }
                    sequences.insert(iframes.discontinuitySequence)
                    previous = iframesText
                    compared += 1
                }
                Thread.sleep(forTimeInterval: 1.5)
            }
            let finished = !reader.isRunning
            if !finished { reader.terminate() }
            reader.waitUntilExit()
            let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            #expect(finished, "ffmpeg still reading 30 s of I-frames after 75 s: \(text.suffix(1500))")
            #expect(reader.terminationStatus == 0, "ffmpeg exit \(reader.terminationStatus): \(text.suffix(1500))")
            let problems = Serve.playbackProblems(text, seconds: 30)
            #expect(problems.isEmpty, "\(problems)")
            #expect(compared >= 10, "compared \(compared) reloads")
            #expect(sawAds, "the I-frame playlist had ad key frames during a break")
            #expect(sequences.count >= 2, "the discontinuity sequence moved (a break or loop point left the window): \(sequences)")

            // Through the break: ad entries, then content again; one decoded frame per entry read.
            let opened = text.split(separator: "\n").filter { $0.contains("Opening '") }
                .compactMap { $0.split(separator: "'").dropFirst().first.map(String.init) }
            let firstAd = opened.firstIndex { $0.contains("/ads/ad1/v1/seg-") }
            #expect(firstAd != nil, "ffmpeg opened ad key frames: \(opened.suffix(20))")
            if let firstAd { #expect(opened[firstAd...].contains { $0.contains("/live/demo/v1/") }, "and content after the ad") }
            // Each entry is opened twice in a row (its map, then its range, both in the segment): one
            // entry per run of the same URI. Each is one packet and decodes to one frame.
            var entriesRead = 0
            var last: String?
            for uri in opened where !uri.contains(".m3u8") {
                if uri != last { entriesRead += 1 }
                last = uri
            }
            let video = try #require(text.split(separator: "\n").first { $0.contains("Input stream #0:0 (video):") }, "\(text.suffix(1500))")
            func count(_ label: String) -> Int {
                let words = video.split(separator: " ")
                return words.firstIndex { $0.hasPrefix(label) }.flatMap { $0 > 0 ? Int(words[$0 - 1]) : nil } ?? -1
            }
            let (packets, frames) = (count("packets"), count("frames"))
            #expect(frames >= 12, "key frames decoded in 30 s (one per 2 s entry): \(video)")
            // At most one packet per entry read. (Not "as many packets as entries": which "Opening"
            // lines ffmpeg logs varies with load, so the count of entries read is only an upper bound.)
            #expect(packets <= entriesRead, "one packet per entry: \(entriesRead) entries; \(video)")
            #expect(frames <= packets && frames >= packets - 1, "one frame per entry: \(video)")

            // The ad entries decode alone too, at the ad's resolution (the same 640x360 as v1).
            if let lastWithAds {
                for entry in lastWithAds.entries where entry.uri.hasPrefix("/ads/") && !entry.gap {
                    let bytes = try Self.entryBytes(port: port, base: "/ssai/demo/", entry)
                    let problems = try Tool.decodesAsOneKeyFrame(bytes, resolution: "640x360", ffmpeg: ffmpeg, ffprobe: ffprobe)
                    #expect(problems.isEmpty, "\(entry.uri): \(problems)")
                }
            }
        }
    }
}
