import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import Logging
import NIOCore
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
    /// The encoder: complete segments listed, the open one and its parts so far.
    var completed: [Int] = []
    var open = 0
    var openParts = 0

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

    static func partBytes(_ n: Int, _ k: Int) -> [UInt8] { [UInt8](repeating: UInt8((n * 4 + k) % 251), count: 1_000) }

    /// The encoder's playlist, as an LL encoder writes it; `partDuration` of the open segment's parts.
    func playlist(partDuration: String = "0.5") -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:2\n"
        text += "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5\n#EXT-X-PART-INF:PART-TARGET=0.5\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\(completed.first ?? open)\n"
        func part(_ n: Int, _ k: Int, _ duration: String = "0.5") -> String {
            "#EXT-X-PART:DURATION=\(duration),URI=\"v0/seg-\(n).part\(k).ts\"\(k == 0 ? ",INDEPENDENT=YES" : "")\n"
        }
        for n in completed {
            for k in 0..<4 { text += part(n, k) }
            text += "#EXTINF:2.0,\nv0/seg-\(n).ts\n"
        }
        for k in 0..<openParts { text += part(open, k, k == openParts - 1 ? partDuration : "0.5") }
        text += "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"v0/seg-\(open).part\(openParts).ts\"\n"
        return text
    }

    /// The next part: its file (unless `upload` is false), the segment file when it completes one,
    /// then the playlist.
    func pushPart(upload: Bool = true) throws {
        clock.advance(seconds: 0.5)
        if upload { try put("v0/seg-\(open).part\(openParts).ts", Self.partBytes(open, openParts)) }
        openParts += 1
        if openParts == 4 {
            try put("v0/seg-\(open).ts", (0..<4).flatMap { Self.partBytes(open, $0) })
            completed.append(open)
            if completed.count > 6 { completed.removeFirst() }
            open += 1
            openParts = 0
        }
        try put("v0.m3u8", playlist())
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
        #expect(Array(FileManager.default.contents(atPath: file.path)!) == Self.partBytes(open, 1))
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
