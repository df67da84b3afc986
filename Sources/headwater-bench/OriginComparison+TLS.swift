import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeadwaterRuntime
import NIOCore
import NIOHTTP1
import NIOSSL

#if canImport(Glibc)
import Glibc
#endif

/// The TLS and HTTP/2 rows: both servers present the same ECDSA P-256 certificate on a TLS port
/// (TLS 1.3; h2 and http/1.1 by ALPN). wrk (no ALPN: HTTP/1.1) measures keep-alive connections and
/// a reconnect per request (resumed handshakes); `tls-handshake-client.c` full handshakes; h2load
/// (ALPN h2) HTTP/2 with 10 streams per connection.
extension OriginComparison {
    /// h2load's shape: 64 connections (`--quick`: 8), each with up to 10 requests in flight.
    ///
    /// Why fewer in `--quick`: CI runs it against the debug server, and a debug Headwater pinned to
    /// one event loop, with more than about 20 h2 connections, spends seconds inside one
    /// connection's read (NIOSSLHandler's read loop through the HTTP/2 handler, activating a stream
    /// per request) while later connections' ClientHellos wait unread; h2load has no handshake
    /// timeout and never ends. The release server serves 64.
    var h2Clients: Int { settings.quick ? 8 : 64 }
    static let h2Streams = 10

    // MARK: Checks

    /// Before the TLS rows: what each server negotiates (`openssl s_client`, the same OpenSSL
    /// defaults as wrk's), and that each answers the rows' paths over HTTP/1.1 and over h2 with the
    /// right bytes (AsyncHTTPClient, trusting the bench's certificate).
    func checkTLS() async throws {
        guard let certificate = fixture.tls?.certificate else { throw ValidationError("no TLS certificate") }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(certificate.path)
        tls.certificateVerification = .noHostnameVerification  // an IP address certificate; the chain is still checked
        var http1 = HTTPClient.Configuration(tlsConfiguration: tls)
        http1.httpVersion = .http1Only
        let clients = (
            http1: HTTPClient(eventLoopGroupProvider: .singleton, configuration: http1),
            http2: HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        )
        tlsClients = clients

        for (name, port) in [("Headwater", headwaterTLSPort), ("nginx", nginxTLSPort)] {
            print("tls:       \(pad(name, 10)) \(negotiated(port: port))")
        }
        for (name, base) in [("Headwater", headwaterTLSBase), ("nginx", nginxTLSBase)] {
            for (client, version) in [(clients.http1, HTTPVersion.http1_1), (clients.http2, HTTPVersion.http2)] {
                func expect(_ path: String, gzip: Bool, body expected: [UInt8]? = nil) async throws {
                    var request = HTTPClientRequest(url: base + path)
                    if gzip { request.headers.add(name: "Accept-Encoding", value: "gzip") }
                    let response = try await client.execute(request, timeout: .seconds(10))
                    let received = Array(try await response.body.collect(upTo: 16 << 20).readableBytesView)
                    let what = "\(name) GET \(base)\(path) (\(version))"
                    guard response.status == .ok else { throw ValidationError("\(what): \(response.status.code)") }
                    guard response.version == version else { throw ValidationError("\(what): answered over \(response.version)") }
                    guard (response.headers.first(name: "content-encoding") == "gzip") == gzip else {
                        throw ValidationError("\(what): Content-Encoding \(response.headers.first(name: "content-encoding") ?? "none")")
                    }
                    let plain = gzip ? Gzip.decompress(received) : received
                    if let expected, plain != expected { throw ValidationError("\(what): not the snapshot's bytes") }
                    if expected == nil, plain?.starts(with: Array("#EXTM3U".utf8)) != true { throw ValidationError("\(what): not a playlist") }
                }
                let isNginx = name == "nginx"
                try await expect(Self.sharedPath, gzip: true, body: isNginx ? snapshot.shared : nil)
                if selected(.tlsSegment) { try await expect(OriginFixture.segmentPath, gzip: false, body: snapshot.segment) }
                if selected(.h2Stitched), let first = snapshot.stitchedPaths.first {
                    try await expect(isNginx ? "/stitched/0.m3u8" : first, gzip: true, body: isNginx ? snapshot.stitched[0] : nil)
                }
            }
        }
        print("           both answer over TLS with HTTP/1.1 and h2 (ALPN), gzip where expected; nginx serves the snapshot's bytes")
    }

    /// What `openssl s_client` negotiates with 127.0.0.1:`port` offering h2 and http/1.1: once with
    /// OpenSSL's default TLS 1.3 suites (AES-256-GCM first), as wrk's client does, and once with
    /// h2load's (AES-128-GCM first). A server that follows the client's order picks each one's first.
    private func negotiated(port: Int) -> String {
        guard let openssl = tools.openssl else { return "no openssl" }
        func probe(_ extra: [String]) -> String {
            guard let text = BenchTools.output(of: openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-alpn", "h2,http/1.1"] + extra)
            else { return "openssl s_client failed" }
            var found: [String] = []
            for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                if line.hasPrefix("New, ") { found.append(line.dropFirst("New, ".count).replacingOccurrences(of: "Cipher is ", with: "")) }
                if line.hasPrefix("Server Temp Key:") { found.append(line.dropFirst("Server Temp Key: ".count).prefix { $0 != "," } + " key exchange") }
                if line.hasPrefix("Peer signature type:") { found.append(line.dropFirst("Peer signature type: ".count) + " signature") }
                if line.hasPrefix("ALPN protocol:") { found.append("ALPN " + line.dropFirst("ALPN protocol: ".count)) }
            }
            return found.joined(separator: ", ")
        }
        let h2loadSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256"
        let h2loadCipher = probe(["-ciphersuites", h2loadSuites]).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasPrefix("TLS_") }
        return probe([]) + "; with h2load's suites: " + (h2loadCipher ?? "?")
    }

    // MARK: Contenders

    /// Headwater's and nginx's TLS ports at `path`; with `environment`, the `HEADWATER_PATHS` file of
    /// each.
    private func tlsContenders(path: String, environment: (headwater: String, nginx: String)? = nil) throws -> [Contender] {
        guard let headwater, let nginx else { throw ValidationError("the servers are not running") }
        return [
            Contender(
                name: "headwater", url: headwaterTLSBase + path, server: headwater,
                environment: { environment.map { ["HEADWATER_PATHS": $0.headwater] } ?? [:] }),
            Contender(
                name: "nginx", url: nginxTLSBase + path, server: nginx,
                environment: { environment.map { ["HEADWATER_PATHS": $0.nginx] } ?? [:] }),
        ]
    }

    private func h2load() throws -> H2LoadRunner {
        guard let h2load = tools.h2load else { throw ValidationError("h2load is not installed: bash Tests/tools/install-bench-tools.sh") }
        return H2LoadRunner(
            h2load: h2load, taskset: tools.taskset, directory: fixture.directory, clients: h2Clients, streams: Self.h2Streams)
    }

    /// Body bytes per response (h2load's DATA; the whole response for wrk) at most `high`.
    static func bodyCheck(_ high: Double, _ what: String) -> (WrkResult) -> String? {
        { result in
            let bytes = result.bodyBytesPerResponse
            return bytes > 0 && bytes <= high ? nil : "\(format(bytes, decimals: 0)) body bytes per response; expected \(what) (≤ \(Int(high)))"
        }
    }

    // MARK: TLS, HTTP/1.1 (wrk)

    /// The shared gzip playlist over TLS keep-alive connections: the record layer's cost per
    /// request on top of the plain row's.
    func tlsSharedRow() throws {
        let runner = WrkRunner(wrk: tools.wrk, taskset: tools.taskset, script: tools.wrkScript, connections: 64)
        let (medians, failed) = try compare(
            "TLS 1.3: shared \(Self.sharedPath), gzip, 64 keep-alive connections (HTTP/1.1)", try tlsContenders(path: Self.sharedPath),
            load: runner, headers: [Self.gzipHeader],
            check: Self.bytesCheck(0, Double(snapshot.shared.count), "gzip, under the identity size"))
        rows.append(row("TLS: shared playlist, gzip, keep-alive, c64", (medians[0], medians[1], failed), .requests, targets: Targets()))
    }

    /// A new connection per request, as the issue first asked for it: wrk sends `Connection: close`,
    /// both servers answer and close, and wrk connects again for the next request. wrk offers the
    /// session of the connection before, and both servers issue tickets, so after each connection's
    /// first handshake these are TLS 1.3 resumptions (PSK with X25519, no certificate or signature):
    /// the cost of a client that reconnects. ``tlsHandshakesRow()`` has full ones.
    func tlsReconnectsRow() throws {
        let runner = WrkRunner(wrk: tools.wrk, taskset: tools.taskset, script: tools.wrkScript, connections: 64)
        let headers = ["Connection: close", Self.gzipHeader]
        try checkReconnects("wrk " + headers.map { "-H '\($0)'" }.joined(separator: " ")) { url, server in
            try runner.run(url: url, seconds: 1, headers: headers, environment: [:], serverCPU: server.cpuSeconds)
        }
        let (medians, failed) = try compare(
            "TLS 1.3 reconnects: shared \(Self.sharedPath), gzip, Connection: close (a new connection per request, sessions resumed), 64 connections",
            try tlsContenders(path: Self.sharedPath), load: runner, headers: headers,
            check: Self.bytesCheck(0, Double(snapshot.shared.count) + 512, "gzip"))
        print("  (req/s = connections per second: one request per connection, each a TLS 1.3 resumption after its first)")
        rows.append(
            row("TLS: reconnect per request, resumed (wrk, Connection: close), c64", (medians[0], medians[1], failed), .requests,
                targets: Targets()))
    }

    /// Full TLS 1.3 handshakes, one per request, 64 at once (`tls-handshake-client.c`: a new
    /// connection, no session offered, the reconnect row's request): what each server spends on a
    /// handshake (X25519 and an ECDSA P-256 signature) and one small response. The client verifies a
    /// signature per handshake, more work than the server's signing, so its core may set the rate:
    /// then read the CPU per handshake.
    func tlsHandshakesRow() throws {
        guard let cc = tools.cc else { throw ValidationError("no C compiler for the handshake client: bash Tests/tools/install-bench-tools.sh") }
        let binary = try BenchTools.compile(
            cc: cc, source: tools.handshakeClientSource, into: fixture.directory, libraries: ["-lssl", "-lcrypto", "-lpthread"])
        let clients = HandshakeClientRunner(binary: binary, taskset: tools.taskset, connections: 64)
        let headers = [Self.gzipHeader]
        try checkReconnects("tls-handshake-client", fullHandshakes: true) { url, server in
            try clients.run(url: url, seconds: 1, headers: headers, environment: [:], serverCPU: server.cpuSeconds)
        }
        let (medians, failed) = try compare(
            "TLS 1.3 full handshakes: shared \(Self.sharedPath), gzip, a new connection and a full handshake per request, 64 connections",
            try tlsContenders(path: Self.sharedPath), load: clients, headers: headers,
            check: Self.bytesCheck(0, Double(snapshot.shared.count) + 512, "gzip"))
        print("  (req/s = full handshakes per second: one request per connection, no session offered)")
        rows.append(row("TLS: full handshakes, c64", (medians[0], medians[1], failed), .requests, targets: Targets()))
    }

    /// A 1 s run of `run` on each server's TLS port and on nginx's logged check port: every request
    /// must have had a TCP connection of its own (the kernel's `PassiveOpens`, machine-wide, grows by
    /// at least 0.9 × the requests), and on the check port nginx's log says, per request, whether
    /// its connection carried only it and whether its handshake was full or resumed.
    private func checkReconnects(
        _ client: String, fullHandshakes: Bool = false, _ run: (String, ServerProcess) throws -> WrkResult
    ) throws {
        guard let headwater, let nginx else { throw ValidationError("the servers are not running") }
        print("")
        print("TLS reconnect check: \(client) for 1 s on each server's TLS port and on nginx's logged check port")
        try? FileManager.default.removeItem(at: fixture.nginxTLSCheckLog)
        kill(nginx.pid, SIGUSR1)  // reopen the check log, empty
        usleep(200_000)
        for (name, url, server) in [
            ("headwater", headwaterTLSBase + Self.sharedPath, headwater), ("nginx", nginxTLSBase + Self.sharedPath, nginx),
            ("nginx check", "https://127.0.0.1:\(nginxTLSCheckPort)" + Self.sharedPath, nginx),
        ] {
            let before = try Self.passiveOpens()
            let result = try run(url, server)
            let connections = try Self.passiveOpens() - before
            var line = "  \(pad(name, 12)) \(result.requests) requests, \(connections) TCP connections accepted (PassiveOpens, machine-wide)"
            if result.failures > 0 { problems.append("TLS reconnect check (\(client)), \(name): \(result.failures) errors") }
            if Double(connections) < Double(result.requests) * 0.9 {
                problems.append(
                    "TLS reconnect check (\(client)), \(name): \(connections) connections for \(result.requests) requests: connections were kept alive")
            }
            if name == "nginx check" {
                usleep(200_000)
                let log = (try? String(contentsOf: fixture.nginxTLSCheckLog, encoding: .utf8)) ?? ""
                let fields: [[Substring]] = log.split(separator: "\n").map { $0.split(separator: " ") }
                let entries = fields.filter { $0.count == 5 && $0[2] == "TLSv1.3" }
                let alone = entries.filter { $0[1] == "1" }.count
                let full = entries.filter { $0[3] == "." }.count
                line += "; its log: \(entries.count) TLS 1.3 requests, \(alone) alone on their connection, \(full) on a full handshake, "
                    + "\(entries.count - full) on a resumed one"
                if fullHandshakes, full < entries.count {
                    problems.append("TLS reconnect check (\(client)), nginx log: \(entries.count - full) of \(entries.count) handshakes resumed")
                }
                if entries.isEmpty || alone < entries.count {
                    problems.append("TLS reconnect check (\(client)), nginx log: \(alone) of \(entries.count) requests alone on their connection")
                }
            }
            print(line)
        }
    }

    /// The kernel's count of TCP connections accepted so far (`Tcp: PassiveOpens` in /proc/net/snmp).
    static func passiveOpens() throws -> Int {
        let lines = try String(contentsOfFile: "/proc/net/snmp", encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("Tcp:") }
        guard lines.count >= 2 else { throw ValidationError("no Tcp lines in /proc/net/snmp") }
        let names = lines[0].split(separator: " ")
        let values = lines[1].split(separator: " ")
        guard let index = names.firstIndex(of: "PassiveOpens"), index < values.count, let value = Int(values[index]) else {
            throw ValidationError("no PassiveOpens in /proc/net/snmp")
        }
        return value
    }

    /// The 1 MiB segment over TLS keep-alive connections: encryption per MiB (no sendfile: neither
    /// server uses kernel TLS).
    func tlsSegmentRow() throws {
        let size = Double(snapshot.segment.count)
        let runner = WrkRunner(wrk: tools.wrk, taskset: tools.taskset, script: tools.wrkScript, connections: settings.byteConnections)
        let (medians, failed) = try compare(
            "TLS 1.3: segment \(OriginFixture.segmentPath) (1 MiB), \(settings.byteConnections) keep-alive connections (HTTP/1.1)",
            try tlsContenders(path: OriginFixture.segmentPath), load: runner,
            check: Self.segmentBytesCheck(size, connections: settings.byteConnections))
        rows.append(row("TLS: 1 MiB segment, c\(settings.byteConnections)", (medians[0], medians[1], failed), .bytes, targets: Targets()))
    }

    // MARK: HTTP/2 (h2load)

    /// The shared gzip playlist over h2: 64 connections × 10 streams.
    func h2SharedRow() throws {
        let (medians, failed) = try compare(
            "HTTP/2 (TLS, ALPN h2): shared \(Self.sharedPath), gzip, \(h2Clients) connections × \(Self.h2Streams) streams",
            try tlsContenders(path: Self.sharedPath), load: try h2load(), headers: ["accept-encoding: gzip"],
            check: Self.bodyCheck(Double(snapshot.sharedGzip.count) * 1.5, "gzip bodies"))
        rows.append(
            row("h2: shared playlist, gzip, c\(h2Clients) m\(Self.h2Streams)", (medians[0], medians[1], failed), .requests,
                targets: Targets()))
    }

    /// Stitched playlists over h2: every connection requests the sessions' playlists in order
    /// (`h2load -i`, the same list for each), gzip; nginx gzips each snapshot on the fly.
    func h2StitchedRow() throws {
        let headwaterList = fixture.directory.appendingPathComponent("stitched-headwater.txt")
        let nginxList = fixture.directory.appendingPathComponent("stitched-nginx.txt")
        try (snapshot.stitchedPaths.joined(separator: "\n") + "\n").write(to: headwaterList, atomically: true, encoding: .utf8)
        try (snapshot.stitchedPaths.indices.map { "/stitched/\($0).m3u8" }.joined(separator: "\n") + "\n")
            .write(to: nginxList, atomically: true, encoding: .utf8)
        // As the HTTP/1.1 row: a gzip body stays under the smallest identity playlist (plus a
        // break's growth); an identity one would not.
        let smallest = Double((snapshot.stitched.map(\.count).min() ?? 0) + 300)
        var contenders = try tlsContenders(path: "/", environment: (headwaterList.path, nginxList.path))
        contenders[0].note = "h2load -i: the \(snapshot.stitchedPaths.count) sessions' /ssai/demo/v1.m3u8?session=… in order, per connection"
        contenders[1].note = "h2load -i: /stitched/<i>.m3u8, the same sessions' snapshots"
        let (medians, failed) = try compare(
            "HTTP/2 (TLS, ALPN h2): stitched playlists, \(snapshot.stitchedPaths.count) sessions, gzip, "
                + "\(h2Clients) connections × \(Self.h2Streams) streams",
            contenders, load: try h2load(), headers: ["accept-encoding: gzip"], check: Self.bodyCheck(smallest, "gzip bodies"))
        rows.append(
            row("h2: stitched playlists, gzip, \(snapshot.stitchedPaths.count) sessions, c\(h2Clients) m\(Self.h2Streams)",
                (medians[0], medians[1], failed), .requests, targets: Targets()))
    }
}
