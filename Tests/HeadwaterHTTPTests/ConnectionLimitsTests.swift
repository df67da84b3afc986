import Foundation
import HeadwaterTesting
@testable import HeadwaterHTTP
import HeadwaterRuntime
import NIOCore
import Testing

/// Deadlines and caps on real sockets (``ConnectionLimits``): a head sent a byte at a time, an
/// upload that trickles, a client that never reads, connections over the caps, and the ingest
/// listener that a flood of the public one cannot lock out. Timeouts are shortened to a second so
/// the suite stays quick; the defaults are covered by `headwater serve` in the CLI tests.
@Suite("Connection deadlines and caps")
struct ConnectionLimitsTests {
    static func deadlineCloses(_ metrics: OriginMetrics, _ deadline: String) -> Double? {
        Exposition(String(decoding: metrics.exposition(channels: []), as: UTF8.self))[
            "headwater_http_deadline_closes_total", ["deadline": deadline]]
    }

    static func refusals(_ metrics: OriginMetrics, _ reason: String) -> Double? {
        Exposition(String(decoding: metrics.exposition(channels: []), as: UTF8.self))[
            "headwater_http_connections_refused_total", ["reason": reason]]
    }

    /// Sends `text` a byte every `interval` until the server closes the connection (or `limit`
    /// passes); returns what the server sent and how long it took to close.
    static func trickle(_ text: String, port: Int, every interval: Double, limit: Double) async throws -> (String, Double) {
        try await onThread {
            let socket = try BlockingSocket(port: port, timeout: 0.05)
            let start = Date()
            var received: [UInt8] = []
            for byte in Array(text.utf8).cycled() {
                if Date().timeIntervalSince(start) > limit { break }
                guard socket.send([byte]) else { break }
                let deadline = Date().addingTimeInterval(interval)
                var closed = false
                while Date() < deadline {
                    guard let chunk = socket.receive() else { continue }  // timeout: keep going
                    if chunk.isEmpty { closed = true; break }
                    received += chunk
                }
                if closed { break }
            }
            return (String(decoding: received, as: UTF8.self), Date().timeIntervalSince(start))
        }
    }

    @Test(arguments: [true, false])
    func aHeadSentAByteAtATimeIsCutOffAtTheHeadDeadline(fastPath: Bool) async throws {
        let metrics = OriginMetrics()
        try await withServer(configure: {
            $0.metrics = metrics
            $0.limits.requestHeadTimeout = .seconds(1)
            $0.fastPathAnswers = fastPath
        }) { port in
            // Never idle (a byte every 100 ms), never whole: the idle timeout (60 s) never fires.
            let (answer, elapsed) = try await Self.trickle(
                "GET /healthz HTTP/1.1\r\nHost: origin\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaa", port: port,
                every: 0.1, limit: 6)
            #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(answer)")
            #expect(answer.contains("Connection: close"))
            #expect(answer.contains("the request head did not arrive within 1"))
            #expect(elapsed >= 0.9 && elapsed < 3, "closed after \(elapsed) s")
            #expect(Self.deadlineCloses(metrics, "request_head") == 1)
        }
    }

    @Test func aKeepAliveConnectionBetweenRequestsHasNoHeadDeadline() async throws {
        let metrics = OriginMetrics()
        try await withServer(configure: {
            $0.metrics = metrics
            $0.limits.requestHeadTimeout = .seconds(1)
        }) { port in
            try await onThread {
                let socket = try BlockingSocket(port: port)
                socket.send("GET /healthz HTTP/1.1\r\nHost: origin\r\n\r\n")
                #expect(socket.receiveResponse()?.status == 200)
                Thread.sleep(forTimeInterval: 1.6)  // past the head deadline, well within the idle timeout
                socket.send("GET /healthz HTTP/1.1\r\nHost: origin\r\n\r\n")
                #expect(socket.receiveResponse()?.status == 200)
            }
            #expect(Self.deadlineCloses(metrics, "request_head") == 0)
        }
    }

    @Test func anUploadThatTricklesIsCutOffButASteadyOneIsNot() async throws {
        let metrics = OriginMetrics()
        let sink = RecordingSink()
        try await withServer(ingest: sink, configure: {
            $0.metrics = metrics
            $0.limits.bodyTimeout = .seconds(1)
            $0.limits.minimumBodyRate = 1000
        }) { port in
            let head =
                "PUT /ingest/demo/seg1.ts HTTP/1.1\r\nHost: origin\r\nAuthorization: Bearer secret\r\nTransfer-Encoding: chunked\r\n\r\n"
            let (answer, elapsed) = try await onThread {
                let socket = try BlockingSocket(port: port, timeout: 0.05)
                socket.send(head)
                let start = Date()
                var received: [UInt8] = []
                while Date().timeIntervalSince(start) < 6 {
                    guard socket.send("1\r\nx\r\n") else { break }  // one byte in each chunk, 5 a second
                    Thread.sleep(forTimeInterval: 0.2)
                    if let chunk = socket.receive() {
                        if chunk.isEmpty { break }
                        received += chunk
                    }
                }
                return (String(decoding: received, as: UTF8.self), Date().timeIntervalSince(start))
            }
            #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(answer)")
            #expect(answer.contains("slower than 1000 bytes per second"))
            #expect(elapsed < 3.5, "closed after \(elapsed) s")
            #expect(Self.deadlineCloses(metrics, "request_body") == 1)

            // 2,000 bytes every 100 ms for 2.5 s: twenty times the minimum rate, so it completes.
            let status = try await onThread {
                let socket = try BlockingSocket(port: port)
                socket.send(head.replacingOccurrences(of: "seg1", with: "seg2"))
                let chunk = String(repeating: "y", count: 2000)
                for _ in 0..<25 {
                    socket.send("7d0\r\n\(chunk)\r\n")
                    Thread.sleep(forTimeInterval: 0.1)
                }
                socket.send("0\r\n\r\n")
                return socket.receiveResponse()?.status
            }
            #expect(status == 201)
            #expect(Self.deadlineCloses(metrics, "request_body") == 1)
        }
    }

    @Test func aClientThatNeverReadsIsDisconnectedAndOneThatReadsSlowlyIsNot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Longer to read at the slow reader's pace (~6 s) than the send timeout: one region for the
        // whole body would cut it off.
        let big = patternBytes(count: 16 * 1024 * 1024, seed: 11)
        let path = try directory.write("v1/big.ts", big)
        let content = Fixture.content(segments: ["big.ts": segmentFile(path: path, length: big.count, tag: "seg-big")])
        let metrics = OriginMetrics()
        try await withServer(content: content, configure: {
            $0.metrics = metrics
            $0.limits.sendTimeout = .seconds(3)
        }) { port in
            let request = "GET /live/demo/v1/big.ts HTTP/1.1\r\nHost: origin\r\n\r\n"
            // Reads nothing: the server's send buffer fills and stays full.
            let closed = try await onThread {
                let socket = try BlockingSocket(port: port, receiveBuffer: 4096)
                socket.send(request)
                Thread.sleep(forTimeInterval: 5)
                return socket.receiveAll()
            }
            #expect(closed.bytes.count < big.count, "the whole body arrived: \(closed.bytes.count) bytes")
            #expect(Self.deadlineCloses(metrics, "send") == 1)

            // Reads 64 KiB every 25 ms (about 2.6 MB/s). Progress is the socket turning writable
            // again, which the kernel reports once half its send buffer is free: on loopback that
            // buffer grows to 4 MB, so a reader must free 2 MB within the send timeout (0.8 s here).
            let slow = try await onThread {
                let socket = try BlockingSocket(port: port, receiveBuffer: 65_536)
                socket.send(request)
                var all: [UInt8] = []
                while let chunk = socket.receive(), !chunk.isEmpty {
                    all += chunk
                    if all.count >= big.count + 100 { break }
                    Thread.sleep(forTimeInterval: 0.025)
                }
                return all
            }
            let response = try #require(RawResponse.parse(slow, from: 0, bodiless: false)?.0, "\(slow.count) bytes: \(String(decoding: slow.prefix(300), as: UTF8.self))")
            #expect(response.status == 200)
            #expect(response.body == big)
            #expect(Self.deadlineCloses(metrics, "send") == 1)
        }
    }

    @Test func anHTTP2ClientThatNeverReadsIsDisconnected() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let big = patternBytes(count: 16 * 1024 * 1024, seed: 12)
        let path = try directory.write("v1/big.ts", big)
        let content = Fixture.content(segments: ["big.ts": segmentFile(path: path, length: big.count, tag: "seg-big")])
        let metrics = OriginMetrics()
        try await withServer(content: content, configure: {
            $0.metrics = metrics
            $0.limits.sendTimeout = .seconds(2)
        }) { port in
            typealias Frames = HTTP2AbuseTests
            // h2c by prior knowledge. The client reads nothing: its stream's pieces stop being
            // written while the connection itself stays writable (a reset, not a connection close,
            // ends it: the stream's piece missed the send deadline).
            let settings = Frames.frame(type: 0x4, stream: 0, [0x00, 0x04] + Frames.bigEndian(0x7fff_ffff))
            let windowUpdate = Frames.frame(type: 0x8, stream: 0, Frames.bigEndian(0x7fff_ffff - 65_535))
            let headers = Frames.frame(
                type: 0x1, flags: 0x5, stream: 1,
                [0x82, 0x86] + [0x04] + Frames.hpackString("/live/demo/v1/big.ts") + [0x01] + Frames.hpackString("localhost"))
            let closed = try await onThread {
                let socket = try BlockingSocket(port: port, receiveBuffer: 4096)
                socket.send(HTTP2Preface.bytes + settings + windowUpdate + headers)
                Thread.sleep(forTimeInterval: 4)
                return socket.receiveAll()
            }
            #expect(closed.bytes.count < big.count, "the whole body arrived: \(closed.bytes.count) bytes")
            #expect(Self.deadlineCloses(metrics, "send") == 1)
        }
    }

    @Test func connectionsOverTheCapsAreAnswered503WithRetryAfter() async throws {
        let metrics = OriginMetrics()
        try await withServer(configure: {
            $0.metrics = metrics
            $0.limits.maxConnections = 4
            $0.limits.maxConnectionsPerClient = 2
        }) { port in
            try await onThread {
                // Each connection is answered before the next is made: connections land on different
                // event loops, so two made at once could be admitted in either order.
                func admitted(from source: String) throws -> BlockingSocket {
                    let socket = try BlockingSocket(port: port, source: source)
                    socket.send("GET /healthz HTTP/1.1\r\nHost: origin\r\n\r\n")
                    #expect(socket.receiveResponse()?.status == 200, "from \(source)")
                    return socket
                }
                let held = [try admitted(from: "127.0.0.2"), try admitted(from: "127.0.0.2")]
                let third = try BlockingSocket(port: port, source: "127.0.0.2")
                third.send("GET /healthz HTTP/1.1\r\nHost: origin\r\n\r\n")
                let refused = try #require(third.receiveResponse())
                #expect(refused.status == 503)
                #expect(refused.header("Retry-After") == "5")
                #expect(refused.header("Connection") == "close")
                #expect(refused.text.contains("too many connections from 127.0.0.2"))
                #expect(third.receiveAll().closed)

                // Another address may still connect, up to the total cap.
                let more = [try admitted(from: "127.0.0.3"), try admitted(from: "127.0.0.4")]
                let sixth = try BlockingSocket(port: port, source: "127.0.0.5")
                let full = try #require(sixth.receiveResponse())
                #expect(full.status == 503)
                #expect(full.text.contains("connection limit"))
                for socket in held + more {
                    socket.send("GET /healthz HTTP/1.1\r\nHost: origin\r\n\r\n")
                    #expect(socket.receiveResponse()?.status == 200)
                }
            }
            #expect(Self.refusals(metrics, "client_capacity") == 1)
            #expect(Self.refusals(metrics, "capacity") == 1)
            // Closed connections make room again.
            try await eventually {
                try await onThread {
                    let socket = try BlockingSocket(port: port, source: "127.0.0.2")
                    socket.send("GET /healthz HTTP/1.1\r\nHost: origin\r\n\r\n")
                    return socket.receiveResponse()?.status == 200
                }
            }
        }
    }

    @Test func theIngestListenerServesIngestUncappedAndThePublicOneDoesNot() async throws {
        let metrics = OriginMetrics()
        let sink = RecordingSink()
        try await withServer(
            ingest: sink,
            configure: {
                $0.metrics = metrics
                $0.limits.maxConnections = 1
                $0.ingestListener = .init(host: "127.0.0.1", port: 0)
            },
            serverReady: { try #require(try await $0.waitUntilIngestListening().port) }
        ) { port, ingestPort in
            try await onThread {
                let upload =
                    "PUT /ingest/demo/seg1.ts HTTP/1.1\r\nHost: origin\r\nAuthorization: Bearer secret\r\nContent-Length: 3\r\n\r\nabc"
                let viewer = try BlockingSocket(port: port)  // the public listener's one connection
                viewer.send(upload)
                let refused = try #require(viewer.receiveResponse())
                #expect(refused.status == 404)
                #expect(refused.text.contains("not served on this listener"))
                // The public cap is taken, the ingest listener still answers, several at once.
                let encoders = try (0..<3).map { _ in try BlockingSocket(port: ingestPort) }
                for encoder in encoders {
                    encoder.send(upload)
                    #expect(encoder.receiveResponse()?.status == 201)
                }
                viewer.send("GET /healthz HTTP/1.1\r\nHost: origin\r\n\r\n")
                #expect(viewer.receiveResponse()?.status == 200)
            }
            #expect(Self.refusals(metrics, "capacity") == 0)
        }
    }
}

/// Retries `condition` for up to `seconds` until it holds.
func eventually(
    seconds: Double = 5, _ condition: @Sendable () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("the condition did not hold within \(seconds) s", sourceLocation: sourceLocation)
}

extension Array {
    /// The elements over and over (for a head trickled until the server gives up).
    func cycled() -> UnfoldSequence<Element, Int> {
        sequence(state: 0) { index in
            defer { index += 1 }
            return isEmpty ? nil : self[index % count]
        }
    }
}
