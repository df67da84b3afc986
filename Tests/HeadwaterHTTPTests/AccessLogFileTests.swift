import Foundation
import HeadwaterConfiguration
@testable import HeadwaterHTTP
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// ``AccessLogOutput``: the access log in a file, written by a real server over real sockets;
/// reopened mid-traffic as logrotate and SIGUSR1 do; switched off and to another file as a reload
/// does; an unopenable path refused without losing the file in use.
@Suite("Access log file", .serialized)
struct AccessLogFileTests {
    /// `n` of each access line `"GET /healthz?n=<n> HTTP/1.1" 200 …`, or a failure naming any line
    /// that is not a whole access line.
    static func requestNumbers(in text: String, file: String) -> [Int] {
        var numbers: [Int] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            guard line.hasPrefix("127.0.0.1 - - ["), line.hasSuffix(" cache=- sid=- enc=-"),
                let start = line.range(of: "\"GET /healthz?n="), let end = line.range(of: " HTTP/1.1\" 200 ")
            else {
                Issue.record("\(file): not a whole access line: \(line)")
                continue
            }
            if let number = Int(line[start.upperBound..<end.lowerBound]) { numbers.append(number) }
        }
        return numbers
    }

    static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// Waits until the files hold `count` lines between them (a line is written at the end of its
    /// event loop's turn, which may come after the client read the response).
    static func waitForLines(_ count: Int, in paths: [String]) async throws {
        for _ in 0..<200 {
            let lines = paths.map { read($0).utf8.count { $0 == UInt8(ascii: "\n") } }.reduce(0, +)
            if lines >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Sends `GET /healthz?n=<n>` for each of `numbers` over `connections` keep-alive connections
    /// at once, each waiting for its answer before the next.
    static func request(_ numbers: [Int], port: Int, connections: Int = 4) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<connections {
                let mine = numbers.enumerated().filter { $0.offset % connections == lane }.map(\.element)
                group.addTask {
                    try await RawClient.connect(port: port).run { inbound, outbound in
                        var inbound = inbound
                        var bytes: [UInt8] = []
                        for (index, number) in mine.enumerated() {
                            try await outbound.write(ByteBuffer(string: "GET /healthz?n=\(number) HTTP/1.1\r\nHost: t\r\n\r\n"))
                            let responses = try await inbound.readResponses(index + 1, into: &bytes)
                            try #require(responses.count == index + 1 && responses[index].status == 200)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test("lines go to the file; a reopen mid-traffic loses none and splits none")
    func reopenMidTraffic() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/access.log"
        let rotated = directory.path + "/access.log.1"
        let output = try AccessLogOutput(.file(path))
        let accessLogger = Logger(label: OriginServer.accessLogLabel) { _ in AccessLogLineHandler(output: output) }
        let (before, during, after) = (Array(0..<400), Array(400..<800), Array(800..<1000))
        try await withServer(configure: { $0.eventLoopThreads = 2 }, accessLogger: accessLogger) { port in
            try await Self.request(before, port: port)
            // logrotate renames while requests keep coming, then the signal reopens the path.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await Self.request(during, port: port) }
                try await Task.sleep(for: .milliseconds(20))
                try FileManager.default.moveItem(atPath: path, toPath: rotated)
                #expect(try output.reopen() == path)
                try await group.waitForAll()
            }
            // Formatted after the reopen returned, so written after it: all in the new file.
            try await Self.request(after, port: port)
            try await Self.waitForLines(1000, in: [rotated, path])
        }
        let old = Self.read(rotated)
        let new = Self.read(path)
        #expect(old.hasSuffix("\n"), "the rotated file ends on a whole line")
        let oldNumbers = Self.requestNumbers(in: old, file: "access.log.1")
        let newNumbers = Self.requestNumbers(in: new, file: "access.log")
        #expect((oldNumbers + newNumbers).sorted() == Array(0..<1000), "every request once: \(oldNumbers.count) + \(newNumbers.count)")
        #expect(Set(before).isSubset(of: oldNumbers), "requests answered and logged before the rename are in the old file")
        #expect(Set(after).isSubset(of: newNumbers), "requests sent after the reopen are in the new file")
        #expect(!newNumbers.isEmpty && !oldNumbers.isEmpty)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode & 0o137 == 0, "at most rw-r-----: \(String(mode, radix: 8))")
    }

    @Test("off writes nothing; a later destination takes the lines from then on (a reload)")
    func offAndSwitching() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = directory.path + "/first.log"
        let second = directory.path + "/second.log"
        let output = try AccessLogOutput(.file(first))
        let accessLogger = Logger(label: OriginServer.accessLogLabel) { _ in AccessLogLineHandler(output: output) }
        try await withServer(accessLogger: accessLogger) { port in
            try await Self.request(Array(0..<10), port: port, connections: 1)
            try await Self.waitForLines(10, in: [first])
            try output.apply(.off)
            #expect(!output.isEnabled)
            try await Self.request(Array(10..<60), port: port)
            try output.apply(.file(second))
            try await Self.request(Array(60..<70), port: port, connections: 1)
            try await Self.waitForLines(20, in: [first, second])
        }
        #expect(Self.requestNumbers(in: Self.read(first), file: "first.log") == Array(0..<10))
        #expect(Self.requestNumbers(in: Self.read(second), file: "second.log") == Array(60..<70))
        #expect(output.destination == .file(second))
    }

    @Test("off: the event loop's lines never reach a write")
    func offNeverWrites() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let writes = AccessLogLinesTests.Writes()
        let output = try AccessLogOutput(.off)
        try await loop.submit {
            let lines = AccessLogLines(
                logger: Logger(label: "a") { _ in AccessLogLineHandler(output: output) }, eventLoop: loop, write: writes.record)
            for _ in 0..<1000 {
                lines.log(AccessLogLinesTests.entry(), error: nil, time: AccessLogLinesTests.time, finished: .now())
            }
            lines.flush()
        }.get()
        try await loop.submit {}.get()
        #expect(writes.snapshot.isEmpty)
    }

    @Test("a path that cannot be opened is refused with the reason; the file in use stays")
    func unopenablePath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect {
            try AccessLogOutput(.file(directory.path + "/missing/access.log"))
        } throws: { error in
            "\(error)" == "cannot open the access log \(directory.path)/missing/access.log: No such file or directory"
        }
        // The directory goes away (a rotation gone wrong): the reopen fails, lines keep going to
        // the open file.
        try FileManager.default.createDirectory(atPath: directory.path + "/logs", withIntermediateDirectories: false)
        let output = try AccessLogOutput(.file(directory.path + "/logs/access.log"))
        try FileManager.default.moveItem(atPath: directory.path + "/logs", toPath: directory.path + "/moved")
        #expect(throws: AccessLogOutput.OpenError.self) { try output.reopen() }
        Array("a line\n".utf8).withUnsafeBytes { output.write($0) }
        #expect(Self.read(directory.path + "/moved/access.log") == "a line\n")
        #expect(try AccessLogOutput(.standardOutput).reopen() == nil, "standard output has nothing to reopen")
    }
}
