import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import HeadwaterStitching
import Logging
import Synchronization
import Testing

private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A session's stitched I-frame playlist (`/ssai/{channel}/{rendition}.iframes.m3u8`), made from
/// that session's stitched media playlist: the same numbering, discontinuities and URIs, the ads'
/// key frames as byte ranges of the creatives' segments, no tracking; and none for an encrypted
/// channel, whose stitched media playlists carry the viewer's session on every key URI.
@Suite("Stitched I-frame playlists")
struct StitchedIFrameTests {
    static let package = try! LoopPackage.load(multivariantPath: demoPackagePath)
    /// 2026-11-21T17:36:00Z, on a minute: the schedule's break starts here (µs).
    static let start: Int64 = 1_795_282_560_000_000
    static let videoRenditions = ["v0", "v1", "v2"]

    /// The demo loop channel (clear, or encrypted with `keying`) stitched with Config/ads.yaml, a
    /// 20 s break every minute, on an injected clock; tracking is due when a served playlist lists
    /// tracking URLs (as `headwater serve` has it).
    final class Origin {
        let registry = ChannelRegistry()
        let ads: AdConfiguration
        let insertion: AdInsertion
        let clock = ManualWallClock(StitchedIFrameTests.start - 10_000_000)
        let publisher: LoopChannelPublisher
        let channel: LoopChannel
        let state = NSTemporaryDirectory() + "headwater-stitched-iframes-\(UUID().uuidString)"

        init(keying: ChannelKeying? = nil, creativeKeyFrames: Bool = true) throws {
            ads = try AdConfiguration.load(
                file: repository.appendingPathComponent("Config/ads.yaml").path,
                publicDirectory: repository.appendingPathComponent("Public").path, version: 1)
            let ruleBook = AdRuleBook(ads.ruleSet)
            insertion = AdInsertion(
                registry: registry, ruleBook: ruleBook, signer: try SessionSigner(secret: Array("0123456789abcdef".utf8)),
                adminToken: nil, logger: Logger(label: "test"),
                onStitched: { (playlist: MediaPlaylist) -> (@Sendable (StitchedSession) -> Void)? in
                    let tracked = playlist.segments.contains { segment in
                        segment.tags.dateRanges.contains { $0.attributes.string("X-TRACKING-IMPRESSION") != nil }
                    }
                    guard tracked else { return nil }
                    return { (_: StitchedSession) in }
                },
                metrics: OriginMetrics())
            if creativeKeyFrames { insertion.addCreativeKeyFrames(ads.keyFrames) }
            registry.setBreaks(
                ChannelBreaks(
                    channel: "demo", schedule: try BreakSchedule(every: .seconds(60), duration: .seconds(20)), ruleBook: ruleBook,
                    logger: Logger(label: "test"), metrics: OriginMetrics()),
                for: "demo")
            channel = LoopChannel(name: "demo", package: StitchedIFrameTests.package, windowSeconds: 30, startedAt: 0, keying: keying)
            publisher = try LoopChannelPublisher(
                channel: channel, registry: registry, clock: clock, logger: Logger(label: "test"), metrics: OriginMetrics(),
                stateDirectory: state)
            publisher.publishNow()
        }

        deinit { try? FileManager.default.removeItem(atPath: state) }

        /// Moves the clock to `now` (µs) and publishes the channel as it is then.
        func publish(at now: Int64) {
            clock.advance(seconds: Double(now - clock.now()) / 1_000_000)
            publisher.publishNow()
        }

        /// A new session's multivariant playlist and its token.
        func startSession(_ id: String, device: String) throws -> (master: MultivariantPlaylist, token: String) {
            let playlist = try insertion.startSession(
                channel: "demo", query: [(name: "device", value: device)], headers: [(name: "X-Playback-Session-Id", value: id)],
                now: clock.now() / 1000
            ).get()
            let master = try PlaylistParser().parseMultivariant(playlist.bytes)
            let uri = try #require(master.variants.first { $0.uri.hasPrefix("v1.m3u8") }?.uri)
            return (master, String(uri.split(separator: "=", maxSplits: 1)[1]))
        }

        func stitched(_ token: String, _ rendition: String, iFrames: Bool) -> Result<AdInsertion.Playlist, Refusal> {
            insertion.stitchedPlaylist(channel: "demo", rendition: rendition, token: token, iFrames: iFrames, now: clock.now() / 1000)
        }
    }

    @Test("through a break, each I-frame playlist stays aligned with the session's media playlist, lists the ads' key frames, validates and fires no tracking")
    func alignedThroughABreak() throws {
        let origin = try Origin()
        // TV viewers (a viewer's pod is a hash of its id; ad1 lists tracking URLs) and a phone viewer.
        let sessions = try ["tv-viewer-0", "tv-viewer-1", "tv-viewer-2"].map { try origin.startSession($0, device: "tv").token }
            + [try origin.startSession("phone-viewer", device: "phone").token]
        var previous: [String: MediaPlaylist] = [:]
        var adEntries = 0
        var contentEntries = 0
        var trackedMediaPlaylists = 0
        var discontinuities = 0
        var now = Self.start - 10_000_000
        // 40 s in 1 s steps: before, through and after the 20 s break from :00.
        while now < Self.start + 30_000_000 {
            origin.publish(at: now)
            for (sessionIndex, token) in sessions.enumerated() {
                for rendition in Self.videoRenditions {
                    let context = "session \(sessionIndex) \(rendition) at +\((now - Self.start) / 1_000_000) s"
                    let mediaServed = try origin.stitched(token, rendition, iFrames: false).get()
                    let iFramesServed = try origin.stitched(token, rendition, iFrames: true).get()
                    #expect(iFramesServed.dueTracking == nil, "serving an I-frame playlist fires no tracking: \(context)")
                    if mediaServed.dueTracking != nil { trackedMediaPlaylists += 1 }
                    let media = try PlaylistParser().parseMedia(mediaServed.bytes)
                    let iFrames = try PlaylistParser().parseMedia(iFramesServed.bytes)

                    #expect(iFrames.iFramesOnly && !media.iFramesOnly, "\(context)")
                    #expect(iFrames.targetDuration == media.targetDuration, "\(context)")
                    #expect(iFrames.effectiveMediaSequence == media.effectiveMediaSequence, "\(context)")
                    #expect(iFrames.effectiveDiscontinuitySequence == media.effectiveDiscontinuitySequence, "\(context)")
                    #expect(iFrames.segments.map(\.uri) == media.segments.map(\.uri), "\(context)")
                    #expect(iFrames.segments.map(\.discontinuity) == media.segments.map(\.discontinuity), "\(context)")
                    #expect(iFrames.segments.map(\.duration) == media.segments.map(\.duration), "\(context)")
                    #expect(iFrames.programDateTimes() == media.programDateTimes(), "\(context)")
                    discontinuities += iFrames.segments.filter(\.discontinuity).count

                    let issues = PlaylistValidator.validate(iFrames)
                    #expect(issues.isEmpty, "\(context): \(issues)")
                    if let before = previous["\(sessionIndex) \(rendition)"] {
                        let errors = LiveUpdateChecker.check(previous: before, next: iFrames).filter { $0.severity == .error }
                        #expect(errors.isEmpty, "\(context): \(errors)")
                    }
                    previous["\(sessionIndex) \(rendition)"] = iFrames

                    for entry in iFrames.segments {
                        if entry.uri.hasPrefix("/ads/") {
                            adEntries += 1
                            try checkEntry(entry, expected: origin.ads.keyFrames[entry.uri], context: "\(context) \(entry.uri)")
                        } else if entry.uri.hasPrefix("/live/demo/\(rendition)/") {
                            contentEntries += 1
                            let msn = try #require(UInt64(entry.uri.split(separator: "/").last!.dropLast(3)), "\(entry.uri)")
                            let file = Self.package.renditions.first { $0.name == rendition }!
                                .segments[origin.channel.timeline.fileIndex(of: msn)].file
                            try checkEntry(entry, expected: file.keyFrame, context: "\(context) \(entry.uri)", path: file.path)
                        }
                    }
                }
            }
            now += 1_000_000
        }
        #expect(adEntries > 100, "ads were stitched into the I-frame playlists: \(adEntries)")
        #expect(contentEntries > 100)
        #expect(discontinuities > 0, "the break's discontinuities are in the I-frame playlists")
        #expect(trackedMediaPlaylists > 0, "the media playlists of the same sessions had tracking due")
    }

    /// An entry with a key frame: `EXT-X-MAP` of its URI with the tables' range, `EXT-X-BYTERANGE`
    /// the frame's, both whole 188-byte packets inside the file, starting with a sync byte.
    private func checkEntry(_ entry: MediaSegment, expected: KeyFrameLocation?, context: String, path: String? = nil) throws {
        let location = try #require(expected, "a key frame is known for \(context)")
        #expect(!entry.gap, "\(context)")
        let map = try #require(entry.tags.map, "EXT-X-MAP on \(context)")
        #expect(map.uri == entry.uri, "\(context)")
        #expect(
            map.byteRange == ByteRange(length: UInt64(location.initialization.count), offset: UInt64(location.initialization.lowerBound)),
            "\(context)")
        #expect(
            entry.byteRange == ByteRange(length: UInt64(location.frame.count), offset: UInt64(location.frame.lowerBound)),
            "\(context)")
        let file = path ?? repository.appendingPathComponent("Public").path + entry.uri
        let bytes = try #require(FileManager.default.contents(atPath: file), "\(file)")
        for range in [location.initialization, location.frame] {
            #expect(range.lowerBound % 188 == 0 && range.count % 188 == 0 && range.count > 0, "\(context): \(range)")
            #expect(range.upperBound <= bytes.count && bytes[range.lowerBound] == 0x47, "\(context): \(range)")
        }
        #expect(location.initialization.upperBound <= location.frame.lowerBound, "tables before the frame: \(context)")
    }

    @Test("the session's multivariant lists the I-frame playlists with the session; one without key frames is a 404")
    func multivariantAndAudio() throws {
        let origin = try Origin()
        let (master, token) = try origin.startSession("phone-viewer", device: "phone")
        #expect(master.iFrameVariants.count == 3, "\(master.iFrameVariants.map(\.uri))")
        for variant in master.iFrameVariants {
            #expect(variant.uri.hasSuffix(".iframes.m3u8?session=\(token)"), "\(variant.uri)")
        }
        #expect(PlaylistValidator.validate(master).filter { $0.severity == .error }.isEmpty)
        switch origin.stitched(token, "audio-alt", iFrames: true) {
        case .success(let playlist): Issue.record("audio has no I-frame playlist: \(String(decoding: playlist.bytes, as: UTF8.self))")
        case .failure(let refusal): #expect(refusal.kind == .notFound, "\(refusal)")
        }
        // The media playlist of the same rendition is served.
        #expect((try? origin.stitched(token, "audio-alt", iFrames: false).get()) != nil)
    }

    @Test("the ads' key frames come from addCreativeKeyFrames: without them an ad entry is a GAP")
    func creativeKeyFramesAreTheConfigurations() throws {
        let origin = try Origin(creativeKeyFrames: false)
        let token = try origin.startSession("phone-viewer", device: "phone").token
        origin.publish(at: Self.start + 9_000_000)
        let iFrames = try PlaylistParser().parseMedia(try origin.stitched(token, "v1", iFrames: true).get().bytes)
        let ads = iFrames.segments.filter { $0.uri.hasPrefix("/ads/") }
        #expect(!ads.isEmpty)
        #expect(ads.allSatisfy { $0.gap && $0.byteRange == nil }, "\(ads)")
        #expect(iFrames.segments.contains { $0.uri.hasPrefix("/live/") && !$0.gap && $0.byteRange != nil })
    }

    @Test("an encrypted channel has no stitched I-frame playlist; its stitched key URIs carry the session, which entitles them")
    func encryptedChannel() throws {
        let keys = try ContentKeys(secretText: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        let keying = ChannelKeying(channel: "demo", keys: keys, rotateEvery: 3, access: .open)
        let origin = try Origin(keying: keying)
        let tv = try origin.startSession("tv-viewer-0", device: "tv")
        let phone = try origin.startSession("phone-viewer", device: "phone")
        #expect(tv.master.iFrameVariants.isEmpty, "no I-frame variants for an encrypted channel")
        origin.publish(at: Self.start + 9_000_000)  // inside the break
        for session in [tv.token, phone.token] {
            for rendition in Self.videoRenditions {
                switch origin.stitched(session, rendition, iFrames: true) {
                case .success: Issue.record("\(rendition): an encrypted channel has no I-frame playlist")
                case .failure(let refusal): #expect(refusal.kind == .notFound, "\(refusal)")
                }
                let media = try PlaylistParser().parseMedia(try origin.stitched(session, rendition, iFrames: false).get().bytes)
                var sawAd = false
                var sawKey = 0
                for (index, segment) in media.segments.enumerated() {
                    let effective = media.effectiveKeys(at: index)
                    if segment.uri.hasPrefix("/ads/") || segment.uri.hasPrefix("/slate/") {
                        sawAd = true
                        #expect(effective.allSatisfy { $0.method == "NONE" }, "ads are clear: \(segment.uri) \(effective)")
                    } else {
                        let key = try #require(effective.first { $0.method == "AES-128" }, "\(segment.uri)")
                        let uri = try #require(key.uri)
                        let msn = try #require(UInt64(segment.uri.split(separator: "/").last!.dropLast(3)))
                        #expect(uri == "/keys/demo/\(msn / 3).key?session=\(session)", "\(uri)")
                        sawKey += 1
                    }
                    for key in segment.tags.keys where key.uri?.hasPrefix("/keys/") == true {
                        #expect(key.uri?.hasSuffix("?session=\(session)") == true, "every key URI: \(key.uri ?? "")")
                    }
                }
                #expect(sawAd && sawKey > 0, "\(rendition): ads and content in the window")
            }
            #expect(origin.insertion.refusesSession(session, channel: "demo", now: origin.clock.now() / 1000) == nil)
            #expect(origin.insertion.refusesSession(session, channel: "other", now: origin.clock.now() / 1000)?.kind == .forbidden)
        }
        #expect(origin.insertion.refusesSession("bogus", channel: "demo", now: origin.clock.now() / 1000)?.kind == .forbidden)
        #expect(origin.insertion.refusesSession(nil, channel: "demo", now: origin.clock.now() / 1000)?.kind == .forbidden)
    }
}
