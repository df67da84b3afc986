import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The temporary directory `headwater-bench all` runs in: both servers' configuration, and the
/// files both serve. It mirrors the repository's layout, so that the repository's own
/// `Config/ads.yaml` (linked, unchanged) finds its creatives under `../Public/` inside
/// `server.public`:
///
///     Config/headwater.yaml       generated; server.public = ../Public, server.ads = ads.yaml
///     Config/ads.yaml             → <repository>/Config/ads.yaml
///     Public/ads, Public/slate, … → <repository>/Public/… (every entry, linked)
///     Public/live/demo/…          Headwater's shared playlists, snapshot (identity and .gz)
///     Public/stitched/<i>.m3u8    stitched playlists of distinct sessions, snapshot (identity)
///     Public/bench/…              segment-1m.ts, file-100m.bin, live/v1/<msn>.ts
///     tls-cert.pem, tls-key.pem   the ECDSA P-256 certificate both servers present (TLS rows)
///     state/                      Headwater's server.state (the pushed segment)
///     floor-server, floor-response.bin
///     nginx.conf, nginx-*.log, nginx.pid, nginx-temp/, headwater.log
struct OriginFixture {
    let directory: URL
    let repository: URL
    /// Whether Headwater's configuration has the encrypted channel (the `key` workload): left out
    /// otherwise, so a build from before encryption can run the other workloads.
    var encryptedChannel = false
    /// Whether Headwater's configuration has the push channel ``pushChannel`` (the pushed-segment
    /// row). Without a push, it is not live, so `/readyz` answers 503 until the row pushes.
    var pushChannel = false
    /// Headwater's TLS listener (`server.tls`) for the TLS and HTTP/2 rows: left out when none is
    /// selected, so a build from before TLS can run the others.
    var tls: TLSListener?

    struct TLSListener {
        var port: Int
        var certificate: URL
        var key: URL
    }

    var config: URL { directory.appendingPathComponent("Config") }
    var publicDirectory: URL { directory.appendingPathComponent("Public") }
    var headwaterConfig: URL { config.appendingPathComponent("headwater.yaml") }
    var nginxConfig: URL { directory.appendingPathComponent("nginx.conf") }
    var stateDirectory: URL { directory.appendingPathComponent("state") }
    /// nginx's log of the TLS check listener (never of a measured run).
    var nginxTLSCheckLog: URL { directory.appendingPathComponent("nginx-tls-check.log") }

    static let segmentPath = "/bench/segment-1m.ts"
    static let segmentBytes = 1 << 20
    static let rangeFilePath = "/bench/file-100m.bin"
    /// The encrypted channel's one key (`rotate_every: 0`): Headwater answers it after checking a key
    /// token; nginx serves the same 16 bytes as a static file at the same path.
    static let keyPath = "/keys/secure/0.key"
    /// Secrets of the bench's encrypted channel (not secret: the bench's own).
    static let keySecret = String(repeating: "5e", count: 32)
    static let keyTokenSecret = "headwater-bench-key-token-secret-0123456789"
    /// The push channel: one rendition, `v1`, fed one 1 MiB segment by the bench.
    static let pushChannel = "bulk"
    /// Its ingest token's variable and value (the bench's own, not secret).
    static let ingestTokenVariable = "HEADWATER_BENCH_INGEST_TOKEN"
    static let ingestToken = "headwater-bench-ingest-token-0123456789"
    /// Where nginx serves the live-URL row's segments: the bytes Headwater served at those URLs.
    static let liveSegmentDirectory = "/bench/live/v1"

    /// Creates the directory (mode 0755, so nginx's workers, which run as `nobody` when the bench is
    /// root, can read it), the links, the TLS certificate (with `openssl`, when `tlsPort` is given)
    /// and Headwater's configuration.
    static func create(
        repository: URL, encryptedChannel: Bool, pushChannel: Bool, tlsPort: Int?, openssl: String?
    ) throws -> OriginFixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("headwater-bench-all-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        var fixture = OriginFixture(
            directory: directory, repository: repository, encryptedChannel: encryptedChannel, pushChannel: pushChannel)
        BenchCleanup.shared.track(directory: directory.path)
        let manager = FileManager.default
        let open: [FileAttributeKey: Any] = [.posixPermissions: 0o755]
        for folder in [
            directory, fixture.config, fixture.publicDirectory, directory.appendingPathComponent("nginx-temp"), fixture.stateDirectory,
        ] {
            try manager.createDirectory(at: folder, withIntermediateDirectories: true, attributes: open)
        }
        if let tlsPort {
            guard let openssl else { throw ValidationError("openssl is needed for the TLS rows: apt-get install openssl") }
            fixture.tls = try makeCertificate(in: directory, openssl: openssl, port: tlsPort)
        }
        try manager.createSymbolicLink(
            at: fixture.config.appendingPathComponent("ads.yaml"),
            withDestinationURL: repository.appendingPathComponent("Config/ads.yaml"))
        let ours: Set<String> = ["live", "stitched", "bench"]
        let repositoryPublic = repository.appendingPathComponent("Public")
        for entry in try manager.contentsOfDirectory(atPath: repositoryPublic.path) where !ours.contains(entry) {
            try manager.createSymbolicLink(
                at: fixture.publicDirectory.appendingPathComponent(entry),
                withDestinationURL: repositoryPublic.appendingPathComponent(entry))
        }
        try fixture.headwaterYAML.write(to: fixture.headwaterConfig, atomically: true, encoding: .utf8)
        return fixture
    }

    func remove() {
        BenchCleanup.shared.remove(directory: directory.path)
    }

    /// Headwater's configuration: the demo loop channel with a 30 s window and a 20 s break every
    /// minute, ads from the repository's `Config/ads.yaml`; the TLS listener, the encrypted channel
    /// and the push channel when their rows run. `--listen` gives the plain address.
    var headwaterYAML: String {
        func quoted(_ path: String) -> String {
            "\"" + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        let package = quoted(repository.appendingPathComponent("Public/demo/master.m3u8").path)
        var yaml = """
            # Generated by headwater-bench all.
            server:
              listen: 127.0.0.1:0
              public: \(quoted(publicDirectory.path))
              ads: \(quoted(config.appendingPathComponent("ads.yaml").path))
              state: \(quoted(stateDirectory.path))
              limits:
                # Every load client here is 127.0.0.1, like a CDN's few edge addresses: the
                # per-address cap (256 by default) would refuse the c256 rows' extra connections.
                max_connections_per_client: 0

            """
        if let tls {
            yaml += """
                  tls:
                    listen: 127.0.0.1:\(tls.port)
                    certificate: \(quoted(tls.certificate.path))
                    key: \(quoted(tls.key.path))

                """
        }
        yaml += """
            channels:
              demo:
                source:
                  type: loop
                  package: \(package)
                window: 30
                ads:
                  schedule: {every: 60, duration: 20}

            """
        if encryptedChannel {
            yaml += """
                  secure:
                    source:
                      type: loop
                      package: \(package)
                    window: 30
                    encryption: {method: AES-128, rotate_every: 0, key_access: token}

                """
        }
        if pushChannel {
            // `stall: none`: the one pushed segment stays listed (and fetchable) however long the
            // other rows take; slate or gaps would push it out of the 30 s window.
            yaml += """
                  \(Self.pushChannel):
                    source:
                      type: push
                      token_env: \(Self.ingestTokenVariable)
                      target_duration: 6
                    window: 30
                    stall: none

                """
        }
        return yaml
    }

    /// `openssl req`: a self-signed ECDSA P-256 certificate for 127.0.0.1 (both servers present it),
    /// valid for a week, made at every run so that nothing secret is kept in the repository.
    private static func makeCertificate(in directory: URL, openssl: String, port: Int) throws -> TLSListener {
        let certificate = directory.appendingPathComponent("tls-cert.pem")
        let key = directory.appendingPathComponent("tls-key.pem")
        let arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "7",
            "-subj", "/CN=headwater-bench", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key.path, "-out", certificate.path,
        ]
        guard BenchTools.output(of: openssl, arguments) != nil, FileManager.default.fileExists(atPath: key.path) else {
            throw ValidationError("openssl \(arguments.joined(separator: " ")) failed")
        }
        return TLSListener(port: port, certificate: certificate, key: key)
    }

    /// nginx with one worker (Headwater pinned to one CPU runs one event loop), logs and temporary
    /// files in the directory; `modules` is `nginx -V`'s output, to leave out the temp paths of
    /// modules it was built without. With `tls`: the same files on a TLS 1.3 port with HTTP/2 by
    /// ALPN (nginx 1.22's `listen … ssl http2`; `http2 on` came in 1.25.1), and a second TLS port,
    /// never measured, whose access log says whether each request had a connection and a full
    /// handshake of its own (the handshake row's check).
    func nginxConf(port: Int, tls: (port: Int, checkPort: Int)?, modules: String) -> String {
        let temp = directory.appendingPathComponent("nginx-temp").path
        let tempPaths = [("client_body", ""), ("proxy", "proxy"), ("fastcgi", "fastcgi"), ("uwsgi", "uwsgi"), ("scgi", "scgi")]
            .filter { $0.1.isEmpty || !modules.contains("--without-http_\($0.1)_module") }
            .map { "    \($0.0)_temp_path \(temp)/\($0.0);" }
            .joined(separator: "\n")
        return """
            # Generated by headwater-bench all.
            worker_processes 1;
            worker_rlimit_nofile 20000;
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/nginx-error.log warn;
            events { worker_connections 20000; }
            http {
                types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; application/octet-stream bin; }
                default_type application/octet-stream;
                access_log /dev/null;
                sendfile on;
                tcp_nopush on;
                keepalive_timeout 75;
                keepalive_requests 10000000;
            \(tempPaths)
                server {
                    listen 127.0.0.1:\(port);
            \(content)
                }
            \(tls.map { tlsServers(port: $0.port, checkPort: $0.checkPort) } ?? "")
            }

            """
    }

    /// What every nginx server block serves: the public directory, the shared playlists with
    /// `gzip_static`, the stitched ones gzipped on the fly.
    private var content: String {
        """
                root \(publicDirectory.path);
                location /live/ {
                    gzip_static on;
                    gzip_vary on;
                }
                location /stitched/ {
                    gzip on;
                    gzip_comp_level 1;
                    gzip_min_length 0;
                    gzip_types application/vnd.apple.mpegurl;
                    gzip_vary on;
                }
        """
    }

    /// The TLS server blocks: TLS 1.3 only (the version Headwater negotiates with wrk and h2load),
    /// the bench's certificate, nginx's defaults otherwise (session tickets on, no session cache, no
    /// kTLS: `sendfile` does not apply to TLS connections).
    private func tlsServers(port: Int, checkPort: Int) -> String {
        guard let tls else { return "" }
        let certificate = """
                    ssl_certificate \(tls.certificate.path);
                    ssl_certificate_key \(tls.key.path);
                    ssl_protocols TLSv1.3;
            """
        return """
                server {
                    listen 127.0.0.1:\(port) ssl http2;
            \(certificate)
            \(content)
                }
                log_format tlscheck '$connection $connection_requests $ssl_protocol $ssl_session_reused $status';
                server {
                    listen 127.0.0.1:\(checkPort) ssl;
            \(certificate)
                    access_log \(nginxTLSCheckLog.path) tlscheck;
                    root \(publicDirectory.path);
                }
            """
    }

    // MARK: Files

    func write(_ bytes: [UInt8], to path: String) throws {
        let url = publicDirectory.appendingPathComponent(String(path.drop { $0 == "/" }))
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try Data(bytes).write(to: url)
    }

    /// `segment-1m.ts`: the demo's v1 segments, one after another, cut at exactly 1 MiB.
    func writeSegment() throws -> [UInt8] {
        let folder = repository.appendingPathComponent("Public/demo/v1")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".ts") }.sorted()
        guard !names.isEmpty else { throw ValidationError("no .ts segments in \(folder.path)") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.segmentBytes)
        while bytes.count < Self.segmentBytes {
            for name in names where bytes.count < Self.segmentBytes {
                bytes += try Data(contentsOf: folder.appendingPathComponent(name))
            }
        }
        bytes.removeSubrange(Self.segmentBytes...)
        try write(bytes, to: Self.segmentPath)
        return bytes
    }

    /// The range file: `mebibytes` MiB of seeded pseudo-random bytes, written 1 MiB at a time.
    func writeRangeFile(mebibytes: Int) throws {
        let url = publicDirectory.appendingPathComponent(String(Self.rangeFilePath.dropFirst()))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw ValidationError("cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var generator = SplitMix64(seed: 188)
        var chunk = [UInt64](repeating: 0, count: (1 << 20) / 8)
        for _ in 0..<mebibytes {
            for index in chunk.indices { chunk[index] = generator.next() }
            try handle.write(contentsOf: chunk.withUnsafeBytes { Data($0) })
        }
    }

    /// Bytes `first`…`last` of the range file, read back for checks.
    func rangeFileBytes(_ first: Int, _ last: Int) throws -> [UInt8] {
        let url = publicDirectory.appendingPathComponent(String(Self.rangeFilePath.dropFirst()))
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(first))
        return Array(try handle.read(upToCount: last - first + 1) ?? Data())
    }
}
