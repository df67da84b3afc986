public import HeadwaterConfiguration
public import HeadwaterLiveWindow
public import HeadwaterRuntime
public import Logging

/// Setting up and tearing down a windowed channel's segment store: the same for every source.
extension WindowedChannel {
    /// The prefix of a run's file names and ETags: the start time in µs, base 36, so the names and
    /// ETags of one run of Headwater never repeat an earlier run's.
    public static func newRunTag(startedAt microseconds: Int64) -> String { String(microseconds, radix: 36) }

    /// Opens channel `channel` fed by a `sourceType` source: its store directory
    /// `{stateDirectory}/{sourceType}/{name}` (created, and cleared of an earlier run's files), its
    /// window, and its `starting` snapshot in `registry`.
    ///
    /// Numbering starts from the wall clock (``LiveWindow/Configuration/clockNumbering``), so a
    /// channel opened again never numbers below what players saw before.
    ///
    /// - Parameters:
    ///   - stall: what fills the playlist when the source stalls (the channel's `stall`, with the slate).
    ///   - listsRemoteSegments: see ``LiveWindow/Configuration/listsRemoteSegments``.
    /// - Throws: ``IngestRefusal`` (500) when the directory cannot be created.
    public static func open(
        channel: HeadwaterConfiguration.Channel, sourceType: String, targetDuration: Int, stateDirectory: String,
        runTag: String, stall: StallPolicy = .init(), listsRemoteSegments: Bool = false,
        keyring: ChannelKeyring = ChannelKeyring(), registry: ChannelRegistry, clock: any WallClock, logger: Logger,
        metrics: OriginMetrics = .shared
    ) throws(IngestRefusal) -> WindowedChannel {
        let directory = "\(stateDirectory)/\(sourceType)/\(channel.name)"
        try SegmentStorage.makeDirectory(directory)
        SegmentStorage.removeOwnFiles(in: directory)
        let window = LiveWindow(
            configuration: .init(
                channel: channel.name, targetDuration: targetDuration, windowSeconds: channel.windowSeconds,
                runTag: runTag, stall: stall, clockNumbering: true, listsRemoteSegments: listsRemoteSegments,
                encryptsSegments: channel.encryption != nil))
        var encryption: SegmentEncryption?
        do {
            encryption = try keyring.keying(for: channel).map { keying in
                try SegmentEncryption(keying: keying, directory: directory + "/encrypted", logger: logger)
            }
        } catch {
            throw IngestRefusal("cannot encrypt channel \(channel.name): \(error)", reason: .storage)
        }
        let windowed = WindowedChannel(
            name: channel.name, sourceType: sourceType, window: window, directory: directory, registry: registry,
            clock: clock, logger: logger, metrics: metrics, encryption: encryption)
        windowed.publishNow()
        return windowed
    }

    /// Deletes this run's stored files and the store directory, and its parent if that is empty
    /// (at shutdown; anything else an operator put there stays).
    public func removeStore() {
        if let encryption {
            for name in SegmentStorage.names(in: encryption.directory) ?? [] { SegmentStorage.remove(encryption.directory + "/" + name) }
            SegmentStorage.removeDirectory(encryption.directory)
        }
        SegmentStorage.removeOwnFiles(in: directory)
        SegmentStorage.removeDirectory(directory)
        if let slash = directory.lastIndex(of: "/") { SegmentStorage.removeDirectory(String(directory[..<slash])) }
    }
}
