import FoundationEssentials
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import Logging

/// Following one upstream media playlist: reload cadence, staleness, what to download.
extension PullChannelSource {
    /// What one followed media playlist remembers between reloads.
    struct RenditionState {
        var lastBytes: [UInt8]?
        var lastChange: ContinuousClock.Instant
        var stale = false
        /// Downloads done (``key(_:)``), kept while the upstream playlist still lists them.
        var done = Set<String>()
        /// Failed attempts per download; given up after three (the window lists a gap then).
        var attempts: [String: Int] = [:]
        /// The window's last refusal of this playlist, logged once.
        var refusal: String?

        static func key(_ download: UpstreamLayout.Download) -> String {
            "\(download.sequence.map(String.init) ?? "init") \(download.path)"
        }
    }

    /// Follows the media playlist at `url` (source path `path`) until cancelled. `first` is the
    /// playlist already fetched as the entry URL.
    func poll(_ url: URL, path: String, first: ([UInt8], MediaPlaylist)?) async {
        let monotonic = ContinuousClock()
        var state = RenditionState(lastChange: monotonic.now)
        var health = Health(what: "\(url)")
        var segments = Health(what: "segments of \(url)")
        var backoff = backoff()
        var pending = first
        while !Task.isCancelled {
            let started = monotonic.now
            var pause: Duration
            do throws(PullFailure) {
                let bytes: [UInt8]
                let media: MediaPlaylist
                if let first = pending {
                    (bytes, media) = first
                    pending = nil
                } else {
                    (bytes, media) = try await fetchMedia(url)
                }
                count { $0.playlistsFetched += 1 }
                health.succeeded(logger)
                backoff.reset()
                let target = Duration.seconds(max(1, media.targetDuration))
                if bytes != state.lastBytes {
                    state.lastBytes = bytes
                    state.lastChange = monotonic.now
                    if state.stale { logger.notice("upstream playlist \(url) advances again") }
                    state.stale = false
                    await follow(media, url: url, path: path, state: &state, health: &segments)
                    // RFC 8216bis §6.3.4: after a change, wait the last segment's duration.
                    pause = media.segments.last.map { .microseconds($0.duration.microseconds) } ?? target
                } else {
                    if !state.stale, monotonic.now - state.lastChange > target * 1.5 {
                        state.stale = true
                        count { $0.count(.stalePlaylist) }
                        logger.warning(
                            "upstream playlist \(url) unchanged for more than 1.5 target durations",
                            metadata: ["error.type": "\(PullCounters.Failure.stalePlaylist.rawValue)"])
                    }
                    // After an unchanged reload, wait half a target duration (§6.3.4).
                    pause = target / 2
                }
                pause -= monotonic.now - started
            } catch {
                count { $0.count(error.kind) }
                health.failed(error, logger)
                pause = backoff.next()
            }
            try? await Task.sleep(for: max(pause, .milliseconds(20)))
        }
    }

    private func fetchMedia(_ url: URL) async throws(PullFailure) -> ([UInt8], MediaPlaylist) {
        let bytes = try await upstream.fetch(url, limit: WindowedChannel.maxPlaylistBytes)
        let playlist: Playlist
        do { playlist = try deviations.parse(bytes, path: "\(url)") } catch {
            throw PullFailure(.malformedPlaylist, "\(url): \(error.description)")
        }
        guard case .media(let media) = playlist else {
            throw PullFailure(.malformedPlaylist, "\(url): a multivariant playlist where a media playlist was expected")
        }
        return (bytes, media)
    }

    /// Downloads what the changed playlist newly lists (fetch mode), then hands it to the window.
    private func follow(
        _ media: MediaPlaylist, url: URL, path: String, state: inout RenditionState, health: inout Health
    ) async {
        let (rewritten, downloads) = layout.rewrite(media, at: url, path: path, mode: source.mode)
        if source.mode == .fetch {
            for download in wanted(downloads) where !state.done.contains(RenditionState.key(download)) {
                let key = RenditionState.key(download)
                guard state.attempts[key, default: 0] < 3 else { continue }
                do throws(PullFailure) {
                    try await fetch(download)
                    state.done.insert(key)
                    health.succeeded(logger)
                } catch {
                    state.attempts[key, default: 0] += 1
                    count { $0.count(error.kind) }
                    health.failed(error, logger)
                }
            }
            let listed = Set(downloads.map(RenditionState.key))
            state.done.formIntersection(listed)
            state.attempts = state.attempts.filter { listed.contains($0.key) }
        }
        do {
            try windowed.received(.media(rewritten), path: path)
            state.refusal = nil
        } catch {
            if state.refusal != error.message { logger.warning("\(error.message)") }
            state.refusal = error.message
        }
    }

    /// Of a playlist's downloads, those the window may still list: init sections, and the newest
    /// segments lasting the window plus two target durations (a long upstream window is not fetched whole).
    private func wanted(_ downloads: [UpstreamLayout.Download]) -> [UpstreamLayout.Download] {
        let horizon = Int64(windowSeconds + 2 * source.targetDuration) * 1_000_000
        var total: Int64 = 0
        var keep = Array(repeating: false, count: downloads.count)
        for index in downloads.indices.reversed() {
            guard let duration = downloads[index].duration else {
                keep[index] = true
                continue
            }
            if total < horizon { keep[index] = true }
            total += duration.microseconds
        }
        return downloads.indices.filter { keep[$0] }.map { downloads[$0] }
    }

    /// Streams one segment into the store, probes it, and offers it to the window.
    private func fetch(_ download: UpstreamLayout.Download) async throws(PullFailure) {
        let ext = IngestPath.fileExtension(download.path)
        let destination = windowed.newFilePath(extension: ext)
        let stored = try await upstream.download(
            download.url, range: download.range, to: destination, limit: Self.maxSegmentBytes)
        count {
            $0.segmentsFetched += 1
            $0.bytesFetched += UInt64(stored.length)
        }
        let (probe, keyFrame) = SegmentStorage.inspect(destination, extension: ext, limit: Self.probeLimit)
        let file = SegmentFile(
            path: destination, length: stored.length, entityTag: "\"\(stored.hash.hexDigest)\"",
            contentType: IngestPath.contentType(forExtension: ext), lastModified: clock.now() / 1_000_000,
            keyFrame: keyFrame)
        windowed.apply { window, now in
            window.segmentStored(path: download.path, file: file, completedAt: now, probe: probe)
        }
    }
}
