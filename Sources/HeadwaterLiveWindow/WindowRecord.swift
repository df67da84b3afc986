import HeadwaterHLS

/// A live window as it is saved in the state directory, so that a push, directory or pull channel
/// comes back after a restart with the same playlists, numbering and files (``LiveWindow/record(directory:savedAt:)``,
/// ``LiveWindow/init(restoring:configuration:directory:now:isIntact:)``).
///
/// The record is the persisted format itself, spelled out field by field rather than derived from
/// the window's internals, so that a refactor of ``LiveWindow`` cannot silently change what is on
/// disk. Playlists are kept as M3U8 text, the one format Headwater already parses and writes
/// without loss (every tag survives, so the same bytes are served after a restart); each listed
/// segment is also described in fields (number, discontinuity number, date, duration, file, size,
/// ETag), which the restore checks against the text.
///
/// Times are µs since the Unix epoch, durations µs, dates ISO 8601 as written in playlists. File
/// paths inside the channel's store directory are relative to it (the state directory can move);
/// others (slate in `Public/`) are absolute.
public struct WindowRecord: Sendable, Hashable, Codable {
    public var channel: String
    public var targetDuration: Int
    /// The run that wrote it (its files are named `{runTag}-{n}.{ext}`).
    public var runTag: String
    public var savedAt: Int64
    public var renditions: [Rendition]
    /// The highest media and discontinuity sequence numbers any rendition listed: numbering
    /// continues above them.
    public var highestMediaSequence: UInt64?
    public var highestDiscontinuitySequence: UInt64
    /// Completed uploads by source path (`v0/seg12.ts`), not yet forgotten.
    public var uploads: [Upload]
    public var nextUploadSequence: UInt64
    public var multivariant: Multivariant
    public var ingested: ChannelStatus.Ingest
    public var stalls: [ChannelStatus.Stall]

    /// A stored file: what ``SegmentFile`` says of it.
    public struct File: Sendable, Hashable, Codable {
        public var path: String
        public var length: Int64
        public var entityTag: String
        public var contentType: String
        public var lastModified: Int64
        public var keyFrame: KeyFrame?
    }

    /// ``KeyFrameLocation``: byte ranges and the video stream, for I-frame playlists.
    public struct KeyFrame: Sendable, Hashable, Codable {
        public var initializationStart: Int
        public var initializationEnd: Int
        public var frameStart: Int
        public var frameEnd: Int
        public var format: String
        public var codec: String
        public var profile: Int
        public var level: Int
        public var width: Int
        public var height: Int
        public var frameRateNumerator: UInt64?
        public var frameRateDenominator: UInt64?
        /// `vui` or `timestamps`.
        public var frameRateSource: String?
    }

    public struct Rendition: Sendable, Hashable, Codable {
        public var name: String
        /// The source playlist path that feeds it (`x_0.m3u8`).
        public var playlistPath: String
        /// Headwater's playlist of the rendition, M3U8.
        public var playlist: String
        /// The listed segments, in playlist order.
        public var segments: [Segment]
        /// Segments removed from the window and fetchable until their deadline (C7).
        public var retained: [Retained]
        /// Whether its playlist is served (it has lasted three target durations).
        public var published: Bool
        /// Codecs, resolution and frame rate of its media, for the generated multivariant playlist.
        public var codecs: [String]?
        public var resolution: String?
        public var frameRate: String?
        public var slateIndex: Int
        /// Stall fillers were being listed: the source's next segment follows a discontinuity.
        public var listingFillers: Bool
        /// How the source's numbering maps to Headwater's, and what was consumed of it.
        public var following: Following?
    }

    public struct Segment: Sendable, Hashable, Codable {
        public var msn: UInt64
        public var dsn: UInt64
        /// The URI listed (`v0/k3x9-1234.ts`).
        public var uri: String
        /// The served name below the rendition (`k3x9-1234.ts`).
        public var name: String
        public var duration: Int64
        /// Start on the PROGRAM-DATE-TIME timeline.
        public var date: String
        public var discontinuity: Bool
        /// `nil` for an `EXT-X-GAP` segment.
        public var file: File?
        /// Init sections and keys it needs, by served name.
        public var aux: [String: File]
        public var guessed: Bool
        public var filler: Bool
    }

    public struct Retained: Sendable, Hashable, Codable {
        public var name: String
        public var file: File?
        public var aux: [String: File]
        public var deadline: Int64
    }

    /// Following the source's playlist: offsets, the next source MSN, what was consumed.
    public struct Following: Sendable, Hashable, Codable {
        public var offset: UInt64
        public var discontinuityOffset: UInt64
        public var nextSourceSequence: UInt64?
        /// The source's newest playlist, M3U8, and when it arrived.
        public var sourcePlaylist: String?
        public var sourceReceivedAt: Int64
        public var consumed: [Consumed]
        public var history: [Consumed]
        public var stale: [Consumed]
    }

    /// A source segment consumed: its source MSN (or upload sequence, for history), path and ETag.
    public struct Consumed: Sendable, Hashable, Codable {
        public var number: UInt64
        public var path: String
        public var entityTag: String?
    }

    public struct Upload: Sendable, Hashable, Codable {
        public var path: String
        public var file: File
        public var completedAt: Int64
        public var sequence: UInt64
        public var codecs: [String]?
        public var resolution: String?
        public var frameRate: String?
    }

    public struct Multivariant: Sendable, Hashable, Codable {
        /// The source's own multivariant playlist (M3U8) and its path, if it sent one.
        public var sourcePath: String?
        public var source: String?
        /// The multivariant playlist last published (M3U8) and its version.
        public var published: String?
        public var version: UInt64
        public var advertised: [String: Int]
        public var advertisedIFrames: [String: [Int]]
    }

    /// Why a record cannot be restored (the channel then starts empty).
    public struct RestoreError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// What a restore did, for the log.
    public struct RestoreSummary: Sendable, Hashable {
        /// Segments listed again, by rendition.
        public var listed: [String: Int] = [:]
        /// Listed segments whose file was missing or torn: removed from the head of the window,
        /// or listed as `EXT-X-GAP` behind it (removing it would renumber what follows).
        public var dropped: [String] = []
        public var gapped: [String] = []
        /// Removed segments whose retention ended while Headwater was down, or whose file is gone.
        public var expired = 0
        /// Files of the record, kept: everything else of the store may go.
        public var files: Set<String> = []
    }
}
