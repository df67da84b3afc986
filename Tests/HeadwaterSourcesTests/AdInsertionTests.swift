import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSCTE35
import HeadwaterSources
import HeadwaterStitching
import Logging
import Testing

/// The committed demo ad configuration (Config/ads.yaml) and public directory.
private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Ad insertion in the origin below HTTP: the registry advancing each channel's break log with every
/// version it publishes, sessions, stitched playlists, "cue now", and refusals.
@Suite("Ad insertion")
struct AdInsertionTests {
    static let package = try! LoopPackage.load(multivariantPath: demoPackagePath)
    /// 2026-11-21T17:36:00Z, on a minute: the schedule's break starts here.
    static let start: Int64 = 1_795_282_560_000_000

    struct Origin {
        let registry = ChannelRegistry()
        let ruleBook: AdRuleBook
        let insertion: AdInsertion
        let metrics = OriginMetrics()
        let channel = LoopChannel(name: "demo", package: AdInsertionTests.package, windowSeconds: 30, startedAt: 0)

        init(
            adminToken: String? = "admin", schedule: BreakSchedule? = try! BreakSchedule(every: .seconds(60), duration: .seconds(20)),
            onStitched: AdInsertion.StitchObserver? = nil
        ) throws {
            let ads = try AdConfiguration.load(
                file: repository.appendingPathComponent("Config/ads.yaml").path,
                publicDirectory: repository.appendingPathComponent("Public").path, version: 1)
            ruleBook = AdRuleBook(ads.ruleSet)
            insertion = AdInsertion(
                registry: registry, ruleBook: ruleBook, signer: try SessionSigner(secret: Array("0123456789abcdef".utf8)),
                adminToken: adminToken, logger: Logger(label: "test"), onStitched: onStitched)
            registry.setBreaks(
                ChannelBreaks(channel: "demo", schedule: schedule, ruleBook: ruleBook, logger: Logger(label: "test"), metrics: metrics),
                for: "demo")
        }

        /// Publishes the channel as it is at `now` (µs).
        func publish(at now: Int64) { registry.publish(channel.snapshot(at: now)) }

        /// A new session's media playlist URIs (`v1.m3u8?session=…`) by rendition.
        func startSession(_ query: [(name: String, value: String)], at now: Int64) throws -> [String: String] {
            let playlist = try insertion.startSession(channel: "demo", query: query, headers: [], now: now / 1000).get()
            let master = try PlaylistParser().parseMultivariant(playlist.bytes)
            var uris: [String: String] = [:]
            for uri in master.variants.map(\.uri) + master.renditions.compactMap(\.uri) {
                uris[String(uri.prefix { $0 != "." })] = uri
            }
            return uris
        }

        func stitched(_ uri: String, at now: Int64) throws -> MediaPlaylist {
            let token = String(uri.split(separator: "=", maxSplits: 1)[1])
            let rendition = String(uri.prefix { $0 != "." })
            let playlist = try insertion.stitchedPlaylist(channel: "demo", rendition: rendition, token: token, now: now / 1000).get()
            return try PlaylistParser().parseMedia(playlist.bytes)
        }
    }

    @Test("a session's stitched playlists obey the live rules reload after reload through a break, in every rendition alike")
    func stitchedThroughABreak() throws {
        let origin = try Origin()
        var now = Self.start - 10_000_000
        origin.publish(at: now)
        let session = try origin.startSession([("device", "phone")], at: now)
        #expect(Set(session.keys) == ["v0", "v1", "v2", "audio-alt"])
        var previous: [String: MediaPlaylist] = [:]
        var sawAds = false
        // 40 s in 0.5 s steps: the break from :00 to :20 and the return.
        while now < Self.start + 30_000_000 {
            origin.publish(at: now)
            var shapes: Set<[String]> = []
            for (rendition, uri) in session {
                let playlist = try origin.stitched(uri, at: now)
                if let before = previous[rendition] {
                    let issues = LiveUpdateChecker.check(previous: before, next: playlist).filter { $0.severity == .error }
                    #expect(issues.isEmpty, "\(rendition) at \(now): \(issues)")
                }
                #expect(PlaylistValidator.validate(playlist).filter { $0.severity == .error }.isEmpty)
                previous[rendition] = playlist
                sawAds = sawAds || playlist.segments.contains { $0.uri.hasPrefix("/ads/") }
                // What every rendition must agree on: numbering, discontinuities, dates.
                let dsns = playlist.discontinuitySequenceNumbers()
                let dates = playlist.programDateTimes()
                shapes.insert(playlist.segments.indices.map { "\(playlist.effectiveMediaSequence + UInt64($0)) \(dsns[$0]) \(dates[$0].map { "\($0)" } ?? "-")" })
            }
            #expect(shapes.count == 1, "renditions disagree at \(now)")
            now += 500_000
        }
        #expect(sawAds, "the phone pod was stitched")
        let breaks = try #require(origin.registry.snapshot(of: "demo")?.stitching?.breaks.breaks)
        #expect(breaks.map(\.id) == ["sched-\(Self.start / 1000)"], "one scheduled break, named after its splice time")
    }

    @Test("an ad configuration reloaded during a break changes nothing in that break; the next break uses it")
    func reloadDuringABreak() throws {
        let origin = try Origin()
        var now = Self.start - 4_000_000
        origin.publish(at: now)
        let session = try origin.startSession([("device", "phone")], at: now)
        now = Self.start + 9_000_000  // inside the break
        origin.publish(at: now)
        let before = try origin.stitched(try #require(session["v1"]), at: now)
        let adsBefore = before.segments.map(\.uri).filter { $0.hasPrefix("/ads/") }
        #expect(!adsBefore.isEmpty)

        // The reload: phone viewers now get the "everyone" pod.
        var reloaded = try #require(origin.ruleBook.current)
        reloaded.version = origin.ruleBook.nextVersion
        reloaded.rules = reloaded.rules.map { rule in
            var rule = rule
            if rule.id == "phone" { rule.podIDs = ["everyone"] }
            return rule
        }
        origin.ruleBook.install(reloaded)
        origin.publish(at: now)
        let after = try origin.stitched(try #require(session["v1"]), at: now)
        #expect(after == before, "the break in progress keeps its pod and URIs")

        // The next break (a minute later) pins the new version.
        now = Self.start + 70_000_000
        origin.publish(at: now)
        let next = try origin.stitched(try #require(session["v1"]), at: now)
        let nextBreak = try #require(origin.registry.snapshot(of: "demo")?.stitching?.breaks.breaks.last)
        #expect(nextBreak.ruleSetVersion == reloaded.version)
        let everyone = try #require(reloaded.pod(id: "everyone")).ads.map(\.creativeID)
        let shown = Set(next.segments.map(\.uri).filter { $0.hasPrefix("/ads/") }.map { String($0.split(separator: "/")[1]) })
        #expect(!shown.isEmpty && shown.isSubset(of: Set(everyone)), "\(shown) from \(everyone)")
    }

    @Test("a corrupt SCTE-35 cue in the source is counted and not stitched; the shared playlist keeps it")
    func corruptCueIsCounted() throws {
        let origin = try Origin(schedule: nil)
        let snapshot = origin.channel.snapshot(at: Self.start)
        var content = try #require(snapshot.content)
        let valid = try SpliceInfoSection.spliceInsert(
            eventID: 7, outOfNetwork: true, ptsTime: nil, duration: Ticks90kHz.ticks(microseconds: 10_000_000), autoReturn: false
        ).encoded()
        var corrupt = valid
        corrupt[corrupt.count - 1] ^= 0xFF  // breaks the CRC
        for name in content.media.keys {
            let last = content.media[name]!.segments.count - 1
            content.media[name]!.segments[last].tags.adMarkers = [.oatclsSCTE35(base64: Data(corrupt).base64EncodedString())]
        }
        var published = snapshot
        published.content = content
        origin.registry.publish(published)
        let stitching = try #require(origin.registry.snapshot(of: "demo")?.stitching)
        #expect(stitching.breaks.breaks.isEmpty, "no break from a cue that fails its CRC")
        let exposition = String(decoding: origin.metrics.exposition(channels: []), as: UTF8.self)
        #expect(exposition.contains(#"headwater_ad_cues_rejected_total{channel="demo",reason="crc_mismatch"} 1"#), "\(exposition)")
        // The published content still carries the cue as the source sent it.
        #expect(origin.registry.snapshot(of: "demo")?.content?.media["v0"]?.segments.last?.tags.adMarkers.isEmpty == false)
    }

    @Test("cue now needs the admin token, a sane duration, and no break in progress")
    func cueNow() throws {
        let origin = try Origin(schedule: nil)
        origin.publish(at: Self.start)
        func request(_ authorization: String?, _ duration: String? = "10") -> AdInsertion.Refusal.Kind? {
            switch origin.insertion.requestBreak(channel: "demo", duration: duration, authorization: authorization) {
            case .success: nil
            case .failure(let refusal): refusal.kind
            }
        }
        #expect(request(nil) == .unauthorized)
        #expect(request("Bearer wrong") == .unauthorized)
        #expect(request("Bearer admin", "abc") == .badRequest)
        #expect(request("Bearer admin", "0") == .badRequest)
        #expect(request("Bearer admin") == nil)
        #expect(request("Bearer admin") == .conflict, "one request pending at a time")
        origin.publish(at: Self.start + 2_000_000)
        let breaks = try #require(origin.registry.snapshot(of: "demo")?.stitching?.breaks)
        #expect(breaks.openBreak?.id.hasPrefix("now-") == true, "the break started at the next segment")
        #expect(request("Bearer admin") == .conflict, "a break is open")
        #expect(origin.insertion.requestBreak(channel: "nope", duration: nil, authorization: "Bearer admin").failureKind == .notFound)

        let disabled = try Origin(adminToken: nil, schedule: nil)
        disabled.publish(at: Self.start)
        #expect(disabled.insertion.requestBreak(channel: "demo", duration: nil, authorization: "Bearer admin").failureKind == .forbidden)
    }

    @Test("tokens from another channel, altered or missing are refused; targeting is validated")
    func refusals() throws {
        let origin = try Origin()
        origin.publish(at: Self.start)
        let session = try origin.startSession([("device", "tv")], at: Self.start)
        let uri = try #require(session["v1"])
        let token = String(uri.split(separator: "=", maxSplits: 1)[1])
        let now = Self.start / 1000
        #expect(origin.insertion.stitchedPlaylist(channel: "demo", rendition: "v1", token: nil, now: now).failureKind == .badRequest)
        #expect(origin.insertion.stitchedPlaylist(channel: "demo", rendition: "v1", token: token + "x", now: now).failureKind == .forbidden)
        #expect(origin.insertion.stitchedPlaylist(channel: "other", rendition: "v1", token: token, now: now).failureKind == .forbidden)
        #expect(origin.insertion.stitchedPlaylist(channel: "demo", rendition: "v9", token: token, now: now).failureKind == .notFound)
        #expect(origin.insertion.startSession(channel: "demo", query: [("channel", "x")], headers: [], now: now).failureKind == .badRequest)
        #expect(origin.insertion.startSession(channel: "nope", query: [], headers: [], now: now).failureKind == .notFound)
    }

    @Test("a channel whose ladder the creatives do not cover is not stitched, and says why")
    func unfitLadder() throws {
        let origin = try Origin()
        var snapshot = origin.channel.snapshot(at: Self.start)
        var content = try #require(snapshot.content)
        content.media["v9"] = content.media["v0"]
        snapshot.content = content
        origin.registry.publish(snapshot)
        #expect(origin.registry.snapshot(of: "demo")?.stitching == nil)
        let refusal = origin.insertion.startSession(channel: "demo", query: [], headers: [], now: Self.start / 1000)
        #expect(refusal.failureKind == .unavailable)
        #expect(refusal.failureReason?.contains("v9") == true, "\(String(describing: refusal.failureReason))")
    }
}

extension Result where Failure == AdInsertion.Refusal {
    var failureKind: AdInsertion.Refusal.Kind? {
        if case .failure(let refusal) = self { return refusal.kind }
        return nil
    }

    var failureReason: String? {
        if case .failure(let refusal) = self { return refusal.reason }
        return nil
    }
}
