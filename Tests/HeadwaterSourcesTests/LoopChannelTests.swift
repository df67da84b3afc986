import Foundation
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import NIOCore
import Testing

/// The committed demo package (Public/demo).
let demoPackagePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Public/demo/master.m3u8").path

@Suite("Loop timeline")
struct LoopTimelineTests {
    let timeline = LoopTimeline(durations: [.seconds(2), .milliseconds(1500), .milliseconds(2500)])  // L = 6 s

    @Test("segment g is file g mod N of loop g / N, starting at its wall-clock offset")
    func arithmetic() {
        #expect(timeline.loopDuration == 6_000_000)
        #expect(timeline.start(of: 0) == 0 && timeline.start(of: 2) == 3_500_000 && timeline.start(of: 4) == 8_000_000)
        #expect(timeline.discontinuitySequenceNumber(of: 5) == 1 && timeline.fileIndex(of: 5) == 2)
    }

    @Test("the live edge is the newest segment whose end has passed")
    func liveEdge() {
        #expect(timeline.lastPublished(at: 1_999_999) == UInt64.max)  // nothing yet at the epoch
        #expect(timeline.lastPublished(at: 2_000_000) == 0)
        #expect(timeline.lastPublished(at: 5_999_999) == 1)
        #expect(timeline.lastPublished(at: 6_000_000) == 2)
        #expect(timeline.lastPublished(at: 8_000_000) == 3)
        #expect(timeline.nextPublication(after: 2) == 8_000_000)
    }

    @Test("the window lasts at least the configured time and 3 target durations plus a segment")
    func window() {
        let last: UInt64 = 1_000
        let first = timeline.windowStart(endingAt: last, window: 10_000_000, targetDuration: 3)
        var total: Int64 = 0
        for g in first...last { total += timeline.duration(of: g) }
        #expect(total >= 10_000_000 + 0 && total >= 3 * 3_000_000 + 2_500_000)
        var shorter: Int64 = 0
        for g in (first + 1)...last { shorter += timeline.duration(of: g) }
        #expect(shorter < 11_500_000, "no more segments than needed")
    }
}

@Suite("Loop channel (Public/demo)")
struct LoopChannelTests {
    static let package = try! LoopPackage.load(multivariantPath: demoPackagePath)

    @Test("the demo package loads with measured attributes and aligned renditions")
    func loads() throws {
        let package = Self.package
        #expect(package.renditions.map(\.name) == ["v0", "v1", "v2", "audio-alt"])
        #expect(package.targetDuration == 2)
        let master = package.multivariant()
        #expect(master.variants.count == 3)
        for variant in master.variants {
            #expect(variant.bandwidth > 0 && variant.averageBandwidth! <= variant.bandwidth)
            #expect(variant.codecs?.contains("mp4a.40.2") == true)
            #expect(variant.codecs?.first?.hasPrefix("avc1.") == true)
            #expect(variant.resolution != nil && variant.frameRate != nil && variant.audioGroup == "aud")
        }
        #expect(master.variants.map { $0.resolution!.description } == ["416x234", "640x360", "960x540"])
        #expect(master.renditions.compactMap(\.uri) == ["audio-alt.m3u8"])
        #expect(PlaylistValidator.validate(master).filter { $0.severity == .error }.isEmpty)
    }

    @Test("consecutive playlists obey the live rules across loop points, in every rendition (C1–C6, B1, B2)")
    func liveRules() throws {
        let channel = LoopChannel(name: "demo", package: Self.package, windowSeconds: 12, startedAt: 0)
        let start: Int64 = 1_795_282_560_000_000  // 2026-11-21T17:36:00Z
        var previous: [String: MediaPlaylist] = [:]
        var now = start
        // Two and a half loops (50 s) in 0.5 s steps: several playlist versions per segment, and loop points.
        while now < start + 50_000_000 {
            let last = channel.timeline.lastPublished(at: now)
            var firstSequences: Set<UInt64> = []
            var discontinuitySequences: Set<UInt64> = []
            for rendition in channel.package.renditions {
                let playlist = channel.mediaPlaylist(for: rendition, last: last)
                let reparsed = try PlaylistParser().parseMedia(PlaylistSerializer.serialize(playlist))
                #expect(reparsed == playlist)
                let errors = PlaylistValidator.validate(playlist).filter { $0.severity == .error }
                #expect(errors.isEmpty, "\(rendition.name) at \(now): \(errors)")
                #expect(playlist.duration >= .seconds(12) && playlist.duration >= .seconds(3 * 2))
                if let old = previous[rendition.name] {
                    let issues = LiveUpdateChecker.check(previous: old, next: playlist)
                    #expect(issues.isEmpty, "\(rendition.name) at \(now): \(issues)")
                }
                previous[rendition.name] = playlist
                firstSequences.insert(playlist.effectiveMediaSequence)
                discontinuitySequences.insert(playlist.effectiveDiscontinuitySequence)
                // Dates follow the wall clock: the newest segment ends no later than now.
                let dates = playlist.programDateTimes()
                let end = dates.last!!.adding(playlist.segments.last!.duration)
                #expect(end.millisecondsSinceEpoch <= now / 1000)
                #expect(end.millisecondsSinceEpoch > now / 1000 - 2_001)
            }
            // All renditions agree on numbering (C14).
            #expect(firstSequences.count == 1 && discontinuitySequences.count == 1)
            now += 500_000
        }
    }

    @Test("a snapshot lists every playlist segment as fetchable, plus recently removed ones, and nothing newer")
    func snapshot() throws {
        let channel = LoopChannel(name: "demo", package: Self.package, windowSeconds: 12, startedAt: 0)
        let now: Int64 = 1_795_282_561_000_000
        let snapshot = channel.snapshot(at: now)
        #expect(snapshot.state == .live && snapshot.targetDuration == 2)
        let rendered = try #require(snapshot.mediaPlaylists["v1"])
        let text = String(buffer: rendered.body)
        let playlist = try PlaylistParser().parseMedia(Array(text.utf8))
        let files = try #require(snapshot.segments["v1"])
        for segment in playlist.segments {
            let name = String(segment.uri.dropFirst("v1/".count))
            #expect(files[name] != nil, "listed segment \(name) is fetchable")
        }
        let last = channel.timeline.lastPublished(at: now)
        #expect(files["\(last + 1).ts"] == nil, "the segment being produced is not available")
        #expect(files["\(playlist.effectiveMediaSequence - 1).ts"] != nil, "a just-removed segment stays available (C7)")
        #expect(Gzip.decompress(Array(buffer: rendered.gzipBody)) == Array(text.utf8))
        #expect(rendered.entityTag != rendered.gzipEntityTag)
    }

    @Test("two channels built separately (two nodes) render identical bytes for the same instant")
    func deterministic() {
        let a = LoopChannel(name: "demo", package: Self.package, windowSeconds: 30, startedAt: 0)
        let b = LoopChannel(name: "demo", package: try! LoopPackage.load(multivariantPath: demoPackagePath), windowSeconds: 30, startedAt: 5)
        let now: Int64 = 1_795_282_599_123_456
        #expect(a.snapshot(at: now).mediaPlaylists["v2"]?.body == b.snapshot(at: now).mediaPlaylists["v2"]?.body)
    }
}
