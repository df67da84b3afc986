public import HeadwaterHLS

/// The IAB-style progress events of one ad, each announced in the stitched playlist's
/// `EXT-X-DATERANGE` of that ad as an attribute holding its tracking URLs.
public enum AdTrackingEvent: String, Sendable, Hashable, CaseIterable, Comparable {
    case impression
    case firstQuartile = "first_quartile"
    case midpoint
    case thirdQuartile = "third_quartile"
    case complete

    /// The DATERANGE attribute with this event's URLs (space-separated absolute http(s) URLs).
    public var attributeName: String {
        switch self {
        case .impression: return "X-TRACKING-IMPRESSION"
        case .firstQuartile: return "X-TRACKING-FIRST-QUARTILE"
        case .midpoint: return "X-TRACKING-MIDPOINT"
        case .thirdQuartile: return "X-TRACKING-THIRD-QUARTILE"
        case .complete: return "X-TRACKING-COMPLETE"
        }
    }

    /// How far into the ad the event's point is, in quarters (impression 0, complete 4).
    public var quarters: Int64 {
        switch self {
        case .impression: return 0
        case .firstQuartile: return 1
        case .midpoint: return 2
        case .thirdQuartile: return 3
        case .complete: return 4
        }
    }

    public static func < (lhs: AdTrackingEvent, rhs: AdTrackingEvent) -> Bool { lhs.quarters < rhs.quarters }
}

/// One event of one ad whose point a playlist lists, with the URLs to notify.
public struct DueBeacon: Sendable, Hashable {
    /// The ad's `EXT-X-DATERANGE` ID.
    public var dateRangeID: String
    public var event: AdTrackingEvent
    /// Absolute http(s) URLs, in the order written.
    public var urls: [String]

    public init(dateRangeID: String, event: AdTrackingEvent, urls: [String]) {
        self.dateRangeID = dateRangeID
        self.event = event
        self.urls = urls
    }
}

/// Which tracking beacons a stitched media playlist makes due. Pure: the caller fires them (once per
/// session, ``BeaconDispatcher``).
///
/// Ad segments are shared, cacheable URLs with no session in them, so the origin cannot see a viewer
/// fetch them; instead it fires a session's beacons when that session's playlist first *lists* the
/// media of the event's point — what a player plays next is what its playlist lists. An ad is an
/// `EXT-X-DATERANGE` of the ad class with a `START-DATE`; its duration is `DURATION` when known,
/// else `PLANNED-DURATION`. Listed media is the segments' PROGRAM-DATE-TIME intervals
/// (`[PDT, PDT + EXTINF]`; segments before the first dated one are not placed).
///
/// - impression is due once a listed segment contains `START-DATE` (the ad's first segment);
/// - first quartile, midpoint, third quartile and complete are due once a listed segment reaches
///   `START-DATE` + 25 %, 50 %, 75 %, 100 % of the duration: it starts before the point and ends at
///   or after it.
///
/// Both comparisons allow ``tolerance`` for millisecond rounding of dates. A point that slid out of
/// the window before it was listed (or that a viewer joining mid-ad never saw) is not due: the
/// viewer never had that media in a playlist.
public enum AdTracking {
    /// The `CLASS` of ad date ranges unless configured otherwise.
    public static let defaultAdClass = "com.headwater.ad"
    /// Allowed rounding between a segment's date and an ad point, in milliseconds.
    public static let tolerance: Int64 = 5

    /// The beacons due in `playlist`, in playlist order of the ads and event order within one.
    public static func dueBeacons(in playlist: MediaPlaylist, adClass: String = defaultAdClass) -> [DueBeacon] {
        let ads = adRanges(in: playlist, adClass: adClass)
        guard !ads.isEmpty else { return [] }
        let dates = playlist.programDateTimes()
        var listed: [(start: Int64, end: Int64)] = []
        listed.reserveCapacity(playlist.segments.count)
        for (segment, date) in zip(playlist.segments, dates) {
            guard let date else { continue }
            listed.append((date.millisecondsSinceEpoch, date.adding(segment.duration).millisecondsSinceEpoch))
        }
        guard !listed.isEmpty else { return [] }

        var due: [DueBeacon] = []
        for ad in ads {
            guard let start = ad.startDate?.millisecondsSinceEpoch else { continue }
            let duration = (ad.duration ?? ad.plannedDuration).map { max(0, ($0.microseconds + 500) / 1000) }
            for event in AdTrackingEvent.allCases {
                guard let urls = trackingURLs(ad.attributes.string(event.attributeName)) else { continue }
                let isListed: Bool
                if event == .impression {
                    isListed = listed.contains { $0.start <= start + tolerance && start + tolerance < $0.end }
                } else {
                    guard let duration else { continue }
                    let point = start + duration * event.quarters / 4
                    isListed = listed.contains { $0.start + tolerance < point && point <= $0.end + tolerance }
                }
                if isListed { due.append(DueBeacon(dateRangeID: ad.id, event: event, urls: urls)) }
            }
        }
        return due
    }

    /// The ad date ranges of the playlist, one per ID: tags of one ID merged in order (a later tag
    /// only adds attributes, such as `DURATION` when the ad's end is known).
    static func adRanges(in playlist: MediaPlaylist, adClass: String) -> [DateRange] {
        var ranges: [DateRange] = []
        var indexByID: [String: Int] = [:]
        func add(_ range: DateRange) {
            if let index = indexByID[range.id] {
                for attribute in range.attributes.attributes where !ranges[index].attributes.contains(attribute.name) {
                    ranges[index].attributes.attributes.append(attribute)
                }
            } else {
                indexByID[range.id] = ranges.count
                ranges.append(range)
            }
        }
        for segment in playlist.segments {
            for range in segment.tags.dateRanges { add(range) }
        }
        for range in playlist.trailingTags.dateRanges { add(range) }
        return ranges.filter { $0.class == adClass }
    }

    /// The absolute http(s) URLs of a tracking attribute, `nil` when there are none.
    static func trackingURLs(_ value: String?) -> [String]? {
        guard let value else { return nil }
        let urls = value.split(separator: " ").filter { url in
            let lower = url.prefix(8).lowercased()
            return (lower.hasPrefix("http://") && url.count > 7) || (lower.hasPrefix("https://") && url.count > 8)
        }
        return urls.isEmpty ? nil : urls.map(String.init)
    }
}
