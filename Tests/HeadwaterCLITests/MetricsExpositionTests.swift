import Foundation
import Testing

extension RealClients {
    /// `/metrics` of a real `headwater serve`, checked by Prometheus's own `promtool`, and the
    /// shipped alert rules and Grafana dashboard (Config/monitoring) checked against it. promtool
    /// is in Debian's `prometheus` package (Tests/tools/install-test-clients.sh installs it);
    /// without it these tests fail and say so.
    @Suite("metrics exposition", .serialized)
    struct MetricsExpositionTests {
        typealias Serve = ServeCommandTests

        static let monitoring = Serve.repository.appendingPathComponent("Config/monitoring")

        static func promtool() throws -> String {
            try #require(
                Serve.which("promtool"),
                "promtool is required (apt-get install -y prometheus; Tests/tools/install-test-clients.sh installs it)")
        }

        /// The demo channel with ads (sessions, stitched playlists; no scheduled breaks, so the
        /// counts do not depend on the minute the test runs in), and a pull channel whose upstream
        /// refuses connections (so its failures are counted): every kind of series the server has.
        static func withServer<T>(_ body: (_ port: Int) throws -> T) throws -> T {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-metrics-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let deadPort = try Serve.freePort()  // nothing listens there: connections are refused
            let repository = Serve.repository.path
            let config = directory.appendingPathComponent("headwater.yaml")
            try """
                server:
                  public: \(repository)/Public
                  ads: \(repository)/Config/ads.yaml
                channels:
                  demo:
                    source:
                      type: loop
                      package: \(repository)/Public/demo/master.m3u8
                  upstream:
                    source:
                      type: pull
                      url: http://127.0.0.1:\(deadPort)/live/x/master.m3u8
                      timeout_ms: 500
                """.write(to: config, atomically: true, encoding: .utf8)
            return try Serve.withServer(config: config.path) { port, _ in try body(port) }
        }

        /// One scrape: the body of `GET /metrics`.
        static func scrape(_ port: Int) throws -> String {
            let response = Serve.get(port: port, path: "/metrics")
            try #require(response.hasPrefix("HTTP/1.1 200"), "\(response.prefix(300))")
            let body = try #require(response.range(of: "\r\n\r\n"))
            return String(response[body.upperBound...])
        }

        /// Metric families of an exposition, by name: their `# TYPE`.
        static func families(_ exposition: String) -> [String: String] {
            var types: [String: String] = [:]
            for line in exposition.split(separator: "\n") where line.hasPrefix("# TYPE ") {
                let fields = line.split(separator: " ")
                if fields.count == 4 { types[String(fields[2])] = String(fields[3]) }
            }
            return types
        }

        /// The value of the sample written exactly as `series`.
        static func value(_ exposition: String, _ series: String) -> Double? {
            for line in exposition.split(separator: "\n") where line.hasPrefix(series + " ") {
                return Double(line.dropFirst(series.count + 1))
            }
            return nil
        }

        /// Runs `tool` with `arguments` (standard input from `input`, if given): its exit status
        /// and everything it printed, standard output and error together.
        static func run(_ tool: String, _ arguments: [String], input: String? = nil, in directory: URL? = nil) throws
            -> (status: Int32, output: String)
        {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            if let directory { process.currentDirectoryURL = directory }
            var inputFile: URL?
            if let input {
                // A file rather than a pipe: nothing to interleave with reading the output.
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("hw-metrics-\(UUID()).txt")
                try input.write(to: file, atomically: true, encoding: .utf8)
                process.standardInput = try FileHandle(forReadingFrom: file)
                inputFile = file
            }
            defer { if let inputFile { try? FileManager.default.removeItem(at: inputFile) } }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }

        /// Requests of every kind a player, a CDN and an operator send, so the histograms and
        /// labelled series have samples: playlists (identity and gzip), a segment, a 404, a
        /// session and its stitched playlist, health, readiness (503: the pull channel is not
        /// ready), the status API.
        static func serveTraffic(_ port: Int) throws {
            #expect(Serve.get(port: port, path: "/live/demo/master.m3u8").hasPrefix("HTTP/1.1 200"))
            let media = Serve.get(port: port, path: "/live/demo/v1.m3u8")
            #expect(media.hasPrefix("HTTP/1.1 200"))
            let gzip = Serve.exchange(
                port: port,
                request: Array("GET /live/demo/v1.m3u8 HTTP/1.0\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n".utf8))
            #expect(gzip.contains("Content-Encoding: gzip"))
            let segment = try #require(
                SSAIFixture.body(media).split(separator: "\n").last { !$0.hasPrefix("#") && !$0.isEmpty })
            #expect(Serve.get(port: port, path: "/live/demo/\(segment)").hasPrefix("HTTP/1.1 200"))
            #expect(Serve.get(port: port, path: "/live/demo/nosuch.m3u8").hasPrefix("HTTP/1.1 404"))
            let session = try SSAIServeTests.startSession(port: port, query: "device=tv")
            let stitched = try #require(session["v1"], "\(session)")
            #expect(Serve.get(port: port, path: stitched).hasPrefix("HTTP/1.1 200"))
            #expect(Serve.get(port: port, path: "/ssai/demo/v1.m3u8").hasPrefix("HTTP/1.1 400"))
            #expect(Serve.get(port: port, path: "/healthz").hasPrefix("HTTP/1.1 200"))
            #expect(Serve.get(port: port, path: "/readyz").hasPrefix("HTTP/1.1 503"))
            #expect(Serve.get(port: port, path: "/api/status").hasPrefix("HTTP/1.1 200"))
        }

        @Test("promtool check metrics accepts a real scrape after traffic, with nothing to say")
        func promtoolAcceptsTheScrape() throws {
            let promtool = try Self.promtool()
            try Self.withServer { port in
                try Self.serveTraffic(port)
                // The pull channel's upstream refuses connections: wait for a counted failure.
                var exposition = try Self.scrape(port)
                let refused = #"headwater_pull_failures_total{channel="upstream",reason="connection"}"#
                for _ in 0..<50 where (Self.value(exposition, refused) ?? 0) == 0 {
                    Thread.sleep(forTimeInterval: 0.2)
                    exposition = try Self.scrape(port)
                }

                let check = try Self.run(promtool, ["check", "metrics"], input: exposition)
                #expect(check.status == 0, "promtool check metrics: exit \(check.status)")
                #expect(check.output.isEmpty, "promtool check metrics said:\n\(check.output)")

                // Populated: the request histogram, the labelled series, and the new families.
                let families = Self.families(exposition)
                #expect(families["headwater_http_request_duration_seconds"] == "histogram")
                #expect(exposition.contains(#"headwater_http_requests_total{route="/readyz",method="GET",status="503"} 1"#))
                #expect((Self.value(exposition, refused) ?? 0) >= 1, "a refused upstream is counted")
                for reason in ["http_status", "timeout", "malformed_playlist", "stale_playlist", "too_large", "storage"] {
                    #expect(
                        Self.value(exposition, #"headwater_pull_failures_total{channel="upstream",reason="\#(reason)"}"#)
                            == 0, "\(reason) is exported at 0")
                }
                #expect(Self.value(exposition, #"headwater_stalls_total{channel="upstream"}"#) == 0)
                #expect(Self.value(exposition, #"headwater_sessions_started_total{channel="demo"}"#) == 1)
                #expect(Self.value(exposition, #"headwater_stitched_playlists_total{outcome="ok"}"#) == 1)
                #expect(Self.value(exposition, #"headwater_stitched_playlists_total{outcome="bad_request"}"#) == 1)
                #expect(Self.value(exposition, #"headwater_stitched_playlists_total{outcome="forbidden"}"#) == 0)
                #expect(exposition.contains("# HELP headwater_beacons_total "), "beacons are described")
                #expect(exposition.contains(#"headwater_beacons_total{event="complete",outcome="failed"}"#))
                let build = exposition.split(separator: "\n").first { $0.hasPrefix("headwater_build_info{") }
                #expect(build?.contains(#"version=""#) == true && build?.contains(#"swift_version=""#) == true)
                #expect(build.map { $0.hasSuffix(" 1.0") || $0.hasSuffix(" 1") } == true, "\(build ?? "no build info")")
                #expect(Self.value(exposition, "headwater_held_requests") == 0)
                // At least the scrape's own connection is open.
                #expect((Self.value(exposition, "headwater_http_open_connections") ?? 0) >= 1)
                let now = Date().timeIntervalSince1970
                let start = try #require(Self.value(exposition, "process_start_time_seconds"))
                #expect(start > now - 120 && start <= now + 1, "started \(now - start) s ago")
                #expect((Self.value(exposition, "process_resident_memory_bytes") ?? 0) > 1_048_576)
                let openFDs = try #require(Self.value(exposition, "process_open_fds"))
                #expect(openFDs > 3 && openFDs < (Self.value(exposition, "process_max_fds") ?? 0))
                #expect((Self.value(exposition, "process_cpu_seconds_total") ?? 0) > 0)
            }
        }

        @Test("promtool: the shipped alert rules are valid and their unit tests pass")
        func alertRulesPassPromtool() throws {
            let promtool = try Self.promtool()
            let check = try Self.run(promtool, ["check", "rules", "headwater-alerts.yaml"], in: Self.monitoring)
            #expect(check.status == 0, "promtool check rules:\n\(check.output)")
            #expect(check.output.contains("SUCCESS"), "\(check.output)")
            let test = try Self.run(promtool, ["test", "rules", "headwater-alerts.test.yaml"], in: Self.monitoring)
            #expect(test.status == 0, "promtool test rules:\n\(test.output)")
        }

        /// The dashboard's queries, with Grafana's variables replaced by what they stand for.
        static func dashboardExpressions() throws -> [String] {
            let data = try Data(contentsOf: monitoring.appendingPathComponent("grafana-dashboard.json"))
            let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let panels = try #require(dashboard["panels"] as? [[String: Any]])
            var expressions = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
            let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
            for variable in variables {
                guard let query = (variable["query"] as? [String: Any])?["query"] as? String,
                    let inner = query.firstRange(of: "label_values(").map({ query[$0.upperBound...] })
                else { continue }
                // label_values(SELECTOR, label): the selector is a query of its own.
                if let comma = inner.lastIndex(of: ",") { expressions.append(String(inner[..<comma])) }
            }
            return expressions.map {
                $0.replacingOccurrences(of: "$__rate_interval", with: "5m")
                    .replacingOccurrences(of: "$instance", with: ".*").replacingOccurrences(of: "$channel", with: ".*")
            }
        }

        /// Every `headwater_…` and `process_…` name in `text`.
        static func metricNames(in text: String) -> Set<String> {
            Set(text.matches(of: /\b(?:headwater|process)_[a-z0-9_]+/).map { String($0.output) })
        }

        @Test("the dashboard's queries parse, and every metric the dashboard and the rules name is in a real scrape")
        func dashboardAndRulesNameOnlyExportedMetrics() throws {
            let promtool = try Self.promtool()
            let expressions = try Self.dashboardExpressions()
            #expect(expressions.count >= 20)
            // promtool has no "check expression": the queries as recording rules are checked for syntax.
            let rules = "groups:\n  - name: dashboard\n    rules:\n"
                + expressions.enumerated().map { index, expression in
                    "      - record: dashboard:query\(index)\n        expr: '\(expression.replacingOccurrences(of: "'", with: "''"))'\n"
                }.joined()
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("hw-dashboard-\(UUID()).yaml")
            try rules.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let check = try Self.run(promtool, ["check", "rules", file.path])
            #expect(check.status == 0, "dashboard queries:\n\(check.output)")

            let alerts = try String(contentsOf: Self.monitoring.appendingPathComponent("headwater-alerts.yaml"), encoding: .utf8)
            let named = Self.metricNames(in: expressions.joined(separator: "\n") + "\n" + alerts)
            try Self.withServer { port in
                try Self.serveTraffic(port)
                let families = Self.families(try Self.scrape(port))
                for name in named.sorted() {
                    var family = name
                    for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                        let base = String(name.dropLast(suffix.count))
                        if families[base] == "histogram" { family = base }
                    }
                    #expect(families[family] != nil, "\(name) is named by the dashboard or the rules but not exported")
                }
                // What an operator is paged for is all there.
                for needed in [
                    "headwater_channel_ready", "headwater_channel_live_edge_age_seconds", "headwater_stalls_total",
                    "headwater_ingest_rejected_total", "headwater_http_requests_total", "headwater_beacons_total",
                    "headwater_config_reloads_total",
                ] {
                    #expect(named.contains(needed), "\(needed) is in neither the dashboard nor the rules")
                }
            }
        }
    }
}
