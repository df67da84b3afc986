import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterMedia
import Testing

/// I-frame playlists (RFC 8216bis §4.4.3.6; HLS-RULES A9, B9, B19, C14, E9) as ``IFramePlaylist``
/// makes them from a media playlist, alone and through a live window.
@Suite("I-frame playlists")
struct IFramePlaylistTests {
    static let video = VideoInfo(format: .h264, codec: "avc1.4d401e", profile: 77, level: 30, width: 640, height: 360, frameRate: nil)
    static let location = KeyFrameLocation(initialization: 0..<376, frame: 376..<9_400, video: video)

    static func media() -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: 40)
        playlist.discontinuitySequence = 7
        for index in 0..<5 {
            var segment = MediaSegment(uri: "v1/\(40 + index).ts", duration: .seconds(2))
            if index == 0 { segment.programDateTime = ProgramDateTime(millisecondsSinceEpoch: 1_795_000_000_000) }
            if index == 3 {
                segment.discontinuity = true
                segment.programDateTime = ProgramDateTime(millisecondsSinceEpoch: 1_795_000_008_000)
            }
            playlist.segments.append(segment)
        }
        return playlist
    }

    @Test("one entry per media segment: same numbering, discontinuities and dates; MAP to the tables, BYTERANGE to the frame")
    func shape() throws {
        let media = Self.media()
        let iFrames = IFramePlaylist.make(from: media) { index, _ in index == 2 ? nil : Self.location }
        #expect(iFrames.iFramesOnly)
        #expect(iFrames.mediaSequence == 40 && iFrames.discontinuitySequence == 7 && iFrames.targetDuration == 2)
        #expect(iFrames.segments.map(\.uri) == media.segments.map(\.uri))
        #expect(iFrames.segments.map(\.duration) == media.segments.map(\.duration))
        #expect(iFrames.segments.map(\.discontinuity) == media.segments.map(\.discontinuity))
        #expect(iFrames.segments.map(\.programDateTime) == media.segments.map(\.programDateTime))
        let first = iFrames.segments[0]
        #expect(first.byteRange == ByteRange(length: 9_024, offset: 376))
        #expect(first.tags.map?.uri == "v1/40.ts" && first.tags.map?.byteRange == ByteRange(length: 376, offset: 0))
        // No key frame: a gap keeps the numbering, and nothing is fetched for it.
        #expect(iFrames.segments[2].gap && iFrames.segments[2].byteRange == nil)
        // EXT-X-MAP in an I-frames-only playlist needs version 5 (A9).
        #expect(iFrames.version == 5)
        let text = String(decoding: PlaylistSerializer.serialize(iFrames), as: UTF8.self)
        #expect(text.contains("#EXT-X-I-FRAMES-ONLY\n"))
        #expect(text.contains("#EXT-X-MAP:URI=\"v1/41.ts\",BYTERANGE=\"376@0\"\n#EXTINF:2.000,\n#EXT-X-BYTERANGE:9024@376\nv1/41.ts\n"))
    }

    @Test("what Headwater serves passes its own validator with zero issues")
    func validates() {
        let iFrames = IFramePlaylist.make(from: Self.media()) { index, _ in index == 2 ? nil : Self.location }
        #expect(PlaylistValidator.validate(iFrames).isEmpty, "\(PlaylistValidator.validate(iFrames))")
    }

    @Test("not offered for encrypted media: a byte range of a CBC-encrypted file cannot be decrypted alone")
    func encrypted() {
        var media = Self.media()
        #expect(IFramePlaylist.isOffered(for: media))
        media.segments[1].tags.keys = [Key(method: "AES-128", uri: "/keys/c/0.key", iv: Array(repeating: 1, count: 16))]
        #expect(!IFramePlaylist.isOffered(for: media))
        media.segments[1].tags.keys = [Key.none]
        #expect(IFramePlaylist.isOffered(for: media))
    }

    @Test("EXT-X-I-FRAME-STREAM-INF: measured BANDWIDTH ≥ AVERAGE-BANDWIDTH, video CODECS alone, RESOLUTION, no FRAME-RATE (E9)")
    func variant() throws {
        let keyFrames = (0..<6).map { _ in (location: Self.location, duration: HLSDuration.seconds(2)) }
        let variant = try #require(IFramePlaylist.variant(uri: "v1.iframes.m3u8", keyFrames: keyFrames, targetDuration: 2))
        // 9,400 bytes (tables and frame) every 2 s: 37,600 bit/s.
        #expect(variant.attributes.integer("AVERAGE-BANDWIDTH") == 37_600)
        #expect(variant.bandwidth == 37_600)
        #expect(variant.attributes.string("CODECS") == "avc1.4d401e")
        #expect(variant.attributes["RESOLUTION"] == .token("640x360"))
        #expect(variant.attributes["FRAME-RATE"] == nil)
        #expect(variant.uri == "v1.iframes.m3u8")
        let raised = try #require(
            IFramePlaylist.variant(uri: "v1.iframes.m3u8", keyFrames: keyFrames, targetDuration: 2, atLeast: 50_000))
        #expect(raised.bandwidth == 50_000)
        #expect(IFramePlaylist.variant(uri: "x", keyFrames: [], targetDuration: 2) == nil)
    }

    @Test("a live window lists an I-frame playlist per rendition with key frames, aligned with its media playlist, and an I-frame variant")
    func liveWindow() throws {
        var window = LiveWindow(configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "t1"))
        var encoder = FakeEncoder()
        encoder.keyFrame = Self.location
        for _ in 0..<8 { try encoder.push(encoder.produce(), into: &window) }
        let version = window.snapshot(now: encoder.clock)
        let media = try #require(version.media["x_0"])
        let iFrames = try #require(version.iFrames["x_0"])
        #expect(iFrames.version == media.version)
        #expect(iFrames.model.mediaSequence == media.model.mediaSequence)
        #expect(iFrames.model.segments.map(\.uri) == media.model.segments.map(\.uri))
        #expect(iFrames.model.segments.allSatisfy { $0.byteRange == ByteRange(length: 9_024, offset: 376) })
        let multivariant = try #require(version.multivariant?.model)
        #expect(multivariant.iFrameVariants.map(\.uri) == ["x_0.iframes.m3u8"])
        // (The fake encoder's segments do not probe, so only the I-frame variant is judged here.)
        let iFrameIssues = PlaylistValidator.validate(multivariant).filter { "\($0)".contains("I-FRAME") }
        #expect(iFrameIssues.isEmpty, "\(iFrameIssues)")
    }

    @Test("a live window without key frames (audio, fMP4) lists no I-frame playlist")
    func noKeyFrames() throws {
        var window = LiveWindow(configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "t1"))
        var encoder = FakeEncoder()
        for _ in 0..<8 { try encoder.push(encoder.produce(), into: &window) }
        let version = window.snapshot(now: encoder.clock)
        #expect(version.media["x_0"] != nil && version.iFrames.isEmpty)
        #expect(version.multivariant?.model.iFrameVariants.isEmpty == true)
    }

    @Test("a window Headwater encrypts refuses an encrypted source playlist, and changes nothing")
    func refusesEncryptedSource() throws {
        var window = LiveWindow(
            configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "t1", encryptsSegments: true))
        var encoder = FakeEncoder()
        for _ in 0..<4 { try encoder.push(encoder.produce(), into: &window) }
        let before = window.mediaPlaylist(rendition: "x_0")
        var playlist = encoder.playlist("x_0")
        playlist.segments[0].tags.keys = [Key(method: "AES-128", uri: "k.key")]
        #expect(throws: IngestRefusal.self) { try window.playlistReceived(path: "x_0.m3u8", playlist, now: encoder.clock) }
        #expect(window.mediaPlaylist(rendition: "x_0") == before)
        // fMP4 (its init section would need the key too) and byte ranges (not whole files) neither.
        var fragmented = encoder.playlist("x_0")
        fragmented.segments[0].tags.map = MediaInitializationSection(uri: "init.mp4")
        var ranged = encoder.playlist("x_0")
        ranged.segments[0].byteRange = ByteRange(length: 1000, offset: 0)
        for refused in [fragmented, ranged] {
            let error = #expect(throws: IngestRefusal.self) { try window.playlistReceived(path: "x_0.m3u8", refused, now: encoder.clock) }
            #expect(error?.reason == .unsupportedType)
        }
        #expect(window.mediaPlaylist(rendition: "x_0") == before)
        // The same playlists on a clear channel are taken.
        var clear = Self.makeClearWindow()
        #expect(throws: Never.self) { try clear.playlistReceived(path: "x_0.m3u8", ranged, now: encoder.clock) }
    }

    static func makeClearWindow() -> LiveWindow {
        LiveWindow(configuration: .init(channel: "live", targetDuration: 2, windowSeconds: 12, runTag: "t1"))
    }
}
