import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterMedia

/// An encoder pushing aligned renditions the way ffmpeg's HLS muxer does: `x_0.m3u8` lists
/// `x_00.ts`, `x_01.ts`, …; a restart starts numbering (and names) over.
struct FakeEncoder {
    struct Segment {
        var sequence: UInt64
        var duration: HLSDuration
        var discontinuity = false
        var dateRanges: [DateRange] = []
    }

    let renditions: [String]
    var run = 0
    var next: UInt64 = 0
    /// Segments produced since the last (re)start.
    var producedInRun = 0
    /// The encoder's playlist window (the same segments for every rendition).
    var listed: [Segment] = []
    /// Discontinuities that slid out of the encoder's playlist (its EXT-X-DISCONTINUITY-SEQUENCE, C6).
    var discontinuitySequence: UInt64 = 0
    var playlistLength = 6
    /// µs since the epoch: 2026-11-21T17:36:00Z.
    var clock: Int64 = 1_795_282_560_000_000
    private var uploads = 0

    init(renditions: [String] = ["x_0"]) { self.renditions = renditions }

    /// Encodes the next segment (the clock advances by its duration).
    @discardableResult
    mutating func produce(
        _ duration: HLSDuration = .seconds(2), discontinuity: Bool = false, dateRanges: [DateRange] = []
    ) -> Segment {
        let segment = Segment(sequence: next, duration: duration, discontinuity: discontinuity, dateRanges: dateRanges)
        next += 1
        producedInRun += 1
        clock += duration.microseconds
        listed.append(segment)
        while listed.count > playlistLength {
            if listed.removeFirst().discontinuity { discontinuitySequence += 1 }
        }
        return segment
    }

    /// The encoder process restarts: numbering and names start over.
    mutating func restart(at sequence: UInt64 = 0) {
        run += 1
        producedInRun = 0
        next = sequence
        listed = []
        discontinuitySequence = 0
        clock += 3_000_000
    }

    static func uri(_ rendition: String, _ sequence: UInt64) -> String { "\(rendition)\(sequence).ts" }

    /// A stored upload of `segment` (a distinct file and ETag per upload; the path says which run
    /// and encoder MSN it holds, for alignment checks).
    /// The key frame every stored segment is given (`nil`: none, as for audio).
    var keyFrame: KeyFrameLocation?

    mutating func file(_ rendition: String, _ segment: Segment) -> SegmentFile {
        uploads += 1
        return SegmentFile(
            path: "/store/\(rendition)/r\(run)/\(segment.sequence)/\(uploads)",
            length: 250_000 + Int64(segment.sequence % 7) * 1000,
            entityTag: "\"\(run)-\(segment.sequence)-\(uploads)\"", contentType: "video/mp2t",
            lastModified: clock / 1_000_000, keyFrame: keyFrame)
    }

    func playlist(_ rendition: String, targetDuration: Int = 2) -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: targetDuration, mediaSequence: listed.first?.sequence ?? next)
        playlist.discontinuitySequence = discontinuitySequence > 0 ? discontinuitySequence : nil
        playlist.segments = listed.map { segment in
            var media = MediaSegment(uri: Self.uri(rendition, segment.sequence), duration: segment.duration)
            media.tags.discontinuity = segment.discontinuity
            media.tags.dateRanges = segment.dateRanges
            return media
        }
        return playlist
    }

    /// Uploads `segment` of every rendition, then every playlist.
    mutating func push(_ segment: Segment, into window: inout LiveWindow) throws {
        for rendition in renditions {
            _ = window.segmentStored(
                path: Self.uri(rendition, segment.sequence), file: file(rendition, segment), completedAt: clock)
        }
        for rendition in renditions {
            _ = try window.playlistReceived(path: "\(rendition).m3u8", playlist(rendition), now: clock)
        }
    }
}

/// Checks every published version of every rendition as a polling client would see it.
struct PushChecker {
    var previous: [String: MediaPlaylist] = [:]
    var deleted: Set<String> = []
    var problems: [String] = []
    var versions = 0
    var checksAlignment = true

    mutating func check(_ window: inout LiveWindow, after outcome: LiveWindow.Outcome, now: Int64, _ label: String) {
        deleted.formUnion(outcome.filesToDelete)
        let snapshot = window.snapshot(now: now)
        var playlists: [String: MediaPlaylist] = [:]
        for name in window.liveRenditions {
            let playlist = window.mediaPlaylist(rendition: name)!
            playlists[name] = playlist
            let files = snapshot.segments[name] ?? [:]
            if previous[name] != playlist {
                for issue in PlaylistValidator.validate(playlist) where issue.severity == .error {
                    problems.append("\(label) \(name): \(issue)")
                }
            }
            if let before = previous[name], before != playlist {
                versions += 1
                for issue in LiveUpdateChecker.check(previous: before, next: playlist) where issue.severity == .error {
                    problems.append("\(label) \(name): \(issue)")
                }
                // C7: what just slid out is still fetchable.
                let removed = Int(playlist.effectiveMediaSequence - before.effectiveMediaSequence)
                for segment in before.segments.prefix(removed)
                where !segment.tags.gap && files[Self.name(segment.uri)] == nil {
                    problems.append("\(label) \(name): \(segment.uri) removed and no longer fetchable")
                }
            }
            // B14: everything listed can be fetched, and its file was not deleted.
            for segment in playlist.segments where !segment.tags.gap {
                guard let file = files[Self.name(segment.uri)] else {
                    problems.append("\(label) \(name): \(segment.uri) listed but not fetchable")
                    continue
                }
                if deleted.contains(file.path) {
                    problems.append("\(label) \(name): \(segment.uri) listed but its file was deleted")
                }
            }
            previous[name] = playlist
        }
        for (name, files) in snapshot.segments {
            for (segment, file) in files where deleted.contains(file.path) {
                problems.append("\(label) \(name): \(segment) fetchable but its file was deleted")
            }
        }
        if checksAlignment {
            problems.append(contentsOf: Self.alignment(playlists, snapshot).map { "\(label): \($0)" })
        }
    }

    /// C14: the same MSN in two renditions is the same encoder segment, with the same discontinuity
    /// sequence number and date.
    static func alignment(_ playlists: [String: MediaPlaylist], _ snapshot: WindowVersion) -> [String] {
        var problems: [String] = []
        var reference: [UInt64: (rendition: String, source: String?, dsn: UInt64, date: ProgramDateTime?)] = [:]
        for name in playlists.keys.sorted() {
            let playlist = playlists[name]!
            let dsns = playlist.discontinuitySequenceNumbers()
            let dates = playlist.programDateTimes()
            for (index, segment) in playlist.segments.enumerated() {
                let msn = playlist.mediaSequenceNumber(at: index)
                let source =
                    segment.tags.gap
                    ? nil : snapshot.segments[name]?[Self.name(segment.uri)].map { Self.source($0.path) }
                guard let other = reference[msn] else {
                    reference[msn] = (name, source, dsns[index], dates[index])
                    continue
                }
                if other.dsn != dsns[index] {
                    problems.append("MSN \(msn): DSN \(other.dsn) in \(other.rendition), \(dsns[index]) in \(name)")
                }
                if let a = other.source, let b = source {
                    if a != b { problems.append("MSN \(msn): \(a) in \(other.rendition), \(b) in \(name)") }
                    if other.date != dates[index] {
                        let a = other.date.map(\.description) ?? "-"
                        let b = dates[index].map(\.description) ?? "-"
                        problems.append("MSN \(msn): date \(a) in \(other.rendition), \(b) in \(name)")
                    }
                }
            }
        }
        return problems
    }

    static func name(_ uri: String) -> String { String(uri.split(separator: "/").last ?? "") }

    /// `r1/17` from `/store/x_0/r1/17/42`.
    static func source(_ path: String) -> String {
        path.split(separator: "/").dropFirst(2).prefix(2).joined(separator: "/")
    }
}
