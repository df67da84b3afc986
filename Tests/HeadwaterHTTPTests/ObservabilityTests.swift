import AsyncHTTPClient
import Foundation
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterTesting
import Logging
import NIOCore
import NIOHTTP1
import Testing

/// `/metrics`, `/readyz`, `/healthz` and the access log, over a real socket. Each test has its
/// own ``OriginMetrics`` (a fresh registry), so the counts are exact whatever runs in parallel.
@Suite("Observability")
struct ObservabilityTests {
    // MARK: - Helpers

    private static func withClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
        try await withHTTPClient(body)
    }

    private static func get(
        _ client: HTTPClient,
        _ port: Int,
        _ path: String,
        headers: [(String, String)] = []
    ) async throws -> (HTTPClientResponse, [UInt8]) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 16 << 20)
        return (response, Array(body.readableBytesView))
    }

    /// Scrapes `/metrics` until `ready` holds for its samples (a request is counted just after its
    /// last byte is written, so the scrape can overtake the previous request's bookkeeping).
    private static func scrape(
        _ client: HTTPClient,
        _ port: Int,
        until ready: (Exposition) -> Bool = { _ in true }
    ) async throws -> (HTTPClientResponse, Exposition) {
        for _ in 0..<200 {
            let (response, body) = try await get(client, port, "/metrics")
            let exposition = Exposition(String(decoding: body, as: UTF8.self))
            if ready(exposition) { return (response, exposition) }
            try await Task.sleep(for: .milliseconds(20))
        }
        let (response, body) = try await get(client, port, "/metrics")
        return (response, Exposition(String(decoding: body, as: UTF8.self)))
    }

    static let mediaRoute = "/live/{channel}/{rendition}.m3u8"
    static let segmentRoute = "/live/{channel}/{rendition}/{segment}"

    // MARK: - /metrics

    @Test func metricsCountRequestsByRouteTemplateAndStatus() async throws {
        try await withServer { port in
            try await Self.withClient { client in
                var mediaBytes = 0
                var segmentBytes = 0
                for _ in 0..<3 {
                    let (response, body) = try await Self.get(client, port, "/live/demo/v1.m3u8")
                    #expect(response.status == .ok)
                    mediaBytes += body.count
                }
                let (gzipped, gzipBody) = try await Self.get(
                    client, port, "/live/demo/v1.m3u8", headers: [("Accept-Encoding", "gzip")])
                #expect(gzipped.headers.first(name: "content-encoding") == "gzip")
                mediaBytes += gzipBody.count
                // Another channel: same route, another URI, a 404.
                let (missing, missingBody) = try await Self.get(client, port, "/live/nosuch/v1.m3u8?x=secret-query")
                #expect(missing.status == .notFound)
                mediaBytes += missingBody.count
                for name in ["seg99.ts", "seg100.ts"] {
                    let (response, body) = try await Self.get(client, port, "/live/demo/v1/\(name)")
                    #expect(response.status == .notFound)
                    segmentBytes += body.count
                }
                _ = try await Self.get(client, port, "/healthz")

                // 8 requests before the scrape (scrapes are counted too, under their own route).
                let (response, metrics) = try await Self.scrape(client, port) {
                    $0.sum("headwater_http_requests_total", excludingRoute: "/metrics") == 8
                }
                #expect(response.status == .ok)
                #expect(response.headers.first(name: "content-type") == "text/plain; version=0.0.4; charset=utf-8")
                #expect(response.headers.first(name: "cache-control") == "no-store")

                let requests = "headwater_http_requests_total"
                #expect(metrics[requests, ["route": Self.mediaRoute, "method": "GET", "status": "200"]] == 4)
                #expect(metrics[requests, ["route": Self.mediaRoute, "method": "GET", "status": "404"]] == 1)
                #expect(metrics[requests, ["route": Self.segmentRoute, "method": "GET", "status": "404"]] == 2)
                #expect(metrics[requests, ["route": "/healthz", "method": "GET", "status": "200"]] == 1)
                let series = metrics.samples(requests).filter { $0.labels["route"] != "/metrics" }
                #expect(series.count == 4, "\(series.map(\.labels))")

                let bytes = "headwater_http_response_body_bytes_total"
                #expect(metrics[bytes, ["route": Self.mediaRoute]] == Double(mediaBytes))
                #expect(metrics[bytes, ["route": Self.segmentRoute]] == Double(segmentBytes))

                // Histogram by route: every bucket, cumulative, +Inf = count = requests.
                let histogram = "headwater_http_request_duration_seconds"
                let buckets = metrics.samples(histogram + "_bucket").filter { $0.labels["route"] == Self.mediaRoute }
                #expect(buckets.count == OriginMetrics.durationBuckets.count + 1)
                #expect(buckets.contains { $0.labels["le"] == "0.0001" })
                #expect(buckets.contains { $0.labels["le"] == "1.0" || $0.labels["le"] == "1" })
                #expect(metrics[histogram + "_bucket", ["route": Self.mediaRoute, "le": "+Inf"]] == 5)
                #expect(metrics[histogram + "_count", ["route": Self.mediaRoute]] == 5)
                #expect(buckets.allSatisfy { $0.value <= 5 })

                // gzip: one gzip body sent, of the identity size of one playlist.
                #expect(metrics["headwater_playlist_sent_bytes_total", ["encoding": "gzip"]] == Double(gzipBody.count))
                #expect(
                    metrics["headwater_playlist_uncompressed_bytes_total", ["encoding": "gzip"]]
                        == Double(Fixture.mediaText.utf8.count)
                )
                #expect(
                    metrics["headwater_playlist_sent_bytes_total", ["encoding": "identity"]]
                        == Double(3 * Fixture.mediaText.utf8.count)
                )

                // No raw URI, query, channel or segment name became a label.
                for leak in ["/live/demo", "nosuch", "secret-query", "seg99", "seg100"] {
                    #expect(!metrics.text.contains(leak), "\(leak) appears in /metrics")
                }
            }
        }
    }

    @Test func liveEdgeAgeIsComputedAtScrapeTimeFromEachChannelSnapshot() async throws {
        let now: Int64 = 1_795_292_259_000_000
        let content = Self.freshAndStale(now: now)
        try await withServer(content: content, clock: FixedClock(now)) { port in
            try await Self.withClient { client in
                let (_, metrics) = try await Self.scrape(client, port)
                let age = "headwater_channel_live_edge_age_seconds"
                #expect(metrics[age, ["channel": "fresh"]] == 1.2)
                #expect(metrics[age, ["channel": "stale"]] == 10)
                #expect(metrics[age, ["channel": "shaky"]] == 0.5)
                #expect(metrics[age, ["channel": "starting"]] == nil, "no age for a channel without segments")
                #expect(metrics.samples(age).count == 3)
                #expect(metrics["headwater_channel_ready", ["channel": "fresh"]] == 1)
                #expect(metrics["headwater_channel_ready", ["channel": "stale"]] == 0)
                #expect(metrics["headwater_channel_ready", ["channel": "starting"]] == 0)
                // Stall counters exist from the start, at 0, so rate() and alerts work.
                #expect(metrics["headwater_stalls_total", ["channel": "fresh"]] == 0)
                #expect(metrics["headwater_config_reloads_total", ["result": "rejected"]] == 0)
            }
        }
    }

    @Test func stallsAndReloadsReportedThroughTheAPIAppearInMetrics() async throws {
        let metrics = OriginMetrics()
        metrics.stallDetected(channel: "fresh")
        metrics.stallDetected(channel: "fresh")
        metrics.configReload(result: .applied)
        metrics.configReload(result: .rejected)
        metrics.configReload(result: .rejected)
        let now: Int64 = 1_795_292_259_000_000
        try await withServer(
            content: Self.freshAndStale(now: now),
            configure: { $0.metrics = metrics },
            clock: FixedClock(now)
        ) { port in
            try await Self.withClient { client in
                let (_, exposition) = try await Self.scrape(client, port)
                #expect(exposition["headwater_stalls_total", ["channel": "fresh"]] == 2)
                #expect(exposition["headwater_stalls_total", ["channel": "stale"]] == 0)
                #expect(exposition["headwater_config_reloads_total", ["result": "applied"]] == 1)
                #expect(exposition["headwater_config_reloads_total", ["result": "rejected"]] == 2)
                #expect(exposition["headwater_config_reloads_total", ["result": "unchanged"]] == 0)
            }
        }
        let shared = String(decoding: OriginMetrics.shared.exposition(channels: []), as: UTF8.self)
        #expect(!shared.contains("channel=\"fresh\""), "counted into the instance given, not `shared`")
    }

    @Test("headwater_http_open_connections: connections accepted and not yet closed, idle ones included")
    func openConnectionsAreCounted() async throws {
        let metrics = OriginMetrics()
        let gauge = "headwater_http_open_connections"
        // The server's connection tracker counts into the configured instance.
        do {
            try await withServer(configure: { $0.metrics = metrics }) { port in
                try await Self.withClient { client in
                    let (_, before) = try await Self.scrape(client, port) { $0[gauge, [:]] == 1 }
                    #expect(before[gauge, [:]] == 1, "the scraping client's own connection")
                    var idle: [RawClient] = []
                    for _ in 0..<3 { idle.append(try await RawClient.connect(port: port)) }
                    let (_, open) = try await Self.scrape(client, port) { $0[gauge, [:]] == 4 }
                    #expect(open[gauge, [:]] == 4)
                    for connection in idle { try await connection.channel.channel.close().get() }
                    let (_, after) = try await Self.scrape(client, port) { $0[gauge, [:]] == 1 }
                    #expect(after[gauge, [:]] == 1)
                }
            }
        }
    }

    // MARK: - /readyz and /healthz

    /// `fresh` (live, TD 2, newest segment 1.2 s old), `stale` (live, TD 2, 10 s old: more than
    /// 1½ TD + slack), `starting` (nothing yet), `shaky` (degraded, fresh segments).
    static func freshAndStale(now: Int64, only: Set<String>? = nil) -> FakeContent {
        func snapshot(_ name: String, _ state: ChannelSnapshot.State, age: Int64?) -> ChannelSnapshot {
            ChannelSnapshot(
                name: name, state: state, multivariant: nil, mediaPlaylists: [:], segments: [:], targetDuration: 2,
                status: Fixture.status(targetDuration: 2, lastSegmentAt: age.map { now - $0 }))
        }
        let all = [
            "fresh": snapshot("fresh", .live, age: 1_200_000),
            "stale": snapshot("stale", .live, age: 10_000_000),
            "starting": snapshot("starting", .starting, age: nil),
            "shaky": snapshot("shaky", .degraded(reason: "source stalled"), age: 500_000),
        ]
        return FakeContent(channels: all.filter { only?.contains($0.key) ?? true })
    }

    @Test func readinessIs503UntilEveryChannelIsFresh() async throws {
        let now: Int64 = 1_795_292_259_000_000
        try await withServer(content: Self.freshAndStale(now: now), clock: FixedClock(now)) { port in
            try await Self.withClient { client in
                let (ready, readyBody) = try await Self.get(client, port, "/readyz")
                #expect(ready.status == .serviceUnavailable)
                #expect(ready.headers.first(name: "cache-control") == "no-store")
                #expect(ready.headers.first(name: "content-type") == "application/json")
                #expect(
                    String(decoding: readyBody, as: UTF8.self)
                        == #"{"status":"degraded","channels":{"#
                        + #""fresh":{"state":"live","liveEdgeAgeSeconds":1.200,"targetDuration":2,"ready":true},"#
                        + #""shaky":{"state":"degraded","reason":"source stalled","liveEdgeAgeSeconds":0.500,"#
                        + #""targetDuration":2,"ready":false},"#
                        + #""stale":{"state":"live","liveEdgeAgeSeconds":10.000,"targetDuration":2,"ready":false},"#
                        + #""starting":{"state":"starting","liveEdgeAgeSeconds":null,"targetDuration":2,"ready":false}}}"#
                        + "\n"
                )
                // Liveness stays 200 with the same body.
                let (health, healthBody) = try await Self.get(client, port, "/healthz")
                #expect(health.status == .ok)
                #expect(health.headers.first(name: "cache-control") == "no-store")
                #expect(healthBody == readyBody)
            }
        }
        try await withServer(content: Self.freshAndStale(now: now, only: ["fresh"]), clock: FixedClock(now)) { port in
            try await Self.withClient { client in
                let (ready, body) = try await Self.get(client, port, "/readyz")
                #expect(ready.status == .ok)
                #expect(ready.headers.first(name: "cache-control") == "no-store")
                #expect(String(decoding: body, as: UTF8.self).hasPrefix(#"{"status":"ok","channels":{"fresh":"#))
            }
        }
    }

    @Test func freshnessLimitIsOneAndAHalfTargetDurationsPlusSlack() {
        let limit = Int64(3_000_000) + ChannelHealth.slack  // TD 2
        func health(age: Int64?, _ state: ChannelSnapshot.State = .live) -> ChannelHealth {
            ChannelHealth(name: "c", state: state, targetDuration: 2, liveEdgeAge: age)
        }
        #expect(health(age: limit).isReady)
        #expect(!health(age: limit + 1).isReady)
        #expect(!health(age: 0, .degraded(reason: "x")).isReady)
        #expect(!health(age: nil).isReady)
        #expect(!health(age: 0, .starting).isReady)
    }

    // MARK: - Access log

    @Test func accessLogLinesInCombinedFormatWithHeadwaterFields() async throws {
        let recorder = LogRecorder()
        try await withServer(accessLogger: recorder.logger) { port in
            try await RawClient.retryingWhenClosedBeforeRequest(port: port) { inbound, outbound in
                var inbound = inbound
                let etag = Fixture.playlist(Fixture.mediaText, tag: "demo-v1-v1", targetDuration: 6).gzipEntityTag
                try await outbound.write(
                    ByteBuffer(
                        string: "GET /live/demo/v1.m3u8?_HLS_msn=7 HTTP/1.1\r\nHost: o\r\n"
                            + "User-Agent: Lavf/59.27.100\r\nReferer: http://player.example/\r\n"
                            + "X-Playback-Session-Id: 1F2E-33 x\"y\r\nAccept-Encoding: gzip\r\n\r\n"
                            + "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\nAccept-Encoding: gzip\r\n"
                            + "If-None-Match: \(etag)\r\n\r\n"
                            + "HEAD /live/demo/v1/seg99.ts HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n"
                    )
                )
                var bytes: [UInt8] = []
                let responses = try await inbound.readResponses(3, into: &bytes, bodiless: { $0 == 2 })
                try #require(responses.count == 3)
                #expect(responses.map(\.status) == [200, 304, 404])
            }
            for _ in 0..<200 where recorder.snapshot.count < 3 { try await Task.sleep(for: .milliseconds(10)) }
        }
        let lines = recorder.snapshot.filter { $0.level == .info }.map(\.message)
        try #require(lines.count == 3, "\(lines)")
        let gzipLength = Gzip.stored(Array(Fixture.mediaText.utf8)).count

        let first = try #require(AccessLine(lines[0]))
        #expect(first.client == "127.0.0.1")
        #expect(first.request == "GET /live/demo/v1.m3u8?_HLS_msn=7 HTTP/1.1")
        #expect(first.status == 200)
        #expect(first.bytes == gzipLength)
        #expect(first.referer == "http://player.example/")
        #expect(first.userAgent == "Lavf/59.27.100")
        #expect(first.fields["cache"] == "HIT")
        #expect(first.fields["sid"] == #"1F2E-33\x20x\x22y"#, "spaces and quotes escaped in sid")
        #expect(first.fields["enc"] == "gzip")
        let rt = try #require(first.fields["rt"])
        #expect(Double(rt) != nil && rt.split(separator: ".").last?.count == 6, "rt=\(rt)")
        #expect(first.hasValidTime, "\(lines[0])")

        let second = try #require(AccessLine(lines[1]))
        #expect(second.request == "GET /live/demo/v1.m3u8 HTTP/1.1")
        #expect(second.status == 304)
        #expect(second.bytes == 0)
        #expect(second.referer == "-" && second.userAgent == "-")
        #expect(second.fields["cache"] == "REVALIDATED")
        #expect(second.fields["sid"] == "-")

        let third = try #require(AccessLine(lines[2]))
        #expect(third.request == "HEAD /live/demo/v1/seg99.ts HTTP/1.1")
        #expect(third.status == 404)
        #expect(third.bytes == 0, "HEAD sends no body")
        #expect(third.fields["cache"] == "-")
        #expect(third.fields["enc"] == "-")

        // The same facts stay available as structured metadata.
        let metadata = recorder.snapshot[0].metadata
        #expect(metadata["http.route"] == Self.mediaRoute)
        #expect(metadata["http.request.header.x-playback-session-id"] == "1F2E-33 x\"y")
        #expect(metadata["headwater.cache"] == "HIT")
        #expect(metadata["client.address"] == "127.0.0.1")
    }

    @Test("the access log keeps a session token's payload but never its signature (a credential)")
    func sessionSignaturesAreRedacted() {
        func redact(_ uri: String) -> String { AccessLogEntry.redactingSessionSignatures(uri) }
        #expect(redact("/ssai/demo/v1.m3u8?session=AbC.SiGnAtUrE") == "/ssai/demo/v1.m3u8?session=AbC.-")
        #expect(redact("/ssai/demo/v1.m3u8?x=1&session=AbC.SiG&y=2.5") == "/ssai/demo/v1.m3u8?x=1&session=AbC.-&y=2.5")
        #expect(redact("/live/demo/v1/1.2.ts") == "/live/demo/v1/1.2.ts")
        #expect(redact("/ssai/demo/master.m3u8?device=tv.box") == "/ssai/demo/master.m3u8?device=tv.box")
        #expect(redact("/x?mysession=a.b") == "/x?mysession=a.b")
        #expect(redact("/x?sessio=a.b&sessions=c.d&SESSION=e.f") == "/x?sessio=a.b&sessions=c.d&SESSION=e.f")
        #expect(redact("/x?session=a.b.c&session=d.e") == "/x?session=a.-&session=d.-")
    }

    @Test func commonLogTimeAndEscaping() {
        #expect(AccessLogEntry.commonLogTime(unixSeconds: 1_795_292_259) == "21/Nov/2026:20:17:39 +0000")
        #expect(AccessLogEntry.commonLogTime(unixSeconds: 0) == "01/Jan/1970:00:00:00 +0000")
        #expect(AccessLogEntry.commonLogTime(unixSeconds: 951_827_696) == "29/Feb/2000:12:34:56 +0000")
        var line: [UInt8] = []
        AccessLogEntry.appendEscaped("a \"b\"\\\u{7}é", to: &line)
        #expect(String(decoding: line, as: UTF8.self) == #"a \x22b\x22\x5C\x07\xC3\xA9"#)
        line = []
        AccessLogEntry.appendEscaped("abcdef", to: &line, limit: 3)
        #expect(String(decoding: line, as: UTF8.self) == "abc...")
        line = []
        AccessLogEntry.appendEscaped("abc", to: &line, limit: 3)
        #expect(String(decoding: line, as: UTF8.self) == "abc")
        #expect(FixedPoint.seconds(micros: 153, digits: 6) == "0.000153")
        #expect(FixedPoint.seconds(micros: 1_234_567, digits: 3) == "1.234")
        #expect(FixedPoint.seconds(micros: 12_000_000, digits: 3) == "12.000")
    }
}

// MARK: - Parsing what the server wrote

/// Samples of a Prometheus text exposition, by name and labels.
struct Exposition {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    let text: String
    let all: [Sample]

    init(_ text: String) {
        self.text = text
        all = text.split(separator: "\n").compactMap { line -> Sample? in
            if line.hasPrefix("#") { return nil }
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                return nil
            }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else {
                return Sample(name: String(series), labels: [:], value: value)
            }
            var labels: [String: String] = [:]
            // Label values here never contain `",` (route templates, channel names, enums).
            for pair in series[series.index(after: brace)..<series.index(before: series.endIndex)]
                .components(separatedBy: "\",")
            {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].trimmingCharacters(in: ["\""]))
            }
            return Sample(name: String(series[..<brace]), labels: labels, value: value)
        }
    }

    func samples(_ name: String) -> [Sample] { all.filter { $0.name == name } }

    /// The value of the one series `name` whose labels are exactly `labels`.
    subscript(name: String, labels: [String: String]) -> Double? {
        samples(name).first { $0.labels == labels }?.value
    }

    func sum(_ name: String, excludingRoute route: String) -> Double {
        samples(name).filter { $0.labels["route"] != route }.reduce(0) { $0 + $1.value }
    }
}

/// One access-log line split into its fields.
struct AccessLine {
    var client: String
    var time: String
    var request: String
    var status: Int
    var bytes: Int
    var referer: String
    var userAgent: String
    /// `rt`, `cache`, `sid`, `enc`.
    var fields: [String: String]

    init?(_ line: String) {
        // host - - [time] "request" status bytes "referer" "agent" k=v k=v …
        let quoted = line.components(separatedBy: "\"")
        guard quoted.count == 7 else { return nil }
        let head = quoted[0].split(separator: " ")
        guard head.count >= 3, let open = quoted[0].firstIndex(of: "["), let close = quoted[0].firstIndex(of: "]")
        else { return nil }
        client = String(head[0])
        time = String(quoted[0][quoted[0].index(after: open)..<close])
        request = quoted[1]
        let numbers = quoted[2].split(separator: " ")
        guard numbers.count == 2, let status = Int(numbers[0]), let bytes = Int(numbers[1]) else { return nil }
        self.status = status
        self.bytes = bytes
        referer = quoted[3]
        userAgent = quoted[5]
        fields = [:]
        for pair in quoted[6].split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard head[1] == "-", head[2] == "-", quoted[4] == " " else { return nil }
    }

    /// `dd/Mon/yyyy:hh:mm:ss +0000`.
    var hasValidTime: Bool {
        let parts = time.split(separator: " ")
        guard parts.count == 2, parts[1] == "+0000" else { return false }
        let fields = parts[0].split(separator: ":")
        let date = fields.first?.split(separator: "/") ?? []
        return fields.count == 4 && date.count == 3 && date[0].count == 2 && date[1].count == 3
            && date[2].count == 4 && fields.dropFirst().allSatisfy { $0.count == 2 && Int($0) != nil }
    }
}
