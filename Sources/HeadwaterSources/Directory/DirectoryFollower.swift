import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterRuntime
import Logging

/// What a directory source remembers between scans of its folder, and the scan itself: which
/// playlists changed, which listed files are new, which stored ones the packager deleted.
struct DirectoryFollower: Sendable {
    /// Each playlist's status when it was last read (parsed or not): it is read again when it changes.
    var playlists: [String: SegmentStorage.FileStatus] = [:]
    /// Each stored file's status when it was linked: it is linked again only when it changes.
    var stored: [String: SegmentStorage.FileStatus] = [:]
    /// The problem last logged per path, so a problem is logged when it starts, not at every scan.
    var problems: [String: String] = [:]
    var folderMissing = false
    var loggedCopy = false

    /// One scan of `root`. Returns the subdirectories read, or `nil` when `root` cannot be read.
    mutating func scan(
        _ root: String, into channel: WindowedChannel, deviations: OriginMetrics.IngestDeviations, clock: any WallClock,
        logger: Logger
    ) -> [String]? {
        guard let listing = DirectoryListing.read(root) else {
            if !folderMissing { logger.warning("cannot read the source directory \(root); waiting for it") }
            folderMissing = true
            return nil
        }
        if folderMissing { logger.notice("source directory \(root) is readable") }
        folderMissing = false
        for (path, _) in stored where listing.files[path] == nil {
            stored[path] = nil
            channel.apply { window, now in window.segmentDeleted(path: path, now: now) }
        }
        for path in playlists.keys where listing.files[path] == nil { playlists[path] = nil }
        for (path, status) in listing.files.sorted(by: { $0.key < $1.key })
        where path.hasSuffix(".m3u8") && playlists[path] != status {
            playlists[path] = status
            read(path, root: root, into: channel, deviations: deviations, clock: clock, logger: logger)
        }
        return listing.directories
    }

    /// Reads and follows the playlist at `path`; a media playlist's listed files are stored first.
    private mutating func read(
        _ path: String, root: String, into channel: WindowedChannel, deviations: OriginMetrics.IngestDeviations,
        clock: any WallClock, logger: Logger
    ) {
        let limit = WindowedChannel.maxPlaylistBytes
        // Empty: just truncated by a packager about to write it (it changes again at once).
        guard let bytes = SegmentStorage.contents(of: "\(root)/\(path)", limit: limit + 1), !bytes.isEmpty else { return }
        do throws(IngestRefusal) {
            guard bytes.count <= limit else {
                throw channel.rejected(
                    IngestRefusal("\(path) is larger than \(limit) bytes", reason: .tooLarge))
            }
            let playlist: Playlist
            do {
                playlist = try deviations.parse(bytes, path: path)
            } catch {
                throw channel.rejected(
                    IngestRefusal("\(path): \(error.description)", reason: .malformedPlaylist))
            }
            if case .media(let media) = playlist {
                for file in Self.referencedFiles(media, playlistPath: path) {
                    store(file, root: root, into: channel, clock: clock, logger: logger)
                }
            }
            try channel.received(playlist, path: path)  // counts its own refusals
        } catch {
            problem(path, error.message, logger: logger)
            return
        }
        solved(path, logger: logger)
    }

    /// Hard-links (or copies) `path` into the store and offers it to the window, unless this very
    /// version of it is stored already or it is gone.
    private mutating func store(
        _ path: String, root: String, into channel: WindowedChannel, clock: any WallClock, logger: Logger
    ) {
        let source = "\(root)/\(path)"
        guard let status = SegmentStorage.status(of: source), status.isRegularFile, stored[path] != status else { return }
        let ext = IngestPath.fileExtension(path)
        let destination = channel.newFilePath(extension: ext)
        do {
            try SegmentStorage.linkOrCopy(source, to: destination)
        } catch {
            problem(path, channel.rejected(error).message, logger: logger)
            return
        }
        // Stat the stored file itself: a growing file may have grown since, and its length must
        // cover every range the playlist lists.
        guard let linked = SegmentStorage.status(of: destination) else { return }
        if linked.inode != status.inode || linked.device != status.device, !loggedCopy {
            loggedCopy = true
            logger.notice("the state directory is on another file system than \(root): segments are copied, not linked")
        }
        stored[path] = linked.inode == status.inode ? linked : status
        var identity = FNV1a64()
        identity.update("\(status.device):\(status.inode):\(linked.size):\(status.modified)".utf8)
        let (probe, keyFrame) = SegmentStorage.inspect(destination, extension: ext, limit: DirectoryChannelSource.probeLimit)
        let file = SegmentFile(
            path: destination, length: linked.size, entityTag: "\"\(identity.hexDigest)\"",
            contentType: IngestPath.contentType(forExtension: ext), lastModified: status.modified / 1_000_000_000,
            keyFrame: keyFrame)
        channel.apply { window, now in window.segmentStored(path: path, file: file, completedAt: now, probe: probe) }
    }

    /// The files a media playlist at `playlistPath` refers to inside the folder: segments, init
    /// sections and keys, each once, as checked source paths (absolute URIs are not files here).
    static func referencedFiles(_ playlist: MediaPlaylist, playlistPath: String) -> [String] {
        var seen = Set<String>()
        var files: [String] = []
        func add(_ uri: String?) {
            guard let uri, let path = IngestPath.resolve(uri, relativeTo: playlistPath),
                let checked = try? IngestPath(path.split(separator: "/").map(String.init)), checked.kind == .segment,
                seen.insert(path).inserted
            else { return }
            files.append(path)
        }
        for segment in playlist.segments {
            add(segment.tags.map?.uri)
            for key in segment.tags.keys { add(key.uri) }
            if !segment.tags.gap { add(segment.uri) }
        }
        return files
    }

    private mutating func problem(_ path: String, _ message: String, logger: Logger) {
        guard problems[path] != message else { return }
        problems[path] = message
        logger.warning("\(message)", metadata: ["source.path": "\(path)"])
    }

    private mutating func solved(_ path: String, logger: Logger) {
        guard problems.removeValue(forKey: path) != nil else { return }
        logger.info("\(path) is readable again", metadata: ["source.path": "\(path)"])
    }
}
