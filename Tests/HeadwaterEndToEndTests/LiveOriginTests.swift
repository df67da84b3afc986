import AsyncHTTPClient
import Foundation
import HeadwaterHLS
import HeadwaterHTTP
import HeadwaterRuntime
import HeadwaterSources
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Testing

/// A clock the test moves by hand: minutes of live time pass in seconds.
final class ManualClock: WallClock, @unchecked Sendable {
    // Only the test task writes; the server reads through snapshots, never the clock.
    private let lock = NSLock()
    private var value: Int64
    init(_ start: Int64) { value = start }
    func now() -> Int64 { lock.withLock { value } }
    func advance(microseconds: Int64) { lock.withLock { value += microseconds } }
}

let demoPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Public/demo/master.m3u8").path

/// The origin over a real socket: the loop channel published on an injected clock, served by
/// `OriginServer`, read by AsyncHTTPClient exactly as a player or CDN would.
@Suite("Live origin end to end", .serialized)
struct LiveOriginTests {
    struct Harness {
        let clock: ManualClock
        let publisher: LoopChannelPublisher
        let base: String
        let client: HTTPClient

        func get(_ path: String, headers: [(String, String)] = []) async throws -> (HTTPClientResponse, [UInt8]) {
            var request = HTTPClientRequest(url: base + path)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let response = try await client.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 16 << 20)
            return (response, Array(buffer: body))
        }
    }

    /// Runs `body` against a live server, then shuts it down gracefully.
    func withOrigin(_ body: (Harness) async throws -> Void) async throws {
        let package = try LoopPackage.load(multivariantPath: demoPackage)
        let clock = ManualClock(1_795_282_560_000_000)  // 2026-11-21T17:36:00Z
        let registry = ChannelRegistry()
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let channel = LoopChannel(name: "demo", package: package, windowSeconds: 12, startedAt: clock.now())
        let publisher = try LoopChannelPublisher(channel: channel, registry: registry, clock: clock, logger: logger)
        publisher.publishNow()
        var configuration = OriginServerConfiguration()
        configuration.port = 0
        configuration.cors = true
        let server = OriginServer(configuration: configuration, content: registry, ingest: nil, logger: logger)
        let group = ServiceGroup(services: [server], logger: logger)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let address = try await server.waitUntilListening()
            let harness = Harness(clock: clock, publisher: publisher, base: "http://127.0.0.1:\(address.port!)", client: client)
            do {
                try await body(harness)
            } catch {
                try? await client.shutdown()
                await group.triggerGracefulShutdown()
                throw error
            }
            try await client.shutdown()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test("two minutes of live time: every reload obeys the live rules, every listed segment is served, removed ones stay fetchable")
    func liveRulesOverTheWire() async throws {
        try await withOrigin { origin in
            let (masterResponse, masterBody) = try await origin.get("/live/demo/master.m3u8")
            #expect(masterResponse.status == .ok)
            let master = try PlaylistParser().parseMultivariant(masterBody)
            let renditions = master.variants.map(\.uri) + master.renditions.compactMap(\.uri)
            #expect(renditions == ["v0.m3u8", "v1.m3u8", "v2.m3u8", "audio-alt.m3u8"])

            var previous: [String: MediaPlaylist] = [:]
            var fetched: Set<String> = []
            var removed: [String] = []
            for step in 0..<240 {  // 240 × 0.5 s = 2 minutes, six loop points
                origin.clock.advance(microseconds: 500_000)
                origin.publisher.publishNow()
                for name in renditions {
                    let gzip = step % 2 == 0
                    let (response, body) = try await origin.get(
                        "/live/demo/\(name)", headers: gzip ? [("Accept-Encoding", "gzip")] : [])
                    #expect(response.status == .ok)
                    #expect(response.headers["Content-Type"].first == "application/vnd.apple.mpegurl")
                    #expect(response.headers["Cache-Control"].first == "public, max-age=1", "at most half the target duration")
                    #expect(response.headers["Vary"].first == "Accept-Encoding")
                    let text = gzip ? try #require(Gzip.decompress(body)) : body
                    if gzip { #expect(response.headers["Content-Encoding"].first == "gzip") }
                    let playlist = try PlaylistParser().parseMedia(text)
                    #expect(PlaylistValidator.validate(playlist).filter { $0.severity == .error }.isEmpty)
                    if let old = previous[name] {
                        let issues = LiveUpdateChecker.check(previous: old, next: playlist)
                        #expect(issues.isEmpty, "\(name) step \(step): \(issues)")
                        let kept = Set(playlist.segments.map(\.uri))
                        removed += old.segments.map(\.uri).filter { !kept.contains($0) }.map { "/live/demo/\($0)" }
                    }
                    previous[name] = playlist
                    for segment in playlist.segments where fetched.insert("/live/demo/\(segment.uri)").inserted {
                        let (segmentResponse, bytes) = try await origin.get("/live/demo/\(segment.uri)")
                        #expect(segmentResponse.status == .ok, "\(segment.uri)")
                        #expect(segmentResponse.headers["Content-Type"].first == "video/mp2t")
                        #expect(segmentResponse.headers["Cache-Control"].first?.contains("immutable") == true)
                        #expect(bytes.count > 1_000 && bytes.count % 188 == 0)
                        let (ranged, slice) = try await origin.get("/live/demo/\(segment.uri)", headers: [("Range", "bytes=188-375")])
                        #expect(ranged.status == .partialContent && slice == Array(bytes[188...375]))
                    }
                }
                // Segments that just left the window are still served (C7).
                for uri in removed {
                    let (response, _) = try await origin.get(uri, headers: [("Range", "bytes=0-187")])
                    #expect(response.status == .partialContent, "removed \(uri) must stay fetchable")
                }
                removed.removeAll()
            }
            #expect(fetched.count > 4 * 60, "about 60 new segments per rendition in two minutes")
        }
    }

    @Test("errors: a segment not yet produced is a briefly cached 404, unknown names are 404, hostile paths 400")
    func errors() async throws {
        try await withOrigin { origin in
            let (_, body) = try await origin.get("/live/demo/v0.m3u8")
            let playlist = try PlaylistParser().parseMedia(body)
            let next = playlist.effectiveMediaSequence + UInt64(playlist.segments.count)
            let (future, futureBody) = try await origin.get("/live/demo/v0/\(next).ts")
            #expect(future.status == .notFound)
            #expect(future.headers["Cache-Control"].first == "public, max-age=1")
            #expect(String(decoding: futureBody, as: UTF8.self).split(separator: "\n").count == 1)
            for (path, status) in [
                ("/live/nope/master.m3u8", HTTPResponseStatus.notFound), ("/live/demo/v9.m3u8", .notFound),
                ("/live/demo/%2e%2e/%2e%2e/etc/passwd", .badRequest), ("/live/demo/v0/..%2f..%2fx", .badRequest),
            ] {
                let (response, text) = try await origin.get(path)
                #expect(response.status == status, "\(path)")
                #expect(String(decoding: text, as: UTF8.self).hasSuffix("\n"))
            }
            let (head, _) = try await origin.get("/live/demo/master.m3u8", headers: [("If-None-Match", "\"nothing\"")])
            let etag = try #require(head.headers["ETag"].first)
            let (notModified, empty) = try await origin.get("/live/demo/master.m3u8", headers: [("If-None-Match", etag)])
            #expect(notModified.status == .notModified && empty.isEmpty)
        }
    }
}
