import HeadwaterHLS
import HeadwaterLiveWindow
import Testing

/// An encoder pushing low-latency HLS the way Apple's tools lay it out: `v0.m3u8` lists complete
/// segments `seg-{n}.ts`, each with its parts `seg-{n}.part{k}.ts` (or byte ranges of the segment
/// file), then the parts of the open segment and a hint for the next part. The clock advances one
/// part at a time.
struct LowLatencyEncoder {
    /// Its playlist is `{rendition}.m3u8`, its files below `{rendition}/`.
    var rendition = "v0"
    var partsPerSegment = 4
    var partDuration = HLSDuration.milliseconds(500)
    /// Parts are byte ranges of `seg-{n}.ts` (re-uploaded as it grows) instead of files of their own.
    var byteRanges = false
    /// The encoder's own EXT-X-SERVER-CONTROL.
    var serverControl: ServerControl? = ServerControl(attributes: [
        Attribute("CAN-BLOCK-RELOAD", .token("YES")), Attribute("PART-HOLD-BACK", .decimal(.milliseconds(1500))),
    ])
    /// Complete segments listed (the encoder's window).
    var playlistLength = 6
    static let partBytes: UInt64 = 1_000

    /// µs since the epoch: 2026-11-21T17:36:00Z.
    var clock: Int64 = 1_795_282_560_000_000
    /// The open segment and how many of its parts exist.
    var open: UInt64 = 0
    var openParts = 0
    var completed: [UInt64] = []
    /// Counts encoder restarts: names start over, stored files say which run they hold.
    var run = 0
    private var uploads = 0

    var segmentDuration: HLSDuration { HLSDuration(microseconds: partDuration.microseconds * Int64(partsPerSegment)) }

    func segmentURI(_ n: UInt64) -> String { "\(rendition)/seg-\(n).ts" }
    func partURI(_ n: UInt64, _ k: Int) -> String { byteRanges ? segmentURI(n) : "\(rendition)/seg-\(n).part\(k).ts" }

    mutating func file(_ path: String, length: UInt64) -> SegmentFile {
        uploads += 1
        return SegmentFile(
            path: "/store/r\(run)/\(path)/\(uploads)", length: Int64(length), entityTag: "\"\(path)-\(uploads)\"",
            contentType: "video/mp2t", lastModified: clock / 1_000_000)
    }

    func parts(of n: UInt64, count: Int) -> [PartialSegment] {
        (0..<count).map { k in
            PartialSegment(
                uri: partURI(n, k), duration: partDuration, independent: k == 0,
                byteRange: byteRanges ? ByteRange(length: Self.partBytes, offset: UInt64(k) * Self.partBytes) : nil)
        }
    }

    /// The encoder process restarts: numbering and names start over.
    mutating func restart() {
        run += 1
        open = 0
        openParts = 0
        completed = []
        clock += 3_000_000
    }

    /// The encoder's playlist now.
    func playlist() -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: 2, mediaSequence: completed.first ?? open)
        playlist.version = 9
        playlist.partInformation = PartInformation(partTarget: partDuration)
        playlist.serverControl = serverControl
        playlist.segments = completed.map { n in
            var segment = MediaSegment(uri: segmentURI(n), duration: segmentDuration)
            if n == 0 { segment.tags.programDateTime = ProgramDateTime(millisecondsSinceEpoch: 1_795_282_560_000) }
            segment.tags.parts = parts(of: n, count: partsPerSegment)
            return segment
        }
        playlist.trailingTags.parts = parts(of: open, count: openParts)
        var hint: AttributeList = [Attribute("TYPE", .token("PART")), Attribute("URI", .quoted(partURI(open, openParts)))]
        if byteRanges { hint["BYTERANGE-START"] = .integer(UInt64(openParts) * Self.partBytes) }
        playlist.preloadHints = [PreloadHint(attributes: hint)]
        return playlist
    }

    /// Encodes the next part: uploads it (unless `upload` is false), and the segment file when the
    /// part completes its segment; returns the uploads as (path, file).
    mutating func producePart(upload: Bool = true) -> [(path: String, file: SegmentFile)] {
        clock += partDuration.microseconds
        var stored: [(String, SegmentFile)] = []
        openParts += 1
        if byteRanges {
            // The growing segment file, uploaded again with each part.
            if upload {
                stored.append((segmentURI(open), file(segmentURI(open), length: UInt64(openParts) * Self.partBytes)))
            }
        } else if upload {
            stored.append((partURI(open, openParts - 1), file(partURI(open, openParts - 1), length: Self.partBytes)))
        }
        if openParts == partsPerSegment {
            if !byteRanges {
                stored.append((segmentURI(open), file(segmentURI(open), length: Self.partBytes * UInt64(partsPerSegment))))
            }
            completed.append(open)
            if completed.count > playlistLength { completed.removeFirst() }
            open += 1
            openParts = 0
        }
        return stored
    }

    /// One part later: its upload(s), then the playlist. Returns the outcomes.
    mutating func step(_ window: inout LiveWindow, upload: Bool = true) throws -> [LiveWindow.Outcome] {
        var outcomes: [LiveWindow.Outcome] = []
        for (path, file) in producePart(upload: upload) {
            outcomes.append(window.segmentStored(path: path, file: file, completedAt: clock))
        }
        outcomes.append(try window.playlistReceived(path: "\(rendition).m3u8", playlist(), now: clock))
        return outcomes
    }
}

/// Checks every version of the low-latency rendition `v0` as a polling client sees it: valid with
/// no issue at all, a legal successor of the previous one, every listed part fetchable, at most one
/// hint, and every hint published later as a part under the same URI unless withdrawn (F4).
struct PartsChecker {
    var rendition = "v0"
    var previous: MediaPlaylist?
    var problems: [String] = []
    var versions: [UInt64] = []
    /// Hinted URIs (with byte-range start) not yet seen as parts.
    var hinted: [String: UInt64] = [:]
    var hintsFulfilled = 0

    mutating func check(_ window: inout LiveWindow, now: Int64, _ label: String) {
        let snapshot = window.snapshot(now: now)
        guard let published = snapshot.media[rendition] else { return }
        let playlist = published.model
        if let last = versions.last, playlist != previous, published.version <= last {
            problems.append("\(label): version \(published.version) after \(last) for a changed playlist")
        }
        versions.append(published.version)
        var rendered = playlist
        rendered.version = max(rendered.version ?? 0, 3)
        for issue in PlaylistValidator.validate(rendered) { problems.append("\(label): \(issue)") }
        if let previous, previous != playlist {
            for issue in LiveUpdateChecker.check(previous: previous, next: playlist) where issue.severity == .error {
                problems.append("\(label): \(issue)")
            }
        }
        let files = snapshot.segments[rendition] ?? [:]
        var parts = playlist.segments.flatMap(\.tags.parts) + playlist.trailingTags.parts
        parts.removeAll(where: \.isGap)
        for part in parts {
            if files[PushChecker.name(part.uri)] == nil { problems.append("\(label): part \(part.uri) not fetchable") }
            if let start = hinted.removeValue(forKey: part.uri) {
                hintsFulfilled += 1
                if start != part.byteRange?.offset ?? 0 { problems.append("\(label): \(part.uri) hinted at \(start)") }
            }
        }
        if playlist.preloadHints.count > 1 { problems.append("\(label): \(playlist.preloadHints.count) hints") }
        for hint in playlist.preloadHints {
            if parts.contains(where: { $0.uri == hint.uri && $0.byteRange?.offset ?? 0 == hint.attributes.integer("BYTERANGE-START") ?? 0 }) {
                problems.append("\(label): hint \(hint.uri) names a listed part")
            }
            hinted[hint.uri] = hint.attributes.integer("BYTERANGE-START") ?? 0
        }
        previous = playlist
    }
}
