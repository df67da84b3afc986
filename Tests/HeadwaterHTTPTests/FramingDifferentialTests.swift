import Foundation
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterTesting
import Logging
import NIOHTTP1
import Testing

/// One responder, three framings (issue 16): the same requests sent to a server whose fast HTTP/1
/// path answers what it can, to one whose fast path hands everything to NIO's HTTP/1 decoder and
/// ``OriginHTTPHandler`` (``OriginServerConfiguration/fastPathAnswers`` off), and over h2c to a
/// third, must get the same status, body bytes and header fields (apart from HTTP/1's
/// connection-specific fields, the case of names over HTTP/2, and the clock), the same access-log
/// entries (apart from the protocol, the duration and the time) and the same request counters.
/// Each framing has a server of its own, with fresh metrics and access log, over the same content,
/// ad insertion, clock and static files (``FramingOrigin``).
@Suite("Framing differential: fast HTTP/1, full HTTP/1 and h2c answer alike", .serialized)
struct FramingDifferentialTests {
    // MARK: - The requests

    /// Shared and stitched playlists, segments with every form of `Range`, `HEAD`s, conditional
    /// requests and the error statuses, each with the status the answer must have.
    static func requests(_ origin: FramingOrigin) throws -> [FramingRequest] {
        let demo = origin.demo
        let master = try #require(demo.multivariant)
        let media = try #require(demo.mediaPlaylists["v1"])
        let (segmentName, segment) = try #require(demo.segments["v1"]?.sorted { $0.key < $1.key }.last)
        let segmentTarget = "/live/demo/v1/\(segmentName)"
        let length = segment.length
        try #require(length > 1000, "a segment long enough for the ranges below: \(length) bytes")
        let agent = ("User-Agent", "framing-test/1.0")
        let gzip = ("Accept-Encoding", "gzip")
        var requests: [FramingRequest] = []
        func both(_ target: String, _ fields: [(String, String)] = [], expect status: Int) {
            requests.append(FramingRequest(.GET, target, fields, expect: status))
            requests.append(FramingRequest(.HEAD, target, fields, expect: status))
        }

        // Shared playlists: identity and gzip, HEAD, conditional, and what is not allowed.
        for (target, playlist) in [("/live/demo/master.m3u8", master), ("/live/demo/v1.m3u8", media)] {
            both(target, [agent, ("Referer", "http://player.example/"), ("X-Playback-Session-Id", "AB-12 x\"y")], expect: 200)
            both(target, [gzip, agent], expect: 200)
            both(target, [("Accept-Encoding", "br, gzip;q=0.5, identity;q=0.1")], expect: 200)
            both(target, [("If-None-Match", playlist.entityTag)], expect: 304)
            requests.append(FramingRequest(.GET, target, [gzip, ("If-None-Match", playlist.gzipEntityTag)], expect: 304))
            requests.append(FramingRequest(.GET, target, [("If-None-Match", playlist.gzipEntityTag)], expect: 200))
            requests.append(FramingRequest(.GET, target, [("If-None-Match", "\"stale\", \"older\"")], expect: 200))
            requests.append(
                FramingRequest(.GET, target, [("If-Modified-Since", HTTPDate.format(unixSeconds: playlist.lastModified))], expect: 304))
            requests.append(
                FramingRequest(.GET, target, [gzip, ("If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT")], expect: 200))
            requests.append(FramingRequest(.GET, target, [("If-Match", "\"stale\"")], expect: 412))
            requests.append(FramingRequest(.GET, target, [("Range", "bytes=0-9")], expect: 200))
            requests.append(FramingRequest(.DELETE, target, expect: 405))
            requests.append(FramingRequest(.OPTIONS, target, expect: 204))
        }
        both("/live/demo/v1.m3u8?_HLS_msn=7", [gzip], expect: 200)
        both("/live/demo/v1.iframes.m3u8", expect: demo.iFramePlaylists["v1"] == nil ? 404 : 200)

        // Stitched playlists: a session's start, its media playlists, and refused sessions.
        let session = origin.sessionToken
        let viewer = ("X-Playback-Session-Id", FramingOrigin.viewer)
        both("/ssai/demo/master.m3u8?device=tv", [viewer, agent], expect: 200)
        both("/ssai/demo/v1.m3u8?session=\(session)", [agent, viewer], expect: 200)
        both("/ssai/demo/v1.m3u8?session=\(session)", [gzip], expect: 200)
        both("/ssai/demo/v0.m3u8?session=\(session)", expect: 200)
        requests.append(FramingRequest(.GET, "/ssai/demo/v1.m3u8?session=\(session)", [("If-None-Match", "*")], expect: 200))
        requests.append(
            FramingRequest(
                .GET, "/ssai/demo/v1.m3u8?session=\(session)", [gzip, ("If-Modified-Since", "Sat, 01 Jan 2050 00:00:00 GMT")],
                expect: 200))
        both("/ssai/demo/v1.m3u8?session=\(session.dropLast(2))xx", expect: 403)
        both("/ssai/demo/v1.m3u8", expect: 400)
        requests.append(FramingRequest(.DELETE, "/ssai/demo/v1.m3u8?session=\(session)", expect: 405))

        // Segments: whole, every form of Range (RFC 9110 §14.1.2), and conditions.
        both(segmentTarget, [agent], expect: 200)
        both(segmentTarget, [("Range", "bytes=0-99")], expect: 206)
        both(segmentTarget, [("Range", "bytes=100-")], expect: 206)
        both(segmentTarget, [("Range", "bytes=-500")], expect: 206)
        both(segmentTarget, [("Range", "bytes=\(length - 10)-\(length + 1000)")], expect: 206)
        both(segmentTarget, [("Range", "bytes=\(length)-")], expect: 416)
        both(segmentTarget, [("Range", "bytes=0-1,5-6")], expect: 200)  // several ranges: the whole segment
        both(segmentTarget, [("Range", "bytes=x-y")], expect: 200)  // invalid: ignored
        both(segmentTarget, [("Range", "bytes=5-1")], expect: 200)  // invalid: ignored
        both(segmentTarget, [("Range", "items=0-9")], expect: 200)  // another unit: ignored
        both(segmentTarget, [("If-None-Match", segment.entityTag)], expect: 304)
        both(segmentTarget, [("If-None-Match", "\"stale\"")], expect: 200)
        both(segmentTarget, [("If-Modified-Since", HTTPDate.format(unixSeconds: segment.lastModified))], expect: 304)
        both(segmentTarget, [("If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT"), ("Range", "bytes=0-9")], expect: 206)
        both(segmentTarget, [("If-Range", segment.entityTag), ("Range", "bytes=0-99")], expect: 206)
        both(segmentTarget, [("If-Range", "\"other\""), ("Range", "bytes=0-99")], expect: 200)
        both(
            segmentTarget, [("If-Range", HTTPDate.format(unixSeconds: segment.lastModified)), ("Range", "bytes=-100")],
            expect: 206)
        both(segmentTarget, [("If-Range", "Thu, 01 Jan 1970 00:00:00 GMT"), ("Range", "bytes=-100")], expect: 200)
        both(segmentTarget, [("If-Match", "\"stale\"")], expect: 412)
        both(segmentTarget, [("If-Unmodified-Since", "Thu, 01 Jan 1970 00:00:00 GMT")], expect: 412)
        requests.append(FramingRequest(.DELETE, segmentTarget, expect: 405))

        // Static files (the fast path answers them too).
        both("/app.js", expect: 200)
        both("/app.js", [("Range", "bytes=0-99")], expect: 206)
        both("/app.js", [("Range", "bytes=-500")], expect: 206)
        both("/app.js", [("Range", "bytes=\(origin.staticBytes.count)-")], expect: 416)
        both(
            "/app.js",
            [("If-None-Match", "\"\(String(FramingOrigin.staticModified, radix: 16))-\(String(origin.staticBytes.count, radix: 16))\"")],
            expect: 304)
        both("/missing.js", expect: 404)

        // Errors: unknown channel, rendition and segment; a channel with no playlist yet; malformed targets.
        both("/live/nochannel/master.m3u8", expect: 404)
        both("/live/nochannel/v1.m3u8", expect: 404)
        both("/live/nochannel/v1/seg-00001.ts", expect: 404)
        both("/live/demo/v9.m3u8", expect: 404)
        both("/live/demo/v1/no-such-segment.ts", [("Range", "bytes=0-9")], expect: 404)
        both("/live/slow/master.m3u8", expect: 503)
        both("/live/slow/v1.m3u8", [gzip], expect: 503)
        both("/live/demo/v1.m3u8?_HLS_msn=abc", expect: 400)
        both("/live/demo/%ZZ.m3u8", expect: 400)
        both("/live//v1.m3u8", expect: 400)
        both("/live/demo/%2F/v1.m3u8", expect: 400)

        // Health (its ages come from the fixed clock).
        both("/healthz", expect: 200)
        both("/readyz", expect: 503)  // `slow` is starting

        // Again, from the caches the first answers filled, and not in GET/HEAD pairs, so that a
        // GET counted as a HEAD (or the other way round) shows in the counters.
        requests.append(FramingRequest(.GET, segmentTarget, expect: 200))
        requests.append(FramingRequest(.GET, segmentTarget, [("Range", "bytes=0-99")], expect: 206))
        requests.append(FramingRequest(.GET, "/live/demo/v1.m3u8", [gzip], expect: 200))
        requests.append(FramingRequest(.GET, "/live/demo/master.m3u8", expect: 200))
        requests.append(FramingRequest(.GET, "/app.js", expect: 200))
        requests.append(FramingRequest(.GET, "/ssai/demo/v1.m3u8?session=\(session)", expect: 200))
        return requests
    }

    /// Runs `requests` in every framing, the fast path's first.
    static func runs(_ origin: FramingOrigin, _ requests: [FramingRequest]) async throws -> [FramingOrigin.Run] {
        var runs: [FramingOrigin.Run] = []
        for framing in Framing.allCases {
            let run = try await origin.run(framing, requests)
            try #require(run.responses.count == requests.count, "\(framing): \(run.responses.count) responses")
            runs.append(run)
        }
        return runs
    }

    // MARK: - Responses

    @Test("status, body bytes and header fields are the same in every framing")
    func responsesAreTheSame() async throws {
        let origin = try FramingOrigin()
        defer { origin.remove() }
        let requests = try Self.requests(origin)
        let runs = try await Self.runs(origin, requests)
        let reference = runs[0]
        // The comparison is between paths only if the fast path really answered: the plain GETs and
        // HEADs of playlists, segments, static files and stitched playlists (over 60 of them).
        #expect(reference.fastPathAnswered >= 60, "the fast path answered \(reference.fastPathAnswered) requests")
        for run in runs.dropFirst() { #expect(run.fastPathAnswered == 0, "\(run.framing): the fast path answered nothing") }
        for (index, request) in requests.enumerated() {
            let expected = reference.responses[index]
            #expect(expected.status == request.expectedStatus, "\(request): \(expected.status) from the fast path's server")
            if request.isHead || [204, 304].contains(expected.status) {
                #expect(expected.body.isEmpty, "\(request): no body")
            }
            for run in runs.dropFirst() {
                Self.compare(expected, run.responses[index], framing: run.framing, request: request)
            }
        }
        // Equal answers are also right ones: the segment's bytes, ranges and their Content-Range.
        let segment = try #require(origin.demo.segments["v1"]?.sorted { $0.key < $1.key }.last?.value)
        let file = try #require(FileManager.default.contents(atPath: segment.path).map { Array($0.prefix(Int(segment.length))) })
        let length = file.count
        let checks: [(range: String?, status: Int, bytes: ArraySlice<UInt8>, contentRange: String?)] = [
            (nil, 200, file[...], nil),
            ("bytes=0-99", 206, file[0..<100], "bytes 0-99/\(length)"),
            ("bytes=100-", 206, file[100...], "bytes 100-\(length - 1)/\(length)"),
            ("bytes=-500", 206, file[(length - 500)...], "bytes \(length - 500)-\(length - 1)/\(length)"),
            ("bytes=\(length)-", 416, [], "bytes */\(length)"),
            ("bytes=0-1,5-6", 200, file[...], nil),
        ]
        for check in checks {
            let index = try #require(
                requests.firstIndex {
                    $0.method == .GET && $0.target.hasPrefix("/live/demo/v1/")
                        && $0.fields.map(\.name) == (check.range == nil ? ["User-Agent"] : ["Range"])
                        && $0.fields.first?.value == check.range ?? "framing-test/1.0"
                })
            for run in runs {
                let response = run.responses[index]
                let label = "\(requests[index]) (\(run.framing))"
                #expect(response.status == check.status, "\(label)")
                if check.status != 416 { #expect(sameBytes(response.body, Array(check.bytes)), "\(label): \(response.body.count) bytes") }
                #expect(response.header("content-range") == check.contentRange, "\(label)")
                #expect(response.header("content-length") == "\(check.status == 416 ? response.body.count : check.bytes.count)", "\(label)")
            }
        }
        // A stitched playlist 3 s into a break: the ad's date range, and private.
        let stitched = try #require(requests.firstIndex { $0.method == .GET && $0.target.hasPrefix("/ssai/demo/v1.m3u8?session=") })
        let playlist = String(decoding: runs[0].responses[stitched].body, as: UTF8.self)
        #expect(playlist.hasPrefix("#EXTM3U") && playlist.contains("#EXT-X-DATERANGE"), "\(playlist)")
        #expect(runs[0].responses[stitched].header("cache-control")?.contains("private") == true)
    }

    /// Compares `other` (from `framing`) with `expected` (from the fast path's server).
    static func compare(_ expected: FramingResponse, _ other: FramingResponse, framing: Framing, request: FramingRequest) {
        let label = "\(request): \(Framing.fast) vs \(framing)"
        #expect(other.status == expected.status, "\(label)")
        #expect(
            sameBytes(other.body, expected.body),
            "\(label): bodies differ (\(expected.body.count) and \(other.body.count) bytes)")
        let clock: Set<String> = ["date", "expires"]
        switch framing {
        case .fast, .full:
            // Both HTTP/1.1: the same fields in the same order with the same names, `Connection` included.
            let a = Self.render(expected.headers.filter { !clock.contains($0.name.lowercased()) })
            let b = Self.render(other.headers.filter { !clock.contains($0.name.lowercased()) })
            #expect(a == b, "\(label): header fields differ")
        case .http2:
            #expect(
                other.headers.allSatisfy { $0.name == $0.name.lowercased() }, "\(label): HTTP/2 names are lower case: \(other.headers)")
            let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]
            #expect(
                !other.headers.contains { connectionSpecific.contains($0.name) },
                "\(label): connection-specific fields over HTTP/2 (RFC 9113 §8.2.2): \(other.headers)")
            let ignored = clock.union(["connection", "keep-alive"])
            let a = Self.fieldSet(expected.headers, ignoring: ignored)
            let b = Self.fieldSet(other.headers, ignoring: ignored)
            #expect(a.joined(separator: "\n") == b.joined(separator: "\n"), "\(label): header fields differ")
        }
        compareClockFields(expected, other, label: label)
    }

    /// `Date` and `Expires`: both present or both absent; equal when the `Date`s are (the same
    /// second), else `Expires` as far from `Date` in both (a second boundary fell between them).
    static func compareClockFields(_ expected: FramingResponse, _ other: FramingResponse, label: String) {
        let (dateA, dateB) = (expected.header("date"), other.header("date"))
        let (expiresA, expiresB) = (expected.header("expires"), other.header("expires"))
        #expect((dateA == nil) == (dateB == nil), "\(label): Date \(dateA ?? "absent") vs \(dateB ?? "absent")")
        #expect((expiresA == nil) == (expiresB == nil), "\(label): Expires \(expiresA ?? "absent") vs \(expiresB ?? "absent")")
        guard let dateA, let dateB else { return }
        guard let secondsA = HTTPDate.parse(dateA), let secondsB = HTTPDate.parse(dateB) else {
            Issue.record("\(label): a Date that does not parse: \(dateA), \(dateB)")
            return
        }
        #expect(abs(secondsA - secondsB) < 120, "\(label): Date \(dateA) vs \(dateB)")
        guard let expiresA, let expiresB else { return }
        if dateA == dateB {
            #expect(expiresA == expiresB, "\(label): Expires \(expiresA) vs \(expiresB) with the same Date")
        } else {
            let lifetimeA = HTTPDate.parse(expiresA).map { $0 - secondsA }
            let lifetimeB = HTTPDate.parse(expiresB).map { $0 - secondsB }
            #expect(lifetimeA != nil && lifetimeA == lifetimeB, "\(label): Expires \(expiresA) (Date \(dateA)) vs \(expiresB) (Date \(dateB))")
        }
    }

    /// `name: value` lines with names in lower case, sorted, without the `ignored` names.
    static func fieldSet(_ fields: [FramingResponse.Field], ignoring ignored: Set<String>) -> [String] {
        fields.filter { !ignored.contains($0.name.lowercased()) }.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
    }

    static func render(_ fields: [FramingResponse.Field]) -> String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    // MARK: - Access log

    @Test("the access-log entries are the same in every framing but for the protocol, the duration and the time")
    func accessLogEntriesAreTheSame() async throws {
        let origin = try FramingOrigin()
        defer { origin.remove() }
        let requests = try Self.requests(origin)
        let runs = try await Self.runs(origin, requests)
        let entries = try runs.map { run in
            let records = run.log.snapshot
            try #require(records.count == requests.count, "\(run.framing): \(records.count) access lines: \(run.log.lines)")
            #expect(records.allSatisfy { $0.level == .info }, "\(run.framing)")
            return records.map { Self.normalized($0, framing: run.framing) }
        }
        let signature = try #require(origin.sessionToken.split(separator: ".").last.map(String.init))
        for (index, request) in requests.enumerated() {
            let reference = entries[0][index]
            #expect(reference.line.hasPrefix("127.0.0.1 - - [TIME] \"\(request.method.rawValue) "), "\(request): \(reference.line)")
            for (run, entry) in zip(runs.dropFirst(), entries.dropFirst()) {
                let label = "\(request): \(Framing.fast) vs \(run.framing)"
                #expect(entry[index].line == reference.line, "\(label)\n\(reference.line)\n-- vs --\n\(entry[index].line)")
                #expect(
                    entry[index].metadata == reference.metadata,
                    "\(label)\n\(Self.render(reference.metadata))\n-- vs --\n\(Self.render(entry[index].metadata))")
            }
            for (run, entry) in zip(runs, entries) {
                let label = "\(request) (\(run.framing))"
                #expect(entry[index].protocolField == (run.framing == .http2 ? "HTTP/2.0" : "HTTP/1.1"), "\(label)")
                #expect(entry[index].durationIsValid, "\(label): rt= of \(run.log.snapshot[index].message)")
                #expect(entry[index].metadata["http.response.status_code"] == "\(request.expectedStatus)", "\(label)")
                if request.target.contains("session=") {
                    // A session token is a credential: the line keeps its payload only, the path none of it.
                    #expect(!run.log.snapshot[index].message.contains(signature), "\(label): the token's signature is logged")
                    #expect(entry[index].metadata["url.path"]?.contains("?") == false, "\(label): \(entry[index].metadata)")
                    #expect(!(entry[index].metadata["url.path"] ?? "").contains(signature), "\(label)")
                }
                if entry[index].metadata["http.route"] != "invalid" {
                    #expect(entry[index].metadata["url.path"] == String(request.target.prefix { $0 != "?" }), "\(label)")
                }
            }
        }
    }

    /// An access-log record without what may differ between framings.
    struct NormalizedEntry {
        /// The line with its time as `[TIME]`, `rt=` as `rt=RT` and the protocol as `HTTP/1.1`.
        var line: String
        /// The metadata but the duration.
        var metadata: [String: String]
        /// The protocol the line named.
        var protocolField: String?
        var durationIsValid: Bool
    }

    static func normalized(_ record: LogRecorder.Record, framing: Framing) -> NormalizedEntry {
        var line = record.message
        // `[21/Nov/2026:20:17:39 +0000]`: the time the request arrived.
        if let open = line.firstIndex(of: "["), let close = line[open...].firstIndex(of: "]") {
            line.replaceSubrange(open...close, with: "[TIME]")
        }
        // `"GET /x HTTP/1.1" 200`: the protocol.
        var protocolField: String?
        if let requestStart = line.range(of: "] \"")?.upperBound,
            let requestEnd = line[requestStart...].range(of: "\" ")?.lowerBound,
            let space = line[requestStart..<requestEnd].lastIndex(of: " ")
        {
            let field = line.index(after: space)..<requestEnd
            protocolField = String(line[field])
            line.replaceSubrange(field, with: "HTTP/1.1")
        }
        // `rt=0.000153`: the duration.
        var durationIsValid = false
        if let rt = line.range(of: " rt=") {
            let end = line[rt.upperBound...].firstIndex(of: " ") ?? line.endIndex
            let value = line[rt.upperBound..<end]
            durationIsValid = Double(value).map { $0 >= 0 } == true && value.split(separator: ".").last?.count == 6
            line.replaceSubrange(rt.upperBound..<end, with: "RT")
        }
        var metadata = record.metadata
        metadata["http.server.request.duration_us"] = nil
        return NormalizedEntry(line: line, metadata: metadata, protocolField: protocolField, durationIsValid: durationIsValid)
    }

    static func render(_ metadata: [String: String]) -> String {
        metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
    }

    // MARK: - Metrics

    /// The series of `/metrics` that count requests and what was sent, one `name{labels} value` line
    /// each, sorted (the duration histograms' buckets and sums, the connection gauge and the
    /// process's own series are left out: they measure the run, not the answers).
    static func countedSeries(_ metrics: OriginMetrics) -> [String] {
        let exposition = String(decoding: metrics.exposition(channels: []), as: UTF8.self)
        let prefixes = [
            "headwater_http_requests_total{", "headwater_http_response_body_bytes_total{",
            "headwater_http_request_duration_seconds_count{", "headwater_playlist_sent_bytes_total{",
            "headwater_playlist_uncompressed_bytes_total{", "headwater_stitched_playlists_total{",
        ]
        return exposition.split(separator: "\n").map(String.init).filter { line in prefixes.contains { line.hasPrefix($0) } }.sorted()
    }

    /// The value of every `headwater_http_requests_total` series, added up.
    static func requestsCounted(_ series: [String]) -> Int {
        series.filter { $0.hasPrefix("headwater_http_requests_total{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0) { $0 + Int($1) }
    }

    @Test("each framing's server counts the same requests in the same series (route, method, status) and the same bytes")
    func requestCountersAreTheSame() async throws {
        let origin = try FramingOrigin()
        defer { origin.remove() }
        let requests = try Self.requests(origin)
        let runs = try await Self.runs(origin, requests)
        var series: [[String]] = []
        for run in runs {
            // A request is counted just after its access line is logged.
            var counted = Self.countedSeries(run.metrics)
            for _ in 0..<200 where Self.requestsCounted(counted) < requests.count {
                try await Task.sleep(for: .milliseconds(5))
                counted = Self.countedSeries(run.metrics)
            }
            #expect(Self.requestsCounted(counted) == requests.count, "\(run.framing): every request counted once")
            series.append(counted)
        }
        // The series mean something: one per route, method and status asked for.
        let reference = series[0]
        #expect(reference.contains { $0.hasPrefix(#"headwater_http_requests_total{route="/live/{channel}/{rendition}/{segment}",method="HEAD",status="206"}"#) }, "\(reference)")
        #expect(reference.contains { $0.hasPrefix(#"headwater_http_requests_total{route="/ssai/{channel}/{rendition}.m3u8",method="GET",status="200"}"#) }, "\(reference)")
        #expect(reference.contains { $0.hasPrefix(#"headwater_http_requests_total{route="invalid",method="GET",status="400"}"#) }, "\(reference)")
        for (run, counted) in zip(runs.dropFirst(), series.dropFirst()) {
            let missing = Set(reference).subtracting(counted).sorted()
            let extra = Set(counted).subtracting(reference).sorted()
            #expect(
                missing.isEmpty && extra.isEmpty,
                "\(Framing.fast) vs \(run.framing):\nonly \(Framing.fast):\n\(missing.joined(separator: "\n"))\nonly \(run.framing):\n\(extra.joined(separator: "\n"))")
        }
    }
}
