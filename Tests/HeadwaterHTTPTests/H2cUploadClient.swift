import NIOCore
import NIOHPACK
import Testing

/// An upload over h2c (prior knowledge) in raw frames, each body byte a DATA frame of its own, as a
/// client library would never send it: the HTTP/2 form of a one-byte-chunk upload. It keeps to
/// both flow-control windows (RFC 9113 §6.9), reading the server's SETTINGS and WINDOW_UPDATEs
/// whenever a window is used up, and returns the response's `:status`.
enum H2cUploadClient {
    typealias Frames = HTTP2AbuseTests

    /// HPACK: `:method PUT`, `:scheme http`, `:path`, `:authority o`, `authorization` (literals
    /// without indexing, by static-table name: 2, 4, 1, 23).
    static func requestBlock(path: String, authorization: String) -> [UInt8] {
        [0x02] + Frames.hpackString("PUT") + [0x86]
            + [0x04] + Frames.hpackString(path)
            + [0x01] + Frames.hpackString("o")
            + Frames.hpackInteger(23, prefixBits: 4) + Frames.hpackString(authorization)
    }

    static func upload(port: Int, path: String, authorization: String, body: [UInt8]) async throws -> Int {
        try await RawClient.connect(port: port).run { inbound, outbound in
            var inbound = inbound
            var reader = FrameReader()
            try await outbound.write(ByteBuffer(bytes: Frames.preface))
            try await outbound.write(
                ByteBuffer(bytes: Frames.frame(type: 0x1, flags: 0x4, stream: 1, requestBlock(path: path, authorization: authorization))))
            var sent = 0
            while sent < body.count {
                // What both windows allow now, in writes of up to 64 KiB of frames.
                let allowed = min(reader.connectionWindow, reader.streamWindow, 6_000, body.count - sent)
                if allowed <= 0 || !reader.settingsReceived {
                    guard try await reader.readMore(from: &inbound) else { throw ChannelError.eof }
                    continue
                }
                var frames: [UInt8] = []
                frames.reserveCapacity(allowed * 10)
                for byte in body[sent..<sent + allowed] { frames += Frames.frame(type: 0x0, stream: 1, [byte]) }
                try await outbound.write(ByteBuffer(bytes: frames))
                sent += allowed
                reader.connectionWindow -= allowed
                reader.streamWindow -= allowed
            }
            try await outbound.write(ByteBuffer(bytes: Frames.frame(type: 0x0, flags: 0x1, stream: 1)))  // END_STREAM
            while reader.status == nil {
                guard try await reader.readMore(from: &inbound) else { throw ChannelError.eof }
            }
            return reader.status!
        }
    }

    /// The server's frames as far as the upload needs them.
    struct FrameReader {
        var received: [UInt8] = []
        var settingsReceived = false
        /// RFC 9113 §6.9.2: 65,535 until SETTINGS or WINDOW_UPDATE say more.
        var connectionWindow = 65_535
        var streamWindow = 65_535
        var status: Int?
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())

        /// Reads what the server sent next and applies its frames; false at the end of the stream.
        mutating func readMore(from inbound: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator) async throws -> Bool {
            guard let chunk = try await inbound.next() else { return false }
            received += chunk.readableBytesView
            var at = 0
            while at + 9 <= received.count {
                let length = Int(received[at]) << 16 | Int(received[at + 1]) << 8 | Int(received[at + 2])
                guard at + 9 + length <= received.count else { break }
                let type = received[at + 3]
                let flags = received[at + 4]
                let stream = received[at + 5..<at + 9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
                let payload = Array(received[at + 9..<at + 9 + length])
                try apply(type: type, flags: flags, stream: stream, payload: payload)
                at += 9 + length
            }
            received.removeFirst(at)
            return true
        }

        mutating func apply(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8]) throws {
            func value(_ bytes: ArraySlice<UInt8>) -> Int { bytes.reduce(0) { $0 << 8 | Int($1) } }
            switch type {
            case 0x4 where flags & 0x1 == 0:  // SETTINGS
                settingsReceived = true
                for start in stride(from: 0, to: payload.count, by: 6) where value(payload[start..<start + 2]) == 0x4 {
                    streamWindow += value(payload[start + 2..<start + 6]) - 65_535  // INITIAL_WINDOW_SIZE
                }
            case 0x8:  // WINDOW_UPDATE
                let increment = value(payload[0..<4]) & 0x7FFF_FFFF
                if stream == 0 { connectionWindow += increment } else if stream == 1 { streamWindow += increment }
            case 0x1 where stream == 1:  // HEADERS: the response
                var block = ByteBuffer(bytes: payload)
                let headers = try decoder.decodeHeaders(from: &block)
                status = headers.first(name: ":status").flatMap { Int($0) }
            case 0x3 where stream == 1, 0x7:  // RST_STREAM, GOAWAY
                Issue.record("the server ended the upload: frame type \(type), payload \(payload)")
                throw ChannelError.eof
            default:
                break
            }
        }
    }
}
