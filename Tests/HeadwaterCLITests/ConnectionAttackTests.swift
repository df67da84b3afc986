import Foundation
import HeadwaterTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension RealClients {
    /// `headwater serve` under the attacks the limits are for (README "Limits"), with its default
    /// deadlines and caps: a slowloris at a 1,024-descriptor limit, and a flood to the connection
    /// cap while an encoder pushes on the ingest listener.
    @Suite("headwater serve under connection attacks", .serialized)
    struct ConnectionAttackTests {
        typealias Serve = ServeCommandTests

        /// One plain GET on a new connection from 127.0.0.1: status and seconds to the whole response.
        static func timedGET(port: Int, path: String) -> (status: Int, seconds: Double) {
            let start = Date()
            guard let socket = try? BlockingSocket(port: port, timeout: 2) else { return (0, Date().timeIntervalSince(start)) }
            socket.send("GET \(path) HTTP/1.1\r\nHost: origin\r\nConnection: close\r\n\r\n")
            let (bytes, _) = socket.receiveAll()
            let text = String(decoding: bytes.prefix(16), as: UTF8.self)
            let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
            return (status, Date().timeIntervalSince(start))
        }

        static func metric(_ name: String, _ labels: String, port: Int) -> Double? {
            guard let socket = try? BlockingSocket(port: port) else { return nil }
            socket.send("GET /metrics HTTP/1.1\r\nHost: origin\r\nConnection: close\r\n\r\n")
            let bytes = socket.receiveAll().bytes
            let prefix = "\(name){\(labels)} "
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
                return Double(line.dropFirst(prefix.count))
            }
            return nil
        }

        /// What happened to one slow connection.
        enum SlowOutcome: Equatable {
            case refused503
            /// Closed with a 408 this many seconds after its first byte.
            case timedOut408(after: Double)
            case other(String)
        }

        @Test("slowloris: 1,000 connections sending a byte a second at a 1,024-descriptor limit; viewers are answered in under 100 ms throughout")
        func slowloris() async throws {
            let prlimit = try #require(Serve.which("prlimit"), "prlimit (util-linux) is required")
            let (server, port, log) = try Serve.startServer(wrapper: [prlimit, "--nofile=1024:1024", "--"])
            defer {
                if server.isRunning { server.terminate() }
                try? FileManager.default.removeItem(at: log)
            }
            #expect(Serve.get(port: port, path: "/healthz").hasPrefix("HTTP/1.1 200"))

            // The attacker: 1,000 connections from 127.0.0.2, opened over a second (as a
            // slowloris ramps up; a burst of connects at once is a flood, the other test's subject),
            // each sending the next byte of a head every second, never finishing it, until the
            // server closes it. The viewers are timed from the first connect on.
            let started = Flag()
            let attack = Task.detached { () throws -> [SlowOutcome] in
                try await onThread {
                    let head = Array("GET /live/demo/master.m3u8 HTTP/1.1\r\nHost: origin\r\nUser-Agent: slowloris/1.0 (".utf8)
                    var sockets: [(socket: BlockingSocket, started: Date)] = []
                    started.set()
                    for index in 0..<1000 {
                        let socket = try BlockingSocket(port: port, source: "127.0.0.2", timeout: 5)
                        socket.setReceiveTimeout(0.001)
                        socket.send([head[0]])
                        sockets.append((socket, Date()))
                        if index % 50 == 49 { Thread.sleep(forTimeInterval: 0.05) }
                    }
                    var outcomes = [SlowOutcome?](repeating: nil, count: sockets.count)
                    var received = [[UInt8]](repeating: [], count: sockets.count)
                    let start = Date()
                    var tick = 1
                    while outcomes.contains(where: { $0 == nil }), Date().timeIntervalSince(start) < 20 {
                        for (index, entry) in sockets.enumerated() where outcomes[index] == nil {
                            // `receive()`: nil when nothing is waiting, empty at the end of the stream.
                            var closed = false
                            while let chunk = entry.socket.receive() {
                                if chunk.isEmpty { closed = true; break }
                                received[index] += chunk
                            }
                            if !closed, !entry.socket.send([head[tick % head.count]]) {
                                closed = true
                                while let chunk = entry.socket.receive(), !chunk.isEmpty { received[index] += chunk }
                            }
                            let text = String(decoding: received[index], as: UTF8.self)
                            if text.hasPrefix("HTTP/1.1 503") {
                                outcomes[index] = .refused503
                            } else if text.hasPrefix("HTTP/1.1 408"), closed {
                                outcomes[index] = .timedOut408(after: Date().timeIntervalSince(entry.started))
                            } else if closed {
                                outcomes[index] = .other(String(text.prefix(60)))
                            }
                        }
                        tick += 1
                        Thread.sleep(forTimeInterval: 1)
                    }
                    return outcomes.map { $0 ?? .other("still open after 20 s") }
                }
            }

            // The viewers: a request every 100 ms, each on a new connection, for 14 s.
            let latencies = try await onThread {
                var latencies: [(status: Int, seconds: Double)] = []
                while !started.isSet { Thread.sleep(forTimeInterval: 0.001) }
                let start = Date()
                while Date().timeIntervalSince(start) < 14 {
                    let at = Date().timeIntervalSince(start)
                    let result = Self.timedGET(port: port, path: "/live/demo/v1.m3u8")
                    if result.seconds > 0.05 { print("slow viewer request at \(at) s: \(result.seconds * 1000) ms") }
                    latencies.append(result)
                    Thread.sleep(forTimeInterval: 0.1)
                }
                return latencies
            }
            let outcomes = try await attack.value

            let slowest = latencies.map(\.seconds).max() ?? 0
            #expect(latencies.allSatisfy { $0.status == 200 }, "\(latencies.filter { $0.status != 200 }.prefix(5))")
            // (Tests/tools/test.sh runs this test alone, after the parallel run.)
            #expect(slowest < 0.1, "slowest viewer request \(slowest) s")
            let refused = outcomes.filter { $0 == .refused503 }.count
            let timedOut = outcomes.compactMap { if case .timedOut408(let after) = $0 { after } else { nil } }
            let others = outcomes.filter { if case .other = $0 { true } else { false } }
            #expect(others.isEmpty, "\(others.prefix(5))")
            // The per-client cap (256) held; the head deadline (10 s) closed the ones it let in.
            #expect(timedOut.count == 256, "\(timedOut.count) closed by the head deadline, \(refused) refused")
            #expect(refused == 744)
            #expect(timedOut.allSatisfy { $0 >= 9.5 && $0 < 13 }, "head deadline closes after \(timedOut.min() ?? 0)–\(timedOut.max() ?? 0) s")
            #expect(Self.metric("headwater_http_deadline_closes_total", "deadline=\"request_head\"", port: port) == 256)
            #expect(Self.metric("headwater_http_connections_refused_total", "reason=\"client_capacity\"", port: port) == 744)
            server.terminate()
            server.waitUntilExit()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").filter { $0.contains("refusing connections") }
            #expect(lines.count == 1, "refusal log lines: \(lines)")
            print("slowloris: viewer p50 \(Self.percentile(latencies.map(\.seconds), 0.5) * 1000) ms, max \(slowest * 1000) ms over \(latencies.count) requests; \(timedOut.count) closed by the head deadline after \(timedOut.min() ?? 0)–\(timedOut.max() ?? 0) s, \(refused) refused 503")
        }

        @Test("a flood to the connection cap is refused 503, logged once and counted; the encoder on the ingest listener keeps the channel live")
        func floodWhileAnEncoderPushes() async throws {
            let ffmpeg = try #require(Serve.which("ffmpeg"), "ffmpeg is required")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-flood-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let ingestPort = try Serve.freePort()
            let config = directory.appendingPathComponent("headwater.yaml")
            try """
                server:
                  ingest_listen: 127.0.0.1:\(ingestPort)
                  limits:
                    max_connections: 300
                    max_connections_per_client: 0
                channels:
                  live:
                    source:
                      type: push
                      token_env: HW_TEST_INGEST_TOKEN
                      target_duration: 2
                    window: 12
                """.write(to: config, atomically: true, encoding: .utf8)
            let (server, port, log) = try Serve.startServer(config: config.path, environment: ["HW_TEST_INGEST_TOKEN": "s3cret"])
            defer {
                if server.isRunning { server.terminate() }
                try? FileManager.default.removeItem(at: log)
            }
            let (pusher, _) = try Serve.run(
                ffmpeg,
                Serve.liveEncoderArguments(
                    seconds: 40,
                    output: [
                        "-method", "PUT", "-headers", "Authorization: Bearer s3cret\r\n",
                        "http://127.0.0.1:\(ingestPort)/ingest/live/stream.m3u8",
                    ]))
            defer { if pusher.isRunning { pusher.terminate() } }
            #expect(Serve.waitForPlaylist(port: ingestPort, path: "/live/live/stream.m3u8"), "the pushed channel went live")
            // Ingest is not served on the public listener.
            #expect(Serve.get(port: port, path: "/ingest/live/stream.m3u8").hasPrefix("HTTP/1.1 404"))

            // The flood: 1,500 connections that send nothing, held open for 12 s.
            let flood = try await onThread { () throws -> (held: [BlockingSocket], refused: Int, retryAfter: Bool) in
                var held: [BlockingSocket] = []
                var refused = 0
                var retryAfter = true
                for index in 0..<1500 {
                    let socket = try BlockingSocket(port: port, source: "127.0.0.\(2 + index % 200)", timeout: 5)
                    socket.setReceiveTimeout(0.02)
                    held.append(socket)
                }
                Thread.sleep(forTimeInterval: 0.5)
                for socket in held {
                    let text = String(decoding: socket.receive() ?? [], as: UTF8.self)
                    if text.hasPrefix("HTTP/1.1 503") {
                        refused += 1
                        retryAfter = retryAfter && text.contains("Retry-After: 5\r\n")
                    }
                }
                return (held, refused, retryAfter)
            }
            #expect(flood.refused == 1200)
            #expect(flood.retryAfter)
            // While the public listener is full: a viewer is refused, the encoder is not.
            #expect(Serve.get(port: port, path: "/live/live/stream.m3u8").hasPrefix("HTTP/1.1 503"))
            let before = Self.mediaSequence(Serve.get(port: ingestPort, path: "/live/live/stream.m3u8"))
            try await Task.sleep(for: .seconds(12))
            let playlist = Serve.get(port: ingestPort, path: "/live/live/stream.m3u8")
            let after = Self.mediaSequence(playlist)
            #expect((after ?? 0) >= (before ?? .max) + 4, "media sequence \(before ?? -1) → \(after ?? -1) in 12 s")
            #expect(!playlist.contains("#EXT-X-GAP"), "\(playlist)")
            #expect(Self.metric("headwater_http_connections_refused_total", "reason=\"capacity\"", port: ingestPort) == 1201)
            #expect(Self.metric("headwater_stalls_total", "channel=\"live\"", port: ingestPort) ?? 0 == 0)
            for socket in flood.held { socket.shutdown() }
            // Once the flood is gone, viewers are served again.
            try await Self.eventually { Serve.get(port: port, path: "/live/live/stream.m3u8").hasPrefix("HTTP/1.1 200") }
            server.terminate()
            server.waitUntilExit()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").filter { $0.contains("refusing connections") }
            #expect((1...3).contains(lines.count), "refusal log lines: \(lines)")
            print(
                "flood: 1,500 connections to a cap of 300: \(flood.refused) refused 503 with Retry-After; the pushed channel's "
                    + "media sequence \(before ?? -1) → \(after ?? -1) in 12 s, no GAP; \(lines.count) refusal log line(s)")
        }

        /// Set once, read from other threads.
        final class Flag: Sendable {
            private let value = Atomic<Bool>(false)
            func set() { value.store(true, ordering: .releasing) }
            var isSet: Bool { value.load(ordering: .acquiring) }
        }

        static func mediaSequence(_ response: String) -> Int? {
            guard let line = response.split(separator: "\n").first(where: { $0.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") }) else { return nil }
            return Int(line.dropFirst("#EXT-X-MEDIA-SEQUENCE:".count).trimmingCharacters(in: .whitespacesAndNewlines))
        }

        static func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }

        static func eventually(seconds: Double = 10, _ condition: () -> Bool) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if condition() { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("the condition did not hold within \(seconds) s")
        }
    }
}
