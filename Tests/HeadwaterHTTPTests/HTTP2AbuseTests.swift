import NIOCore
import NIOPosix
import Testing

@testable import HeadwaterHTTP

/// HTTP/2's limits (``HTTP2Limits``) against a client that misbehaves on purpose, speaking raw
/// frames over h2c (RFC 9113 §4.1) so nothing in a client library softens it: each abuse is refused
/// with the connection error the limit promises, and the server keeps serving everyone else.
@Suite struct HTTP2AbuseTests {
    /// A frame: 24-bit length, type, flags, stream (RFC 9113 §4.1).
    static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + bigEndian(stream) + payload
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// HPACK (RFC 7541): `:method GET`, `:scheme http`, `:path /live/demo/v1.m3u8`, `:authority localhost`.
    static let requestBlock: [UInt8] =
        [0x82, 0x86]
        + [0x04] + hpackString("/live/demo/v1.m3u8")  // :path, literal without indexing, name index 4
        + [0x01] + hpackString("localhost")  // :authority, name index 1

    /// An HPACK string literal without Huffman coding: a 7-bit-prefix length, then the bytes.
    static func hpackString(_ text: String) -> [UInt8] {
        hpackInteger(text.utf8.count, prefixBits: 7) + Array(text.utf8)
    }

    static func hpackInteger(_ value: Int, prefixBits: Int) -> [UInt8] {
        let limit = (1 << prefixBits) - 1
        guard value >= limit else { return [UInt8(value)] }
        var bytes = [UInt8(limit)]
        var rest = value - limit
        while rest >= 128 {
            bytes.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        bytes.append(UInt8(rest))
        return bytes
    }

    static let preface = HTTP2Preface.bytes + frame(type: 0x4, stream: 0)  // and an empty SETTINGS

    /// The frames the server sent: (type, flags, stream, payload).
    static func frames(in bytes: [UInt8]) -> [(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8])] {
        var frames: [(UInt8, UInt8, UInt32, [UInt8])] = []
        var at = 0
        while at + 9 <= bytes.count {
            let length = Int(bytes[at]) << 16 | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2])
            guard at + 9 + length <= bytes.count else { break }
            let stream = bytes[at + 5..<at + 9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            frames.append((bytes[at + 3], bytes[at + 4], stream, Array(bytes[at + 9..<at + 9 + length])))
            at += 9 + length
        }
        return frames
    }

    /// The error code of the server's GOAWAY, if it sent one.
    static func goAwayError(in bytes: [UInt8]) -> UInt32? {
        guard let goAway = frames(in: bytes).last(where: { $0.type == 0x7 }), goAway.payload.count >= 8 else { return nil }
        return goAway.payload[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// Sends `bytes` on a new connection to `port` and reads until the server closes it (at most
    /// 10 s, then the test fails on the missing close). `acknowledgingPings`: answer each PING the
    /// server sends, as a well-behaved client does (a graceful close waits for the ACK).
    static func sendAndReadUntilClosed(
        _ bytes: [UInt8], port: Int, acknowledgingPings: Bool = false
    ) async throws -> (received: [UInt8], closed: Bool) {
        let client = try await RawClient.connect(port: port)
        let channel = client.channel.channel
        let deadline = channel.eventLoop.scheduleTask(in: .seconds(10)) { channel.close(promise: nil) }
        let started = ContinuousClock.now
        let received: [UInt8] = try await client.run { inbound, outbound in
            try await outbound.write(ByteBuffer(bytes: bytes))
            var iterator = inbound
            var received: [UInt8] = []
            var acknowledged = 0
            while let chunk = try? await iterator.next() {
                received.append(contentsOf: chunk.readableBytesView)
                guard acknowledgingPings else { continue }
                let pings = frames(in: received).filter { $0.type == 0x6 && $0.flags & 0x1 == 0 }
                for ping in pings.dropFirst(acknowledged) {
                    try? await outbound.write(ByteBuffer(bytes: frame(type: 0x6, flags: 0x1, stream: 0, ping.payload)))
                }
                acknowledged = pings.count
            }
            return received
        }
        deadline.cancel()
        return (received, ContinuousClock.now - started < .seconds(9))
    }

    /// After each abuse, an ordinary HTTP/1.1 request on a new connection is answered.
    static func serverStillAnswers(port: Int) async throws {
        try await RawClient.connect(port: port).run { inbound, outbound in
            try await outbound.write(ByteBuffer(string: "GET /live/demo/v1.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n"))
            var iterator = inbound
            var bytes: [UInt8] = []
            let responses = try await iterator.readResponses(1, into: &bytes)
            #expect(responses.first?.status == 200)
        }
    }

    @Test func aRapidResetFloodEndsTheConnectionWithEnhanceYourCalm() async throws {
        try await withServer(configure: { $0.http2 = HTTP2Limits(maxResetsPerWindow: 50, resetWindow: .seconds(30)) }) {
            port in
            var flood = Self.preface
            for index in 0..<200 {
                let stream = UInt32(2 * index + 1)
                flood += Self.frame(type: 0x1, flags: 0x5, stream: stream, Self.requestBlock)  // HEADERS, END_STREAM|END_HEADERS
                flood += Self.frame(type: 0x3, stream: stream, Self.bigEndian(0x8))  // RST_STREAM(CANCEL)
            }
            let (received, closed) = try await Self.sendAndReadUntilClosed(flood, port: port)
            #expect(Self.goAwayError(in: received) == 0xB, "GOAWAY(ENHANCE_YOUR_CALM)")
            #expect(closed, "the server closes the connection")
            try await Self.serverStillAnswers(port: port)
        }
    }

    @Test func aHeaderListOverTheLimitIsRefused() async throws {
        try await withServer { port in
            // 20 KB of one field (over the 16 KiB header list limit), in HEADERS + CONTINUATION
            // frames of at most 16 KiB (the default maximum frame size).
            let block = Self.requestBlock + [0x00] + Self.hpackString("x-padding")
                + Self.hpackString(String(repeating: "a", count: 20_000))
            let split = 16_000
            var bytes = Self.preface
            bytes += Self.frame(type: 0x1, flags: 0x1, stream: 1, Array(block[..<split]))  // HEADERS, END_STREAM
            bytes += Self.frame(type: 0x9, flags: 0x4, stream: 1, Array(block[split...]))  // CONTINUATION, END_HEADERS
            let (received, closed) = try await Self.sendAndReadUntilClosed(bytes, port: port)
            let frames = Self.frames(in: received)
            #expect(!frames.contains { $0.type == 0x1 && $0.stream == 1 }, "no response HEADERS for the oversized request")
            #expect(Self.goAwayError(in: received) == 0x1, "GOAWAY(PROTOCOL_ERROR): \(frames.map { ($0.type, $0.stream) })")
            #expect(closed, "the server closes the connection")
            try await Self.serverStillAnswers(port: port)
        }
    }

    /// The SETTINGS the server announces carry the limits.
    @Test func theServerAnnouncesItsLimits() async throws {
        try await withServer(configure: { $0.http2 = HTTP2Limits(maxConcurrentStreams: 77, maxHeaderListSize: 9_999) }) {
            port in
            let received: [UInt8] = try await RawClient.connect(port: port).run { inbound, outbound in
                try await outbound.write(ByteBuffer(bytes: Self.preface))
                var iterator = inbound
                var bytes: [UInt8] = []
                while Self.frames(in: bytes).first(where: { $0.type == 0x4 && $0.flags & 0x1 == 0 }) == nil,
                    let chunk = try await iterator.next()
                {
                    bytes.append(contentsOf: chunk.readableBytesView)
                }
                return bytes
            }
            let settings = try #require(Self.frames(in: received).first { $0.type == 0x4 && $0.flags & 0x1 == 0 })
            var values: [UInt16: UInt32] = [:]
            for at in stride(from: 0, to: settings.payload.count, by: 6) {
                let identifier = UInt16(settings.payload[at]) << 8 | UInt16(settings.payload[at + 1])
                values[identifier] = settings.payload[at + 2..<at + 6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            }
            #expect(values[0x3] == 77, "SETTINGS_MAX_CONCURRENT_STREAMS")
            #expect(values[0x6] == 9_999, "SETTINGS_MAX_HEADER_LIST_SIZE")
        }
    }
}
