import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
@testable import HeadwaterSources
import HeadwaterTesting
import Logging
import NIOCore

/// A push channel `live` (target duration 2 s) whose state directory outlives its ``PushIngest``:
/// ``restart(clean:)`` makes a new ingest and registry on the same directory, as a new process would.
final class DurablePush {
    let state: String
    let clock = ManualWallClock()
    let windowSeconds: Int
    private(set) var registry = ChannelRegistry()
    private(set) var ingest: PushIngest
    private(set) var metrics = OriginMetrics()
    /// The current run's log.
    private(set) var log = LogRecorder()

    init(windowSeconds: Int = 8) throws {
        state = NSTemporaryDirectory() + "headwater-durable-\(UUID().uuidString)"
        self.windowSeconds = windowSeconds
        ingest = try Self.makeIngest(state: state, windowSeconds: windowSeconds, registry: registry, clock: clock, log: log, metrics: metrics)
    }

    deinit { try? FileManager.default.removeItem(atPath: state) }

    static func makeIngest(
        state: String, windowSeconds: Int, registry: ChannelRegistry, clock: ManualWallClock, log: LogRecorder,
        metrics: OriginMetrics
    ) throws -> PushIngest {
        var configuration = HeadwaterConfiguration()
        configuration.server.stateDirectory = state
        configuration.channels = [
            .init(name: "live", source: .push(.init(targetDuration: 2)), windowSeconds: windowSeconds)
        ]
        return try PushIngest(
            configuration: configuration, registry: registry, clock: clock, logger: log.logger,
            environment: ["HEADWATER_INGEST_TOKEN": PushIngestTests.token], metrics: metrics)
    }

    var directory: String { "\(state)/push/live" }
    var windowed: WindowedChannel { ingest.channels["live"]!.windowed }

    /// Stops this run and starts the next on the same state directory, a second later. `clean`:
    /// as SIGTERM does (every window saved); otherwise as `kill -9` right after the last save.
    func restart(clean: Bool = true) throws {
        if clean { windowed.close() } else { windowed.flushState() }
        clock.advance(seconds: 1)
        registry = ChannelRegistry()
        metrics = OriginMetrics()
        log = LogRecorder()
        ingest = try Self.makeIngest(
            state: state, windowSeconds: windowSeconds, registry: registry, clock: clock, log: log, metrics: metrics)
    }

    func put(_ path: String, _ bytes: [UInt8]) throws {
        let upload = try ingest.beginUpload(
            channel: "live", path: path.split(separator: "/").map(String.init), contentLength: bytes.count)
        try ingest.write(bytes, to: upload)
        try ingest.finish(upload)
    }

    /// The encoder's playlist listing `segments` (number, EXTINF) from `first` on.
    static func encoderPlaylist(_ segments: [(number: Int, duration: String)]) -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:4\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\(segments.first?.number ?? 0)\n"
        for segment in segments { text += "#EXTINF:\(segment.duration),\nx_0\(segment.number).ts\n" }
        return text
    }

    /// The encoder uploads segment `number` (unless `uploaded` is false: the upload was lost) and its
    /// playlist listing the last four segments it made, `duration` seconds after the previous one.
    func encode(_ number: Int, duration: String = "2.000", uploaded: Bool = true, listing: [(number: Int, duration: String)]? = nil) throws {
        clock.advance(seconds: Double(duration) ?? 2)
        if uploaded { try put("x_0\(number).ts", PushIngestTests.segmentBytes) }
        let listed = listing ?? (max(0, number - 3)...number).map { ($0, "2.000") }
        try put("x_0.m3u8", Array(Self.encoderPlaylist(listed).utf8))
    }

    /// The served media playlist of `x_0`, as bytes on the wire.
    var playlist: String? {
        registry.snapshot(of: "live")?.mediaPlaylists["x_0"].map { String(buffer: $0.body) }
    }

    var parsedPlaylist: MediaPlaylist? { playlist.flatMap { try? PlaylistParser().parseMedia(Array($0.utf8)) } }

    var multivariant: String? { registry.snapshot(of: "live")?.multivariant.map { String(buffer: $0.body) } }

    /// Names in the channel's store directory.
    var storedFiles: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted() }
}
