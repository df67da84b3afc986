import HeadwaterLiveWindow
/// What a directory source's folder holds at one instant: the playlists and segment files at its
/// top level and one level of subdirectories down (`x_0.m3u8`, `v0/index.m3u8`, `v0/seg3.ts`), by
/// path relative to the folder, with their `stat(2)` status. Other files (a packager's `.tmp`
/// files, anything an operator keeps there) are left out.
struct DirectoryListing: Sendable {
    var files: [String: SegmentStorage.FileStatus] = [:]
    /// The subdirectories read (relative paths), for the watcher.
    var directories: [String] = []

    /// Reads `root`, or returns `nil` when it cannot be read (not created yet, or gone).
    static func read(_ root: String) -> DirectoryListing? {
        guard let names = SegmentStorage.names(in: root) else { return nil }
        var listing = DirectoryListing()
        for name in names.sorted() where !name.hasPrefix(".") {
            guard let status = SegmentStorage.status(of: "\(root)/\(name)") else { continue }
            if status.isDirectory {
                listing.directories.append(name)
                for inner in (SegmentStorage.names(in: "\(root)/\(name)") ?? []).sorted() where !inner.hasPrefix(".") {
                    listing.add("\(name)/\(inner)", root: root)
                }
            } else {
                listing.add(name, root: root, status: status)
            }
        }
        return listing
    }

    private mutating func add(_ path: String, root: String, status known: SegmentStorage.FileStatus? = nil) {
        guard Self.isFollowed(path), let status = known ?? SegmentStorage.status(of: "\(root)/\(path)"),
            status.isRegularFile
        else { return }
        files[path] = status
    }

    /// Playlists and the file types push accepts (``IngestPath/segmentExtensions``).
    static func isFollowed(_ path: String) -> Bool {
        let ext = IngestPath.fileExtension(String(path.split(separator: "/").last ?? ""))
        return ext == "m3u8" || IngestPath.segmentExtensions.contains(ext)
    }
}
