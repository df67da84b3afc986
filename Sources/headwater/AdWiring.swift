import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
import HeadwaterRuntime
import HeadwaterSources
import HeadwaterStitching
import Logging

/// Applies a configuration's ad settings to the running server: installs a changed `ads.yaml` as
/// a new rule-set version, and gives every channel that stitches its break tracker (schedule,
/// default duration) and stitching options. Called before the channels first publish, and on every
/// applied reload.
struct AdWiring: Sendable {
    let registry: ChannelRegistry
    let ruleBook: AdRuleBook
    let adInsertion: AdInsertion
    let logger: Logger

    func apply(_ loaded: ChannelSupervisor.Loaded) {
        adInsertion.addCreativeKeyFrames(loaded.adKeyFrames)
        if let ads = loaded.ads {
            var unversioned = ruleBook.current
            unversioned?.version = ads.version
            if unversioned != ads {
                var installed = ads
                installed.version = ruleBook.nextVersion
                ruleBook.install(installed)
                logger.notice("ad configuration loaded", metadata: ["ads.version": "\(installed.version)"])
            }
        }
        for channel in loaded.configuration.channels {
            guard loaded.ads != nil, channel.ads.stitch else {
                registry.setBreaks(nil, for: channel.name)
                continue
            }
            let schedule = Self.schedule(channel.ads.schedule)
            if let desk = registry.breaks(of: channel.name) {
                desk.reconfigure(schedule: schedule)
            } else {
                registry.setBreaks(
                    ChannelBreaks(
                        channel: channel.name, schedule: schedule, defaultDuration: .seconds(Int64(channel.ads.defaultDuration)),
                        ruleBook: ruleBook, logger: logger),
                    for: channel.name)
            }
            adInsertion.setOptions(StitchOptions(cueMarkers: channel.ads.cueMarkers), for: channel.name)
        }
    }

    /// The configuration's schedule as the tracker's (validated when the file was parsed).
    static func schedule(_ schedule: HeadwaterConfiguration.ChannelAds.Schedule?) -> BreakSchedule? {
        switch schedule {
        case nil:
            return nil
        case .every(let seconds, let duration, let offset):
            return try? BreakSchedule(
                every: .seconds(Int64(seconds)), duration: .seconds(Int64(duration)), offset: .seconds(Int64(offset)))
        case .at(let times):
            return try? BreakSchedule(
                daily: times.map { .init(secondsSinceMidnight: $0.secondsOfDay, duration: .seconds(Int64($0.duration))) })
        }
    }

    /// The session signing key from the environment, or a random one (logged: sessions then do not
    /// survive a restart, and nodes do not agree).
    static func signer(configuration: HeadwaterConfiguration, logger: Logger) -> SessionSigner {
        let name = configuration.server.sessionKeyEnvironmentVariable
        if let secret = ProcessInfo.processInfo.environment[name], !secret.isEmpty {
            do {
                return try SessionSigner(secret: Array(secret.utf8))
            } catch {
                logger.error("\(name) is unusable (\(error)); using a random session key")
            }
        } else if configuration.server.adsFile != nil {
            logger.warning(
                "no session key in \(name): using a random one, so sessions end at restart and other nodes refuse them")
        }
        return SessionSigner.random()
    }
}
