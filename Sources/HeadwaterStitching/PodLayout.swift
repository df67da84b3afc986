public import HeadwaterHLS

/// A viewer's pod for one break laid out on the break's slots, in one rendition: slot `k` carries the
/// `k`-th segment of the pod's ads in order (the *ad slots*), and every later slot carries a slate
/// segment. The ad slots depend on the decision and the rendition only — never on the content — so
/// the same slot always carries the same segment, in every reload; and because creatives are
/// segmented alike in every rendition, the same slot carries the same-length segment in every
/// rendition.
///
/// Dates of ad slots run on the pod's own clock: slot `k` starts at the break's start date plus the
/// EXTINFs of slots `0..<k` (``offset(ofSlot:)``), so an ad's dates are exact, known without the
/// content, and identical across renditions.
///
/// The slate is elastic: each slate slot carries the slate segment whose duration is nearest to that
/// of the content segment it replaces (``slateItem(replacing:)``), so that a long fill does not drift
/// from the content's pace. A slate is a still picture and silence, and every slot carries a
/// DISCONTINUITY, so any slate segment may follow any other; give it segments of several lengths
/// (e.g. 1 s to the target duration) to fill any slot closely. All lookups are O(1) or O(log slate)
/// after an O(pod segments) build.
public struct PodLayout: Sendable, Hashable {
    /// One ad of the layout: its slots are `firstSlot ..< firstSlot + segmentCount`.
    public struct PlacedAd: Sendable, Hashable {
        public var ad: Pod.Ad
        public var firstSlot: UInt64
        public var segmentCount: UInt64
        public var duration: HLSDuration
        public var map: MediaInitializationSection?
    }

    /// What a slot carries.
    public struct Item: Sendable, Hashable {
        public var segment: CreativeSegment
        public var map: MediaInitializationSection?
        /// The index in ``ads`` of the ad the segment belongs to, `nil` for slate.
        public var adIndex: Int?
    }

    public let ads: [PlacedAd]
    private let adSegments: [Item]
    /// `adOffsets[i]` = Σ EXTINF of `adSegments[..<i]`; one more entry than `adSegments`.
    private let adOffsets: [HLSDuration]
    /// By duration, shortest first (ties keep the catalog's order).
    private let slateSegments: [Item]
    /// The longest low-latency part of the pod's creatives and the slate, over *all* their
    /// renditions, so that every rendition derives the same PART-TARGET and SERVER-CONTROL from it
    /// (C14); zero when none was cut into parts.
    public let longestPart: HLSDuration

    /// Lays out `decision` in `rendition`.
    public init(decision: PodDecision, ruleSet: AdRuleSet, rendition: String) throws(StitchingError) {
        var ads: [PlacedAd] = []
        var segments: [Item] = []
        var longest = HLSDuration.zero
        for ad in decision.ads {
            guard let creative = ruleSet.creatives[ad.creativeID] else {
                throw .unknownCreative(ad.creativeID, ruleSetVersion: ruleSet.version)
            }
            guard let media = creative.renditions[rendition], !media.segments.isEmpty else {
                throw .missingRendition(creative: creative.id, rendition: rendition)
            }
            longest = max(longest, Self.longestPart(of: creative))
            ads.append(
                PlacedAd(
                    ad: ad, firstSlot: UInt64(segments.count), segmentCount: UInt64(media.segments.count),
                    duration: media.duration, map: media.map))
            for segment in media.segments {
                segments.append(Item(segment: segment, map: media.map, adIndex: ads.count - 1))
            }
        }
        guard let slate = ruleSet.slate.renditions[rendition], !slate.segments.isEmpty else {
            throw .missingRendition(creative: ruleSet.slate.id, rendition: rendition)
        }
        guard slate.segments.allSatisfy({ $0.duration > .zero }) else { throw .emptySlate(ruleSetVersion: ruleSet.version) }
        self.longestPart = max(longest, Self.longestPart(of: ruleSet.slate))
        self.ads = ads
        self.adSegments = segments
        var offsets: [HLSDuration] = [.zero]
        offsets.reserveCapacity(segments.count + 1)
        for item in segments { offsets.append(offsets.last! + item.segment.duration) }
        self.adOffsets = offsets
        self.slateSegments = slate.segments.enumerated()
            .sorted { ($0.element.duration, $0.offset) < ($1.element.duration, $1.offset) }
            .map { Item(segment: $0.element, map: slate.map, adIndex: nil) }
    }

    /// The number of ad slots: the slots from there on carry slate.
    public var adSlotCount: UInt64 { UInt64(adSegments.count) }

    /// The ad segment slot `slot` carries; `nil` for a slate slot.
    public func adItem(atSlot slot: UInt64) -> Item? {
        slot < adSlotCount ? adSegments[Int(slot)] : nil
    }

    /// Σ EXTINF of the ad slots before `slot` (`slot` ≤ ``adSlotCount``): how far into the break the
    /// ad slot `slot` starts, on the pod's clock.
    public func offset(ofSlot slot: UInt64) -> HLSDuration {
        adOffsets[Int(min(slot, adSlotCount))]
    }

    /// The slate segment for a slot whose content segment lasts `duration`: the nearest in duration,
    /// the shorter one on a tie.
    public func slateItem(replacing duration: HLSDuration) -> Item {
        var low = 0
        var high = slateSegments.count
        while low < high {
            let middle = (low + high) / 2
            if slateSegments[middle].segment.duration < duration { low = middle + 1 } else { high = middle }
        }
        // slateSegments[low] is the first ≥ duration; its predecessor the last < duration.
        guard low < slateSegments.count else { return slateSegments[slateSegments.count - 1] }
        guard low > 0 else { return slateSegments[0] }
        let above = slateSegments[low].segment.duration - duration
        let below = duration - slateSegments[low - 1].segment.duration
        return below <= above ? slateSegments[low - 1] : slateSegments[low]
    }

    private static func longestPart(of creative: Creative) -> HLSDuration {
        var longest = HLSDuration.zero
        for media in creative.renditions.values {
            for segment in media.segments {
                for part in segment.parts where part.duration > longest { longest = part.duration }
            }
        }
        return longest
    }

    /// The EXT-X-VERSION its segments need: 3 for fractional EXTINFs, 4 for byte ranges, 6 for
    /// EXT-X-MAP (RFC 8216bis §8).
    var requiredVersion: Int {
        var version = 1
        for item in adSegments + slateSegments {
            if item.map != nil { return 6 }
            if item.segment.byteRange != nil { version = 4 }
            if item.segment.duration.microseconds % 1_000_000 != 0 { version = max(version, 3) }
        }
        return version
    }
}
