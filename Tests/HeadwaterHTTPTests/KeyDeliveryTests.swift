import Foundation
import HeadwaterConfiguration
import HeadwaterHLS
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterSources
import HeadwaterTesting
import Logging
import NIOCore
import NIOPosix
import Testing

/// `GET /keys/{channel}/{index}.key` over a real socket: the 16 bytes of ``ContentKeys`` to an
/// entitled request only (open access, a key token in the query or as `Authorization: Bearer`, or
/// the viewer's session on a stitched playlist's key URI), 404 for a key that is not served, 403
/// with a one-line reason for a refused entitlement; counted per outcome, and never a token in the
/// access log.
@Suite("Key delivery")
struct KeyDeliveryTests {
    static let keys = try! ContentKeys(secretText: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
    static let tokenSigner = try! KeyTokenSigner(secretText: "key-token-secret-of-at-least-32-bytes!!")
    static let sessionSigner = try! SessionSigner(secret: Array("0123456789abcdef".utf8))
    /// The servers' clock (µs) and the same instant in seconds.
    static let now = Fixture.now
    static let nowSeconds = UInt64(Fixture.now / 1_000_000)

    /// `enc` (open keys), `tok` (key tokens), both serving key indexes 2...4; `demo` is clear.
    static func content() -> FakeContent {
        var content = Fixture.content()
        let demo = content.channels["demo"]!
        for (name, access) in [("enc", ChannelKeying.Access.open), ("tok", .token(tokenSigner))] {
            var snapshot = demo
            snapshot.name = name
            snapshot.keying = ChannelKeying(channel: name, keys: keys, rotateEvery: 3, access: access)
            snapshot.keyIndexes = 2...4
            content.channels[name] = snapshot
        }
        return content
    }

    static func keyBytes(_ channel: String, _ index: UInt64) -> [UInt8] { keys.key(channel: channel, index: index).bytes }

    // MARK: - Open access

    @Test("open access: every served index gives exactly its derived key, 16 bytes, private and never stored")
    func openAccessGivesTheKey() async throws {
        try await withKeyServer { port in
            for index: UInt64 in 2...4 {
                let response = try await fetch(port, "/keys/enc/\(index).key")
                #expect(response.status == 200)
                #expect(response.body == Self.keyBytes("enc", index), "key \(index)")
                #expect(response.body.count == 16)
                #expect(response.header("content-type") == "application/octet-stream")
                #expect(response.header("cache-control") == "private, no-store")
                #expect(response.header("content-length") == "16")
            }
            // Keys differ by index and channel: the derivation is not ignored.
            #expect(Self.keyBytes("enc", 2) != Self.keyBytes("enc", 3) && Self.keyBytes("enc", 2) != Self.keyBytes("tok", 2))
        }
    }

    @Test("HEAD gives the headers of the GET and no body (the next response on the connection parses)")
    func headHasNoBody() async throws {
        try await withKeyServer { port in
            try await RawClient.connect(port: port).run { inbound, outbound in
                var inbound = inbound
                try await outbound.write(
                    ByteBuffer(
                        string: "HEAD /keys/enc/3.key HTTP/1.1\r\nHost: o\r\n\r\n"
                            + "GET /keys/enc/4.key HTTP/1.1\r\nHost: o\r\n\r\n"))
                var bytes: [UInt8] = []
                let responses = try await inbound.readResponses(2, into: &bytes, bodiless: { $0 == 0 })
                try #require(responses.count == 2, "\(responses.map(\.status))")
                let head = responses[0]
                #expect(head.status == 200 && head.body.isEmpty)
                #expect(head.header("content-length") == "16")
                #expect(head.header("content-type") == "application/octet-stream")
                #expect(head.header("cache-control") == "private, no-store")
                #expect(responses[1].status == 200 && responses[1].body == Self.keyBytes("enc", 4), "the HEAD wrote no body")
            }
        }
    }

    @Test("404 for an index outside the served window, a non-decimal index, an unknown or a clear channel")
    func notServedIsNotFound() async throws {
        try await withKeyServer { port in
            let targets = [
                "/keys/enc/1.key", "/keys/enc/5.key", "/keys/enc/x.key", "/keys/enc/03.key", "/keys/enc/+3.key",
                "/keys/enc/-3.key", "/keys/enc/3.5.key", "/keys/enc/18446744073709551619.key", "/keys/enc/0x3.key",
                "/keys/nosuch/3.key", "/keys/demo/3.key",
            ]
            // Shapes that are no key URI at all: the router's 404.
            for target in targets + ["/keys/enc/.key", "/keys/enc/3.key/x"] {
                let response = try await fetch(port, target)
                #expect(response.status == 404, "\(target)")
                #expect(response.body.count != 16 || response.body != Self.keyBytes("enc", 3), "\(target)")
                #expect(oneLine(response), "\(target): \(response.text)")
                #expect(response.header("content-type") != "application/octet-stream", "\(target)")
                if targets.contains(target) {
                    #expect(response.header("cache-control") == "private, no-store", "\(target)")
                }
            }
            #expect(try await fetch(port, "/keys/enc/5.key").text.contains("not in the live window"))
            #expect(try await fetch(port, "/keys/enc/x.key").text.contains("decimal"))
            #expect(try await fetch(port, "/keys/demo/3.key").text.contains("no encrypted channel"))
        }
    }

    // MARK: - Key tokens

    @Test("token access: missing, malformed, forged, expired and other-channel tokens get 403, each with its own one-line reason")
    func refusedTokens() async throws {
        let forger = try KeyTokenSigner(secretText: "a-different-secret-of-at-least-32-bytes")
        let cases: [(name: String, token: String?, reason: String)] = [
            ("missing", nil, "key token missing"),
            ("malformed", "not*base64", "malformed"),
            ("forged", forger.mint(channel: "tok", expiry: Self.nowSeconds + 600), "signature does not match"),
            ("expired", Self.tokenSigner.mint(channel: "tok", expiry: Self.nowSeconds - 5), "expired 5 s ago"),
            ("other channel", Self.tokenSigner.mint(channel: "enc", expiry: Self.nowSeconds + 600), "for channel enc, not tok"),
            ("expires now", Self.tokenSigner.mint(channel: "tok", expiry: Self.nowSeconds), "expired"),
        ]
        try await withKeyServer { port in
            var reasons: [String: String] = [:]
            for testCase in cases {
                for asBearer in [false, true] where testCase.token != nil || !asBearer {
                    let response = try await fetch(
                        port, "/keys/tok/3.key" + (asBearer ? "" : testCase.token.map { "?token=\($0)" } ?? ""),
                        fields: asBearer ? ["Authorization: Bearer \(testCase.token!)"] : [])
                    let context = "\(testCase.name)\(asBearer ? " (Bearer)" : "")"
                    #expect(response.status == 403, "\(context)")
                    #expect(response.text.contains(testCase.reason), "\(context): \(response.text)")
                    #expect(oneLine(response), "\(context): \(response.text)")
                    #expect(response.body != Self.keyBytes("tok", 3))
                    if let token = testCase.token { #expect(!response.text.contains(token), "the reason never repeats the token") }
                    reasons[testCase.name] = response.text
                }
            }
            let distinct = Set(["missing", "forged", "expired", "other channel"].compactMap { reasons[$0] })
            #expect(distinct.count == 4, "missing, forged, expired, other channel: four different reasons: \(reasons)")
        }
    }

    @Test("token access: a valid token in the query or as a bearer token gets the key; entitlement is checked before the index")
    func validTokens() async throws {
        let token = Self.tokenSigner.mint(channel: "tok", expiry: Self.nowSeconds + 600)
        try await withKeyServer { port in
            let query = try await fetch(port, "/keys/tok/3.key?token=\(token)")
            #expect(query.status == 200 && query.body == Self.keyBytes("tok", 3))
            #expect(query.header("cache-control") == "private, no-store")
            let bearer = try await fetch(port, "/keys/tok/4.key", fields: ["Authorization: Bearer \(token)"])
            #expect(bearer.status == 200 && bearer.body == Self.keyBytes("tok", 4))
            // Not `Bearer`: no token presented.
            let basic = try await fetch(port, "/keys/tok/4.key", fields: ["Authorization: Basic \(token)"])
            #expect(basic.status == 403 && basic.text.contains("key token missing"), "\(basic.text)")
            // Entitled but outside the window: 404; not entitled: 403 whatever the index, so a
            // refused request learns nothing about which keys exist.
            #expect(try await fetch(port, "/keys/tok/9.key?token=\(token)").status == 404)
            #expect(try await fetch(port, "/keys/tok/9.key").status == 403)
            #expect(try await fetch(port, "/keys/tok/x.key").status == 403)
            // An open channel needs no token, and ignores one.
            let open = try await fetch(port, "/keys/enc/2.key?token=whatever")
            #expect(open.status == 200 && open.body == Self.keyBytes("enc", 2))
        }
    }

    // MARK: - Sessions

    @Test("a session= key URI is entitled by that viewer's session through AdInsertion, whatever the channel's key access")
    func sessionEntitlement() async throws {
        let insertion = AdInsertion(
            registry: ChannelRegistry(), ruleBook: AdRuleBook(), signer: Self.sessionSigner, adminToken: nil, logger: quietLogger,
            metrics: OriginMetrics())
        let nowMilliseconds = Self.now / 1000
        let valid = Self.sessionSigner.sign(SessionToken(channel: "tok", id: "viewer-1", start: nowMilliseconds - 60_000))
        let otherChannel = Self.sessionSigner.sign(SessionToken(channel: "enc", id: "viewer-1", start: nowMilliseconds - 60_000))
        let stale = Self.sessionSigner.sign(SessionToken(channel: "tok", id: "viewer-2", start: nowMilliseconds - 25 * 3_600_000))
        let forged = try SessionSigner(secret: Array("another-secret-0123".utf8))
            .sign(SessionToken(channel: "tok", id: "viewer-1", start: nowMilliseconds - 60_000))
        #expect(insertion.refusesSession(valid, channel: "tok", now: nowMilliseconds) == nil)
        try await withKeyServer(adInsertion: insertion) { port in
            let ok = try await fetch(port, "/keys/tok/3.key?session=\(valid)")
            #expect(ok.status == 200 && ok.body == Self.keyBytes("tok", 3))
            #expect(ok.header("cache-control") == "private, no-store")
            for (name, session) in [
                ("bogus", "bogus"), ("forged", forged), ("other channel", otherChannel), ("expired", stale), ("empty", ""),
            ] {
                let response = try await fetch(port, "/keys/tok/3.key?session=\(session)")
                #expect(response.status == 403, "\(name)")
                #expect(oneLine(response), "\(name): \(response.text)")
                #expect(response.body != Self.keyBytes("tok", 3))
            }
            // A session= URI is about the session: a bogus one is refused on an open channel too.
            #expect(try await fetch(port, "/keys/enc/3.key?session=bogus").status == 403)
            #expect(try await fetch(port, "/keys/enc/3.key?session=\(otherChannel)").status == 200)
        }
        // Without ad insertion there are no sessions to entitle anything.
        try await withKeyServer { port in
            let response = try await fetch(port, "/keys/tok/3.key?session=\(valid)")
            #expect(response.status == 403 && oneLine(response))
        }
    }

    @Test("a stitched playlist of an encrypted loop channel carries the viewer's session on every key URI, and those URIs get the keys")
    func stitchedKeyURIsAreEntitledBySession() async throws {
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let package = try LoopPackage.load(multivariantPath: Self.repository.appendingPathComponent("Public/demo/master.m3u8").path)
        let keying = ChannelKeying(channel: "demo", keys: Self.keys, rotateEvery: 2, access: .token(Self.tokenSigner))
        let now: Int64 = 1_795_282_590_000_000
        let clock = FixedClock(now)
        let registry = ChannelRegistry()
        // The demo ad configuration, no break scheduled: stitched playlists of content alone.
        let ads = try AdConfiguration.load(
            file: Self.repository.appendingPathComponent("Config/ads.yaml").path,
            publicDirectory: Self.repository.appendingPathComponent("Public").path, version: 1)
        let ruleBook = AdRuleBook(ads.ruleSet)
        registry.setBreaks(
            ChannelBreaks(channel: "demo", schedule: nil, ruleBook: ruleBook, logger: quietLogger, metrics: OriginMetrics()),
            for: "demo")
        let loop = LoopChannel(name: "demo", package: package, windowSeconds: 12, startedAt: 0, keying: keying)
        let publisher = try LoopChannelPublisher(
            channel: loop, registry: registry, clock: clock, logger: quietLogger, metrics: OriginMetrics(), stateDirectory: state.path)
        publisher.publishNow()
        let insertion = AdInsertion(
            registry: registry, ruleBook: ruleBook, signer: Self.sessionSigner, adminToken: nil, logger: quietLogger,
            metrics: OriginMetrics())
        let master = try insertion.startSession(channel: "demo", query: [], headers: [], now: now / 1000).get()
        let uri = try #require(try PlaylistParser().parseMultivariant(master.bytes).variants.first { $0.uri.hasPrefix("v1.m3u8") }?.uri)
        let token = String(uri.split(separator: "=", maxSplits: 1)[1])

        try await withKeyServer(content: registry, adInsertion: insertion, clock: clock) { port in
            let stitched = try await fetch(port, "/ssai/demo/\(uri)")
            try #require(stitched.status == 200, "\(stitched.text)")
            let playlist = try PlaylistParser().parseMedia(stitched.body)
            try #require(!playlist.segments.isEmpty)
            var keyURIs: Set<String> = []
            for (index, segment) in playlist.segments.enumerated() {
                let keys = segment.tags.keys
                try #require(keys.count == 1, "segment \(index): \(keys)")
                let keyURI = try #require(keys[0].uri)
                let msn = playlist.mediaSequenceNumber(at: index)
                #expect(keyURI == "/keys/demo/\(msn / 2).key?session=\(token)", "segment \(msn)")
                keyURIs.insert(keyURI)
            }
            #expect(keyURIs.count >= 2, "keys rotate within the window: \(keyURIs)")
            for keyURI in keyURIs.sorted() {
                let index = try #require(UInt64(keyURI.dropFirst("/keys/demo/".count).prefix { $0 != "." }))
                let response = try await fetch(port, keyURI)
                #expect(response.status == 200 && response.body == Self.keyBytes("demo", index), "\(keyURI): \(response.text)")
                // The same key without the session: the channel wants a key token.
                let bare = try await fetch(port, String(keyURI.prefix { $0 != "?" }))
                #expect(bare.status == 403, "\(keyURI) without its session")
            }

            // The segment the playlist lists is served encrypted: the served key and IV give the package's bytes.
            let last = try #require(playlist.segments.last)
            let msn = playlist.mediaSequenceNumber(at: playlist.segments.count - 1)
            let served = try await fetch(port, last.uri)
            try #require(served.status == 200, "\(last.uri)")
            let key = try await fetch(port, try #require(last.tags.keys.first?.uri)).body
            let iv = try #require(last.tags.keys.first?.iv)
            let rendition = try #require(package.renditions.first { $0.name == "v1" })
            let clear = try #require(FileManager.default.contents(atPath: rendition.segments[loop.timeline.fileIndex(of: msn)].file.path))
            #expect(served.body != Array(clear), "never the clear bytes")
            #expect(try opensslDecrypt(served.body, key: key, iv: iv, in: state) == Array(clear))
        }
    }

    // MARK: - Metrics and the access log

    @Test("headwater_key_requests_total counts each answer by channel and outcome; unknown channels as `unknown`")
    func metricsCountOutcomes() async throws {
        let metrics = OriginMetrics()
        let token = Self.tokenSigner.mint(channel: "tok", expiry: Self.nowSeconds + 600)
        try await withKeyServer(metrics: metrics) { port in
            for target in [
                "/keys/enc/2.key", "/keys/enc/3.key", "/keys/enc/9.key", "/keys/tok/2.key?token=\(token)", "/keys/tok/2.key",
                "/keys/tok/2.key?token=forged", "/keys/tok/3.key", "/keys/nosuch/1.key", "/keys/nosuch-either/1.key",
                "/keys/demo/0.key",
            ] {
                _ = try await fetch(port, target)
            }
            let scraped = try await fetch(port, "/metrics")
            let exposition = Exposition(scraped.text)
            let name = "headwater_key_requests_total"
            #expect(exposition[name, ["channel": "enc", "outcome": "ok"]] == 2)
            #expect(exposition[name, ["channel": "enc", "outcome": "not_found"]] == 1)
            #expect(exposition[name, ["channel": "tok", "outcome": "ok"]] == 1)
            #expect(exposition[name, ["channel": "tok", "outcome": "forbidden"]] == 3)
            #expect(exposition[name, ["channel": "unknown", "outcome": "not_found"]] == 2)
            #expect(exposition[name, ["channel": "demo", "outcome": "not_found"]] == 1)
            #expect(exposition.samples(name).count == 6, "\(exposition.samples(name).map(\.labels))")
            #expect(!scraped.text.contains(token), "never a token in the metrics")
            #expect(!scraped.text.contains("nosuch"), "a channel name from the request is never a label value")
        }
    }

    @Test("the access log line of a ?token= key request shows `token=-`, never the token")
    func accessLogRedactsTheToken() async throws {
        let recorder = LogRecorder()
        let token = Self.tokenSigner.mint(channel: "tok", expiry: Self.nowSeconds + 600)
        try await withKeyServer(accessLogger: recorder.logger) { port in
            #expect(try await fetch(port, "/keys/tok/3.key?token=\(token)").status == 200)
            #expect(try await fetch(port, "/keys/tok/4.key?x=1&token=\(token)&y=2").status == 200)
            #expect(try await fetch(port, "/keys/tok/4.key?token=forged-\(token)").status == 403)
            for _ in 0..<300 where accessLines(recorder).count < 3 { try await Task.sleep(for: .milliseconds(10)) }
        }
        let lines = accessLines(recorder)
        try #require(lines.count == 3, "\(recorder.lines)")
        #expect(lines.allSatisfy { !$0.contains(token) }, "\(lines)")
        #expect(lines[0].contains("\"GET /keys/tok/3.key?token=- HTTP/1.1\" 200 16 "), "\(lines[0])")
        #expect(lines[1].contains("\"GET /keys/tok/4.key?x=1&token=-&y=2 HTTP/1.1\" 200 16 "), "\(lines[1])")
        #expect(lines[2].contains("\"GET /keys/tok/4.key?token=- HTTP/1.1\" 403 "), "\(lines[2])")
        #expect(recorder.snapshot.allSatisfy { record in !record.metadata.values.contains { $0.contains(token) } })
    }

    @Test("a token under a percent-encoded name (`%74oken=`), which the server accepts, is not logged either")
    func accessLogRedactsAnEncodedTokenName() async throws {
        let recorder = LogRecorder()
        let token = Self.tokenSigner.mint(channel: "tok", expiry: Self.nowSeconds + 600)
        try await withKeyServer(accessLogger: recorder.logger) { port in
            #expect(try await fetch(port, "/keys/tok/3.key?%74oken=\(token)").status == 200, "the query name is decoded")
            #expect(try await fetch(port, "/keys/tok/3.key?tok%65n=\(token)").status == 200)
            for _ in 0..<300 where accessLines(recorder).count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        }
        let lines = accessLines(recorder)
        try #require(lines.count == 2, "\(recorder.lines)")
        for line in lines { #expect(!line.contains(token), "\(line)") }
        #expect(lines[0].contains("?%74oken=- HTTP/1.1"), "\(lines[0])")
    }

    // MARK: - Harness

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The access log's request lines.
    private func accessLines(_ recorder: LogRecorder) -> [String] {
        recorder.snapshot.filter { $0.level == .info && $0.message.contains("\"GET ") }.map(\.message)
    }

    /// Runs an `OriginServer` on 127.0.0.1 (an ephemeral port) with ad insertion when given, its
    /// clock at ``now``, for the duration of `body`.
    private func withKeyServer(
        content: any OriginContent = KeyDeliveryTests.content(), adInsertion: AdInsertion? = nil,
        metrics: OriginMetrics = OriginMetrics(), accessLogger: Logger? = nil,
        clock: any WallClock = FixedClock(KeyDeliveryTests.now), _ body: @Sendable (_ port: Int) async throws -> Void
    ) async throws {
        var configuration = OriginServerConfiguration(port: 0)
        configuration.metrics = metrics
        let server = OriginServer(
            configuration: configuration, content: content, ingest: nil, logger: quietLogger, accessLogger: accessLogger,
            clock: clock, adInsertion: adInsertion)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let address = try await server.waitUntilListening()
            let port = try #require(address.port)
            do {
                try await body(port)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
            try await group.waitForAll()
        }
    }
}

/// One request on a connection of its own; its response.
private func fetch(_ port: Int, _ target: String, method: String = "GET", fields: [String] = []) async throws -> RawResponse {
    try await RawClient.connect(port: port).run { inbound, outbound in
        var inbound = inbound
        let head = "\(method) \(target) HTTP/1.1\r\nHost: o\r\nConnection: close\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
        try await outbound.write(ByteBuffer(string: head))
        var bytes: [UInt8] = []
        let responses = try await inbound.readResponses(1, into: &bytes, bodiless: { _ in method == "HEAD" })
        return try #require(responses.first, "no response to \(method) \(target)")
    }
}

/// A refusal's body is one line: `403 Forbidden: <reason>\n`.
private func oneLine(_ response: RawResponse) -> Bool {
    let text = response.text
    return text.hasSuffix("\n") && text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).count == 1
        && text.hasPrefix("\(response.status) ")
}

/// `bytes` decrypted by `openssl enc -d -aes-128-cbc` (an implementation independent of Headwater's).
private func opensslDecrypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8], in directory: TemporaryDirectory) throws -> [UInt8] {
    let name = UUID().uuidString
    let input = try directory.write("\(name).enc", bytes)
    let output = directory.path + "/\(name).dec"
    let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl", "enc", "-d", "-aes-128-cbc", "-K", hex(key), "-iv", hex(iv), "-in", input, "-out", output]
    try process.run()
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "openssl enc -d exited \(process.terminationStatus) (is openssl installed?)")
    return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
}
