import Foundation
import HeadwaterTesting
import Testing

extension RealClients {
    /// `server.tls` as an operator meets it: a certificate or key that cannot be used stops `serve`
    /// and `check-config` with exit 78 and the line that names it; a good one is what `openssl
    /// s_client` sees; `kill -HUP` after replacing the files serves the new one, and a broken
    /// replacement is refused while the old certificate keeps serving.
    @Suite("headwater serve: TLS", .serialized)
    struct TLSServeTests {
        /// A directory with a configuration (`headwater.yaml`) whose `server.tls` names `cert.pem`
        /// (line 5) and `key.pem` (line 6) beside it, relative to the file as operators write them.
        struct Fixture {
            let directory: URL
            var file: URL { directory.appendingPathComponent("headwater.yaml") }
            var certificate: URL { directory.appendingPathComponent("cert.pem") }
            var key: URL { directory.appendingPathComponent("key.pem") }

            init(tls: Bool = true) throws {
                directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-tls-\(UUID())")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let repository = ServeCommandTests.repository.path
                let block = tls ? "  tls:\n    listen: 127.0.0.1:0\n    certificate: cert.pem\n    key: key.pem\n" : ""
                let text = "server:\n  public: \(repository)/Public\n" + block + """
                    channels:
                      demo:
                        source:
                          type: loop
                          package: \(repository)/Public/demo/master.m3u8

                    """
                try text.write(to: file, atomically: true, encoding: .utf8)
            }

            func remove() { try? FileManager.default.removeItem(at: directory) }

            /// A new self-signed ECDSA P-256 certificate for `localhost` and 127.0.0.1, as the README
            /// makes one, written to `certificate` and `key` by rename (what certbot and an operator's
            /// `mv` do), so a handshake never reads half a file.
            func issue(commonName: String, certificate: URL? = nil, key: URL? = nil) throws {
                let staged = directory.appendingPathComponent("staged-\(UUID())")
                let result = try Tool.run(
                    "openssl",
                    [
                        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                        "-subj", "/CN=\(commonName)", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                        "-keyout", staged.path + "-key.pem", "-out", staged.path + "-cert.pem",
                    ])
                try #require(result.status == 0, "openssl req: \(result.output)")
                try replace(certificate ?? self.certificate, with: URL(fileURLWithPath: staged.path + "-cert.pem"))
                try replace(key ?? self.key, with: URL(fileURLWithPath: staged.path + "-key.pem"))
            }

            func write(_ text: String, to file: URL) throws {
                let staged = directory.appendingPathComponent("staged-\(UUID())")
                try text.write(to: staged, atomically: false, encoding: .utf8)
                try replace(file, with: staged)
            }

            private func replace(_ file: URL, with staged: URL) throws {
                guard rename(staged.path, file.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
            }
        }

        /// Runs a tool from `PATH` (failing the test with what to install when it is missing) with
        /// standard input closed; its exit status and standard output and error together.
        enum Tool {
            static func run(_ tool: String, _ arguments: [String], timeout: TimeInterval = 20) throws -> (status: Int32, output: String) {
                let path = try #require(ServeCommandTests.which(tool), "\(tool) is required (Tests/tools/install-test-clients.sh)")
                return try runExecutable(URL(fileURLWithPath: path), arguments, timeout: timeout)
            }

            /// `executable` with `arguments`; killed (and its status then SIGKILL's) after `timeout`.
            static func runExecutable(
                _ executable: URL, _ arguments: [String], timeout: TimeInterval
            ) throws -> (status: Int32, output: String) {
                let process = Process()
                process.executableURL = executable
                process.arguments = arguments
                process.currentDirectoryURL = ServeCommandTests.repository
                let output = FileManager.default.temporaryDirectory.appendingPathComponent("hw-tool-\(UUID()).out")
                _ = FileManager.default.createFile(atPath: output.path, contents: nil)
                defer { try? FileManager.default.removeItem(at: output) }
                let handle = try FileHandle(forWritingTo: output)
                defer { try? handle.close() }
                process.standardOutput = handle
                process.standardError = handle
                process.standardInput = FileHandle.nullDevice
                try process.run()
                let deadline = Date().addingTimeInterval(timeout)
                while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                // Decoded leniently: s_client also prints what the server sent after the handshake
                // (an h2 server's SETTINGS frame), which is not UTF-8.
                let bytes = (try? Data(contentsOf: output)) ?? Data()
                return (process.terminationStatus, String(decoding: bytes, as: UTF8.self))
            }
        }

        /// The subject of the certificate a TLS client is shown at 127.0.0.1:`port` (SNI `localhost`),
        /// with the spaces OpenSSL 3.0 puts around `=` removed (`CN=first`), and the ALPN protocol
        /// chosen; `nil` when no handshake completed.
        static func handshake(port: Int) throws -> (subject: String, alpn: String)? {
            let result = try Tool.run(
                "openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost", "-alpn", "h2,http/1.1"],
                timeout: 10)
            let lines = result.output.split(separator: "\n")
            guard let subject = lines.first(where: { $0.hasPrefix("subject=") }) else { return nil }
            let alpn = lines.first { $0.hasPrefix("ALPN protocol: ") }?.dropFirst("ALPN protocol: ".count) ?? "none"
            return (subject.dropFirst("subject=".count).replacingOccurrences(of: " ", with: ""), String(alpn))
        }

        /// Polls ``handshake(port:)`` for up to `seconds` until the subject is `subject`; the last one seen.
        static func waitForSubject(_ subject: String, port: Int, seconds: Int) throws -> String? {
            var seen: String?
            for _ in 0..<(seconds * 4) {
                seen = try handshake(port: port)?.subject
                if seen == subject { break }
                Thread.sleep(forTimeInterval: 0.25)
            }
            return seen
        }

        /// `headwater serve --config FILE` on free ports (`--listen`, and `--tls-listen` unless
        /// `tls` is false), its log in a file; waits until the plain listener answers.
        static func serve(
            _ fixture: Fixture, tls: Bool = true, environment: [String: String] = [:]
        ) throws -> (process: Process, port: Int, tlsPort: Int, log: URL) {
            let port = try ServeCommandTests.freePort()
            let tlsPort = try ServeCommandTests.freePort()
            let process = Process()
            process.executableURL = HeadwaterProcess.executable
            process.arguments =
                ["serve", "--listen", "127.0.0.1:\(port)", "--config", fixture.file.path]
                + (tls ? ["--tls-listen", "127.0.0.1:\(tlsPort)"] : [])
            process.currentDirectoryURL = ServeCommandTests.repository
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let log = fixture.directory.appendingPathComponent("serve.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            process.standardError = handle
            process.standardOutput = handle
            try process.run()
            for _ in 0..<100 {
                if ServeCommandTests.get(port: port, path: "/healthz").hasPrefix("HTTP/1.1 200") { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return (process, port, tlsPort, log)
        }

        static func text(of log: URL) -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        @Test(
            "a certificate or key that cannot be used: check-config and serve exit 78 with file:line: server.tls.<key>: file: reason",
            arguments: ["garbage certificate", "missing certificate", "garbage key", "key of another certificate"])
        func unusableCertificate(_ situation: String) throws {
            let fixture = try Fixture()
            defer { fixture.remove() }
            try fixture.issue(commonName: "localhost")
            let expected: String
            switch situation {
            case "garbage certificate":
                try fixture.write("not a certificate\n", to: fixture.certificate)
                expected = "\(fixture.file.path):5: server.tls.certificate: \(fixture.certificate.path): cannot read a PEM certificate chain"
            case "missing certificate":
                try FileManager.default.removeItem(at: fixture.certificate)
                expected = "\(fixture.file.path):5: server.tls.certificate: \(fixture.certificate.path): cannot read a PEM certificate chain"
            case "garbage key":
                try fixture.write("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n", to: fixture.key)
                expected = "\(fixture.file.path):6: server.tls.key: \(fixture.key.path): cannot read a PEM private key"
            default:
                // A key that parses but belongs to another certificate: the key is what is wrong.
                let other = fixture.directory.appendingPathComponent("other-cert.pem")
                try fixture.issue(commonName: "other", certificate: other)
                expected = "\(fixture.file.path):6: server.tls.key: \(fixture.key.path): the key does not go with the certificate"
            }

            let check = try HeadwaterProcess.run(["check-config", fixture.file.path])
            #expect(check.status == 78, "\(check.stdout)\(check.stderr)")
            #expect(check.stderr.hasPrefix(expected), "\(check.stderr)")
            #expect(check.stderr.split(separator: "\n").count == 1, "one problem, one line: \(check.stderr)")

            let serve = try Tool.runExecutable(
                HeadwaterProcess.executable,
                ["serve", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--config", fixture.file.path], timeout: 30)
            #expect(serve.status == 78, "\(serve.output.suffix(600))")
            #expect(serve.output.split(separator: "\n").contains { $0.hasPrefix(expected) }, "\(serve.output.suffix(600))")
        }

        @Test("check-config accepts a usable certificate and key")
        func checkConfigAcceptsGoodCertificate() throws {
            let fixture = try Fixture()
            defer { fixture.remove() }
            try fixture.issue(commonName: "localhost")
            let check = try HeadwaterProcess.run(["check-config", fixture.file.path])
            #expect(check.status == 0, "\(check.stderr)")
            #expect(check.stdout.contains(": ok, 1 channel(s): demo"), "\(check.stdout)")
        }

        @Test("--tls-listen without server.tls is a configuration error (exit 78) naming server.tls; a malformed one is a usage error")
        func tlsListenWithoutTLS() throws {
            let fixture = try Fixture(tls: false)
            defer { fixture.remove() }
            let serve = try Tool.runExecutable(
                HeadwaterProcess.executable,
                ["serve", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:8443", "--config", fixture.file.path], timeout: 30)
            #expect(serve.status == 78, "\(serve.output.suffix(600))")
            #expect(
                serve.output.contains("\(fixture.file.path): server.tls: required by --tls-listen: the TLS listener needs certificate and key"),
                "\(serve.output.suffix(600))")

            let tlsFixture = try Fixture()
            defer { tlsFixture.remove() }
            try tlsFixture.issue(commonName: "localhost")
            let malformed = try Tool.runExecutable(
                HeadwaterProcess.executable,
                ["serve", "--listen", "127.0.0.1:0", "--tls-listen", "8443", "--config", tlsFixture.file.path], timeout: 30)
            #expect(malformed.status == 64, "\(malformed.output.suffix(600))")
            #expect(malformed.output.contains("--tls-listen must be HOST:PORT, got \"8443\""), "\(malformed.output.suffix(600))")
        }

        @Test("under systemd (Type=notify), READY=1 waits for the TLS listener too and its status names both addresses")
        func readyOnceBothListen() throws {
            let receiver = try DatagramReceiver.inTemporaryDirectory()
            defer { receiver.remove() }
            let fixture = try Fixture()
            defer { fixture.remove() }
            try fixture.issue(commonName: "ready")
            let (server, port, tlsPort, log) = try Self.serve(fixture, environment: ["NOTIFY_SOCKET": receiver.notifySocket])
            defer { if server.isRunning { server.terminate() } }
            let ready = try receiver.receive()
            #expect(ready.split(separator: "\n").contains("READY=1"), "\(ready)")
            #expect(ready.contains(":\(port)") && ready.contains(":\(tlsPort)"), "\(ready)")
            #expect(try Self.handshake(port: tlsPort)?.subject == "CN=ready", "bound when READY=1 was sent: \(Self.text(of: log).suffix(600))")
        }

        @Test("openssl s_client sees the configured certificate with ALPN h2; after the files are replaced, SIGHUP serves the new one; a broken key is refused and the old one keeps serving")
        func reloadCertificate() throws {
            let fixture = try Fixture()
            defer { fixture.remove() }
            try fixture.issue(commonName: "first")
            let (server, port, tlsPort, log) = try Self.serve(fixture)
            defer { if server.isRunning { server.terminate() } }

            #expect(try Self.waitForSubject("CN=first", port: tlsPort, seconds: 10) == "CN=first", "\(Self.text(of: log).suffix(800))")
            #expect(try Self.handshake(port: tlsPort)?.alpn == "h2")
            // What the README's check does: HTTP/2 over TLS, verified against the certificate.
            let curl = try Tool.run(
                "curl",
                [
                    "-sS", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", "--http2", "--cacert", fixture.certificate.path,
                    "--resolve", "localhost:\(tlsPort):127.0.0.1", "https://localhost:\(tlsPort)/live/demo/master.m3u8",
                ])
            #expect(curl.output == "2 200", "\(curl.output)")

            // Renewal: new files at the same paths, then SIGHUP (what certbot's deploy hook does).
            try fixture.issue(commonName: "second")
            #expect(try Self.handshake(port: tlsPort)?.subject == "CN=first", "nothing changes before the signal")
            kill(server.processIdentifier, SIGHUP)
            #expect(try Self.waitForSubject("CN=second", port: tlsPort, seconds: 10) == "CN=second", "\(Self.text(of: log).suffix(800))")

            // A broken key (the certificate renewed, its key truncated): refused whole.
            try fixture.issue(commonName: "third")
            try fixture.write("-----BEGIN PRIVATE KEY-----\n", to: fixture.key)
            kill(server.processIdentifier, SIGHUP)
            var rejected = false
            for _ in 0..<50 where !rejected {
                Thread.sleep(forTimeInterval: 0.1)
                rejected = Self.text(of: log).contains("the previous configuration keeps serving")
            }
            #expect(rejected, "\(Self.text(of: log).suffix(800))")
            #expect(try Self.handshake(port: tlsPort)?.subject == "CN=second", "the old certificate keeps serving")
            let metrics = ServeCommandTests.get(port: port, path: "/metrics")
            #expect(metrics.contains("headwater_config_reloads_total{result=\"rejected\"} 1"), "\(metrics.prefix(300))")
            #expect(server.isRunning, "a refused certificate never stops the server")

            server.terminate()
            server.waitUntilExit()
            let lines = Self.text(of: log).split(separator: "\n")
            let reloaded = lines.filter { $0.contains("certificate reloaded") }
            #expect(reloaded.count == 1, "one applied reload: \(reloaded)")
            #expect(reloaded.first?.contains("info") == true && reloaded.first?.contains("tls.certificate=") == true, "\(reloaded)")
            #expect(reloaded.first?.contains("second") == true, "the summary names the new certificate: \(reloaded)")
            #expect(
                lines.contains { $0.contains("reload rejected: \(fixture.file.path):6: server.tls.key: \(fixture.key.path): cannot read a PEM private key") },
                "\(lines.suffix(10))")
        }
    }
}
