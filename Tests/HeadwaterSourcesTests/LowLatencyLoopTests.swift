import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
@testable import HeadwaterSources
import NIOCore
import Testing

/// The loop channel as low-latency HLS (HLS-RULES F1–F6, F14, F17) on an injected clock: every
/// playlist version over two loops, stepped 100 ms at a time, in every rendition.
@Suite("Low-latency loop channel")
struct LowLatencyLoopTests {
    static let package = try! LoopChannelTests.package.cuttingParts(every: 400_000)
    static let channel = LoopChannel(name: "demo", package: package, windowSeconds: 30, startedAt: 0)
    static let start: Int64 = 1_795_282_560_000_000  // 2026-11-21T17:36:00Z, a loop point

    /// The media playlists of the snapshot at `now`, parsed back from their bytes.
    static func playlists(at now: Int64) throws -> [String: MediaPlaylist] {
        let snapshot = channel.snapshot(at: now)
        return try snapshot.mediaPlaylists.mapValues { try PlaylistParser().parseMedia(Array($0.body.readableBytesView)) }
    }

    @Test("one entity tag, one body: a playlist whose reports change (another rendition's part) is a new version")
    func oneEntityTagOneBody() throws {
        var bodies: [String: ByteBuffer] = [:]
        var now = Self.start
        while now < Self.start + 12_000_000 {
            for (name, rendered) in Self.channel.snapshot(at: now).mediaPlaylists {
                if let known = bodies[rendered.entityTag] {
                    #expect(known == rendered.body, "\(name) at \(now - Self.start): ETag \(rendered.entityTag) names two bodies")
                } else {
                    bodies[rendered.entityTag] = rendered.body
                }
            }
            now += 20_000
        }
        #expect(bodies.count > 4 * 12 * 5 / 2, "versions seen: \(bodies.count)")
    }

    @Test("every version passes the validator with no warning, and parts, hint and reports hold F1–F6, F17")
    func everyVersionIsValid() throws {
        let partTarget = try #require(Self.package.partTarget)
        #expect(partTarget <= .milliseconds(410) && partTarget >= .milliseconds(400))
        var previous: [String: MediaPlaylist] = [:]
        var hinted: [String: (uri: String, start: UInt64)] = [:]
        var now = Self.start
        while now < Self.start + 42_000_000 {
            let playlists = try Self.playlists(at: now)
            for (name, playlist) in playlists {
                let issues = PlaylistValidator.validate(playlist)
                #expect(issues.isEmpty, "\(name) at \(now - Self.start): \(issues)")
                if let old = previous[name] {
                    let live = LiveUpdateChecker.check(previous: old, next: playlist)
                    #expect(live.isEmpty, "\(name) at \(now - Self.start): \(live)")
                }
                // F1: SERVER-CONTROL values.
                let control = try #require(playlist.serverControl)
                #expect(control.canBlockReload)
                #expect(try #require(control.partHoldBack).microseconds >= 3 * partTarget.microseconds)
                #expect(try #require(control.canSkipUntil) >= .seconds(6 * Int64(playlist.targetDuration)))
                // F3: a complete parent's parts add up to its EXTINF, each within PART-TARGET.
                for segment in playlist.segments where !segment.tags.parts.isEmpty {
                    let total = segment.tags.parts.reduce(HLSDuration.zero) { $0 + $1.duration }
                    #expect(abs(total.microseconds - segment.duration.microseconds) <= 1_000, "\(segment.uri)")
                    #expect(segment.tags.parts.allSatisfy { $0.duration <= partTarget })
                    #expect(segment.tags.parts.allSatisfy { $0.uri == segment.uri })
                }
                // F4, F17: one hint, for a part a later version lists under that URI and start.
                #expect(playlist.preloadHints.count == 1)
                let hint = playlist.preloadHints[0]
                if let (uri, start) = hinted[name] {
                    let listed = (playlist.segments.flatMap(\.tags.parts) + playlist.trailingTags.parts)
                        .contains { $0.uri == uri && $0.byteRange?.offset == start }
                    let stillHinted = hint.uri == uri && hint.attributes.integer("BYTERANGE-START") == start
                    #expect(listed || stillHinted, "\(name): hinted \(uri)@\(start) neither listed nor hinted at \(now - Self.start)")
                }
                hinted[name] = (hint.uri, hint.attributes.integer("BYTERANGE-START") ?? 0)
                // F6: one report per other rendition, agreeing with that rendition's own edge.
                #expect(Set(playlist.renditionReports.map(\.uri)) == Set(playlists.keys.filter { $0 != name }.map { "\($0).m3u8" }))
                for report in playlist.renditionReports {
                    let other = playlists[String(report.uri.dropLast(5))]!
                    let edge = try #require(PlaylistEdge(other))
                    let (msn, part) = edge.openParts > 0 ? (edge.lastSegment + 1, edge.openParts - 1) : (edge.lastSegment, edge.lastSegmentParts - 1)
                    #expect(report.lastMediaSequence == msn && report.lastPart == UInt64(part), "\(name) reports \(report.uri)")
                }
                // F14: the delta expands to exactly this playlist.
                let delta = try #require(PlaylistDeltaUpdate.make(playlist, kind: .segments))
                var expanded = PlaylistDeltaUpdate.expand(delta, previous: playlist)
                expanded?.version = playlist.version  // a delta needs 9; the rest is the same
                #expect(expanded == playlist, "\(name): the delta at \(now - Self.start) does not expand to the playlist")
                previous[name] = playlist
            }
            // F18: every rendition's newest part ends within one part target of the others'.
            let edges = playlists.values.map { playlist in
                playlist.programDateTimes().last!!.adding(playlist.segments.last!.duration)
                    .adding(playlist.trailingTags.parts.reduce(.zero) { $0 + $1.duration }).millisecondsSinceEpoch
            }
            #expect(edges.max()! - edges.min()! <= partTarget.microseconds / 1000)
            now += 100_000
        }
    }

    @Test("parts are published as the clock reaches their end, not before")
    func partsFollowTheClock() throws {
        var now = Self.start + 10_000
        var counts = Set<Int>()
        while now < Self.start + 4_000_000 {
            let v1 = try #require(try Self.playlists(at: now)["v1"])
            let published = v1.trailingTags.parts.reduce(HLSDuration.zero) { $0 + $1.duration }
            let open = v1.mediaSequenceNumber(at: v1.segments.count - 1) + 1
            let openStart = Self.channel.timeline.start(of: open)
            #expect(openStart + published.microseconds <= now, "a part listed before its end at \(now - Self.start)")
            #expect(now - (openStart + published.microseconds) < 410_000, "a part ended but not listed at \(now - Self.start)")
            counts.insert(v1.trailingTags.parts.count)
            now += 50_000
        }
        // Over two segments every count of the open segment's parts was seen: 0 through 4.
        #expect(counts == Set(0...4), "open parts seen: \(counts.sorted())")
        #expect(Self.channel.nextPublication(after: Self.start + 10_000) == Self.start + 400_000)
    }

    @Test("the open segment's discontinuity is written before its parts from the moment it is hinted")
    func discontinuityOfTheOpenSegment() throws {
        // Just after a loop point: the open segment starts the loop again and has no part yet.
        let loop = Self.channel.timeline.loopDuration
        let before = (Self.start / loop + 1) * loop + 100_000
        let v1 = try #require(try Self.playlists(at: before)["v1"])
        #expect(v1.trailingTags.parts.isEmpty)
        #expect(v1.trailingTags.discontinuity)
        // Served undated until complete (``MediaPlaylist/datingOnlyCompleteSegments``: hls.js).
        #expect(v1.trailingTags.programDateTime == nil)
        #expect(PlaylistValidator.validate(v1).isEmpty)
        // Complete, the same segment carries its discontinuity and its date.
        let open = v1.mediaSequenceNumber(at: v1.segments.count - 1) + 1
        let later = try #require(try Self.playlists(at: before + 2_500_000)["v1"])
        let index = try #require(later.segments.indices.first { later.mediaSequenceNumber(at: $0) == open })
        #expect(later.segments[index].tags.discontinuity)
        #expect(later.segments[index].tags.programDateTime?.millisecondsSinceEpoch == Self.channel.timeline.start(of: open) / 1000)
        #expect(PlaylistValidator.validate(later).isEmpty)
    }
}
