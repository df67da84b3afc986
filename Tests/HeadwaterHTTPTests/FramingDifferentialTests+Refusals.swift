import Foundation
@testable import HeadwaterHTTP
import NIOHTTP1
import Testing

/// The refusals of issue 18 answered alike by every framing: methods nobody implements (501), a
/// request-target over 8 KiB (414), links out of the public directory (404 as a missing file) —
/// on the fast HTTP/1 path, the full one and h2c; and what only HTTP/1 has — `Host` lines missing,
/// repeated or invalid (400), a head over the limit (431) — on the two HTTP/1 paths.
extension FramingDifferentialTests {
    /// Requests for every framing, and for HTTP/1 only.
    static func refusals() -> (everyFraming: [FramingRequest], http1Only: [FramingRequest]) {
        let longTarget = "/live/demo/" + String(repeating: "a", count: 10 * 1024) + ".m3u8"
        let everyFraming = [
            FramingRequest(.RAW(value: "FOO"), "/live/demo/v1.m3u8", expect: 501),
            FramingRequest(.PROPFIND, "/live/demo/v1.m3u8", expect: 501),
            FramingRequest(.PATCH, "/app.js", expect: 501),
            FramingRequest(.DELETE, "/app.js", expect: 405),
            FramingRequest(.GET, longTarget, expect: 414),
            FramingRequest(.HEAD, longTarget, expect: 414),
            FramingRequest(.GET, "/passwd-link", expect: 404),
            FramingRequest(.HEAD, "/passwd-link", [("Range", "bytes=0-9")], expect: 404),
            FramingRequest(.GET, "/missing.js", expect: 404),
            FramingRequest(.GET, "/app.js", expect: 200),
        ]
        func hosts(_ values: [String], _ method: HTTPMethod = .GET, target: String = "/app.js", expect status: Int) -> FramingRequest {
            var request = FramingRequest(method, target, expect: status)
            request.hosts = values
            return request
        }
        let http1Only = [
            hosts([], expect: 400),
            hosts([], .HEAD, target: "/live/demo/v1.m3u8", expect: 400),
            hosts(["origin", "origin"], expect: 400),
            hosts(["origin", "other"], target: "/live/demo/v1/seg.ts", expect: 400),
            hosts(["bad host"], expect: 400),
            hosts([""], expect: 200),
            hosts(["[::1]:8080"], target: "/live/demo/master.m3u8", expect: 200),
            FramingRequest(.GET, "/live/demo/v1.m3u8", [("X-Big", String(repeating: "b", count: 20 * 1024))], expect: 431),
            FramingRequest(.GET, "/app.js", expect: 200),
        ]
        return (everyFraming, http1Only)
    }

    @Test("refusals before routing (501, 414, 431, a bad Host, a link out of the root) answer alike in every framing that has them")
    func refusalsAreTheSame() async throws {
        let origin = try FramingOrigin()
        defer { origin.remove() }
        try FileManager.default.createSymbolicLink(
            atPath: origin.publicDirectory.path + "/passwd-link", withDestinationPath: "/etc/passwd")
        let (everyFraming, http1Only) = Self.refusals()
        let runs = try await Self.runs(origin, everyFraming)
        let http1Runs = try await [Framing.fast, .full].asyncMap { framing in try await origin.run(framing, http1Only) }
        for (requests, runs) in [(everyFraming, runs), (http1Only, http1Runs)] {
            let reference = runs[0]
            #expect(reference.fastPathAnswered >= 1, "the fast path answered the good requests")
            for (index, request) in requests.enumerated() {
                let expected = reference.responses[index]
                #expect(expected.status == request.expectedStatus, "\(request): \(expected.status) from the fast path's server")
                #expect(!String(decoding: expected.body, as: UTF8.self).contains("root:"), "\(request)")
                if expected.status >= 400, !request.isHead {
                    let body = String(decoding: expected.body, as: UTF8.self)
                    #expect(body.hasPrefix("\(expected.status) ") && body.hasSuffix("\n") && body.split(separator: "\n").count == 1, "\(request): \(body)")
                }
                for run in runs.dropFirst() {
                    Self.compare(expected, run.responses[index], framing: run.framing, request: request)
                }
            }
        }
    }
}

extension Array {
    /// `transform` of each element, one after the other.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
