import Foundation
@testable import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterRuntime
@testable import HeadwaterSources
import Logging
import NIOCore
import Testing

/// Directory channels share the windowed channel with push: a durable one comes back too, and a
/// packager that kept writing continues it without a discontinuity (the files it lists are the
/// same files, so Headwater recognises what it already listed).
@Suite("Durable channels: directory source")
struct DurableDirectoryTests {
    @Test("a directory channel comes back with the same playlist; the packager's next segment follows it with no discontinuity")
    func directoryChannel() throws {
        let packager = try FakePackager()
        let state = NSTemporaryDirectory() + "headwater-durable-dir-\(UUID().uuidString)"
        defer {
            packager.remove()
            try? FileManager.default.removeItem(atPath: state)
        }
        let clock = ManualWallClock()
        func open(_ registry: ChannelRegistry, run: String) throws -> DirectoryChannelSource {
            let source = HeadwaterConfiguration.Channel.DirectorySource(path: packager.directory, targetDuration: 2)
            let channel = HeadwaterConfiguration.Channel(name: "live", source: .directory(source), windowSeconds: 6)
            return try DirectoryChannelSource(
                channel: channel, source: source, stateDirectory: state, runTag: run, registry: registry, clock: clock,
                logger: Logger(label: "test"), watch: .polling, durable: true)
        }
        func served(_ registry: ChannelRegistry) -> String? {
            registry.snapshot(of: "live")?.mediaPlaylists["x_0"].map { String(buffer: $0.body) }
        }
        var registry = ChannelRegistry()
        var source = try open(registry, run: "r1")
        for n in 0..<6 {
            clock.advance(seconds: 2)
            try packager.write("x_0\(n).ts", FakePackager.segment)
            try packager.write("x_0.m3u8", FakePackager.playlist(first: max(0, n - 3), count: min(n + 1, 4)))
            source.scan()
        }
        let before = try #require(served(registry))
        source.windowed.close()

        clock.advance(seconds: 1)
        registry = ChannelRegistry()
        source = try open(registry, run: "r2")
        #expect(served(registry) == before)
        source.scan()  // the same playlist again, its files linked again: nothing new
        #expect(served(registry) == before)
        clock.advance(seconds: 1)
        try packager.write("x_06.ts", FakePackager.segment)
        try packager.write("x_0.m3u8", FakePackager.playlist(first: 3, count: 4))
        source.scan()
        let old = try PlaylistParser().parseMedia(Array(before.utf8))
        let new = try PlaylistParser().parseMedia(Array(try #require(served(registry)).utf8))
        #expect(new.mediaSequenceNumber(at: new.segments.count - 1) == old.mediaSequenceNumber(at: old.segments.count - 1) + 1)
        #expect(!new.segments.contains { $0.tags.discontinuity } && new.discontinuitySequence == old.discontinuitySequence)
        #expect(new.segments.last?.uri.hasPrefix("x_0/r2-") == true)
        source.windowed.close()
    }
}
