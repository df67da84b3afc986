import HeadwaterConfiguration
import HeadwaterLiveWindow
import Testing

@Suite("Configuration (Config/headwater.yaml)")
struct ConfigurationTests {
    @Test("a valid file parses; relative paths resolve against the config directory")
    func valid() throws {
        let text = """
            # comment
            server:
              listen: 0.0.0.0:9000
              public: ../Public
              cors: true
              threads: 4
            channels:
              demo:
                source:
                  type: loop
                  package: ../Public/demo/master.m3u8
                window: 24
            """
        let configuration = try HeadwaterConfiguration.parse(text, file: "Config/headwater.yaml", baseDirectory: "/srv/hw/Config")
        #expect(configuration.server.host == "0.0.0.0" && configuration.server.port == 9000)
        #expect(configuration.server.publicDirectory == "/srv/hw/Config/../Public")
        #expect(configuration.server.cors)
        #expect(configuration.server.threads == 4)
        #expect(configuration.channels == [
            .init(name: "demo", source: .loop(package: "/srv/hw/Config/../Public/demo/master.m3u8"), windowSeconds: 24)
        ])
    }

    @Test("every problem is reported at once as file:line: key.path: message")
    func allProblems() {
        let text = """
            server:
              listen: localhost
              colour: blue
            channels:
              demo:
                source:
                  type: tape
                window: 2
              "bad name":
                source:
                  type: loop
            """
        do {
            _ = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
            Issue.record("expected an error")
        } catch {
            let lines = error.problems.map(\.description)
            #expect(lines.contains("h.yaml:2: server.listen: must be HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080, got \"localhost\""), "\(lines)")
            #expect(lines.contains { $0.hasPrefix("h.yaml:3: server.colour: unknown key") }, "\(lines)")
            #expect(lines.contains("h.yaml:7: channels.demo.source.type: unknown source type \"tape\" (expected: loop, push, directory, pull)"), "\(lines)")
            #expect(lines.contains("h.yaml:8: channels.demo.window: must be between 6 and 86400, got 2"), "\(lines)")
            #expect(lines.contains { $0.hasPrefix("h.yaml:9: channels.bad name: channel names are") }, "\(lines)")
            #expect(error.problems.count == 5, "\(lines)")
        }
    }

    @Test("server.threads is 1 to 256; absent, the server picks", arguments: ["0", "257", "two"])
    func threads(_ value: String) throws {
        let text = "server:\n  threads: \(value)\nchannels:\n  demo:\n    source:\n      type: loop\n      package: /m.m3u8\n"
        do {
            _ = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
            Issue.record("expected an error")
        } catch {
            let expected = Int(value).map { "must be between 1 and 256, got \($0)" } ?? "must be an integer"
            #expect(error.problems.map(\.description) == ["h.yaml:2: server.threads: \(expected)"])
        }
        let absent = try HeadwaterConfiguration.parse(
            "channels:\n  demo:\n    source:\n      type: loop\n      package: /m.m3u8\n", file: "h.yaml", baseDirectory: "/c")
        #expect(absent.server.threads == nil)
    }

    @Test("YAML syntax errors name the line", arguments: ["server:\n  listen: [1, 2\n", "channels:\n  demo: {\n"])
    func syntax(_ text: String) {
        do {
            _ = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
            Issue.record("expected an error")
        } catch {
            #expect(error.problems.count == 1)
            #expect(error.problems[0].line != nil)
            #expect(error.problems[0].description.contains("not valid YAML"))
        }
    }

    @Test("missing channels and missing source are errors")
    func required() {
        #expect(throws: ConfigurationError.self) { try HeadwaterConfiguration.parse("server:\n  cors: true\n", file: "h", baseDirectory: "/") }
        do {
            _ = try HeadwaterConfiguration.parse("channels:\n  demo:\n    window: 30\n", file: "h.yaml", baseDirectory: "/")
            Issue.record("expected an error")
        } catch {
            #expect(error.problems.map(\.description) == ["h.yaml:3: channels.demo.source: required: where the channel's media comes from"])
        }
    }
}

@Suite("Configuration: directory and pull sources, stall fill")
struct SourceConfigurationTests {
    @Test("directory and pull sources parse with their defaults; stall defaults to slate when server.slate is set")
    func parses() throws {
        let text = """
            server:
              slate: ../Public/slate/master.m3u8
            channels:
              dir:
                source:
                  type: directory
                  path: media/dir
                  target_duration: 4
              up:
                source:
                  type: pull
                  url: http://127.0.0.1:9000/live/master.m3u8
                  mode: reference
                stall: none
            """
        let configuration = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/etc/headwater")
        #expect(configuration.server.slatePackage == "/etc/headwater/../Public/slate/master.m3u8")
        #expect(configuration.channels.map(\.name) == ["dir", "up"])
        #expect(
            configuration.channels[0].source
                == .directory(.init(path: "/etc/headwater/media/dir", targetDuration: 4, pollIntervalMilliseconds: 250)))
        #expect(configuration.channels[0].stall == .slate)
        #expect(
            configuration.channels[1].source
                == .pull(.init(url: "http://127.0.0.1:9000/live/master.m3u8", mode: .reference, targetDuration: 6)))
        #expect(configuration.channels[1].stall == HeadwaterConfiguration.Channel.StallFill.none)
        let withoutSlate = try HeadwaterConfiguration.parse(
            "channels:\n  d:\n    source:\n      type: directory\n      path: /x\n", file: "h.yaml", baseDirectory: "")
        #expect(withoutSlate.channels[0].stall == .gap)
    }

    @Test("bad directory and pull keys are reported with file, line and key path")
    func problems() {
        let text = """
            channels:
              dir:
                source:
                  type: directory
                  poll_interval_ms: 5
                  url: http://x/
                stall: later
              up:
                source:
                  type: pull
                  url: ftp://upstream/live.m3u8
                  mode: mirror
            """
        do {
            _ = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
            Issue.record("expected an error")
        } catch {
            let lines = error.problems.map(\.description)
            #expect(lines.contains("h.yaml:4: channels.dir.source.path: required for a directory source: the directory the packager writes into"), "\(lines)")
            #expect(lines.contains("h.yaml:6: channels.dir.source.url: only applies to a pull source, not directory"), "\(lines)")
            #expect(lines.contains("h.yaml:7: channels.dir.stall: must be slate, gap or none, got \"later\""), "\(lines)")
            #expect(lines.contains("h.yaml:11: channels.up.source.url: must be an http:// or https:// URL, got \"ftp://upstream/live.m3u8\""), "\(lines)")
            #expect(lines.contains("h.yaml:12: channels.up.source.mode: must be fetch or reference, got \"mirror\""), "\(lines)")
        }
    }
}
