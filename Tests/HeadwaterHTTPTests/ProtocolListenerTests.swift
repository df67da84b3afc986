import Foundation
import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterTesting
import NIOCore
import Testing

/// The listeners speak every protocol they advertise, through the same responder: HTTP/1.1 and h2c
/// (prior knowledge) on the plain port, HTTP/1.1 and `h2` (ALPN) on the TLS port. Checked with curl,
/// an implementation independent of NIO's.
@Suite struct ProtocolListenerTests {
    /// `curl` with `arguments`; its stdout.
    static func curl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["--silent", "--show-error", "--max-time", "10"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func withTLSServer(
        segments: [String: SegmentFile] = [:],
        _ body: @Sendable (_ plain: Int, _ tls: Int, _ ca: TestCertificateAuthority) async throws -> Void
    ) async throws {
        let ca = try TestCertificateAuthority()
        defer { ca.remove() }
        let certificates = try TLSCertificates(certificatePath: ca.serverCertificateChain, keyPath: ca.serverKey)
        try await withServer(
            content: Fixture.content(segments: segments),
            configure: { $0.tls = TLSListenerConfiguration(host: "127.0.0.1", port: 0, certificates: certificates) },
            serverReady: { server in try await server.waitUntilTLSListening().port ?? 0 }
        ) { plain, tls in
            try await body(plain, tls, ca)
        }
    }

    @Test func everyProtocolAnswersTheSamePlaylist() async throws {
        try await Self.withTLSServer { plain, tls, ca in
            let format = ["--write-out", "\n%{http_version} %{response_code}"]
            let h1 = try Self.curl(format + ["--http1.1", "http://127.0.0.1:\(plain)/live/demo/v1.m3u8"])
            let h2c = try Self.curl(format + ["--http2-prior-knowledge", "http://127.0.0.1:\(plain)/live/demo/v1.m3u8"])
            let tls1 = try Self.curl(
                format + ["--http1.1", "--cacert", ca.caCertificate, "https://localhost:\(tls)/live/demo/v1.m3u8"])
            let h2 = try Self.curl(
                format + ["--http2", "--cacert", ca.caCertificate, "https://localhost:\(tls)/live/demo/v1.m3u8"])
            #expect(h1.output.hasSuffix("\n1.1 200"), "\(h1)")
            #expect(h2c.output.hasSuffix("\n2 200"), "\(h2c)")
            #expect(tls1.output.hasSuffix("\n1.1 200"), "\(tls1)")
            #expect(h2.output.hasSuffix("\n2 200"), "\(h2)")
            let body = h1.output.dropLast("\n1.1 200".count)
            #expect(body.hasPrefix("#EXTM3U"))
            #expect(h2c.output.dropLast("\n2 200".count) == body)
            #expect(tls1.output.dropLast("\n1.1 200".count) == body)
            #expect(h2.output.dropLast("\n2 200".count) == body)
        }
    }

    @Test func segmentsAndRangesOverEveryProtocol() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = patternBytes(count: 300_000)
        let path = try directory.write("s.ts", bytes)
        let segments = ["seg1.ts": segmentFile(path: path, length: bytes.count, tag: "s1")]
        try await Self.withTLSServer(segments: segments) { plain, tls, ca in
            for (protocolFlags, base) in [
                (["--http1.1"], "http://127.0.0.1:\(plain)"),
                (["--http2-prior-knowledge"], "http://127.0.0.1:\(plain)"),
                (["--http1.1", "--cacert", ca.caCertificate], "https://localhost:\(tls)"),
                (["--http2", "--cacert", ca.caCertificate], "https://localhost:\(tls)"),
            ] {
                let output = FileManager.default.temporaryDirectory.appendingPathComponent("hw-seg-\(UUID())").path
                defer { try? FileManager.default.removeItem(atPath: output) }
                let whole = try Self.curl(
                    protocolFlags + ["--output", output, "--write-out", "%{response_code}", "\(base)/live/demo/v1/seg1.ts"])
                #expect(whole.output == "200", "\(protocolFlags): \(whole)")
                #expect(FileManager.default.contents(atPath: output).map(Array.init) == bytes, "\(protocolFlags)")
                let range = try Self.curl(
                    protocolFlags + [
                        "--range", "100000-250000", "--output", output, "--write-out", "%{response_code}",
                        "\(base)/live/demo/v1/seg1.ts",
                    ])
                #expect(range.output == "206", "\(protocolFlags): \(range)")
                #expect(FileManager.default.contents(atPath: output).map(Array.init) == Array(bytes[100_000...250_000]))
            }
        }
    }
}
