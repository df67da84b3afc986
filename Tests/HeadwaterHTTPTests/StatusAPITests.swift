import AsyncHTTPClient
import Foundation
import HeadwaterCore
@testable import HeadwaterHTTP
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// A wall clock the test moves.
final class StatusTestClock: WallClock {
    private let microseconds: Atomic<Int64>
    init(_ start: Int64) { microseconds = Atomic(start) }
    func now() -> Int64 { microseconds.load(ordering: .relaxed) }
    func advance(seconds: Int64) { microseconds.add(seconds * 1_000_000, ordering: .relaxed) }
}

/// Channels with known status timelines, plus `ghost`: configured, nothing published yet.
struct StatusTestContent: OriginContent {
    var channels: [String: ChannelSnapshot]
    func snapshot(of channel: String) -> ChannelSnapshot? { channels[channel] }
    var channelNames: [String] { (channels.keys + ["ghost"]).sorted() }
}

/// `GET /api/status` over a real socket: the JSON the status page reads, its values at a known
/// instant, and its headers.
@Suite("Status API")
struct StatusAPITests {
    /// The instant the server starts (µs); requests are made 42 s later.
    static let start: Int64 = 1_795_282_560_000_000
    static let now = start + 42_000_000

    /// `demo`: a push channel whose `v1` window has content, an ad break (cue-out, slate fill with a
    /// discontinuity, a gap, cue-in with a discontinuity back to the source); its newest segment
    /// (from `v1`) arrived 2.5 s before the request. `shaky`: degraded, 20 s behind. `slow`: starting.
    static let demoStatus: ChannelStatus = {
        var status = ChannelStatus(source: "push", targetDuration: 6, windowSeconds: 30)
        status.renditions = [
            .init(
                name: "v1", mediaSequence: 7, discontinuitySequence: 3,
                segments: [
                    .init(msn: 7, duration: 6, kind: .content, discontinuity: false),
                    .init(msn: 8, duration: 5.5, kind: .content, discontinuity: false, marker: "cue-out"),
                    .init(msn: 9, duration: 6, kind: .slate, discontinuity: true, marker: "cue-out-cont"),
                    .init(msn: 10, duration: 6, kind: .gap, discontinuity: false),
                    .init(msn: 11, duration: 4.25, kind: .content, discontinuity: true, marker: "cue-in"),
                ],
                lastSegmentAt: now - 2_500_000),
            .init(
                name: "audio", mediaSequence: 7, discontinuitySequence: 3,
                segments: [.init(msn: 7, duration: 6, kind: .content, discontinuity: false)],
                lastSegmentAt: now - 4_000_000),
        ]
        status.stalls = [
            .init(rendition: nil, startedAt: now - 30_000_000, endedAt: now - 18_000_000, fill: "slate"),
            .init(rendition: "audio", startedAt: now - 3_000_000, fill: "gap"),
        ]
        status.ingest = .init(segments: 120, bytes: 9_876_543, rejected: 2)
        return status
    }()

    static let content: StatusTestContent = {
        let base = Fixture.content()
        var demo = base.channels["demo"]!
        demo.status = demoStatus
        var shaky = base.channels["shaky"]!
        var shakyStatus = ChannelStatus(source: "pull", targetDuration: 6, windowSeconds: 30)
        shakyStatus.renditions = [
            .init(name: "v1", mediaSequence: 1, discontinuitySequence: 0, segments: [], lastSegmentAt: now - 20_000_000)
        ]
        shaky.status = shakyStatus
        var slow = base.channels["slow"]!
        slow.status = ChannelStatus(source: "loop", targetDuration: 4, windowSeconds: 24)
        return StatusTestContent(channels: ["demo": demo, "shaky": shaky, "slow": slow])
    }()

    private static func fetch(_ port: Int, method: HTTPMethod = .GET) async throws -> (HTTPClientResponse, [UInt8]) {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/status")
            request.method = method
            let response = try await client.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            try await client.shutdown()
            return (response, Array(body.readableBytesView))
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    @Test func routes() {
        #expect(Route.parse("/api/status") == .success(.status))
        #expect(Route.parse("/api/status?x=1") == .success(.status))
        #expect(Route.parse("/api/other") == .success(.staticFile(path: ["api", "other"])))
        #expect(Route.status.template == "/api/status")
        #expect(Route.status.allowedMethods == [.GET, .HEAD, .OPTIONS])
    }

    @Test func documentOverSocket() async throws {
        let clock = StatusTestClock(Self.start)
        try await withServer(content: Self.content, clock: clock) { port in
            clock.advance(seconds: 42)
            let (response, body) = try await Self.fetch(port)
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "Content-Type") == "application/json")
            #expect(response.headers.first(name: "Cache-Control") == "no-store")
            #expect(response.headers.first(name: "Expires") == nil)
            #expect(body.last == UInt8(ascii: "\n"))

            let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            #expect(Set(json.keys) == ["generatedAt", "server", "channels"])
            #expect(json["generatedAt"] as? Int64 == Self.now / 1_000)
            let server = try #require(json["server"] as? [String: Any])
            #expect(server["version"] as? String == HeadwaterVersion.current)
            #expect(server["uptimeSeconds"] as? Int == 42)

            let channels = try #require(json["channels"] as? [[String: Any]])
            #expect(channels.map { $0["name"] as? String } == ["demo", "ghost", "shaky", "slow"])
            let demo = channels[0]
            #expect(demo["state"] as? String == "live")
            #expect(demo["degradedReason"] == nil)
            // The newest segment of any rendition: v1's, 2.5 s ago (audio's is 4 s old).
            #expect(demo["liveEdgeAgeSeconds"] as? Double == 2.5)
            let status = try #require(demo["status"] as? [String: Any])
            #expect(status["source"] as? String == "push")
            #expect(status["targetDuration"] as? Int == 6)
            #expect(status["windowSeconds"] as? Int == 30)
            let renditions = try #require(status["renditions"] as? [[String: Any]])
            #expect(renditions.map { $0["name"] as? String } == ["v1", "audio"])
            #expect(renditions[0]["mediaSequence"] as? Int == 7)
            #expect(renditions[0]["discontinuitySequence"] as? Int == 3)
            #expect(renditions[0]["lastSegmentAt"] as? Int64 == Self.now - 2_500_000)
            let segments = try #require(renditions[0]["segments"] as? [[String: Any]])
            #expect(segments.map { $0["msn"] as? Int } == [7, 8, 9, 10, 11])
            #expect(segments.map { $0["kind"] as? String } == ["content", "content", "slate", "gap", "content"])
            #expect(segments.map { $0["duration"] as? Double } == [6, 5.5, 6, 6, 4.25])
            #expect(segments.map { $0["discontinuity"] as? Bool } == [false, false, true, false, true])
            #expect(segments.map { $0["marker"] as? String } == [nil, "cue-out", "cue-out-cont", nil, "cue-in"])
            // A segment without a marker has no `marker` key at all (not null).
            #expect(!segments[0].keys.contains("marker"))
            let stalls = try #require(status["stalls"] as? [[String: Any]])
            #expect(stalls.count == 2)
            #expect(stalls[0]["fill"] as? String == "slate")
            #expect(stalls[0]["rendition"] == nil)
            #expect(stalls[0]["endedAt"] as? Int64 == Self.now - 18_000_000)
            #expect(stalls[1]["rendition"] as? String == "audio")
            #expect(stalls[1]["endedAt"] == nil)
            let ingest = try #require(status["ingest"] as? [String: Any])
            #expect(ingest["segments"] as? Int == 120)
            #expect(ingest["bytes"] as? Int == 9_876_543)
            #expect(ingest["rejected"] as? Int == 2)

            // Configured but nothing published: starting, no status, no age.
            #expect(channels[1]["state"] as? String == "starting")
            #expect(channels[1]["status"] == nil)
            #expect(channels[1]["liveEdgeAgeSeconds"] == nil)

            #expect(channels[2]["state"] as? String == "degraded")
            #expect(channels[2]["degradedReason"] as? String == "source stalled")
            #expect(channels[2]["liveEdgeAgeSeconds"] as? Double == 20)

            #expect(channels[3]["state"] as? String == "starting")
            #expect(channels[3]["liveEdgeAgeSeconds"] == nil)
            #expect((channels[3]["status"] as? [String: Any])?["source"] as? String == "loop")
        }
    }

    /// The `status` member is `ChannelStatus`'s own encoding: it decodes back to the same value,
    /// and keys are sorted, so two requests at one instant give identical bytes.
    @Test func statusRoundTripsAndOutputIsStable() async throws {
        let clock = StatusTestClock(Self.now)
        try await withServer(content: Self.content, clock: clock) { port in
            let (_, first) = try await Self.fetch(port)
            let (_, second) = try await Self.fetch(port)
            #expect(first == second)
            let text = String(decoding: first, as: UTF8.self)
            #expect(text.hasPrefix(#"{"channels":[{"liveEdgeAgeSeconds":2.5,"name":"demo","state":"live","status":{"#))

            struct Document: Decodable {
                struct Channel: Decodable {
                    var name: String
                    var status: ChannelStatus?
                }
                var channels: [Channel]
            }
            let document = try JSONDecoder().decode(Document.self, from: Data(first))
            #expect(document.channels.first { $0.name == "demo" }?.status == Self.demoStatus)
        }
    }

    @Test func headAndMethods() async throws {
        try await withServer(content: Self.content) { port in
            let (get, body) = try await Self.fetch(port)
            let (head, headBody) = try await Self.fetch(port, method: .HEAD)
            #expect(head.status == .ok)
            #expect(headBody.isEmpty)
            #expect(head.headers.first(name: "Content-Type") == "application/json")
            #expect(head.headers.first(name: "Cache-Control") == "no-store")
            #expect(get.headers.first(name: "Content-Length") == String(body.count))
            let (post, _) = try await Self.fetch(port, method: .POST)
            #expect(post.status == .methodNotAllowed)
            #expect(post.headers.first(name: "Allow") == "GET, HEAD, OPTIONS")
        }
    }
}
