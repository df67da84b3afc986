import HeadwaterLiveWindow
import HeadwaterStitching
import Logging

/// A durable channel's start: its window and ad breaks read back from its store directory
/// (``ChannelStateFile``), and the files nothing refers to any more removed.
enum ChannelRestore {
    /// What comes back.
    struct Restored: Sendable {
        var window: LiveWindow
        /// The ad breaks saved with the window, for the channel's break tracker.
        var breaks: BreakTrackerRecord?
        /// Files the window refers to: everything else stored by a run of Headwater goes.
        var files: Set<String>
    }

    /// The window saved in `directory`, under `configuration` (this run's), or `nil` when none was
    /// saved or it cannot be used: then the channel starts empty, and the log says why.
    static func restore(
        directory: String, configuration: LiveWindow.Configuration, now: Int64, logger: Logger
    ) -> Restored? {
        let path = ChannelStateFile.path(of: directory)
        let saved: ChannelStateFile
        do {
            guard let file = try ChannelStateFile.read(from: directory) else { return nil }
            saved = file
        } catch {
            logger.error(
                "the saved window cannot be used, so the channel starts empty: \(error.message)",
                metadata: ["state.file": "\(path)"])
            return nil
        }
        do {
            let (window, summary) = try LiveWindow.restored(
                from: saved.window, configuration: configuration, directory: directory, now: now,
                isIntact: ChannelStateFile.isIntact)
            var metadata: Logger.Metadata = [
                "state.file": "\(path)", "state.age_ms": "\(max(0, now - saved.window.savedAt) / 1000)",
                "hls.segments": "\(summary.listed.values.reduce(0, +))",
                "hls.renditions": "\(summary.listed.keys.sorted())",
                "ad.breaks": "\(saved.breaks?.breaks.count ?? 0)",
            ]
            if summary.expired > 0 { metadata["state.expired"] = "\(summary.expired)" }
            logger.notice("restored the channel's window", metadata: metadata)
            if !summary.dropped.isEmpty || !summary.gapped.isEmpty {
                logger.warning(
                    "segments whose files are missing or torn are not served: removed from the head of the window, or listed as EXT-X-GAP after it",
                    metadata: ["hls.removed": "\(summary.dropped)", "hls.gap": "\(summary.gapped)"])
            }
            return Restored(window: window, breaks: saved.breaks, files: summary.files)
        } catch {
            logger.error(
                "the saved window cannot be used, so the channel starts empty: \(error.message)",
                metadata: ["state.file": "\(path)"])
            return nil
        }
    }

    /// Removes from `directory` the files a run of Headwater stored there (`{run}-{n}.{ext}`) that
    /// are not in `keeping`, every upload left half-written (`….part`: no window refers to one),
    /// and a state file left half-written. Anything else an operator put there stays.
    static func removeLeftovers(in directory: String, keeping: Set<String>) {
        ChannelStateFile.removeHalfWritten(of: directory)
        for name in SegmentStorage.names(in: directory) ?? [] where SegmentStorage.isOwnFileName(name) {
            let path = directory + "/" + name
            if !keeping.contains(path) { SegmentStorage.remove(path) }
        }
    }
}
