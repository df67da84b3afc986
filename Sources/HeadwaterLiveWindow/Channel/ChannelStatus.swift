public import HeadwaterHLS

/// What an operator sees of one channel on the status page and `/api/status`: the source, each
/// rendition's window as a timeline (segments, discontinuities, gaps, slate, ad markers), the live
/// edge, stall history and ingest counts. A value built by the channel's publisher with each
/// version, so reading it costs a request nothing but encoding.
///
/// Times are µs since the Unix epoch (`Int64`), like the rest of the origin; the JSON API turns
/// them into ages at request time.
public struct ChannelStatus: Sendable, Hashable, Codable {
    /// One listed segment, as the timeline draws it.
    public struct Segment: Sendable, Hashable, Codable {
        public enum Kind: String, Sendable, Hashable, Codable {
            case content
            /// `EXT-X-GAP`: listed to keep the timeline, never fetched.
            case gap
            /// Slate filling a stall.
            case slate
        }

        public var msn: UInt64
        /// Seconds.
        public var duration: Double
        public var kind: Kind
        /// Preceded by `EXT-X-DISCONTINUITY`.
        public var discontinuity: Bool
        /// Ad signalling on this segment (`cue-out`, `cue-in`, `cue-out-cont`, `daterange`), if any.
        public var marker: String?

        public init(msn: UInt64, duration: Double, kind: Kind, discontinuity: Bool, marker: String? = nil) {
            self.msn = msn
            self.duration = duration
            self.kind = kind
            self.discontinuity = discontinuity
            self.marker = marker
        }
    }

    public struct Rendition: Sendable, Hashable, Codable {
        public var name: String
        public var mediaSequence: UInt64
        public var discontinuitySequence: UInt64
        public var segments: [Segment]
        /// When this rendition last listed a new segment from its source (not slate), µs.
        public var lastSegmentAt: Int64?

        public init(
            name: String, mediaSequence: UInt64, discontinuitySequence: UInt64, segments: [Segment],
            lastSegmentAt: Int64?
        ) {
            self.name = name
            self.mediaSequence = mediaSequence
            self.discontinuitySequence = discontinuitySequence
            self.segments = segments
            self.lastSegmentAt = lastSegmentAt
        }

        /// The timeline of `playlist`; `slate` holds the MSNs that are stall slate.
        public init(name: String, playlist: MediaPlaylist, slate: Set<UInt64> = [], lastSegmentAt: Int64?) {
            var segments: [Segment] = []
            segments.reserveCapacity(playlist.segments.count)
            for (index, segment) in playlist.segments.enumerated() {
                let msn = playlist.mediaSequenceNumber(at: index)
                let kind: Segment.Kind = segment.tags.gap ? .gap : slate.contains(msn) ? .slate : .content
                segments.append(
                    Segment(
                        msn: msn, duration: Double(segment.duration.microseconds) / 1_000_000, kind: kind,
                        discontinuity: segment.tags.discontinuity, marker: Self.marker(segment)))
            }
            self.init(
                name: name, mediaSequence: playlist.effectiveMediaSequence,
                discontinuitySequence: playlist.effectiveDiscontinuitySequence, segments: segments,
                lastSegmentAt: lastSegmentAt)
        }

        static func marker(_ segment: MediaSegment) -> String? {
            for marker in segment.tags.adMarkers {
                switch marker {
                case .cueOut: return "cue-out"
                case .cueIn: return "cue-in"
                case .cueOutContinuation: return "cue-out-cont"
                default: continue
                }
            }
            return segment.tags.dateRanges.isEmpty ? nil : "daterange"
        }
    }

    /// A period when the source delivered nothing for more than 1½ target durations.
    public struct Stall: Sendable, Hashable, Codable {
        /// The rendition that stalled, or `nil` for the whole channel.
        public var rendition: String?
        public var startedAt: Int64
        /// `nil` while it lasts.
        public var endedAt: Int64?
        /// How the playlist kept advancing: `slate`, `gap` or `none`.
        public var fill: String

        public init(rendition: String?, startedAt: Int64, endedAt: Int64? = nil, fill: String) {
            self.rendition = rendition
            self.startedAt = startedAt
            self.endedAt = endedAt
            self.fill = fill
        }
    }

    /// What the source delivered since the channel started.
    public struct Ingest: Sendable, Hashable, Codable {
        public var segments: UInt64
        public var bytes: UInt64
        public var rejected: UInt64

        public init(segments: UInt64 = 0, bytes: UInt64 = 0, rejected: UInt64 = 0) {
            self.segments = segments
            self.bytes = bytes
            self.rejected = rejected
        }
    }

    /// `loop`, `push`, `directory` or `pull`.
    public var source: String
    public var targetDuration: Int
    public var windowSeconds: Int
    public var renditions: [Rendition]
    /// The most recent stalls, oldest first (at most ``maxStalls``).
    public var stalls: [Stall]
    public var ingest: Ingest

    public static let maxStalls = 20

    public init(
        source: String, targetDuration: Int, windowSeconds: Int, renditions: [Rendition] = [], stalls: [Stall] = [],
        ingest: Ingest = Ingest()
    ) {
        self.source = source
        self.targetDuration = targetDuration
        self.windowSeconds = windowSeconds
        self.renditions = renditions
        self.stalls = stalls
        self.ingest = ingest
    }

    /// When the newest segment of any rendition arrived from the source, µs.
    public var lastSegmentAt: Int64? { renditions.compactMap(\.lastSegmentAt).max() }
}
