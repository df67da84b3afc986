import AsyncHTTPClient
import Foundation
@testable import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterLiveWindow
@testable import HeadwaterRuntime
@testable import HeadwaterSources
import HeadwaterTesting
import Logging
import NIOCore
import NIOHTTP1
import Testing

/// A pull channel `live` following a scripted upstream at `/live/master.m3u8` → `v0/index.m3u8`.
final class PullHarness {
    let upstream = ScriptedUpstream()
    let registry = ChannelRegistry()
    let state = NSTemporaryDirectory() + "headwater-pull-\(UUID().uuidString)"
    let log = LogRecorder()
    var script = LiveScript(directory: "/live/v0")

    init(start: UInt64 = 0, segments: Int = 5) async throws {
        script = LiveScript(directory: "/live/v0", start: start)
        upstream.set("/live/master.m3u8", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\nv0/index.m3u8\n")
        for _ in 0..<segments { script.produce(on: upstream) }
        try await upstream.start()
    }

    deinit { try? FileManager.default.removeItem(atPath: state) }

    func source(mode: HeadwaterConfiguration.Channel.PullSource.Mode = .fetch, timeout: Int = 500) throws
        -> PullChannelSource
    {
        let pull = HeadwaterConfiguration.Channel.PullSource(
            url: upstream.url("/live/master.m3u8"), mode: mode, targetDuration: 1, timeoutMilliseconds: timeout)
        let channel = HeadwaterConfiguration.Channel(name: "live", source: .pull(pull), windowSeconds: 6)
        return try PullChannelSource(
            channel: channel, source: pull, stateDirectory: state, runTag: "t", registry: registry,
            clock: SystemWallClock(), logger: log.logger, httpClient: HTTPClient.shared)
    }

    /// A source on this upstream, running until the returned task is cancelled.
    func start(mode: HeadwaterConfiguration.Channel.PullSource.Mode = .fetch, timeout: Int = 500) throws
        -> (PullChannelSource, Task<Void, any Error>)
    {
        let source = try source(mode: mode, timeout: timeout)
        return (source, Task { try await source.run() })
    }

    /// The served playlist of `v0`, parsed.
    func served() -> MediaPlaylist? {
        guard let rendered = registry.snapshot(of: "live")?.mediaPlaylists["v0"],
            case .media(let playlist)? = try? PlaylistParser().parse(Array(rendered.body.readableBytesView))
        else { return nil }
        return playlist
    }

    func fetchable() -> [String: SegmentFile] { registry.snapshot(of: "live")?.segments["v0"] ?? [:] }

    /// Headwater numbers from the wall clock: its MSN minus the upstream's, read off the newest
    /// served segment — the `segment N;` in its bytes (fetch mode) or the `segN.ts` of its
    /// upstream URL (reference mode).
    func numberingOffset() -> UInt64? {
        guard let playlist = served(), let last = playlist.segments.last else { return nil }
        let msn = playlist.mediaSequenceNumber(at: playlist.segments.count - 1)
        let upstream: UInt64?
        if last.uri.hasPrefix("http") {
            upstream = last.uri.split(separator: "/").last.flatMap { UInt64($0.dropFirst(3).dropLast(3)) }
        } else {
            let name = String(last.uri.split(separator: "/").last ?? "")
            let text = fetchable()[name].flatMap { FileManager.default.contents(atPath: $0.path) }
                .map { String(decoding: $0.prefix(40), as: UTF8.self) } ?? ""
            upstream = text.split(separator: ";").first?.split(separator: " ").last.flatMap { UInt64($0) }
        }
        return upstream.map { msn - $0 }
    }

    /// Produces one segment a second for `seconds`, recording every served version ten times a second.
    func advance(seconds: Int, producing: Bool = true, into recorder: inout VersionRecorder) async throws {
        for _ in 0..<seconds {
            if producing { script.produce(on: upstream) }
            for _ in 0..<10 {
                recorder.record(served())
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Waits (recording versions) until `condition` holds, at most `seconds`: for counters that
    /// move after a retry whose backoff (up to two target durations) a loaded machine stretches.
    func eventually(
        seconds: Double = 10, into recorder: inout VersionRecorder, _ condition: () -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            recorder.record(served())
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    /// Waits (recording versions) until `condition` holds, at most `seconds`.
    func wait(
        seconds: Double = 8, into recorder: inout VersionRecorder, until condition: (MediaPlaylist?) -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            recorder.record(served())
            if condition(served()) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}

/// Every served version as a polling client sees it: checked against the previous one
/// (`LiveUpdateChecker`: never a backwards media sequence, C1–C6).
struct VersionRecorder {
    var previous: MediaPlaylist?
    var versions = 0
    var discontinuities = Set<UInt64>()
    var problems: [String] = []

    mutating func record(_ playlist: MediaPlaylist?) {
        guard let playlist, playlist != previous else { return }
        if let previous {
            versions += 1
            for issue in LiveUpdateChecker.check(previous: previous, next: playlist) where issue.severity == .error {
                problems.append("v\(versions): \(issue)")
            }
        }
        for (index, segment) in playlist.segments.enumerated() where segment.tags.discontinuity {
            discontinuities.insert(playlist.mediaSequenceNumber(at: index))
        }
        previous = playlist
    }
}

@Suite("Pull source", .serialized)
struct PullSourceTests {
    @Test("segments are downloaded and listed under Headwater's numbering and names, bytes intact")
    func fetches() async throws {
        let harness = try await PullHarness(start: 1000, segments: 4)
        let (source, task) = try harness.start()
        defer { task.cancel() }
        var recorder = VersionRecorder()
        try await harness.advance(seconds: 5, into: &recorder)
        let playlist = try #require(harness.served())
        let offset = try #require(harness.numberingOffset())
        let last = playlist.mediaSequenceNumber(at: playlist.segments.count - 1)
        #expect(last - offset >= 1006, "follows the upstream's live edge: MSN \(last - offset)")
        let files = harness.fetchable()
        for (index, segment) in playlist.segments.enumerated() {
            let msn = playlist.mediaSequenceNumber(at: index)
            #expect(segment.uri == "v0/t-\(msn).ts")
            let file = try #require(files["t-\(msn).ts"])
            #expect(FileManager.default.contents(atPath: file.path) == Data(LiveScript.bytes(msn - offset, run: 0)))
        }
        #expect(recorder.problems.isEmpty, "\(recorder.problems)")
        #expect(recorder.versions >= 3)
        #expect(source.counters.segmentsFetched >= 8)
        let master = try #require(harness.registry.snapshot(of: "live")?.multivariant)
        #expect(String(buffer: master.body).contains("\nv0.m3u8\n"), "\(String(buffer: master.body))")
        // Segments are fetched once each; the playlist reloads at about the target duration.
        let requests = harness.upstream.requests
        let segmentRequests = requests.filter { $0.hasSuffix(".ts") }
        #expect(segmentRequests.count == Set(segmentRequests).count, "\(segmentRequests)")
        let reloads = requests.filter { $0 == "/live/v0/index.m3u8" }.count
        #expect((5...16).contains(reloads), "\(reloads) reloads in ~5 s at TD 1 s")
        task.cancel()
        _ = try? await task.value
        #expect(!FileManager.default.fileExists(atPath: "\(harness.state)/pull/live"), "store removed at the end")
    }

    @Test("an upstream that goes away: connection refused, backoff, the last good window kept, then it resumes")
    func upstreamRestart() async throws {
        let harness = try await PullHarness()
        let (source, task) = try harness.start()
        defer { task.cancel() }
        var recorder = VersionRecorder()
        try await harness.advance(seconds: 3, into: &recorder)
        let before = try #require(harness.served())
        await harness.upstream.stop()
        try await harness.advance(seconds: 3, into: &recorder)  // produced, but unreachable
        #expect(harness.served() == before, "the last good window is still served")
        guard case .degraded = harness.registry.snapshot(of: "live")?.state else {
            Issue.record("a source silent for 3 target durations is a stall: the channel is degraded")
            return
        }
        #expect(source.counters[.connection] >= 1, "\(source.counters)")
        let failures = source.counters[.connection] + source.counters[.timeout]
        #expect(failures <= 10, "backoff, not a busy loop: \(failures) failed attempts in 3 s")
        try await harness.upstream.start()
        let edge = harness.script.next - 1 + (try #require(harness.numberingOffset()))
        let resumed = try await harness.wait(into: &recorder) { playlist in
            playlist.map { $0.mediaSequenceNumber(at: $0.segments.count - 1) >= edge } ?? false
        }
        #expect(resumed, "caught up with MSN \(edge)")
        #expect(recorder.problems.isEmpty, "\(recorder.problems)")
        #expect(harness.log.count("upstream connection for http", atLeast: .warning) == 1, "\(harness.log.lines)")
        #expect(harness.log.count("answers again") == 1, "\(harness.log.lines)")
    }

    @Test("a stale upstream playlist is counted and logged once per stall")
    func stale() async throws {
        let harness = try await PullHarness()
        let (source, task) = try harness.start()
        defer { task.cancel() }
        var recorder = VersionRecorder()
        try await harness.advance(seconds: 2, into: &recorder)
        try await harness.advance(seconds: 3, producing: false, into: &recorder)
        #expect(source.counters[.stalePlaylist] == 1)
        try await harness.advance(seconds: 2, into: &recorder)
        #expect(harness.log.count("advances again") == 1)
        try await harness.advance(seconds: 3, producing: false, into: &recorder)
        #expect(source.counters[.stalePlaylist] == 2)
        #expect(harness.log.count("unchanged for more than", atLeast: .warning) == 2)
        #expect(recorder.problems.isEmpty, "\(recorder.problems)")
    }

    @Test("a media sequence that jumps or restarts becomes a discontinuity; the media sequence never goes back")
    func jumpAndRestart() async throws {
        let harness = try await PullHarness(start: 10)
        let (source, task) = try harness.start()
        defer { task.cancel() }
        var recorder = VersionRecorder()
        try await harness.advance(seconds: 3, into: &recorder)
        harness.script.listed = []
        harness.script.next = 500  // jumps far ahead
        try await harness.advance(seconds: 4, into: &recorder)
        harness.script.restart(at: 0)  // starts over, reusing names for other bytes
        try await harness.advance(seconds: 5, into: &recorder)
        #expect(recorder.problems.isEmpty, "\(recorder.problems)")
        #expect(recorder.discontinuities.count >= 2, "\(recorder.discontinuities)")
        #expect(source.windowed.counters.encoderRestarts >= 2)
        let playlist = try #require(harness.served())
        let newest = try #require(harness.fetchable()[String(playlist.segments.last!.uri.split(separator: "/").last!)])
        let bytes = String(decoding: FileManager.default.contents(atPath: newest.path) ?? Data(), as: UTF8.self)
        #expect(bytes.hasPrefix("r1 segment"), "the newest segment is the restarted upstream's: \(bytes.prefix(20))")
    }

    @Test("reference mode lists the upstream's absolute segment URLs and downloads nothing")
    func reference() async throws {
        let harness = try await PullHarness()
        let (source, task) = try harness.start(mode: .reference)
        defer { task.cancel() }
        var recorder = VersionRecorder()
        try await harness.advance(seconds: 3, into: &recorder)
        let playlist = try #require(harness.served())
        let offset = try #require(harness.numberingOffset())
        for (index, segment) in playlist.segments.enumerated() {
            let upstreamSequence = playlist.mediaSequenceNumber(at: index) - offset
            #expect(segment.uri == harness.upstream.url("/live/v0/seg\(upstreamSequence).ts"))
        }
        #expect(source.counters.segmentsFetched == 0)
        #expect(!harness.upstream.requests.contains { $0.hasSuffix(".ts") })
        #expect(harness.fetchable().isEmpty)
        #expect(recorder.problems.isEmpty, "\(recorder.problems)")
    }

    @Test("HTTP errors, timeouts and malformed playlists are counted by kind and logged once per change")
    func failures() async throws {
        let harness = try await PullHarness()
        let playlist = harness.script.playlist()
        harness.upstream.set("/live/v0/index.m3u8", "broken", status: .internalServerError)
        let (source, task) = try harness.start(timeout: 300)
        defer { task.cancel() }
        var recorder = VersionRecorder()
        #expect(try await harness.eventually(into: &recorder) { source.counters[.httpStatus] >= 2 })
        #expect(harness.log.count("upstream http_status for http", atLeast: .warning) == 1, "\(harness.log.lines)")
        harness.upstream.set("/live/v0/index.m3u8", playlist, delay: .seconds(2))
        #expect(try await harness.eventually(into: &recorder) { source.counters[.timeout] >= 1 })
        harness.upstream.set("/live/v0/index.m3u8", "#EXTM3U\n#EXTINF:1.0,\n")
        #expect(try await harness.eventually(into: &recorder) { source.counters[.malformedPlaylist] >= 1 })
        #expect(harness.served() == nil, "nothing published from any of it")
        harness.script.produce(on: harness.upstream)
        let live = try await harness.wait(into: &recorder) { $0 != nil }
        #expect(live)
        #expect(harness.log.count("answers again") == 1, "\(harness.log.lines)")
        #expect(harness.log.count("upstream timeout for http", atLeast: .warning) == 1, "\(harness.log.lines)")
    }

    @Test("upstream URLs map to source paths that name renditions sensibly")
    func layout() throws {
        let layout = UpstreamLayout(entry: URL(string: "http://origin/live/demo/master.m3u8?token=1")!)
        func path(_ url: String, _ kind: UpstreamLayout.Kind = .segment) -> String {
            layout.path(for: URL(string: url)!, kind: kind)
        }
        #expect(path("http://origin/live/demo/v1.m3u8", .playlist) == "v1.m3u8")
        #expect(path("http://origin/live/demo/v1/a-3.ts") == "v1/a-3.ts")
        #expect(path("http://origin/live/demo/v1/a.ts?sig=x") == "v1/a-q\(UpstreamLayout.hash("sig=x")).ts")
        #expect(path("http://origin/live/demo/v1/a.cmfv").hasSuffix("a.cmfv.m4s"))
        #expect(path("http://cdn/elsewhere/index.m3u8", .playlist).hasPrefix("ext-"))
        #expect(path("http://origin/live/demo/hi%20res/index.m3u8", .playlist).hasPrefix("hi_res/"))
        #expect(UpstreamLayout.reference(from: "v1/index.m3u8", to: "v1/a.ts") == "../v1/a.ts")
        #expect(UpstreamLayout.reference(from: "v1.m3u8", to: "v1/a.ts") == "v1/a.ts")
        let ranged = layout.path(
            for: URL(string: "http://origin/live/demo/all.ts")!, kind: .segment, range: ByteRange(length: 10, offset: 20))
        #expect(ranged == "all-o20-10.ts")
    }
}
