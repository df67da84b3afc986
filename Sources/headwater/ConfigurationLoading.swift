import Foundation
import HeadwaterCore

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
        """

    /// Loads and validates the configuration and every channel's source (a loop package that does
    /// not load is a configuration error too: the server cannot start with it).
    static func load(path: String?) throws(ConfigurationError) -> ChannelSupervisor.Loaded {
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
            file = "<embedded demo configuration>"
            text = embedded
            base = ""
        }
        let configuration = try HeadwaterConfiguration.parse(text, file: file, baseDirectory: base)
        var packages: [String: LoopPackage] = [:]
        var problems: [ConfigurationError.Problem] = []
        for channel in configuration.channels {
            switch channel.source {
            case .loop(let package):
                do {
                    packages[channel.name] = try LoopPackage.load(multivariantPath: package)
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
        if !problems.isEmpty { throw ConfigurationError(problems: problems) }
        return ChannelSupervisor.Loaded(configuration: configuration, packages: packages, slate: slate, file: file)
    }

    /// Prints every problem to standard error and exits with EX_CONFIG (78).
    static func exit(with error: ConfigurationError) -> Never {
        for problem in error.problems { printError(problem.description) }
        Foundation.exit(ConfigurationError.exitStatus)
    }
}
