import HeadwaterCore
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
            #expect(lines.contains("h.yaml:7: channels.demo.source.type: unknown source type \"tape\" (expected: loop, push)"), "\(lines)")
            #expect(lines.contains("h.yaml:8: channels.demo.window: must be between 6 and 86400, got 2"), "\(lines)")
            #expect(lines.contains { $0.hasPrefix("h.yaml:9: channels.bad name: channel names are") }, "\(lines)")
            #expect(error.problems.count == 5, "\(lines)")
        }
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
