public import HeadwaterHLS
import HeadwaterLiveWindow
public import HeadwaterRuntime

/// A looping live channel: the playlists and segments it offers at any instant, computed from the
/// package and the wall clock (see ``LoopTimeline``).
public struct LoopChannel: Sendable {
    public let name: String
    public let package: LoopPackage
    public let timeline: LoopTimeline
    /// Media time listed in each playlist, µs.
    public let window: Int64
    private let multivariant: RenderedPlaylist
    private let multivariantPlaylist: MultivariantPlaylist
    /// Whether the channel lists I-frame playlists (not when it is encrypted: ``IFramePlaylist``).
    public let offersIFrames: Bool

    /// How the channel is encrypted, `nil` when clear: its playlists then carry `EXT-X-KEY` on
    /// every segment (the files are encrypted by ``LoopChannelPublisher``).
    public let keying: ChannelKeying?

    public init(name: String, package: LoopPackage, windowSeconds: Int, startedAt: Int64, keying: ChannelKeying? = nil) {
        self.keying = keying
        self.name = name
        self.package = package
        self.timeline = LoopTimeline(durations: package.durations)
        self.window = Int64(windowSeconds) * 1_000_000
        self.offersIFrames = keying == nil
        self.multivariantPlaylist = package.multivariant(iFrames: offersIFrames)
        self.multivariant = PlaylistRendering.render(
            multivariantPlaylist, tag: "\(name)-master", version: 1, publishedAt: startedAt / 1_000_000)
    }

    /// The live media playlist of `rendition` whose newest segment is `last`; with `openParts` (when the
    /// channel is ``lowLatency``) its parts too, `openParts` of them of segment `last + 1`.
    public func mediaPlaylist(for rendition: LoopPackage.Rendition, last: UInt64, openParts: Int? = nil) -> MediaPlaylist {
        let first = timeline.windowStart(endingAt: last, window: window, targetDuration: package.targetDuration)
        let n = UInt64(timeline.segmentCount)
        var playlist = MediaPlaylist(targetDuration: package.targetDuration, mediaSequence: first)
        let firstIsLoopStart = first % n == 0 && first > 0
        playlist.discontinuitySequence = timeline.discontinuitySequenceNumber(of: first) - (firstIsLoopStart ? 1 : 0)
        playlist.segments.reserveCapacity(Int(last - first + 1))
        for g in first...last {
            let index = timeline.fileIndex(of: g)
            var segment = MediaSegment(uri: "\(rendition.name)/\(g).ts", duration: rendition.segments[index].duration)
            let loopStart = index == 0 && g > 0
            segment.discontinuity = loopStart
            if g == first || loopStart {
                // On the first segment and after every discontinuity (B7); dates from the timeline.
                segment.programDateTime = ProgramDateTime(millisecondsSinceEpoch: timeline.start(of: g) / 1000)
            }
            playlist.segments.append(segment)
        }
        if let keying { return keying.encrypting(playlist, rendition: rendition.name) }
        if lowLatency, let openParts { addParts(to: &playlist, rendition: rendition, last: last, openParts: openParts) }
        return playlist
    }

    /// Everything the channel offers at `now` (µs since the epoch).
    public func snapshot(at now: Int64) -> ChannelSnapshot {
        let last = timeline.lastPublished(at: now)
        let publishedAt = (timeline.start(of: last) + timeline.duration(of: last)) / 1_000_000
        var playlists: [String: RenderedPlaylist] = [:]
        var iFramePlaylists: [String: RenderedPlaylist] = [:]
        var media: [String: MediaPlaylist] = [:]
        var segments: [String: [String: SegmentFile]] = [:]
        var status = ChannelStatus(
            source: "loop", targetDuration: package.targetDuration, windowSeconds: Int(window / 1_000_000))
        let lastSegmentAt = timeline.start(of: last) + timeline.duration(of: last)
        // Every rendition's edge at this instant, for the others' rendition reports (F6).
        let openParts = package.renditions.map { lowLatency ? publishedParts(of: last + 1, rendition: $0, at: now) : 0 }
        var edges: [(name: String, lastMSN: UInt64, lastPart: Int?)] = []
        for (rendition, open) in zip(package.renditions, openParts) {
            if open > 0 {
                edges.append((rendition.name, last + 1, open - 1))
            } else {
                let parts = lowLatency ? rendition.parts[timeline.fileIndex(of: last)].count : 0
                edges.append((rendition.name, last, parts > 0 ? parts - 1 : nil))
            }
        }
        // A low-latency playlist changes with its own parts and with the other renditions' edges (its
        // rendition reports), which advance at their own frame boundaries: its version counts every
        // part of every rendition's open segment. They only grow while `last` stays, so no two
        // different bodies share a version (an ETag) — audio parts once changed the video
        // playlist's reports under an unchanged ETag.
        let publishedOpenParts = UInt64(openParts.reduce(0, +))
        for (rendition, open) in zip(package.renditions, openParts) {
            let whole = mediaPlaylist(for: rendition, last: last)
            var playlist = whole
            var version = last
            if lowLatency {
                addParts(to: &playlist, rendition: rendition, last: last, openParts: open)
                playlist.renditionReports = Self.renditionReports(for: rendition.name, edges: edges)
                version = last << 16 | publishedOpenParts
            }
            status.renditions.append(.init(name: rendition.name, playlist: whole, lastSegmentAt: lastSegmentAt))
            media[rendition.name] = playlist
            playlists[rendition.name] = PlaylistRendering.render(
                playlist, tag: "\(name)-\(rendition.name)", version: version, publishedAt: publishedAt)
            if offersIFrames, LoopPackage.hasIFrames(rendition) {
                let iFrames = IFramePlaylist.make(from: whole) { index, _ in
                    rendition.segments[timeline.fileIndex(of: whole.mediaSequenceNumber(at: index))].file.keyFrame
                }
                iFramePlaylists[rendition.name] = PlaylistRendering.render(
                    iFrames, tag: "\(name)-\(rendition.name)-iframes", version: last, publishedAt: publishedAt)
            }
            // Listed segments, and those removed up to one window plus a target duration ago, stay
            // fetchable (C7: segment duration + the longest playlist containing it).
            let listed = playlist.segments.count
            let retained = UInt64(min(Int(playlist.effectiveMediaSequence), listed + 2))
            var files: [String: SegmentFile] = [:]
            files.reserveCapacity(listed + Int(retained))
            // With parts, the open segment too: its published parts are byte ranges of its file.
            for g in (playlist.effectiveMediaSequence - retained)...(lowLatency ? last + 1 : last) {
                files["\(g).ts"] = rendition.segments[timeline.fileIndex(of: g)].file
            }
            segments[rendition.name] = files
        }
        var snapshot = ChannelSnapshot(
            name: name, state: .live, multivariant: multivariant, mediaPlaylists: playlists, segments: segments,
            targetDuration: package.targetDuration, status: status,
            content: ChannelContent(multivariant: multivariantPlaylist, media: media))
        snapshot.iFramePlaylists = iFramePlaylists
        return snapshot
    }
}
