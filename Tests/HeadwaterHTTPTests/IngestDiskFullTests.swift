import Foundation
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterTesting
import Logging
import NIOCore
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A full disk (issue 18 §5), on a real 2 MiB tmpfs as the state directory: uploads are answered
/// 507 with a one-line reason, counted (`headwater_ingest_rejected_total{reason="disk_full"}`) and
/// logged at most once per interval with the count since the last line; the playlist and the
/// published segments are still served; once files are deleted, the next upload is accepted.
@Suite("Ingest on a full disk", .serialized)
struct IngestDiskFullTests {
    static let diskFull =
        "507 Insufficient Storage: the state directory's file system is full (No space left on device)\n"

    @Test("a full state directory: 507, counted, logged once per interval, serving goes on, ingest resumes when space returns")
    func fullDisk() async throws {
        guard let mount = try TmpfsMount(size: "2m") else { return }
        defer { mount.remove() }
        let log = LogRecorder()
        let clock = SteppingClock(Fixture.now)
        let origin = try PushOrigin(stateDirectory: mount.path + "/state", logger: log.logger, clock: clock)
        let segments = (0..<3).map { patternBytes(count: 100_000, seed: UInt64($0)) }
        try origin.publish(segments: 3) { segments[$0] }
        let filler = mount.path + "/filler"
        let filled = Self.fill(filler)
        #expect(filled > 1_000_000, "the filler took what was left: \(filled) bytes")

        try await withServer(
            content: origin.registry, ingest: origin.sink, configure: { $0.metrics = origin.metrics }, clock: clock
        ) { port in
            // Declared length, then chunked: both refused with the reason, the connection closed.
            let declared = try await Self.upload("x_03.ts", patternBytes(count: 200_000), chunked: false, port: port)
            #expect(declared?.status == 507)
            #expect(declared?.text == Self.diskFull)
            let chunked = try await Self.upload("x_04.ts", patternBytes(count: 200_000), chunked: true, port: port)
            #expect(chunked?.status == 507)
            #expect(chunked?.text == Self.diskFull)
            #expect(origin.rejections(.diskFull) == 2)
            #expect(log.count("file system is full", atLeast: .error) == 1, "one line per interval: \(log.lines)")

            // The next interval: one more line, counting the refusals since the last one.
            _ = try await Self.upload("x_05.ts", patternBytes(count: 200_000), chunked: false, port: port)
            clock.advance(seconds: 10)
            _ = try await Self.upload("x_06.ts", patternBytes(count: 200_000), chunked: false, port: port)
            #expect(origin.rejections(.diskFull) == 4)
            #expect(log.count("file system is full", atLeast: .error) == 2, "\(log.lines)")
            #expect(log.count("3 uploads refused since the last line", atLeast: .error) == 1, "\(log.lines)")

            // Serving goes on: the playlist and every published segment, byte for byte.
            let served = try await Self.fetchPublished(port: port)
            #expect(served.count == 3)
            for (index, bytes) in served.enumerated() { #expect(sameBytes(bytes, segments[index]), "segment \(index)") }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: mount.path + "/state/push/live")
                .filter { $0.hasSuffix(".part") }
            #expect(leftovers.isEmpty, "refused uploads leave nothing behind: \(leftovers)")

            // Space returns: ingest resumes by itself.
            try FileManager.default.removeItem(atPath: filler)
            let accepted = try await Self.upload("x_07.ts", patternBytes(count: 200_000), chunked: true, port: port)
            #expect(accepted?.status == 201)
            #expect(origin.rejections(.diskFull) == 4)
        }
    }

    /// Writes zeros to `path` until the file system refuses; returns how many bytes it took.
    static func fill(_ path: String) -> Int {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let block = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while true {
            let written = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { return total }
            total += written
        }
    }

    /// PUTs `bytes` as `path` (`Content-Length`, or chunked in 10,000-byte chunks) and returns the answer.
    static func upload(_ path: String, _ bytes: [UInt8], chunked: Bool, port: Int) async throws -> RawResponse? {
        guard chunked else {
            return try await RawClient.exchange(
                port: port, head: PushOrigin.uploadHead(path, fields: "Content-Length: \(bytes.count)\r\n"), body: bytes)
        }
        var body: [UInt8] = []
        for start in stride(from: 0, to: bytes.count, by: 10_000) {
            let chunk = bytes[start..<min(start + 10_000, bytes.count)]
            body += Array((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + Array("\r\n".utf8)
        }
        body += Array("0\r\n\r\n".utf8)
        return try await RawClient.exchange(
            port: port, head: PushOrigin.uploadHead(path, fields: "Transfer-Encoding: chunked\r\n"), body: body)
    }

    /// The published playlist's segments, fetched by the URIs it lists.
    static func fetchPublished(port: Int) async throws -> [[UInt8]] {
        try await RawClient.connect(port: port).run { inbound, outbound in
            var inbound = inbound
            var bytes: [UInt8] = []
            try await outbound.write(ByteBuffer(string: PushOrigin.playlistRequest))
            let playlist = try #require(try await inbound.nextResponse(buffered: &bytes))
            #expect(playlist.status == 200)
            var segments: [[UInt8]] = []
            for uri in playlist.text.split(separator: "\n") where !uri.hasPrefix("#") && !uri.isEmpty {
                try await outbound.write(ByteBuffer(string: "GET /live/\(PushOrigin.channel)/\(uri) HTTP/1.1\r\nHost: o\r\n\r\n"))
                let segment = try #require(try await inbound.nextResponse(buffered: &bytes))
                #expect(segment.status == 200, "\(uri)")
                segments.append(segment.body)
            }
            return segments
        }
    }
}

/// A tmpfs of a given size mounted on a fresh directory (we run as root), unmounted by ``remove()``.
struct TmpfsMount {
    let path: String

    /// Mounts one, or records an issue and returns `nil` when mounting is not permitted here.
    init?(size: String) throws {
        path = NSTemporaryDirectory() + "headwater-tmpfs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let (status, output) = try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard status == 0 else {
            Issue.record("cannot mount a tmpfs on \(path) (a full disk cannot be tested here): \(output)")
            try? FileManager.default.removeItem(atPath: path)
            return nil
        }
    }

    func remove() {
        _ = try? Self.run("/bin/umount", [path])
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, output)
    }
}

/// A wall clock the test moves forward.
final class SteppingClock: WallClock {
    private let micros: Atomic<Int64>
    init(_ start: Int64) { micros = Atomic(start) }
    func now() -> Int64 { micros.load(ordering: .relaxed) }
    func advance(seconds: Int64) { micros.add(seconds * 1_000_000, ordering: .relaxed) }
    func advance(milliseconds: Int64) { micros.add(milliseconds * 1_000, ordering: .relaxed) }
}
