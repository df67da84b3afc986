import Foundation
import HeadwaterConfiguration
import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterSources
import HeadwaterStitching

/// The configuration `serve` and `check-config` use: the given file, else `Config/headwater.yaml`,
/// else the embedded demo configuration (so the README's run command works from any checkout).
enum ConfigurationLoading {
    static let defaultPath = "Config/headwater.yaml"

    /// The demo configuration compiled into the binary; paths are relative to the working directory.
    static let embedded = """
        server:
          listen: 127.0.0.1:8080
          public: Public
          cors: true
          slate: Public/slate/master.m3u8
        channels:
          demo:
            source:
              type: loop
              package: Public/demo/master.m3u8
            window: 30
            stall: slate
            ads:
              schedule: {every: 60, duration: 20}
        """
    static let embeddedFile = "<embedded demo configuration>"

    /// The demo's ad configuration, used with the embedded configuration (a copy of
    /// `Config/ads.yaml` without tracking URLs; paths relative to the working directory).
    static let embeddedAds = """
        creatives:
          ad1: {package: Public/ads/ad1/master.m3u8}
          ad2: {package: Public/ads/ad2/master.m3u8}
          ad3: {package: Public/ads/ad3/master.m3u8}
          ad4: {package: Public/ads/ad4/master.m3u8}
        slate: Public/slate/master.m3u8
        pods:
          tv-long:  {ads: [ad1, ad2, ad3], weight: 2, cap: {count: 1, per: 10m}}
          tv-short: {ads: [ad2, ad1]}
          phone:    {ads: [ad4, ad3]}
          everyone: {ads: [{creative: ad3, id: house-promo}, ad4]}
        rules:
          - id: tv
            when: {device: [tv, stb]}
            pods: [tv-long, tv-short]
          - id: phone
            when: {device: [phone]}
            pods: [phone]
          - id: default
            pods: [everyone]
        """

    /// Loads and validates the configuration and every channel's source (a loop package that does
    /// not load is a configuration error too: the server cannot start with it), and checks the TLS
    /// certificate and key (what a reload and `check-config` need; `serve` keeps them from
    /// ``loadWithCertificates(path:)``).
    static func load(path: String?) throws(ConfigurationError) -> ChannelSupervisor.Loaded {
        try loadWithCertificates(path: path).loaded
    }

    /// ``load(path:)`` and the certificates `server.tls` names, read once (`nil` without `server.tls`).
    static func loadWithCertificates(
        path: String?
    ) throws(ConfigurationError) -> (loaded: ChannelSupervisor.Loaded, certificates: TLSCertificates?) {
        let file: String
        let text: String
        let base: String
        if let path {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(problems: [.init(file: path, line: nil, keyPath: "", message: "cannot read the configuration file")])
            }
            file = path
            text = String(decoding: data, as: UTF8.self)
            base = (path as NSString).deletingLastPathComponent
        } else if let data = FileManager.default.contents(atPath: defaultPath) {
            file = defaultPath
            text = String(decoding: data, as: UTF8.self)
            base = (defaultPath as NSString).deletingLastPathComponent
        } else {
            file = embeddedFile
            text = embedded
            base = ""
        }
        let configuration = try HeadwaterConfiguration.parse(text, file: file, baseDirectory: base)
        var packages: [String: LoopPackage] = [:]
        var problems: [ConfigurationError.Problem] = []
        if let problem = configuration.server.publicDirectoryProblem(file: file) { problems.append(problem) }
        for channel in configuration.channels {
            switch channel.source {
            case .loop(let package, let partTarget):
                do {
                    var loaded = try LoopPackage.load(multivariantPath: package)
                    if let partTarget { loaded = try loaded.cuttingParts(every: partTarget) }
                    packages[channel.name] = loaded
                } catch {
                    problems.append(.init(file: file, line: nil, keyPath: "channels.\(channel.name).source.package", message: error.description))
                }
            case .push, .directory, .pull:
                break  // nothing to load: media arrives at run time
            }
        }
        var slate: SlateLibrary?
        if let path = configuration.server.slatePackage {
            do {
                slate = SlateLibrary(package: try LoopPackage.load(multivariantPath: path))
            } catch {
                problems.append(.init(file: file, line: nil, keyPath: "server.slate", message: error.description))
            }
        }
        let ads = loadAds(configuration, packages: packages, file: file, problems: &problems)
        var certificates: TLSCertificates?
        if let tls = configuration.server.tls {
            do throws(ConfigurationError) {
                certificates = try TLSWiring.certificates(tls, file: file)
            } catch {
                problems += error.problems
            }
        }
        if !problems.isEmpty { throw ConfigurationError(problems: problems) }
        var loaded = ChannelSupervisor.Loaded(
            configuration: configuration, packages: packages, slate: slate, file: file, ads: ads?.ruleSet)
        loaded.adKeyFrames = ads?.keyFrames ?? [:]
        return (loaded, certificates)
    }

    /// The ad configuration (`server.ads`, or the embedded demo's), checked against the ladder and
    /// target duration of every loop channel that stitches; other channels are checked when their
    /// media arrives.
    private static func loadAds(
        _ configuration: HeadwaterConfiguration, packages: [String: LoopPackage], file: String,
        problems: inout [ConfigurationError.Problem]
    ) -> AdConfiguration? {
        let loaded: AdConfiguration
        do throws(ConfigurationError) {
            if let path = configuration.server.adsFile {
                loaded = try AdConfiguration.load(file: path, publicDirectory: configuration.server.publicDirectory, version: 0)
            } else if file == embeddedFile {
                loaded = try AdConfiguration.parse(
                    embeddedAds, file: "<embedded demo ad configuration>", baseDirectory: "",
                    publicDirectory: configuration.server.publicDirectory, version: 0)
            } else {
                return nil
            }
        } catch {
            problems += error.problems
            return nil
        }
        for channel in configuration.channels where channel.ads.stitch {
            guard let package = packages[channel.name] else { continue }
            let longest = package.renditions.flatMap { $0.segments.map(\.duration) }.max()
            problems += loaded.validate(
                channel: channel.name, renditions: package.renditions.map(\.name), targetDuration: package.targetDuration,
                maximumSegmentDuration: longest)
        }
        return loaded
    }

    /// Prints every problem to standard error and exits with EX_CONFIG (78).
    static func exit(with error: ConfigurationError) -> Never {
        // Under systemd, at error priority (`<3>`), so `journalctl -p err` shows why the unit failed.
        let prefix = JournalStream.isStandardError(environment: ProcessInfo.processInfo.environment["JOURNAL_STREAM"]) ? "<3>" : ""
        for problem in error.problems { printError(prefix + problem.description) }
        Foundation.exit(ConfigurationError.exitStatus)
    }
}
