import HeadwaterHLS
import HeadwaterLiveWindow
import Testing

/// A window that lists remote segments (a pull source in `reference` mode): absolute `http(s)`
/// URIs are listed as they are, with nothing stored; without the flag they cannot be served.
@Suite("Push window: remote segments")
struct PushWindowRemoteTests {
    static let clockStart: Int64 = 1_795_282_560_000_000

    /// An upstream playlist of `count` absolute segment URLs from `first`, with an fMP4 init section.
    static func playlist(first: Int, count: Int) -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: UInt64(first))
        playlist.segments = (first..<(first + count)).map { n in
            MediaSegment(uri: "https://up.example/v0/s\(n).m4s", duration: .seconds(2))
        }
        playlist.segments[0].tags.map = MediaInitializationSection(
            uri: "https://up.example/v0/init.mp4", byteRange: ByteRange(length: 700))
        return playlist
    }

    static func window(remote: Bool) -> LiveWindow {
        LiveWindow(
            configuration: .init(
                channel: "live", targetDuration: 2, windowSeconds: 6, runTag: "t", listsRemoteSegments: remote))
    }

    @Test("absolute URIs are listed as they are, numbered and slid like stored ones, with no file behind them")
    func listed() throws {
        var window = Self.window(remote: true)
        var clock = Self.clockStart
        var previous: MediaPlaylist?
        for n in 0..<10 {
            clock += 2_000_000
            let outcome = try window.playlistReceived(
                path: "v0.m3u8", Self.playlist(first: max(0, n - 4), count: min(n, 4) + 1), now: clock)
            #expect(outcome.filesToDelete.isEmpty)
            guard let playlist = window.mediaPlaylist(rendition: "v0") else { continue }
            if let previous {
                let errors = LiveUpdateChecker.check(previous: previous, next: playlist).filter { $0.severity == .error }
                #expect(errors.isEmpty, "\(errors)")
            }
            previous = playlist
        }
        let playlist = try #require(window.mediaPlaylist(rendition: "v0"))
        #expect(playlist.segments.count == 4)
        for (index, segment) in playlist.segments.enumerated() {
            #expect(segment.uri == "https://up.example/v0/s\(playlist.mediaSequenceNumber(at: index)).m4s")
            #expect(!segment.tags.gap)
        }
        #expect(playlist.segments[0].tags.map?.uri == "https://up.example/v0/init.mp4")
        #expect(playlist.segments[0].tags.map?.byteRange == ByteRange(length: 700, offset: 0), "MAP offset explicit")
        let snapshot = window.snapshot(now: clock)
        #expect(snapshot.segments["v0"]?.isEmpty == true, "nothing fetchable from Headwater")
        #expect(snapshot.status.renditions.first?.lastSegmentAt == clock, "remote segments count as source segments")
    }

    @Test("without listsRemoteSegments an absolute URI names nothing that can be served: nothing is listed")
    func refused() throws {
        var window = Self.window(remote: false)
        var clock = Self.clockStart
        for n in 0..<6 {
            clock += 2_000_000
            _ = try window.playlistReceived(path: "v0.m3u8", Self.playlist(first: 0, count: n + 1), now: clock)
        }
        #expect(window.mediaPlaylist(rendition: "v0") == nil)
        #expect(window.liveRenditions.isEmpty)
    }
}
