import Foundation
import HeadwaterTesting

/// `headwater serve` with a TLS listener, for the HTTP/2 and TLS tests with real clients: the
/// demo channel with ads (``SSAIFixture``: a break every `every` seconds), the plain listener on a
/// free port (`--listen`) and `server.tls` on another, presenting a certificate for `localhost` and
/// `127.0.0.1` signed by a CA made for this test (``TestCertificateAuthority``). A listener on
/// port 0 cannot be read back from the command line, so the test picks the TLS port as
/// ``RealClients/ServeCommandTests/freePort()`` picks the plain one.
///
/// `defer { server.stop() }` right after starting it.
struct TLSServerFixture {
    let authority: TestCertificateAuthority
    let fixture: SSAIFixture
    let server: TestServer
    let tlsPort: Int

    var plainPort: Int { server.port }
    /// The server's standard output and error: its log lines and access log.
    var log: URL { server.log }
    /// `https://localhost:PORT`, the TLS listener under the certificate's name.
    var httpsOrigin: String { "https://localhost:\(tlsPort)" }
    /// `http://127.0.0.1:PORT`, the plain listener.
    var plainOrigin: String { "http://127.0.0.1:\(plainPort)" }
    /// curl arguments that trust the test CA and reach `localhost` on 127.0.0.1 only (no `::1` try).
    var curlTrust: [String] { ["--cacert", authority.caCertificate, "--resolve", "localhost:\(tlsPort):127.0.0.1"] }

    init(every: Int = 20, duration: Int = 8) throws {
        let authority = try TestCertificateAuthority()
        let fixture: SSAIFixture
        do {
            fixture = try SSAIFixture(every: every, duration: duration)
        } catch {
            authority.remove()
            throw error
        }
        do {
            let tlsPort = try RealClients.ServeCommandTests.freePort()
            let config = try String(contentsOf: fixture.config, encoding: .utf8)
            let tls = """
                server:
                  tls:
                    listen: "127.0.0.1:\(tlsPort)"
                    certificate: \(authority.serverCertificateChain)
                    key: \(authority.serverKey)

                """
            guard config.hasPrefix("server:\n") else { throw FixtureError("SSAIFixture's config no longer starts with its server block") }
            try config.replacingOccurrences(of: "server:\n", with: tls).write(to: fixture.config, atomically: true, encoding: .utf8)
            let server = try TestServer(config: fixture.config.path, environment: SSAIFixture.environment)
            // The plain listener answers /healthz (TestServer waited for it); the TLS one accepts.
            var accepting = false
            for _ in 0..<100 where !accepting {
                accepting = LoopbackSocket.connected(port: tlsPort).map { close($0) } != nil
                if !accepting { Thread.sleep(forTimeInterval: 0.1) }
            }
            guard accepting else {
                let text = (try? String(contentsOf: server.log, encoding: .utf8)) ?? ""
                server.stop()
                throw FixtureError("the TLS listener 127.0.0.1:\(tlsPort) did not accept within 10 s; serve's log: \(text.suffix(1500))")
            }
            self.tlsPort = tlsPort
            self.server = server
        } catch {
            fixture.remove()
            authority.remove()
            throw error
        }
        self.authority = authority
        self.fixture = fixture
    }

    /// Stops the server (SIGTERM) and removes its log, the site and the CA.
    func stop() {
        server.stop()
        fixture.remove()
        authority.remove()
    }

    /// The server's log so far.
    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    struct FixtureError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// A command run to its end or to a deadline, its output in files (a pipe read only at the end
/// could fill up and block it).
struct ToolRun {
    var status: Int32
    var stdout: [UInt8]
    var stderr: String
    /// It was still running at the deadline and was killed.
    var timedOut: Bool

    var text: String { String(decoding: stdout, as: UTF8.self) }

    static func run(_ executable: String, _ arguments: [String], stdin: [UInt8]? = nil, timeout: TimeInterval) throws -> ToolRun {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-tool-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("stdout")
        let err = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let outHandle = try FileHandle(forWritingTo: out)
        let errHandle = try FileHandle(forWritingTo: err)
        defer {
            try? outHandle.close()
            try? errHandle.close()
        }
        process.standardOutput = outHandle
        process.standardError = errHandle
        if let stdin {
            let input = directory.appendingPathComponent("stdin")
            try Data(stdin).write(to: input)
            process.standardInput = try FileHandle(forReadingFrom: input)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let timedOut = process.isRunning
        if timedOut {
            process.terminate()
            let grace = Date().addingTimeInterval(2)
            while process.isRunning, Date() < grace { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        return ToolRun(
            status: process.terminationStatus, stdout: Array((try? Data(contentsOf: out)) ?? Data()),
            stderr: String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self), timedOut: timedOut)
    }
}

/// A TCP connection to 127.0.0.1 for bytes no client sends (plain HTTP to the TLS port, a TLS
/// ClientHello to the plain one), read with a deadline so that a server that never answers fails
/// the test instead of hanging it.
enum LoopbackSocket {
    /// What came back and how the exchange ended.
    struct Exchange {
        var received: [UInt8]
        /// The server closed the connection (end of file or reset) before the deadline.
        var closed: Bool
        /// It was reset (ECONNRESET) rather than closed in order.
        var reset: Bool
        /// Seconds from the write to the close, or to the deadline.
        var elapsed: TimeInterval
        var text: String { String(decoding: received, as: UTF8.self) }
    }

    /// A connected socket, or nil when nothing accepts on `port`.
    static func connected(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Sends `bytes` to 127.0.0.1:`port` and reads until the server closes or `timeout` passes.
    static func exchange(port: Int, bytes: [UInt8], timeout: TimeInterval) -> Exchange? {
        guard let fd = connected(port: port) else { return nil }
        defer { close(fd) }
        var slice = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &slice, socklen_t(MemoryLayout<timeval>.size))
        let started = Date()
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { break }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while Date().timeIntervalSince(started) < timeout {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 {
                received += buffer[..<count]
            } else if count == 0 {
                return Exchange(received: received, closed: true, reset: false, elapsed: Date().timeIntervalSince(started))
            } else if errno == ECONNRESET {
                return Exchange(received: received, closed: true, reset: true, elapsed: Date().timeIntervalSince(started))
            } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                return Exchange(received: received, closed: true, reset: false, elapsed: Date().timeIntervalSince(started))
            }
        }
        return Exchange(received: received, closed: false, reset: false, elapsed: Date().timeIntervalSince(started))
    }
}
