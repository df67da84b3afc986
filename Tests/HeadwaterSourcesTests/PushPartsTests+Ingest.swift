import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import Logging
import NIOCore
import HeadwaterTesting
import Testing

/// Low-latency push through the real ingest path: parts PUT as files, the encoder's LL playlist
/// PUT as text, Headwater's rendered playlist read back from the registry.
@Suite("Push ingest: low-latency parts")
final class PushPartsIngestTests {
    static let token = "s3cret-token"
    let clock = ManualWallClock()
    let registry = ChannelRegistry()
    let state: String
    let ingest: PushIngest
    var encoder = LowLatencyPushEncoder()

    init() throws {
        state = NSTemporaryDirectory() + "headwater-push-parts-\(UUID().uuidString)"
        var configuration = HeadwaterConfiguration()
        configuration.server.stateDirectory = state
        configuration.channels = [
            .init(name: "live", source: .push(.init(targetDuration: 2, maxUploadBytes: 1 << 20)), windowSeconds: 8)
        ]
        ingest = try PushIngest(
            configuration: configuration, registry: registry, clock: clock, logger: Logger(label: "test"),
            environment: ["HEADWATER_INGEST_TOKEN": Self.token])
    }

    deinit { try? FileManager.default.removeItem(atPath: state) }

    func put(_ path: String, _ bytes: [UInt8]) throws { try ingest.putWhole(channel: "live", path: path, bytes) }

    func put(_ path: String, _ text: String) throws { try put(path, Array(text.utf8)) }

    func playlist(partDuration: String = "0.5") -> String { encoder.playlist(partDuration: partDuration) }

    /// The encoder's next part, uploaded (its file unless `upload` is false).
    func pushPart(upload: Bool = true) throws {
        clock.advance(seconds: 0.5)
        for (path, bytes) in encoder.nextPart(upload: upload) { try put(path, bytes) }
    }

    func current() throws -> (playlist: MediaPlaylist, entityTag: String, body: [UInt8]) {
        let rendered = try #require(registry.snapshot(of: "live")?.mediaPlaylists["v0"])
        let body = Array(rendered.body.readableBytesView)
        return (try PlaylistParser().parseMedia(body), rendered.entityTag, body)
    }

    @Test("PUT parts and an LL playlist: published with PART-INF, Headwater's SERVER-CONTROL, parts served from disk, a hint")
    func published() throws {
        for _ in 0..<(4 * 4 + 2) { try pushPart() }
        let (playlist, _, _) = try current()
        #expect(PlaylistValidator.validate(playlist).isEmpty, "\(PlaylistValidator.validate(playlist))")
        #expect(playlist.partInformation?.partTarget == .milliseconds(500))
        #expect(playlist.serverControl?.canSkipUntil == .seconds(12) && playlist.serverControl?.canBlockReload == true)
        #expect(playlist.trailingTags.parts.count == 2 && playlist.preloadHints.count == 1)
        let snapshot = try #require(registry.snapshot(of: "live"))
        let last = try #require(playlist.trailingTags.parts.last)
        let file = try #require(snapshot.segments["v0"]?[String(last.uri.split(separator: "/").last!)])
        #expect(Array(FileManager.default.contents(atPath: file.path)!) == LowLatencyPushEncoder.partBytes(encoder.open, 1))
    }

    @Test("a part longer than PART-TARGET is refused with 422 and a one-line reason; the published playlist stays")
    func refused() throws {
        for _ in 0..<(4 * 4 + 2) { try pushPart() }
        let before = try current()
        do {
            try put("v0.m3u8", playlist(partDuration: "0.6"))
            Issue.record("accepted")
        } catch let error as IngestRefusal {
            #expect(error.kind == .unprocessable && error.message.contains("longer than PART-TARGET"), "\(error)")
        }
        let after = try current()
        #expect(after.entityTag == before.entityTag && after.body == before.body)
        #expect(ingest.counters[.malformedPlaylist] == 1)
        try pushPart()
        #expect(try current().playlist.trailingTags.parts.count == 3)
    }

    @Test("a listed part whose upload never arrives is published as GAP=YES by the ingest's clock, and no longer hinted")
    func missingPart() throws {
        for _ in 0..<(4 * 4 + 1) { try pushPart() }
        try pushPart(upload: false)
        let hinted = try #require(current().playlist.preloadHints.first?.uri)
        clock.advance(seconds: 1)
        ingest.expire()
        #expect(try current().playlist.preloadHints.first?.uri == hinted, "still awaited within 3×PART-TARGET")
        clock.advance(seconds: 0.6)
        ingest.expire()
        let playlist = try current().playlist
        #expect(playlist.trailingTags.parts.filter(\.isGap).map(\.uri) == [hinted])
        #expect(playlist.preloadHints.first?.uri != hinted)
        #expect(PlaylistValidator.validate(playlist).isEmpty, "\(PlaylistValidator.validate(playlist))")
    }
}
