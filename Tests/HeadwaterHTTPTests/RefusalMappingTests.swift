@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import NIOCore
import NIOHTTP1
import Testing

/// Every refusal — ingest, sessions and targeting, the admin API, routing, serving — is answered
/// through one mapping (`OriginResponse.refused`): its kind's status and the one-line body
/// `<code> <reason phrase>: <reason>`.
@Suite("Refusal mapping")
struct RefusalMappingTests {
    /// The statuses, written out once more so a change to the mapping is a deliberate one.
    static let expectedCodes: [Refusal.Kind: UInt] = [
        .badRequest: 400, .unauthorized: 401, .forbidden: 403, .notFound: 404, .methodNotAllowed: 405,
        .conflict: 409, .preconditionFailed: 412, .tooLarge: 413, .unsupportedMediaType: 415,
        .rangeNotSatisfiable: 416, .unprocessable: 422, .failed: 500, .unavailable: 503, .insufficientStorage: 507,
        .uriTooLong: 414, .headerFieldsTooLarge: 431, .notImplemented: 501,
    ]

    @Test("each kind has its status, a one-line text/plain body and, for 401, a bearer challenge")
    func everyKind() {
        for kind in Refusal.Kind.allCases {
            let status = HTTPResponseStatus(kind)
            #expect(status.code == Self.expectedCodes[kind], "\(kind)")
            let response = OriginResponse.refused(Refusal(kind, "two\r\nlines"), cachePolicy: nil, realm: "r")
            #expect(response.status == status)
            guard case .bytes(let body) = response.body else {
                Issue.record("\(kind): not a byte body")
                continue
            }
            #expect(String(buffer: body) == "\(status.code) \(status.reasonPhrase): two  lines\n")
            #expect(response.headers.first(name: "Content-Type") == "text/plain; charset=utf-8")
            #expect(response.headers.first(name: "X-Content-Type-Options") == "nosniff")
            #expect(
                response.headers.first(name: "WWW-Authenticate") == (kind == .unauthorized ? #"Bearer realm="r""# : nil))
        }
    }

    @Test("every ingest counter is a refusal of the kind its documented status says")
    func ingestReasons() {
        let codes: [IngestCounters.Reason: UInt] = [
            .missingCredentials: 401, .wrongToken: 403, .disabled: 403, .unknownChannel: 404, .badPath: 400,
            .unsupportedType: 415, .tooLarge: 413, .truncated: 400, .malformedPlaylist: 422,
            .renditionConflict: 409, .storage: 500, .diskFull: 507, .overTargetDuration: 422,
        ]
        for reason in IngestCounters.Reason.allCases {
            let refusal = IngestRefusal("why", reason: reason).refusal
            #expect(HTTPResponseStatus(refusal.kind).code == codes[reason], "\(reason)")
            #expect(refusal.reason == "why")
        }
    }

    @Test("session and targeting errors are refusals: 403 and 400")
    func sessionErrors() {
        #expect(SessionTokenError.badSignature.refusal == Refusal(.forbidden, SessionTokenError.badSignature.description))
        let targeting = SessionTargetingError.invalidPercentEncoding
        #expect(targeting.refusal == Refusal(.badRequest, targeting.description))
    }

    /// Each path that refuses, over the assembled HTTP/1.1 pipeline: the answer is exactly what the
    /// mapping makes of the refusal the deciding layer returned.
    @Test(
        "refusals over the wire: routing, serving, method, ingest, ads",
        arguments: [
            ("GET /live/demo/v1.m3u8?_HLS_part=1 HTTP/1.1\r\nHost: o\r\n\r\n", Refusal(.badRequest, "_HLS_part requires _HLS_msn")),
            ("GET /live/nope/v1.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n", Refusal(.notFound, #"no channel "nope""#)),
            ("GET /live/demo/v9.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n", Refusal(.notFound, #"channel "demo" has no rendition "v9""#)),
            ("GET /nothing/here HTTP/1.1\r\nHost: o\r\n\r\n", Refusal(.notFound, "no such file")),
            ("PUT /ingest/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\nContent-Length: 0\r\n\r\n", Refusal(.notFound, "ingest is not enabled on this server")),
            ("GET /ssai/demo/master.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n", Refusal(.notFound, "ad insertion is not enabled on this server (no ad configuration: server.ads)")),
        ])
    func overTheWire(request: String, refusal: Refusal) throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let response = try harness.send(request)
        let status = HTTPResponseStatus(refusal.kind)
        #expect(response.status == Int(status.code))
        #expect(response.text == "\(status.code) \(status.reasonPhrase): \(refusal.reason)\n")
    }

    @Test("a method a route does not take: 405 with Allow, through the mapping")
    func methodNotAllowed() throws {
        let harness = try PipelineHarness()
        defer { harness.finish() }
        let response = try harness.send("DELETE /live/demo/v1.m3u8 HTTP/1.1\r\nHost: o\r\n\r\n")
        #expect(response.status == 405)
        #expect(response.text.hasPrefix("405 Method Not Allowed: DELETE is not allowed here; use "))
        #expect(response.header("Allow") != nil)
    }

    @Test("an ingest sink's refusal is answered through the mapping, for every kind", arguments: Refusal.Kind.allCases)
    func ingestSinkRefusals(kind: Refusal.Kind) throws {
        let harness = try PipelineHarness(ingest: RefusingSink(refusal: Refusal(kind, "refused as \(kind.rawValue)")))
        defer { harness.finish() }
        let response = try harness.send("DELETE /ingest/demo/v1/seg1.ts HTTP/1.1\r\nHost: o\r\n\r\n")
        let status = HTTPResponseStatus(kind)
        #expect(response.status == Int(status.code))
        #expect(response.text == "\(status.code) \(status.reasonPhrase): refused as \(kind.rawValue)\n")
        #expect(response.header("WWW-Authenticate") == (kind == .unauthorized ? #"Bearer realm="headwater""# : nil))
    }
}

/// An ingest sink that refuses every upload with one refusal.
private struct RefusingSink: IngestSink {
    let refusal: Refusal

    func authorize(channel: String, authorization: String?) throws(Refusal) {}

    func begin(
        channel: String, path: [String], method: IngestMethod, contentLength: Int64?
    ) throws(Refusal) -> any IngestUpload {
        throw refusal
    }
}
