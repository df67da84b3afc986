import HeadwaterConfiguration
import Testing

/// `server.limits` and `server.ingest_listen`: every key read, every bad value reported as
/// `file:line: key.path: message`, unset keys left to the server's defaults.
@Suite("server.limits and server.ingest_listen")
struct ServerLimitsConfigurationTests {
    static let channel = "channels:\n  demo:\n    source:\n      type: loop\n      package: /m.m3u8\n"

    @Test func everyKeyIsRead() throws {
        let text = """
            server:
              ingest_listen: 10.0.0.5:8081
              limits:
                max_connections: 5000
                max_connections_per_client: 0
                request_head_timeout: 5
                body_timeout: 20
                min_body_rate: 4096
                send_timeout: 30
                idle_timeout: 15
                http2_max_streams: 64
                http2_max_resets: 50

            """ + Self.channel
        let server = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c").server
        #expect(server.ingestListen?.host == "10.0.0.5")
        #expect(server.ingestListen?.port == 8081)
        let limits = server.limits
        #expect(limits.maxConnections == 5000)
        #expect(limits.maxConnectionsPerClient == 0)
        #expect(limits.requestHeadTimeoutSeconds == 5)
        #expect(limits.bodyTimeoutSeconds == 20)
        #expect(limits.minimumBodyRate == 4096)
        #expect(limits.sendTimeoutSeconds == 30)
        #expect(limits.idleTimeoutSeconds == 15)
        #expect(limits.http2MaxStreams == 64)
        #expect(limits.http2MaxResets == 50)

        let defaults = try HeadwaterConfiguration.parse(Self.channel, file: "h.yaml", baseDirectory: "/c").server
        #expect(defaults.ingestListen == nil)
        #expect(defaults.limits == ServerLimits())
    }

    @Test func badValuesAreReportedWhereTheyAre() throws {
        let text = """
            server:
              listen: 127.0.0.1:8080
              ingest_listen: 127.0.0.1:8080
              limits:
                request_head_timeout: 0
                send_timeout: soon
                max_connections_per_client: -1
                max_conections: 10

            """ + Self.channel
        let error = try #require(throws: ConfigurationError.self) {
            try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/c")
        }
        let lines = error.problems.map(\.description)
        #expect(lines.contains("h.yaml:5: server.limits.request_head_timeout: must be between 1 and 600, got 0"), "\(lines)")
        #expect(lines.contains("h.yaml:6: server.limits.send_timeout: must be an integer"), "\(lines)")
        #expect(lines.contains("h.yaml:7: server.limits.max_connections_per_client: must be between 0 and 1000000, got -1"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("h.yaml:8: server.limits.max_conections: unknown key") }, "\(lines)")
        #expect(
            lines.contains("h.yaml:3: server.ingest_listen: must differ from server.listen (127.0.0.1:8080): one port cannot serve both"),
            "\(lines)")
    }
}
