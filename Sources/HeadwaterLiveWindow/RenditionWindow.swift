import HeadwaterHLS

/// One rendition of a push channel: Headwater's playlist and the files behind it, plus what is
/// needed to follow the encoder's playlist of that rendition.
struct RenditionWindow: Sendable {
    /// A listed segment's files and computed start date (`window.segments` runs parallel).
    struct Entry: Sendable {
        var msn: UInt64
        /// Served name (`{run}-{msn}.ts`), below `/live/{channel}/{rendition}/`.
        var name: String
        /// `nil` for an EXT-X-GAP segment.
        var file: SegmentFile?
        /// Init sections and keys this segment needs, by served name.
        var aux: [String: SegmentFile]
        /// Start on the PROGRAM-DATE-TIME timeline (written on the first segment and after
        /// discontinuities, extrapolated elsewhere: the same value a client computes).
        var date: ProgramDateTime
        var duration: HLSDuration
        /// Discontinuity sequence number.
        var dsn: UInt64
        /// A gap filler whose duration nobody knew (the target duration was used).
        var guessed = false
        /// Slate or gap listed while the source stalled.
        var filler = false
    }

    /// A segment removed from the window, fetchable until `deadline` (C7).
    struct Retained: Sendable {
        var name: String
        var file: SegmentFile?
        var aux: [String: SegmentFile]
        /// µs since the epoch.
        var deadline: Int64
    }

    /// What identifies a consumed encoder segment, to tell a restarted encoder reusing numbers and
    /// names from the same playlist sent again.
    struct Identity: Sendable, Hashable {
        var path: String
        var entityTag: String?

        init(path: String, entityTag: String?) {
            self.path = path
            self.entityTag = entityTag
        }

        /// A sub-range is identified by its file and offset; its ETag is not compared, as an
        /// encoder re-uploading a growing file changes it without changing the segment.
        init(path: String, range: (offset: UInt64, length: UInt64)?, file: SegmentFile?) {
            if let range {
                self.init(path: "\(path)@\(range.offset)", entityTag: nil)
            } else {
                self.init(path: path, entityTag: file?.entityTag)
            }
        }
    }

    let name: String
    let playlistPath: String
    /// Headwater's playlist: what is rendered.
    var window: MediaPlaylist
    var entries: [Entry] = []
    var retained: [Retained] = []

    /// The numbering epoch (one per encoder run) and its offsets (see ``ChannelNumbering``).
    var epoch: Int
    var offset: UInt64
    var discontinuityOffset: UInt64
    /// The encoder MSN to consume next; `nil` before anything was listed.
    var nextEncoderSequence: UInt64?
    /// Recent encoder MSNs and what they were.
    var consumed: [UInt64: Identity] = [:]
    /// The uploads of the last media segments consumed in this run (path, upload sequence), and,
    /// after a restart, those of the previous run: a restarted encoder reuses names, so the very
    /// upload the previous run listed under a name the new playlist lists is not that segment (the
    /// new one has not arrived yet). A new upload, even of identical bytes, is.
    var history: [(path: String, upload: UInt64)] = []
    var stale: [String: UInt64] = [:]
    /// When the encoder's newest playlist arrived (µs).
    var encoderReceivedAt: Int64 = 0
    /// The encoder's newest playlist, and the one before it in the same run (the EXTINFs of
    /// segments it slid past before they arrived, for gap fillers).
    var encoder: MediaPlaylist?
    var previousEncoder: MediaPlaylist?
    /// The encoder MSN already reported as blocking (so it is reported once).
    var reportedBlocked: UInt64?
    /// The served MAP and KEYs in effect at the tail, to write them only when they change.
    var tailMap: MediaInitializationSection?
    var tailKeys: [Key] = []
    /// The newest probe of this rendition's media.
    var media: MediaInfo?
    /// Whether its playlist is served: from the moment it first lasts three target durations (a
    /// shorter live playlist makes players start at its first segment and stall, C5/C16); the
    /// window never shrinks below that afterwards.
    var published = false
    /// When a segment from the source (not a filler) was last listed, µs.
    var lastSourceSegmentAt: Int64?
    /// Since when this rendition alone is behind the others by 1½ target durations (gap-aligned).
    var stalledSince: Int64?
    /// When stall fillers began to be listed after the source's last segment: the next source
    /// segment resumes numbering above them, after a discontinuity.
    var fillerSince: Int64?
    /// The next slate segment to list.
    var slateIndex = 0
    /// Restored from the state directory at this time (µs) and not yet listing the source again: its
    /// next segment either continues what was listed, or segments were lost while Headwater was
    /// down and numbering goes on after a discontinuity (``LiveWindow/record(directory:savedAt:)``).
    var resumingSince: Int64?
    /// The playlist as last built, by version (the last MSN; listing only ever appends).
    var listed: (lastMSN: UInt64, model: MediaPlaylist)?
    /// The I-frame playlist of ``listed``, made with it (`nil` when it has none).
    var listedIFrames: MediaPlaylist?
    /// The low-latency parts (none for an encoder that pushes none).
    var parts = RenditionParts()
    /// ``RenditionParts/version`` when ``listed`` was built: with parts, the playlist changes between
    /// segments.
    var listedParts: UInt64 = 0
    /// How many playlists were built with parts: the version a low-latency playlist is published
    /// under (its last MSN does not change with every part).
    var publications: UInt64 = 0

    init(name: String, playlistPath: String, targetDuration: Int, epoch: Int, numbering: ChannelNumbering.Epoch) {
        self.name = name
        self.playlistPath = playlistPath
        self.window = MediaPlaylist(targetDuration: targetDuration)
        self.epoch = epoch
        self.offset = numbering.offset
        self.discontinuityOffset = numbering.discontinuityOffset
    }

    var lastMSN: UInt64? { entries.last?.msn }

    mutating func remember(path: String, upload: UInt64?) {
        guard let upload else { return }
        history.append((path, upload))
        if history.count > 128 { history.removeFirst(history.count - 128) }
    }

    /// The encoder's segment `encoderSequence`, if a recent playlist listed it.
    func encoderSegment(_ encoderSequence: UInt64) -> MediaSegment? {
        for playlist in [encoder, previousEncoder] {
            guard let playlist, encoderSequence >= playlist.effectiveMediaSequence else { continue }
            let index = encoderSequence - playlist.effectiveMediaSequence
            if index < UInt64(playlist.segments.count) { return playlist.segments[Int(index)] }
        }
        return nil
    }

    /// The entry listed under `msn`, if it is in the window.
    func entry(msn: UInt64) -> Entry? {
        guard let first = entries.first?.msn, msn >= first, msn - first < UInt64(entries.count) else { return nil }
        return entries[Int(msn - first)]
    }

    /// Every file a client may fetch now: listed segments and their init sections and keys, and
    /// removed ones until their deadline (C7).
    var fetchable: [String: SegmentFile] {
        var files: [String: SegmentFile] = [:]
        for entry in entries {
            if let file = entry.file { files[entry.name] = file }
            files.merge(entry.aux) { current, _ in current }
        }
        for removed in retained {
            if let file = removed.file { files[removed.name] = file }
            files.merge(removed.aux) { current, _ in current }
        }
        for listed in parts.listed.values {
            for part in listed { if let file = part.file { files[part.name] = file } }
        }
        return files
    }
}

/// Channel-wide numbering, so that renditions of one encoder agree on every segment's MSN,
/// discontinuity sequence number and date (C14), even when they start, restart or lose segments at
/// different moments.
///
/// Headwater's numbers are the encoder's plus offsets: MSN = encoder MSN + `offset`, DSN = encoder
/// DSN + `discontinuityOffset`. One epoch per encoder run; a restart opens an epoch whose numbers
/// start above everything listed, and the other renditions join it when they see the restart.
struct ChannelNumbering: Sendable {
    struct Epoch: Sendable, Hashable {
        /// First MSN of the epoch.
        var start: UInt64
        var offset: UInt64
        var discontinuityOffset: UInt64
        /// When the first rendition saw the new run (µs).
        var openedAt: Int64
        /// Leading source segments the epoch left out (a first segment longer than the target
        /// duration): a rendition whose playlist starts that much before ``start`` still joins it.
        var skipped: UInt64 = 0
    }

    var epochs: [Epoch] = [Epoch(start: 0, offset: 0, discontinuityOffset: 0, openedAt: .min)]
    /// The highest MSN and DSN any rendition listed.
    var highest: UInt64?
    var highestDiscontinuity: UInt64 = 0
    /// Per DSN, the first date given to a segment of it: every rendition dates its segments of that
    /// DSN from the same anchor.
    var anchors: [UInt64: (msn: UInt64, date: ProgramDateTime)] = [:]

    var current: Int { epochs.count - 1 }

    mutating func anchor(_ dsn: UInt64, msn: UInt64, date: ProgramDateTime) {
        guard anchors[dsn] == nil else { return }
        anchors[dsn] = (msn, date)
        if anchors.count > 64, let oldest = anchors.keys.min() { anchors[oldest] = nil }
    }
}
