import AsyncHTTPClient
import Foundation
import HeadwaterTesting
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// async-http-client, the Swift server HTTP client, against the real `headwater serve` with a TLS
/// listener (issue 16): with `httpVersion: .automatic` it offers h2 by ALPN, and with the test CA as
/// its only trust root it must get a playlist and a segment over HTTP/2, with the same bytes as
/// plain HTTP/1.1 gives. The binary is the one `swift build` put beside this test bundle; the
/// certificate is made by `openssl` for this test (``TestCertificateAuthority``).
@Suite("async-http-client over HTTP/2 and TLS", .serialized)
struct HTTP2AsyncHTTPClientTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `headwater serve` on two free loopback ports: plain (`--listen`) and TLS (`server.tls`),
    /// serving the looping demo channel.
    struct Serve {
        let process: Process
        let plainPort: Int
        let tlsPort: Int
        let directory: URL

        static var executable: URL {
            // The test bundle sits next to the products in .build/<triple>/<configuration>/.
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("headwater").path), directory.path != "/" {
                directory.deleteLastPathComponent()
            }
            return directory.appendingPathComponent("headwater")
        }

        /// A free TCP port on 127.0.0.1 (bound to port 0, read back, closed).
        static func freePort() throws -> Int {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            try withUnsafeMutablePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    guard bind(fd, $0, length) == 0, getsockname(fd, $0, &length) == 0 else { throw CocoaError(.fileNoSuchFile) }
                }
            }
            return Int(UInt16(bigEndian: address.sin_port))
        }

        init(authority: TestCertificateAuthority) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-ahc-h2-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            plainPort = try Self.freePort()
            tlsPort = try Self.freePort()
            let config = directory.appendingPathComponent("headwater.yaml")
            try """
                server:
                  tls:
                    listen: "127.0.0.1:\(tlsPort)"
                    certificate: \(authority.serverCertificateChain)
                    key: \(authority.serverKey)
                channels:
                  demo:
                    source:
                      type: loop
                      package: \(HTTP2AsyncHTTPClientTests.repository.path)/Public/demo/master.m3u8
                    window: 30
                """.write(to: config, atomically: true, encoding: .utf8)
            let log = directory.appendingPathComponent("serve.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            process = Process()
            process.executableURL = Self.executable
            process.arguments = ["serve", "--listen", "127.0.0.1:\(plainPort)", "--config", config.path]
            process.currentDirectoryURL = HTTP2AsyncHTTPClientTests.repository
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
        }

        var log: String { (try? String(contentsOf: directory.appendingPathComponent("serve.log"), encoding: .utf8)) ?? "" }

        func stop() {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// GET `url`: status, HTTP version and body (at most 16 MiB).
    static func get(
        _ client: HTTPClient, _ url: String, headers: [(String, String)] = [], timeout: TimeAmount = .seconds(10)
    ) async throws -> (status: UInt, version: HTTPVersion, headers: HTTPHeaders, body: [UInt8]) {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: 16 << 20)
        return (response.status.code, response.version, response.headers, Array(body.readableBytesView))
    }

    @Test("with the test CA as trust root and httpVersion .automatic: a playlist, a segment and a range over HTTP/2, the same bytes as over plain HTTP/1.1; without the CA the handshake fails")
    func playlistAndSegmentOverHTTP2() async throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let server = try Serve(authority: authority)
        defer { server.stop() }

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.caCertificate))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let untrusting = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration())
        do {
            let https = "https://localhost:\(server.tlsPort)"
            let plain = "http://127.0.0.1:\(server.plainPort)"
            // Up once both listeners answer (at most 10 s).
            var up = false
            for _ in 0..<100 where !up {
                let plainUp = (try? await Self.get(client, "\(plain)/healthz"))?.status == 200
                let tlsUp = (try? await Self.get(client, "\(https)/healthz"))?.status == 200
                up = plainUp && tlsUp
                if !up { try await Task.sleep(for: .milliseconds(100)) }
            }
            try #require(up, "serve answers on both listeners: \(server.log.suffix(1500))")

            let master = try await Self.get(client, "\(https)/live/demo/master.m3u8")
            #expect(master.status == 200)
            #expect(master.version == .http2, "negotiated \(master.version)")
            let plainMaster = try await Self.get(client, "\(plain)/live/demo/master.m3u8")
            #expect(plainMaster.version == .http1_1, "the plain listener without prior knowledge: \(plainMaster.version)")
            #expect(master.body == plainMaster.body, "the multivariant playlist's bytes")
            #expect(master.headers.first(name: "content-type") == "application/vnd.apple.mpegurl", "\(master.headers)")

            let media = try await Self.get(client, "\(https)/live/demo/v1.m3u8")
            #expect(media.status == 200 && media.version == .http2, "\(media.status) over \(media.version)")
            let uris = String(decoding: media.body, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
            try #require(uris.count >= 3, "\(String(decoding: media.body, as: UTF8.self))")
            let segment = "/live/demo/\(uris[uris.count / 2])"
            let overH2 = try await Self.get(client, https + segment)
            let overHTTP1 = try await Self.get(client, plain + segment)
            #expect(overH2.status == 200 && overH2.version == .http2, "\(segment): \(overH2.status) over \(overH2.version)")
            #expect(overH2.body.count > 5_000 && overH2.body == overHTTP1.body, "\(segment): \(overH2.body.count) and \(overHTTP1.body.count) bytes")
            let range = try await Self.get(client, https + segment, headers: [("Range", "bytes=100-1099")])
            #expect(range.status == 206 && range.version == .http2, "\(range.status) over \(range.version)")
            #expect(range.body == Array(overHTTP1.body[100..<1100]), "the range's bytes")

            // The system's trust roots do not include the test CA: no connection, no response. (The
            // client retries a failed handshake until the request's deadline, then throws why.)
            do {
                let answer = try await Self.get(untrusting, "\(https)/live/demo/master.m3u8", timeout: .seconds(5))
                Issue.record("a client without the test CA got \(answer.status) over \(answer.version)")
            } catch {
                #expect("\(error)".contains("CERTIFICATE_VERIFY_FAILED"), "refused for the certificate: \(error)")
            }
        } catch {
            try? await client.shutdown()
            try? await untrusting.shutdown()
            throw error
        }
        try await client.shutdown()
        try await untrusting.shutdown()
    }
}
