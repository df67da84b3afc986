import Foundation
import Synchronization
import Testing

extension RealClients {
    /// A push source that lists EXT-X-BYTERANGE sub-ranges of one growing file (ffmpeg's
    /// `-hls_flags single_file` output, uploaded again as it grows), read back live by ffmpeg.
    @Suite("headwater serve: byte-range push", .serialized)
    struct ByteRangePushTests {
        /// A plain HTTP/1.0 PUT over a socket; the status line of the response.
        static func put(port: Int, path: String, token: String, body: [UInt8]) -> String {
            let head = "PUT \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nContent-Length: \(body.count)\r\n\r\n"
            let response = ServeCommandTests.exchange(port: port, request: Array(head.utf8) + body)
            return response.isEmpty ? "connection failed" : String(response.prefix { $0 != "\r" })
        }

        @Test("ranges of a growing uploaded file are listed with explicit offsets and ffmpeg reads them live without errors")
        func growingSingleFile() throws {
            let ffmpeg = try #require(ServeCommandTests.which("ffmpeg"), "ffmpeg is required (.ci/run installs it)")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-byterange-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            // 32 s of media in one file, 2 s sub-ranges.
            let (encoder, encoderOutput) = try ServeCommandTests.run(ffmpeg, [
                "-hide_banner", "-nostdin", "-loglevel", "error",
                "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                "-t", "32", "-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0",
                "-b:v", "200k", "-c:a", "aac", "-b:a", "48k", "-f", "hls", "-hls_time", "2", "-hls_list_size", "0",
                "-hls_playlist_type", "vod", "-hls_flags", "single_file",
                "-hls_segment_filename", directory.appendingPathComponent("x.ts").path, directory.appendingPathComponent("x.m3u8").path,
            ])
            _ = encoderOutput.fileHandleForReading.readDataToEndOfFile()
            encoder.waitUntilExit()
            try #require(encoder.terminationStatus == 0)
            let media = try [UInt8](Data(contentsOf: directory.appendingPathComponent("x.ts")))
            let lines = try String(contentsOf: directory.appendingPathComponent("x.m3u8"), encoding: .utf8)
                .split(separator: "\n").map(String.init)
            let segments: [(extinf: String, length: Int, offset: Int)] = lines.indices.compactMap { index in
                guard lines[index].hasPrefix("#EXT-X-BYTERANGE:") else { return nil }
                let parts = lines[index].dropFirst("#EXT-X-BYTERANGE:".count).split(separator: "@").compactMap { Int($0) }
                return parts.count == 2 ? (lines[index - 1], parts[0], parts[1]) : nil
            }
            try #require(segments.count >= 15, "ffmpeg wrote \(segments.count) byte ranges")

            let config = directory.appendingPathComponent("headwater.yaml")
            try """
                channels:
                  br:
                    source:
                      type: push
                      token_env: HW_TEST_BR_TOKEN
                      target_duration: 2
                    window: 12
                """.write(to: config, atomically: true, encoding: .utf8)
            let (server, port, log) = try ServeCommandTests.startServer(
                config: config.path, environment: ["HW_TEST_BR_TOKEN": "s3cret"])
            defer { if server.isRunning { server.terminate() } }

            // The packager: every 2 s the file grown by one segment, then a 6-segment sliding playlist
            // whose offsets are implicit after its first range (as a live single-file packager writes).
            let statuses = PushLog()
            let pusher = Thread {
                for index in segments.indices {
                    let end = segments[index].offset + segments[index].length
                    statuses.append(Self.put(port: port, path: "/ingest/br/x.ts", token: "s3cret", body: Array(media[..<end])))
                    let first = max(0, index - 5)
                    var playlist = ["#EXTM3U", "#EXT-X-VERSION:4", "#EXT-X-TARGETDURATION:2", "#EXT-X-MEDIA-SEQUENCE:\(first)"]
                    for position in first...index {
                        let segment = segments[position]
                        let range = position == first ? "\(segment.length)@\(segment.offset)" : "\(segment.length)"
                        playlist += [segment.extinf, "#EXT-X-BYTERANGE:\(range)", "x.ts"]
                    }
                    let body = Array((playlist.joined(separator: "\n") + "\n").utf8)
                    statuses.append(Self.put(port: port, path: "/ingest/br/x.m3u8", token: "s3cret", body: body))
                    Thread.sleep(forTimeInterval: 2)
                }
            }
            pusher.start()
            var ready = false
            for _ in 0..<200 where !ready {
                Thread.sleep(forTimeInterval: 0.1)
                ready = ServeCommandTests.get(port: port, path: "/live/br/x.m3u8").contains("#EXTINF")
            }
            #expect(ready, "the byte-range channel went live")
            let (reader, readOutput) = try ServeCommandTests.run(ffmpeg, [
                "-hide_banner", "-nostdin", "-loglevel", "repeat+level+verbose", "-rw_timeout", "10000000",
                "-m3u8_hold_counters", "6", "-max_reload", "3", "-i", "http://127.0.0.1:\(port)/live/br/x.m3u8",
                "-map", "0", "-t", "14", "-f", "null", "-",
            ])
            let text = String(decoding: readOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            reader.waitUntilExit()
            // The playlist as served now: every range has its offset, so the head has one too (B8).
            let served = ServeCommandTests.get(port: port, path: "/live/br/x.m3u8")
            server.terminate()
            server.waitUntilExit()
            try? FileManager.default.removeItem(at: log)

            #expect(reader.terminationStatus == 0)
            #expect(statuses.all.allSatisfy { $0.hasPrefix("HTTP/1.1 201") || $0.hasPrefix("HTTP/1.1 204") }, "\(Set(statuses.all))")
            for failure in ["Media sequence changed unexpectedly", "HTTP error", "Failed to open segment"] {
                #expect(!text.contains(failure), "reader: \(failure)")
            }
            let errors = text.split(separator: "\n").filter { $0.contains("[error]") }
            #expect(errors.isEmpty, "\(errors)")
            let times = text.components(separatedBy: "time=").dropFirst().compactMap { $0.split(separator: " ").first }
            #expect(times.last.map { $0.hasPrefix("00:00:14") } == true, "14 s read back; last: \(times.last ?? "none")")
            let ranges = served.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-BYTERANGE:") }
            #expect(ranges.count >= 5 && ranges.allSatisfy { $0.contains("@") }, "\(served)")
            #expect(!served.contains("#EXT-X-MEDIA-SEQUENCE:0\n"), "the window slid: \(served)")
        }
    }

    /// Status lines the pushing thread saw.
    final class PushLog: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }
}
