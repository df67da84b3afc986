import HeadwaterConfiguration
import HeadwaterHTTP
import HeadwaterSources
import Logging
import ServiceLifecycle
import UnixSignals

/// Reopens the access log file on SIGUSR1, as nginx does: logrotate renames `access.log`, then
/// signals (`systemd/headwater.logrotate`), and the lines after the signal go to a new file at the
/// configured path. Lines written before it are in the renamed file, each whole.
struct ReopenAccessLog: Service {
    /// Trapped when `serve` starts, before the server listens: SIGUSR1's default action ends the
    /// process, and logrotate may signal at any time.
    let signals: UnixSignalsSequence
    let output: AccessLogOutput
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await _ in signals {
                do {
                    if let path = try output.reopen() {
                        logger.info("access log reopened", metadata: ["file.path": "\(path)"])
                    } else {
                        logger.notice("SIGUSR1: the access log is not a file, nothing to reopen")
                    }
                } catch {
                    logger.error("\(error); lines keep going to the file it replaced")
                }
            }
        }
    }

    /// Switches the access log to `loaded`'s `server.access_log` (at start it is already there; on
    /// a reload that changed it, the new destination takes the lines from now on). A file that
    /// cannot be opened keeps the old destination.
    static func apply(_ loaded: ChannelSupervisor.Loaded, to output: AccessLogOutput, logger: Logger) {
        let wanted = loaded.configuration.server.accessLog
        guard wanted != output.destination else { return }
        do {
            try output.apply(wanted)
            logger.notice("access log now goes to \(describe(wanted))")
        } catch {
            logger.error("\(loaded.file): server.access_log: \(error); it keeps going to \(describe(output.destination))")
        }
    }

    static func describe(_ destination: HeadwaterConfiguration.Server.AccessLog) -> String {
        switch destination {
        case .standardOutput: "standard output"
        case .file(let path): path
        case .off: "nowhere (off)"
        }
    }
}
