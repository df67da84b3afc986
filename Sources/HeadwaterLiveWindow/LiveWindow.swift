public import HeadwaterHLS
public import HeadwaterMedia

/// Headwater's own live window of a push channel: a pure state machine (no I/O, no clock) fed with
/// what the encoder uploads, deciding what is listed, how it is numbered, and which stored files
/// may be deleted. ``PushIngest`` does the I/O around it.
///
/// Why a window of its own instead of relaying the encoder's playlists:
/// - A segment is listed only when the encoder's playlist lists it **and** its upload completed,
///   so nothing is listed that cannot be served (B14; one 404 on the newest segment makes AVPlayer
///   stop reloading).
/// - Numbering survives encoder restarts: Headwater's media and discontinuity sequence numbers
///   are the encoder's plus channel-wide offsets, raised at each restart so numbers keep
///   increasing, with an EXT-X-DISCONTINUITY on the first segment after it. Offsets shared by the
///   channel keep renditions of one encoder aligned (C14): same MSN, DSN and date for the same
///   segment, even when one rendition starts later, loses segments or sees the restart late.
/// - Segments are renamed `{run}-{msn}.{ext}`: unique per run of Headwater, so a CDN never serves
///   an old file under a name an encoder reuses after a restart.
/// - Target duration, window length (≥ 3×TD + a segment, C5/C16), DISCONTINUITY-SEQUENCE (C6) and
///   retention of removed segments (C7) are Headwater's, whatever the encoder does.
/// - A low-latency encoder's parts are listed the same way (each once its upload is complete), with
///   Headwater's SERVER-CONTROL and hint, not the encoder's (``RenditionParts``, F1–F6).
public struct LiveWindow: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Channel name, for ETags and snapshots.
        public var channel: String
        /// The fixed EXT-X-TARGETDURATION (B2).
        public var targetDuration: Int
        /// Media time listed per playlist, seconds (raised to 3×TD + a segment when shorter).
        public var windowSeconds: Int
        /// Distinguishes this run's segment names and ETags from any earlier run's.
        public var runTag: String
        /// What happens when the source stalls (default: detected and reported, not filled).
        public var stall: StallPolicy
        /// Number from the wall clock: the first segment gets MSN (and DSN) `now / 100 ms`, so a
        /// channel that starts again — Headwater restarted, or the channel replaced by a config
        /// reload — never numbers below what players saw before (C3, C6), with no state on disk.
        /// Off, numbers start at the encoder's (tests read them more easily).
        public var clockNumbering: Bool
        /// Segments named by an absolute `http(s)` URI are listed under that URI, with no file behind
        /// them (a pull source in `reference` mode: clients fetch them from the upstream). Otherwise
        /// an absolute URI cannot name a stored file, and such a segment is listed as EXT-X-GAP.
        public var listsRemoteSegments: Bool
        /// Headwater encrypts the channel itself, so a source playlist that is already encrypted
        /// (EXT-X-KEY with a METHOD other than NONE) is refused: encrypting it again would serve
        /// bytes no key in any playlist opens.
        public var encryptsSegments: Bool

        public init(
            channel: String, targetDuration: Int, windowSeconds: Int, runTag: String, stall: StallPolicy = .init(),
            clockNumbering: Bool = false, listsRemoteSegments: Bool = false, encryptsSegments: Bool = false
        ) {
            self.encryptsSegments = encryptsSegments
            self.channel = channel
            self.targetDuration = max(1, targetDuration)
            self.windowSeconds = max(0, windowSeconds)
            self.runTag = runTag
            self.stall = stall
            self.clockNumbering = clockNumbering
            self.listsRemoteSegments = listsRemoteSegments
        }
    }

    /// What one event did: whether published content changed, which stored files nothing refers
    /// to any more (the caller deletes them), and what is worth telling the operator.
    public struct Outcome: Sendable, Hashable {
        public var changed = false
        public var filesToDelete: [String] = []
        public var reports: [PushReport] = []
        public init() {}
    }

    public private(set) var configuration: Configuration
    /// Completed uploads by ingest path (`v0/seg12.ts`): the newest upload of each path.
    var uploads: [String: Upload] = [:]
    var nextUploadSequence: UInt64 = 1
    /// Media received from the source, for the status page.
    package var ingested = ChannelStatus.Ingest()
    /// The channel-wide stall in progress, and the recent ones.
    var stall: StallState?
    var stallHistory: [ChannelStatus.Stall] = []
    var renditions: [String: RenditionWindow] = [:]
    var numbering = ChannelNumbering()
    /// The encoder's multivariant playlist and its path, if it pushed one.
    var pushedMultivariant: (path: String, playlist: MultivariantPlaylist)?
    var multivariant = MultivariantState()
    /// Files that lost their last reference during the current event.
    var candidates: [String] = []
    var outcome = Outcome()

    public init(configuration: Configuration) { self.configuration = configuration }

    // MARK: Events

    /// A segment (or init section, key, subtitle) upload completed and its bytes are at
    /// `file.path`. `completedAt` is the wall clock (µs) used for PROGRAM-DATE-TIME when the
    /// encoder sends none; `probe` describes the media, for the generated multivariant playlist.
    public mutating func segmentStored(
        path: String, file: SegmentFile, completedAt: Int64, probe: SegmentProbe? = nil
    )
        -> Outcome
    {
        begin()
        let upload = Upload(
            file: file, completedAt: completedAt, sequence: nextUploadSequence, media: probe.map(MediaInfo.init))
        nextUploadSequence += 1
        ingested.segments += 1
        ingested.bytes += UInt64(max(0, file.length))
        if let old = uploads.updateValue(upload, forKey: path) { candidates.append(old.file.path) }
        for name in renditions.keys.sorted() { advance(name, now: completedAt) }
        return end(now: completedAt)
    }

    /// The encoder deleted `path`. A segment that is listed, or removed but still fetchable (C7),
    /// stays until its deadline; an upload nothing listed is deleted now.
    public mutating func segmentDeleted(path: String, now: Int64) -> Outcome {
        begin()
        if let old = uploads.removeValue(forKey: path) { candidates.append(old.file.path) }
        return end(now: now)
    }

    /// What a channel Headwater encrypts can take: whole MPEG-TS segments in the clear. An encrypted
    /// playlist would be encrypted twice; fMP4 (`EXT-X-MAP`) needs its init section under the same
    /// key and byte ranges cannot be encrypted alone, neither of which is built.
    static func checkEncryptable(_ playlist: MediaPlaylist, path: String) throws(IngestRefusal) {
        if let key = playlist.segments.lazy.flatMap(\.tags.keys).first(where: { $0.method != "NONE" }) {
            throw IngestRefusal(
                "\(path) is encrypted (EXT-X-KEY METHOD=\(key.method)) but Headwater encrypts this channel; send clear segments",
                reason: .malformedPlaylist)
        }
        if playlist.segments.contains(where: { $0.tags.map != nil }) {
            throw IngestRefusal(
                "\(path) is fMP4 (EXT-X-MAP); Headwater encrypts MPEG-TS segments only", reason: .unsupportedType)
        }
        if playlist.segments.contains(where: { $0.byteRange != nil }) {
            throw IngestRefusal(
                "\(path) lists byte ranges; Headwater encrypts whole segments only", reason: .unsupportedType)
        }
    }

    /// The encoder's media playlist at `path` (`x_0.m3u8`, `v0/index.m3u8`) feeds the rendition
    /// named ``IngestPath/renditionName(forPlaylist:)``; its segment URIs are relative to `path`.
    ///
    /// - Throws: 400 if the rendition name cannot appear in a URL, 409 if another playlist path
    ///   already feeds that rendition or the channel has ``maxRenditions``, 422 for a media
    ///   sequence beyond 2^62 or an EXTINF over an hour, or parts Headwater could not publish as
    ///   they are (``checkParts(_:rendition:path:now:)``). Nothing changes then.
    public mutating func playlistReceived(
        path: String, _ playlist: MediaPlaylist, now: Int64
    ) throws(IngestRefusal)
        -> Outcome
    {
        let name = IngestPath.renditionName(forPlaylist: path)
        guard IngestPath.isValidRenditionName(name) else {
            throw .badPath("rendition name \"\(name)\" (from \(path)) must be letters, digits, '-' and '_'")
        }
        if let existing = renditions[name], existing.playlistPath != path {
            throw IngestRefusal("\(path) and \(existing.playlistPath) both map to rendition \"\(name)\"",
                reason: .renditionConflict)
        }
        if renditions[name] == nil, renditions.count >= Self.maxRenditions {
            throw IngestRefusal("\(path) would be rendition \(renditions.count + 1); a channel has at most \(Self.maxRenditions)",
                reason: .renditionConflict)
        }
        try Self.checkBounds(playlist, path: path)
        try checkParts(playlist, rendition: name, path: path, now: now)
        if configuration.encryptsSegments { try Self.checkEncryptable(playlist, path: path) }
        begin()
        receive(playlist, rendition: name, path: path, now: now)
        return end(now: now)
    }

    /// The encoder's multivariant playlist at `path`. It is published, with media URIs rewritten to
    /// `{rendition}.m3u8`, once every rendition it refers to is live; until then, and without one,
    /// Headwater generates a multivariant playlist from measured bit rates and probed codecs.
    public mutating func multivariantReceived(path: String, _ playlist: MultivariantPlaylist, now: Int64) -> Outcome {
        begin()
        pushedMultivariant = (path, playlist)
        outcome.changed = true
        return end(now: now)
    }

    /// The clock's work: detects a stalled source and keeps the playlist advancing with slate or
    /// gap segments (see ``StallPolicy``), and drops what has outlived its use (removed segments
    /// past their C7 deadline, uploads no playlist refers to that are older than the window).
    /// Call it every ``tickInterval`` or more often; events also expire.
    public mutating func expire(now: Int64) -> Outcome {
        begin()
        checkStall(now: now)
        for name in renditions.keys.sorted() {
            // A part the encoder listed but never uploaded is given up on the clock, too.
            guard var rendition = renditions[name], rendition.parts.partTarget != nil else { continue }
            updateOpenParts(&rendition, now: now)
            renditions[name] = rendition
        }
        return end(now: now)
    }

    /// How often ``expire(now:)`` should run: a stall is acted on within this of 1½ target durations.
    public static let tickInterval: Int64 = 100_000

    /// A config reload's new window length and stall policy, applied in place: numbering, listed
    /// segments and retention carry on. (The target duration never changes, B2.)
    public mutating func reconfigure(windowSeconds: Int, stall: StallPolicy) {
        configuration.windowSeconds = max(0, windowSeconds)
        configuration.stall = stall
    }

    /// µs per number of ``Configuration/clockNumbering``: a source averaging segments shorter
    /// than 100 ms could overtake the clock, none does.
    public static let clockNumberingUnit: Int64 = 100_000

    /// Most renditions per channel: every playlist path an encoder invents becomes one.
    public static let maxRenditions = 32
    /// Longest EXTINF accepted (a live segment, not a recording).
    public static let maxSegmentDuration = HLSDuration.seconds(3600)

    /// Refuses numbers no live encoder sends, so that window arithmetic never overflows.
    static func checkBounds(_ playlist: MediaPlaylist, path: String) throws(IngestRefusal) {
        let limit: UInt64 = 1 << 62
        guard playlist.effectiveMediaSequence < limit, playlist.effectiveDiscontinuitySequence < limit else {
            throw IngestRefusal("\(path): media or discontinuity sequence beyond 2^62", reason: .malformedPlaylist)
        }
        if let long = playlist.segments.first(where: { $0.duration > maxSegmentDuration }) {
            throw IngestRefusal("\(path): EXTINF \(long.duration) of \(long.uri) is longer than \(maxSegmentDuration) s",
                reason: .malformedPlaylist)
        }
    }

    // MARK: Reading

    /// Headwater's current media playlist of `rendition` as it is (or will be) published, or `nil`
    /// while nothing is listed. It is served once it lasts three target durations (``liveRenditions``).
    public func mediaPlaylist(rendition: String) -> MediaPlaylist? {
        guard let state = renditions[rendition], !state.entries.isEmpty else { return nil }
        var playlist = state.window
        addParts(to: &playlist, state)
        // EXT-X-VERSION as required by what is listed, no higher (A8).
        let required = PlaylistValidator.requiredVersion(playlist).version
        playlist.version = required > 1 ? required : nil
        return playlist
    }

    /// Names of the renditions whose playlists are served: those that have lasted three target
    /// durations (before that a player would start too close to the live edge, C5/C16).
    public var liveRenditions: [String] { renditions.values.filter(\.published).map(\.name).sorted() }

    // MARK: Event bookkeeping

    private mutating func begin() {
        outcome = Outcome()
        candidates = []
    }

    private mutating func end(now: Int64) -> Outcome {
        expireRetained(now: now)
        collectUploads(now: now)
        outcome.filesToDelete = unreferenced(candidates)
        candidates = []
        return outcome
    }

    mutating func report(_ kind: PushReport.Kind, _ rendition: String, _ message: String) {
        outcome.reports.append(PushReport(kind: kind, rendition: rendition, message: message))
    }
}

/// Something about the encoder's input worth telling the operator (logged and counted by
/// ``PushIngest``); none of these stops the channel.
public struct PushReport: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// A listed segment's EXTINF rounds above the target duration (B1). Accepted: the target
        /// duration never changes (B2).
        case extinfAboveTargetDuration = "extinf_above_target_duration"
        /// The first segment of a new timeline (after an encoder restart, say) rounds above the
        /// target duration and the next one fits: it is not listed (B1), counted as refused
        /// (``IngestCounters/Reason/overTargetDuration``); see ``LiveWindow/longFirstSegment(_:_:at:_:)``.
        case segmentOverTargetDurationSkipped = "segment_over_target_duration_skipped"
        /// The encoder restarted: numbering continues, with a discontinuity.
        case encoderRestart = "encoder_restart"
        /// A listed segment never arrived in time, or cannot be served (byte range, absolute URI):
        /// published as EXT-X-GAP so the timeline and numbering stay intact.
        case missingSegment = "missing_segment"
        /// A listed segment is not uploaded yet; the segments after it wait (reported once).
        case segmentDelayed = "segment_delayed"
        /// A rendition's numbering could not stay aligned with the others.
        case misaligned
        /// The source delivered nothing for 1½ target durations (the channel is degraded).
        case stall
        /// The source is back after a stall.
        case stallEnded = "stall_ended"
        /// A part the encoder listed never arrived (within three part targets, or by the time its
        /// segment did): listed as GAP=YES, and no longer hinted.
        case missingPart = "missing_part"
        /// The encoder's EXT-X-SERVER-CONTROL falls short of F1 (Headwater serves its own).
        case serverControlDeviation = "server_control_deviation"
    }

    public var kind: Kind
    public var rendition: String
    public var message: String

    public var description: String { "\(rendition): \(message)" }
}

/// A completed upload.
struct Upload: Sendable {
    var file: SegmentFile
    var completedAt: Int64
    /// Increases with every upload: names init sections and keys uniquely per content.
    var sequence: UInt64
    var media: MediaInfo?
}

/// What the generated multivariant playlist advertises for a rendition, from a probe.
struct MediaInfo: Sendable, Hashable {
    var codecs: [String]
    var resolution: String?
    var frameRate: String?

    init(_ probe: SegmentProbe) {
        codecs = probe.codecs
        resolution = probe.video?.resolution
        frameRate = probe.video?.frameRate?.hlsAttributeValue
    }
}
