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
    /// `{stateDirectory}/{sourceType}/{name}` (created), its window, and its first snapshot in
    /// `registry`.
    ///
    /// A `durable` channel (a configured `server.state`) comes back as it was saved
    /// (``ChannelStateFile``, ``ChannelRestore``): the same playlists, numbering, files and ad
    /// breaks, published before the server listens; files of earlier runs that the window does
    /// not refer to, and half-written uploads, are removed. Otherwise, and when nothing usable was
    /// saved, the window starts empty and the directory is cleared of an earlier run's files.
    ///
    /// Numbering of a new window starts from the wall clock (``LiveWindow/Configuration/clockNumbering``),
    /// so a channel opened again never numbers below what players saw before.
    ///
    /// - Parameters:
    ///   - stall: what fills the playlist when the source stalls (the channel's `stall`, with the slate).
    ///   - listsRemoteSegments: see ``LiveWindow/Configuration/listsRemoteSegments``.
    ///   - durable: save the window after every version and restore it here.
    /// - Throws: ``IngestRefusal`` (500) when the directory cannot be created.
    public static func open(
        channel: HeadwaterConfiguration.Channel, sourceType: String, targetDuration: Int, stateDirectory: String,
        runTag: String, stall: StallPolicy = .init(), listsRemoteSegments: Bool = false,
        keyring: ChannelKeyring = ChannelKeyring(), registry: ChannelRegistry, clock: any WallClock, logger: Logger,
        metrics: OriginMetrics = .shared, durable: Bool = false
    ) throws(IngestRefusal) -> WindowedChannel {
        let directory = "\(stateDirectory)/\(sourceType)/\(channel.name)"
        try SegmentStorage.makeDirectory(directory)
        let configuration = LiveWindow.Configuration(
            channel: channel.name, targetDuration: targetDuration, windowSeconds: channel.windowSeconds,
            runTag: runTag, stall: stall, clockNumbering: true, listsRemoteSegments: listsRemoteSegments,
            encryptsSegments: channel.encryption != nil)
        var channelLogger = logger
        channelLogger[metadataKey: "hls.channel.id"] = "\(channel.name)"
        let restored =
            durable
            ? ChannelRestore.restore(directory: directory, configuration: configuration, now: clock.now(), logger: channelLogger)
            : nil
        ChannelRestore.removeLeftovers(in: directory, keeping: restored?.files ?? [])
        if !durable { ChannelStateFile.remove(from: directory) }
        var encryption: SegmentEncryption?
        do {
            encryption = try keyring.keying(for: channel).map { keying in
                try SegmentEncryption(keying: keying, directory: directory + "/encrypted", logger: logger)
            }
        } catch {
            throw IngestRefusal("cannot encrypt channel \(channel.name): \(error)", reason: .storage)
        }
        let windowed = WindowedChannel(
            name: channel.name, sourceType: sourceType, window: restored?.window ?? LiveWindow(configuration: configuration),
            directory: directory, registry: registry, clock: clock, logger: logger, metrics: metrics,
            encryption: encryption,
            stateWriter: durable ? ChannelStateWriter(directory: directory, channel: channel.name, logger: channelLogger) : nil,
            restoredBreaks: restored?.breaks)
        windowed.publishNow()
        return windowed
    }

    /// At shutdown, or when the source stops: a durable channel finishes saving its window (its
    /// files stay, for the next start); any other deletes its stored files (``removeStore()``).
    public func close() {
        if let stateWriter {
            stateWriter.flush()
        } else {
            removeStore()
        }
    }

    /// Deletes the stored files, the saved window and the store directory, and its parent if that
    /// is empty (the channel is gone; anything else an operator put there stays).
    public func removeStore() {
        stateWriter?.flush()
        ChannelStateFile.remove(from: directory)
        if let encryption {
            for name in SegmentStorage.names(in: encryption.directory) ?? [] { SegmentStorage.remove(encryption.directory + "/" + name) }
            SegmentStorage.removeDirectory(encryption.directory)
        }
        SegmentStorage.removeOwnFiles(in: directory)
        SegmentStorage.removeDirectory(directory)
        if let slash = directory.lastIndex(of: "/") { SegmentStorage.removeDirectory(String(directory[..<slash])) }
    }
}
