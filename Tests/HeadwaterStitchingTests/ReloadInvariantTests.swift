import Foundation
import HeadwaterHLS
import HeadwaterStitching
import HeadwaterTesting
import Testing

/// The base seed: `HEADWATER_SEED` to replay a failure, else a fresh one per run; every failure names
/// the seed of its case.
enum PropertySeed {
    static let base: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["HEADWATER_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64(UInt32.max))
    }()

    static func seeds(_ count: Int) -> [UInt64] { (0..<UInt64(count)).map { base &+ $0 } }
}

/// DESIGN.md's seven stitching invariants, over generated live channels (``ChannelSimulator``) and
/// viewers who join at random times (some mid-break) and reload at random times, in every rendition.
@Suite("Stitched playlists keep the invariants across reloads")
struct ReloadInvariantTests {
    /// 200 seeds in 8 shards that run in parallel.
    static let shards = 8
    static let seedsPerShard = 25
    static let steps = 60

    @Test("every reload of every session in every rendition keeps invariants 1–7", .cpuBound, arguments: 0..<shards)
    func reloadsKeepInvariants(shard: Int) {
        var total = ChannelSimulator.Events()
        var renders = 0
        var stitchedSlots = 0
        var joinedMidBreak = 0
        let seeds = PropertySeed.seeds(Self.shards * Self.seedsPerShard)
        for seed in seeds[(shard * Self.seedsPerShard)..<((shard + 1) * Self.seedsPerShard)] {
            var run = InvariantRun(seed: seed)
            if let failure = run.run(steps: Self.steps) {
                Issue.record("seed \(seed) (replay with HEADWATER_SEED=\(seed)): \(failure)")
                continue
            }
            let events = run.channel.events
            total.breaks += events.breaks
            total.earlyReturns += events.earlyReturns
            total.endedOnTime += events.endedOnTime
            total.backToBack += events.backToBack
            total.announcedAhead += events.announcedAhead
            total.reloadsMidBreak += events.reloadsMidBreak
            total.sourceDiscontinuitiesInBreaks += events.sourceDiscontinuitiesInBreaks
            renders += run.renders
            stitchedSlots += run.stitchedSlots
            joinedMidBreak += run.sessionsJoinedMidBreak
        }
        // The generator must actually exercise what the invariants are about.
        let context = "shard \(shard), seeds from \(PropertySeed.base)"
        #expect(total.breaks > Self.seedsPerShard * 3, "\(context)")
        #expect(total.earlyReturns > 2 && total.endedOnTime > 2 && total.backToBack > 2, "\(context)")
        #expect(total.announcedAhead > 0 && total.reloadsMidBreak > 2 && total.sourceDiscontinuitiesInBreaks > 2, "\(context)")
        #expect(joinedMidBreak > 2 && stitchedSlots > 200 && renders > 1000, "\(context)")
        print("shard \(shard): \(renders) renders, \(stitchedSlots) stitched slots, \(total)")
    }
}

/// One seed's channel and viewers, and the history the invariants compare against.
struct InvariantRun {
    /// What one segment must keep on every reload (invariant 1).
    struct Fingerprint: Equatable, CustomStringConvertible {
        var uri: String
        var duration: HLSDuration
        var discontinuity: Bool
        var dsn: UInt64
        var date: ProgramDateTime?

        var description: String { "\(uri) \(duration) DSN \(dsn) \(date?.description ?? "no date")\(discontinuity ? " DISCONTINUITY" : "")" }
    }

    struct Viewer {
        var session: ViewerSession
        var joinedMidBreak: Bool
        var lastReload = 0
        var previous: [String: MediaPlaylist] = [:]
        /// By rendition, by media sequence number.
        var fingerprints: [String: [UInt64: Fingerprint]] = [:]
        /// Every attribute each date range ID has had, across reloads and renditions (invariant 6).
        var dateRanges: [String: [String: AttributeValue]] = [:]
    }

    let seed: UInt64
    var channel: ChannelSimulator
    var random: SeededRandom
    var viewers: [Viewer] = []
    var renders = 0
    var stitchedSlots = 0
    var sessionsJoinedMidBreak = 0
    var podsRanAhead = 0

    init(seed: UInt64) {
        self.seed = seed
        channel = ChannelSimulator(seed: seed)
        random = SeededRandom(seed: seed ^ 0x5EED_5EED)
    }

    /// Runs the channel; returns the first invariant broken, if any.
    mutating func run(steps: Int) -> String? {
        for step in 0..<steps {
            channel.step()
            if viewers.count < 3, step % 9 == 0 || random.chance(0.04) {
                let device = random.pick(["tv", "phone", "tv", ""])
                var targeting = device.isEmpty ? [:] : ["device": device]
                if random.chance(0.5) { targeting["header.user-agent"] = random.pick(["SmartTV/2.1", "Mozilla/5.0"]) }
                let session = ViewerSession(id: "s\(seed)-\(viewers.count)", startDate: channel.now, targeting: targeting)
                viewers.append(Viewer(session: session, joinedMidBreak: channel.isInBreak))
                if channel.isInBreak { sessionsJoinedMidBreak += 1 }
            }
            // Players reload every ½–1 target duration: at least every other segment here.
            for index in viewers.indices where random.chance(0.35) || viewers[index].lastReload + 2 <= step {
                viewers[index].lastReload = step
                if let failure = reload(viewer: index) { return "step \(step), \(failure)" }
            }
        }
        return nil
    }

    /// Renders every rendition for one viewer at this instant and checks them.
    mutating func reload(viewer index: Int) -> String? {
        var rendered: [(String, MediaPlaylist)] = []
        for rendition in channel.options.renditions {
            let content = channel.retained[rendition]!
            let playlist: MediaPlaylist
            do {
                playlist = try Stitcher.render(
                    content: content, rendition: rendition, breaks: channel.log, session: viewers[index].session,
                    ruleSets: channel.ruleSets,
                    options: StitchOptions(cueMarkers: seed % 2 == 0, minimumDuration: channel.minimumWindow))
            } catch {
                return "session \(viewers[index].session.id) \(rendition): render failed: \(error)"
            }
            renders += 1
            if let failure = check(playlist, content: content, rendition: rendition, viewer: index) {
                return "session \(viewers[index].session.id) \(rendition) (joined mid-break: \(viewers[index].joinedMidBreak)): \(failure)\n\(PlaylistSerializer.string(playlist))"
            }
            viewers[index].previous[rendition] = playlist
            rendered.append((rendition, playlist))
        }
        return checkRenditionsAgree(rendered)
    }

    /// Invariants 1, 2, 4, 5, 6, 7 and the structure of breaks, for one rendered playlist.
    mutating func check(_ playlist: MediaPlaylist, content: MediaPlaylist, rendition: String, viewer index: Int)
        -> String?
    {
        // A valid playlist on its own (B1, B7, D2, D4, D7, …). One exception, by design: when a pod
        // runs longer than the content it replaced, the date steps back where the content returns
        // (B7); a channel whose creatives are no longer than its segments never sees it.
        // (Renditions are compared with each other below, so validating one of them, every other
        // reload, is enough to keep the test fast.)
        let validated =
            rendition == channel.options.renditions[0] && renders % 2 == 1 ? PlaylistValidator.validate(playlist) : []
        let issues = validated.filter { issue in
            guard issue.severity == .error else { return false }
            if issue.rule == "B7", !channel.options.isConditioned, case .segment(let position) = issue.location,
                position > 0, playlist.segments[position - 1].uri.hasPrefix("/ads/"),
                !Self.sameAd(playlist.segments[position - 1].uri, playlist.segments[position].uri)
            {
                podsRanAhead += 1
                return false
            }
            return true
        }
        if !issues.isEmpty { return "invalid: \(issues.map(\.description).joined(separator: "; "))" }

        // 2 (and 1 as the spec's checker sees it): a legal successor of the previous reload.
        if let previous = viewers[index].previous[rendition] {
            let errors = LiveUpdateChecker.check(previous: previous, next: playlist).filter { $0.severity == .error }
            if !errors.isEmpty {
                return "not a legal successor: \(errors.map(\.description).joined(separator: "; "))\nprevious:\n\(PlaylistSerializer.string(previous))"
            }
        }

        // 4: the content's target duration, every EXTINF within it.
        if playlist.targetDuration != content.targetDuration { return "EXT-X-TARGETDURATION \(playlist.targetDuration)" }
        if let long = playlist.segments.first(where: { $0.duration.roundedSeconds > Int64(playlist.targetDuration) }) {
            return "EXTINF \(long.duration) of \(long.uri) rounds above the target duration"
        }

        // 5: the content's newest media sequence numbers, up to the live edge and never past it:
        // nothing is listed before its slot is. And at least the shared window's duration (C5).
        let shared = channel.contents[rendition]!
        let end = playlist.effectiveMediaSequence + UInt64(playlist.segments.count)
        if end != shared.effectiveMediaSequence + UInt64(shared.segments.count)
            || playlist.effectiveMediaSequence < content.effectiveMediaSequence
        {
            return "lists MSN \(playlist.effectiveMediaSequence)..<\(end), the content \(shared.effectiveMediaSequence)+\(shared.segments.count)"
        }
        if playlist.duration < channel.minimumWindow, playlist.effectiveMediaSequence > content.effectiveMediaSequence {
            return "lasts \(playlist.duration) s, less than the window \(channel.minimumWindow) s, with older segments available"
        }
        let position = Int(playlist.effectiveMediaSequence - content.effectiveMediaSequence)

        // 1: every MSN keeps URI, EXTINF, DISCONTINUITY, DSN and date, in every reload ever made.
        let dsns = playlist.discontinuitySequenceNumbers()
        let dates = playlist.programDateTimes()
        let first = playlist.effectiveMediaSequence
        for (position, segment) in playlist.segments.enumerated() {
            let msn = first + UInt64(position)
            let print = Fingerprint(
                uri: segment.uri, duration: segment.duration, discontinuity: segment.tags.discontinuity,
                dsn: dsns[position], date: dates[position])
            if let known = viewers[index].fingerprints[rendition, default: [:]][msn], known != print {
                return "MSN \(msn) was \(known), now \(print)"
            }
            viewers[index].fingerprints[rendition, default: [:]][msn] = print
        }
        if viewers[index].fingerprints[rendition]!.count > 4 * playlist.segments.count {
            viewers[index].fingerprints[rendition] = viewers[index].fingerprints[rendition]!.filter { $0.key >= first }
        }

        // The shape of breaks: every slot and every return carries DISCONTINUITY and a date; a break
        // is stitched exactly when it started at or after the session (7: and from its pinned version).
        let offsetIndex = position
        for (position, segment) in playlist.segments.enumerated() {
            let msn = first + UInt64(position)
            guard let adBreak = channel.log.breaks.last(where: { $0.startMediaSequence <= msn }), adBreak.contains(msn) else {
                continue
            }
            if !segment.tags.discontinuity || segment.tags.programDateTime == nil {
                return "slot MSN \(msn) of \(adBreak.id) lacks DISCONTINUITY or PROGRAM-DATE-TIME"
            }
            let stitched = adBreak.startDate >= viewers[index].session.startDate
            if stitched {
                stitchedSlots += 1
                if !segment.uri.hasPrefix("/ads/v\(adBreak.ruleSetVersion)/") {
                    return "slot MSN \(msn) of \(adBreak.id) (pinned version \(adBreak.ruleSetVersion)) carries \(segment.uri)"
                }
            } else if segment.uri != content.segments[position + offsetIndex].uri {
                return "slot MSN \(msn) of \(adBreak.id), which started before the session, carries \(segment.uri), not the content"
            }
        }

        // 6: a date range ID keeps every attribute value it ever had; later reloads only add.
        for range in playlist.segments.flatMap(\.tags.dateRanges) + playlist.trailingTags.dateRanges {
            var known = viewers[index].dateRanges[range.id] ?? [:]
            for attribute in range.attributes.attributes {
                if let value = known[attribute.name], value != attribute.value {
                    return "EXT-X-DATERANGE \(range.id.debugDescription) \(attribute.name) was \(value.text), now \(attribute.value.text)"
                }
                known[attribute.name] = attribute.value
            }
            viewers[index].dateRanges[range.id] = known
        }
        return nil
    }

    /// Whether `b` is the segment after `a` in one creative (`/ads/v1/ad3/video/4.ts` then `…/5.ts`),
    /// slate excepted: inside an ad the pod's clock is continuous, so a date never steps back there.
    static func sameAd(_ a: String, _ b: String) -> Bool {
        guard a.hasPrefix("/ads/"), b.hasPrefix("/ads/"), !a.contains("/slate/") else { return false }
        let (left, right) = (a.split(separator: "/"), b.split(separator: "/"))
        guard left.dropLast().elementsEqual(right.dropLast()), let i = Int(left.last!.split(separator: ".")[0]),
            let j = Int(right.last!.split(separator: ".")[0])
        else { return false }
        return j == i + 1
    }

    /// 3: at one instant all renditions of a session agree: media sequence, discontinuity numbers,
    /// EXTINFs, dates, discontinuity positions, and the same date ranges.
    func checkRenditionsAgree(_ rendered: [(String, MediaPlaylist)]) -> String? {
        guard let (name, reference) = rendered.first else { return nil }
        let referenceDSNs = reference.discontinuitySequenceNumbers()
        let referenceDates = reference.programDateTimes()
        let referenceRanges = Self.dateRanges(reference)
        for (other, playlist) in rendered.dropFirst() {
            if playlist.effectiveMediaSequence != reference.effectiveMediaSequence
                || playlist.effectiveDiscontinuitySequence != reference.effectiveDiscontinuitySequence
                || playlist.segments.count != reference.segments.count
            {
                return "\(other) and \(name) disagree on MEDIA-SEQUENCE, DISCONTINUITY-SEQUENCE or length"
            }
            if playlist.discontinuitySequenceNumbers() != referenceDSNs { return "\(other) and \(name) number discontinuities differently" }
            if playlist.programDateTimes() != referenceDates { return "\(other) and \(name) have different dates" }
            if playlist.segments.map(\.duration) != reference.segments.map(\.duration) {
                return "\(other) and \(name) have different EXTINFs"
            }
            if Self.dateRanges(playlist) != referenceRanges { return "\(other) and \(name) have different date ranges" }
        }
        return nil
    }

    static func dateRanges(_ playlist: MediaPlaylist) -> [String: AttributeList] {
        var result: [String: AttributeList] = [:]
        for range in playlist.segments.flatMap(\.tags.dateRanges) + playlist.trailingTags.dateRanges {
            var merged = result[range.id] ?? AttributeList()
            for attribute in range.attributes.attributes where !merged.contains(attribute.name) {
                merged.attributes.append(attribute)
            }
            result[range.id] = merged
        }
        return result
    }
}
