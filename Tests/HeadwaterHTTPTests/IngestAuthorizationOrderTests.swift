@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import Testing

/// An upload is authorized before its size is judged (issue 18 §8): a client without the right
/// credentials gets 401/403 whatever `Content-Length` it declares, so it never learns the limits;
/// an authorized one over the server's or the channel's limit gets 413.
@Suite("Ingest: credentials before size")
struct IngestAuthorizationOrderTests {
    static func put(_ length: Int, authorization: String?) -> String {
        PushOrigin.uploadHead("x_00.ts", authorization: authorization, fields: "Content-Length: \(length)\r\n")
    }

    /// The answer to an upload whose declared body never comes. (An `EmbeddedChannel` cannot half
    /// close, so the refused connection closes at once and NIO's protocol-error handler adds a 400
    /// for the truncated body after it: only the first response is the server's answer.)
    static func answer(_ harness: PipelineHarness, _ length: Int, authorization: String?) throws -> RawResponse {
        let responses = try harness.exchange(put(length, authorization: authorization))
        return try #require(responses.first, "no answer")
    }

    @Test("over the server's limit: anonymous 401, wrong token 403, authorized 413")
    func serverLimit() throws {
        let origin = try PushOrigin()
        defer { origin.remove() }
        let harness = try PipelineHarness(content: origin.registry, ingest: origin.sink)  // 1 MiB server limit
        defer { harness.finish() }
        let anonymous = try Self.answer(harness, 5_000_000, authorization: nil)
        #expect(anonymous.status == 401)
        #expect(!anonymous.text.contains("1048576"), "the limit is not told: \(anonymous.text)")
        #expect(anonymous.header("WWW-Authenticate") != nil)

        let wrong = try PipelineHarness(content: origin.registry, ingest: origin.sink)
        defer { wrong.finish() }
        let forbidden = try Self.answer(wrong, 5_000_000, authorization: "Bearer not-the-token")
        #expect(forbidden.status == 403)
        #expect(forbidden.text == "403 Forbidden: wrong ingest token\n")

        let authorized = try PipelineHarness(content: origin.registry, ingest: origin.sink)
        defer { authorized.finish() }
        let tooLarge = try Self.answer(authorized, 5_000_000, authorization: "Bearer \(PushOrigin.token)")
        #expect(tooLarge.status == 413)
        #expect(tooLarge.text == "413 Payload Too Large: Content-Length 5000000 is more than 1048576 bytes\n")
    }

    @Test("over the channel's limit (max_upload_bytes): anonymous 401, authorized 413, counted once")
    func channelLimit() throws {
        let origin = try PushOrigin(maxUploadBytes: 100_000)
        defer { origin.remove() }
        let anonymous = try PipelineHarness(content: origin.registry, ingest: origin.sink)
        defer { anonymous.finish() }
        #expect(try Self.answer(anonymous, 200_000, authorization: nil).status == 401)
        #expect(origin.rejections(.tooLarge) == 0)
        #expect(origin.rejections(.missingCredentials) == 1)

        let authorized = try PipelineHarness(content: origin.registry, ingest: origin.sink)
        defer { authorized.finish() }
        let tooLarge = try Self.answer(authorized, 200_000, authorization: "Bearer \(PushOrigin.token)")
        #expect(tooLarge.status == 413)
        #expect(tooLarge.text == "413 Payload Too Large: x_00.ts is larger than the 100000-byte limit\n")
        #expect(origin.rejections(.tooLarge) == 1)
    }
}
