import HeadwaterConfiguration
import Testing

@Suite("Configuration: push sources")
struct PushConfigurationTests {
    @Test("a push source with every key, and server.state resolved against the config directory")
    func valid() throws {
        let text = """
            server:
              state: ../state
            channels:
              live:
                source:
                  type: push
                  token_env: LIVE_TOKEN
                  target_duration: 4
                  max_upload_bytes: 10485760
                window: 24
              defaults:
                source:
                  type: push
            """
        let configuration = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/srv/hw/Config")
        #expect(configuration.server.stateDirectory == "/srv/hw/Config/../state")
        #expect(
            configuration.channels == [
                .init(
                    name: "live",
                    source: .push(
                        .init(tokenEnvironmentVariable: "LIVE_TOKEN", targetDuration: 4, maxUploadBytes: 10 << 20)),
                    windowSeconds: 24),
                .init(name: "defaults", source: .push(.init())),
            ])
        let defaults = HeadwaterConfiguration.Channel.PushSource()
        #expect(defaults.tokenEnvironmentVariable == "HEADWATER_INGEST_TOKEN" && defaults.targetDuration == 6)
        #expect(defaults.maxUploadBytes == 64 << 20)
        #expect(
            try HeadwaterConfiguration.parse(
                "channels:\n  a:\n    source: {type: push}\n", file: "h", baseDirectory: ""
            )
            .server.stateDirectory == nil)
    }

    @Test("bad push keys are reported with file, line and key path")
    func problems() {
        let text = """
            channels:
              live:
                source:
                  type: push
                  token_env: 9-lives
                  target_duration: 0
                  max_upload_bytes: lots
                  package: x.m3u8
              loop:
                source:
                  type: loop
                  package: p.m3u8
                  token_env: T
            """
        do {
            _ = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
            Issue.record("expected an error")
        } catch {
            let lines = error.problems.map(\.description)
            #expect(
                lines.contains {
                    $0.hasPrefix("h.yaml:5: channels.live.source.token_env: must name an environment variable")
                }, "\(lines)")
            #expect(
                lines.contains("h.yaml:6: channels.live.source.target_duration: must be between 1 and 60, got 0"),
                "\(lines)")
            #expect(lines.contains("h.yaml:7: channels.live.source.max_upload_bytes: must be an integer"), "\(lines)")
            #expect(lines.contains("h.yaml:8: channels.live.source.package: only applies to a loop source, not push"), "\(lines)")
            #expect(
                lines.contains("h.yaml:13: channels.loop.source.token_env: only applies to a push source, not loop"), "\(lines)")
            #expect(error.problems.count == 5, "\(lines)")
        }
    }
}
