import HeadwaterTesting
@testable import HeadwaterHTTP
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

/// ``AccessLogLines``: one write per turn of the event loop, and lines formatted the same whichever
/// way their fields are copied.
@Suite("Access log lines")
struct AccessLogLinesTests {
    /// What the lines' writer was given, one element per `write`.
    final class Writes: Sendable {
        let chunks = Mutex<[String]>([])
        func record(_ bytes: UnsafeRawBufferPointer) {
            let text = String(decoding: bytes, as: UTF8.self)
            chunks.withLock { $0.append(text) }
        }
        var snapshot: [String] { chunks.withLock { $0 } }
    }

    static func entry(uri: String = "/live/demo/v1.m3u8", status: HTTPResponseStatus = .ok) -> AccessLogEntry {
        AccessLogEntry(
            client: "127.0.0.1", receivedAt: 1_795_292_259, method: .GET, uri: uri, version: .http1_1, route: "r",
            path: uri, status: status, bytes: 519, referer: nil, userAgent: "Lavf/59.27.100", sessionID: nil,
            cacheStatus: .hit, contentEncoding: "gzip", uncompressedLength: nil, started: .now())
    }

    static let time = AccessLogEntry.commonLogTime(unixSeconds: 1_795_292_259)

    @Test func linesOfOneLoopTurnAreWrittenTogetherAfterIt() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let writes = Writes()
        let lines = try await loop.submit {
            NIOLoopBound(
                AccessLogLines(logger: Logger(label: "a") { _ in AccessLogLineHandler() }, eventLoop: loop, write: writes.record),
                eventLoop: loop)
        }.get()
        let writtenDuringTheTurn = try await loop.submit {
            for index in 0..<3 {
                lines.value.log(Self.entry(uri: "/live/demo/\(index).ts"), error: nil, time: Self.time, finished: .now())
            }
            return writes.snapshot.count
        }.get()
        #expect(writtenDuringTheTurn == 0, "lines wait for the end of the loop's turn")
        try await loop.submit {}.get()  // queued after the write the first line asked for
        let chunks = writes.snapshot
        try #require(chunks.count == 1, "one write for the turn's three lines: \(chunks)")
        let written = chunks[0].split(separator: "\n", omittingEmptySubsequences: false)
        #expect(written.count == 4 && written[3].isEmpty, "three whole lines")
        for index in 0..<3 {
            #expect(written[index].contains("\"GET /live/demo/\(index).ts HTTP/1.1\" 200 519 "), "\(written[index])")
        }

        // The next turn's lines get a write of their own.
        try await loop.submit { lines.value.log(Self.entry(), error: nil, time: Self.time, finished: .now()) }.get()
        try await loop.submit {}.get()
        #expect(writes.snapshot.count == 2)
        #expect(writes.snapshot.last?.hasSuffix(" cache=HIT sid=- enc=gzip\n") == true, "\(writes.snapshot)")
    }

    @Test func aTurnWithManyLinesWritesWhenTheBufferFills() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let writes = Writes()
        let (writtenDuringTheTurn, count) = try await loop.submit {
            let lines = AccessLogLines(logger: Logger(label: "a") { _ in AccessLogLineHandler() }, eventLoop: loop, write: writes.record)
            var count = 0
            while writes.snapshot.isEmpty && count < 10_000 {  // 32 KiB is about 250 lines
                lines.log(Self.entry(), error: nil, time: Self.time, finished: .now())
                count += 1
            }
            return (writes.snapshot.first ?? "", count)
        }.get()
        #expect(writtenDuringTheTurn.utf8.count >= AccessLogLines.flushThreshold)
        #expect(writtenDuringTheTurn.utf8.count < AccessLogLines.flushThreshold + 300, "written as soon as it is full")
        try await loop.submit {}.get()
        let all = writes.snapshot.joined()
        #expect(all.split(separator: "\n").count == count, "every line, once")
    }

    @Test func anotherHandlerGetsEachLineWithItsMetadataAtOnce() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let recorder = LogRecorder()
        let writes = Writes()
        let seen = try await loop.submit {
            let lines = AccessLogLines(logger: recorder.logger, eventLoop: loop, write: writes.record)
            lines.log(Self.entry(status: .notFound), error: nil, time: Self.time, finished: .now())
            return recorder.snapshot
        }.get()
        try #require(seen.count == 1, "logged before the turn ends")
        #expect(seen[0].message.contains("\" 404 519 \"-\" \"Lavf/59.27.100\" rt="))
        #expect(seen[0].metadata["http.response.status_code"] == "404")
        try await loop.submit {}.get()
        #expect(writes.snapshot.isEmpty, "nothing written to standard output")
    }

    @Test func aLoggerAboveInfoGetsNoLines() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let writes = Writes()
        try await loop.submit {
            var logger = Logger(label: "a") { _ in AccessLogLineHandler() }
            logger.logLevel = .warning
            AccessLogLines(logger: logger, eventLoop: loop, write: writes.record)
                .log(Self.entry(), error: nil, time: Self.time, finished: .now())
        }.get()
        try await loop.submit {}.get()
        #expect(writes.snapshot.isEmpty)
    }

    // MARK: - Formatting

    /// The line's quoted and escaped fields, a byte at a time, as the format says (README.md
    /// "Logs, metrics and health"): the reference the whole-run copies must match.
    static func escapedReference(_ text: String, limit: Int, escapingSpace: Bool = false) -> String {
        var output = ""
        for (index, byte) in text.utf8.enumerated() {
            if index == limit { return output + "..." }
            let plain = (0x20..<0x7F).contains(byte) && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
                && !(escapingSpace && byte == UInt8(ascii: " "))
            output += plain ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
        }
        return output
    }

    /// `uri` without credentials, query item by query item (the text between `?` and `&`
    /// separators after the first `?`; the path is kept as it is): an item named `session` keeps its value up to its first `.`, then `-`; one named
    /// `token`, or whose name holds a `%`, keeps only `-` as its value.
    static func redactedReference(_ uri: String) -> String {
        let bytes = Array(uri.utf8)
        guard let query = bytes.firstIndex(of: UInt8(ascii: "?")) else { return uri }
        var output: [UInt8] = Array(bytes[..<query])
        var item: [UInt8] = []
        func endItem() {
            defer { item = [] }
            guard let equals = item.firstIndex(of: UInt8(ascii: "=")) else {
                output += item
                return
            }
            let name = Array(item[..<equals])
            if name == Array("token".utf8) || name.contains(UInt8(ascii: "%")) {
                output += item[...equals] + [UInt8(ascii: "-")]
            } else if name == Array("session".utf8), let dot = item[equals...].firstIndex(of: UInt8(ascii: ".")) {
                output += item[...dot] + [UInt8(ascii: "-")]
            } else {
                output += item
            }
        }
        for byte in bytes[query...] {
            if byte == UInt8(ascii: "?") || byte == UInt8(ascii: "&") {
                endItem()
                output.append(byte)
            } else {
                item.append(byte)
            }
        }
        endItem()
        return String(decoding: output, as: UTF8.self)
    }

    @Test("fields copied whole read as the byte-by-byte reference: generated fields")
    func lineFieldsMatchTheByteByByteReference() {
        var random = SeededRandom(seed: 0x5EED_0A11)
        let pieces = [
            "a", "Z", "/", "-", ".", " ", "\"", "\\", "é", "\u{7}", "\u{7F}", "?", "&", "=", "session", "session=ab.cd",
            "x.y", "%20", "session=", "?session=", "&session=", "sessions=", "ses", "token=", "?token=ab", "&tok",
            "%74oken=", "t",
        ]
        func text(maxPieces: Int) -> String {
            (0..<random.int(0...maxPieces)).map { _ in pieces[random.int(0...(pieces.count - 1))] }.joined()
        }
        for round in 0..<2_000 {
            let long = random.chance(0.05)
            let uri = "/" + (long ? String(repeating: "v", count: random.int(2040...2060)) : "") + text(maxPieces: 12)
            let userAgent = random.chance(0.2) ? nil : (long ? String(repeating: "u", count: random.int(1020...1030)) : "") + text(maxPieces: 8)
            let referer = random.chance(0.5) ? nil : text(maxPieces: 8)
            let sessionID = random.chance(0.5) ? nil : text(maxPieces: 6)
            var entry = Self.entry(uri: uri)
            entry.userAgent = userAgent
            entry.referer = referer
            entry.sessionID = sessionID
            let line = entry.line(duration: 1_234_567, time: Self.time)
            let target = Self.escapedReference(Self.redactedReference(uri), limit: AccessLogEntry.maxTargetLength)
            let expected = "127.0.0.1 - - [\(Self.time)] \"GET \(target) HTTP/1.1\" 200 519 "
                + "\"\(referer.map { Self.escapedReference($0, limit: 1024) } ?? "-")\" "
                + "\"\(userAgent.map { Self.escapedReference($0, limit: 1024) } ?? "-")\" rt=1.234567 cache=HIT "
                + "sid=\(sessionID.map { Self.escapedReference($0, limit: 1024, escapingSpace: true) } ?? "-") enc=gzip"
            #expect(line == expected, "round \(round)")
            if line != expected { return }
        }
    }

    @Test func numbersAreWrittenInDecimal() {
        var entry = Self.entry()
        for (bytes, status) in [(0, HTTPResponseStatus.ok), (9, .partialContent), (10, .notFound), (104_857_600, .ok), (Int64.max, .ok)] {
            entry.bytes = bytes
            entry.status = status
            #expect(entry.line(duration: 0, time: Self.time).contains("\" \(status.code) \(bytes) \"-\""))
        }
        #expect(entry.line(duration: 12_000_005, time: Self.time).contains(" rt=12.000005 "))
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
