import Foundation
import Testing

/// A temporary site for the issue-19 tests (AES-128 encryption with key delivery, I-frame
/// playlists): ``SSAIFixture``'s ads and public directory, with its configuration rewritten so the
/// demo loop channel has, or lacks, an `encryption` block. Plus what those tests share: a raw
/// HTTP/1.0 client that keeps bodies as bytes and sends headers, a small reader for the media
/// playlists the tests take apart, and a tool runner that cannot block on a full pipe.
struct EncryptionFixture {
    let base: SSAIFixture
    var directory: URL { base.directory }
    var site: URL { base.site }
    var config: URL { base.config }

    /// The content-key secret of the tests (`HEADWATER_KEY_SECRET`): 32 bytes as 64 hex digits.
    static let secret = "0f1e2d3c4b5a69788796a5b4c3d2e1f00123456789abcdeffedcba9876543210"
    /// Another deployment's secret: another key for every key URI.
    static let otherSecret = "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5"
    /// The variable the key secret is read from (`server.key_secret_env`'s default).
    static let secretVariable = "HEADWATER_KEY_SECRET"
    /// The secret key tokens are signed with (`headwater key-token`, `key_access: token`): not the
    /// content-key secret (the entitlement service holds this one, never that one).
    static let tokenSecret = "7b3c9e1d5f2a8b4c6d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e"
    static let tokenSecretVariable = "HEADWATER_KEY_TOKEN_SECRET"

    /// - Parameters:
    ///   - encryption: the channel's `encryption` block as YAML lines under it (`nil`: a clear channel).
    ///   - every, duration: the ad schedule (a break of `duration` s every `every` s).
    init(encryption: [String]? = EncryptionFixture.encryption(), every: Int = 15, duration: Int = 6) throws {
        base = try SSAIFixture(every: every, duration: duration)
        let repository = RealClients.ServeCommandTests.repository
        let block = encryption.map { lines in "    encryption:\n" + lines.map { "      \($0)\n" }.joined() } ?? ""
        try """
            server:
              public: \(base.site.path)
              cors: true
              ads: \(base.ads.path)
            channels:
              demo:
                source:
                  type: loop
                  package: \(repository.path)/Public/demo/master.m3u8
                window: 30
                ads:
                  markers: daterange
                  schedule: {every: \(every), duration: \(duration)}

            """.appending(block).write(to: base.config, atomically: true, encoding: .utf8)
    }

    /// The `encryption` block of the tests: AES-128, a new key every `rotateEvery` segments.
    static func encryption(rotateEvery: Int = 3, keyAccess: String = "open") -> [String] {
        ["method: AES-128", "rotate_every: \(rotateEvery)", "key_access: \(keyAccess)"]
    }

    /// What `serve` needs in its environment: ``SSAIFixture/environment``, the key secret and the
    /// key-token secret.
    static func environment(secret: String = Self.secret) -> [String: String] {
        SSAIFixture.environment.merging([secretVariable: secret, tokenSecretVariable: tokenSecret]) { $1 }
    }

    func remove() { base.remove() }

    /// The package file a loop-channel segment serves: segment `msn` of `rendition` is file
    /// `msn mod 10` of the rendition (the demo package has 10 segments per rendition).
    static func packageFile(rendition: String, msn: UInt64) -> URL {
        RealClients.ServeCommandTests.repository.appendingPathComponent(
            "Public/demo/\(rendition)/seg-\(String(format: "%05d", Int(msn % 10))).ts")
    }
}

// MARK: - HTTP with bytes

/// One HTTP response, its body as bytes (keys and segments are binary).
struct RawResponse {
    var status: Int
    var head: String
    var body: [UInt8]

    /// The first value of header `name` (case-insensitive).
    func header(_ name: String) -> String? {
        for line in head.split(separator: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// Status line and headers, and the body when it is text: for failure messages.
    var summary: String { "\(head.prefix(400))\n\(header("Content-Type")?.hasPrefix("text") == true ? text.prefix(300) : "")" }

    /// A GET to 127.0.0.1:`port` over HTTP/1.0 (no caching, no keep-alive), with `headers`.
    static func get(port: Int, path: String, headers: [String: String] = [:]) -> RawResponse {
        let fields = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        return exchange(port: port, request: Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\(fields)\r\n".utf8))
    }

    /// Sends a whole request and reads until the server closes; status 0 when nothing came back.
    static func exchange(port: Int, request: [UInt8]) -> RawResponse {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let failed = RawResponse(status: 0, head: "", body: [])
        guard connected == 0 else { return failed }
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return failed }
            sent += count
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            response += buffer[..<count]
        }
        var headEnd: Int?
        var index = 0
        while index + 3 < response.count {
            if response[index] == 13, response[index + 1] == 10, response[index + 2] == 13, response[index + 3] == 10 {
                headEnd = index
                break
            }
            index += 1
        }
        guard let end = headEnd else {
            return RawResponse(status: 0, head: String(decoding: response, as: UTF8.self), body: [])
        }
        let head = String(decoding: response[..<end], as: UTF8.self)
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return RawResponse(status: status, head: head, body: Array(response[(end + 4)...]))
    }
}

// MARK: - Media playlists, taken apart

/// A media playlist's header values and segments, as the tests need them: each segment with the
/// key in effect for it (and whether its own tags set one), byte ranges, its map, discontinuity and date.
struct PlaylistText {
    struct Entry {
        var msn: UInt64
        var uri: String
        var duration: String
        /// The `EXT-X-KEY` attributes in effect for this segment, if any key tag came before it.
        var key: [String: String]?
        /// Whether an `EXT-X-KEY` is among this segment's own tags.
        var keyTagged: Bool
        var discontinuity: Bool
        var gap: Bool
        var programDateTime: String?
        /// `EXT-X-BYTERANGE` as (length, offset).
        var byteRange: (length: Int, offset: Int)?
        /// The `EXT-X-MAP` in effect: URI and its BYTERANGE as (length, offset), if any.
        var map: (uri: String, range: (length: Int, offset: Int)?)?
    }

    var text: String
    var targetDuration: String?
    var mediaSequence: UInt64
    var discontinuitySequence: UInt64
    var entries: [Entry]
    var tagLines: [String]

    init(_ text: String) {
        self.text = text
        var mediaSequence: UInt64 = 0
        var discontinuitySequence: UInt64 = 0
        var targetDuration: String?
        var entries: [Entry] = []
        var tagLines: [String] = []
        var key: [String: String]?
        var map: (uri: String, range: (length: Int, offset: Int)?)?
        var pending = (keyTagged: false, discontinuity: false, gap: false, duration: "", date: String?.none)
        var byteRange: (length: Int, offset: Int)?
        var lastRangeEnd: [String: Int] = [:]
        var msn: UInt64?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = String(raw).trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") {
                tagLines.append(line)
                let (name, value) = Self.split(line)
                switch name {
                case "#EXT-X-MEDIA-SEQUENCE": mediaSequence = UInt64(value) ?? 0
                case "#EXT-X-DISCONTINUITY-SEQUENCE": discontinuitySequence = UInt64(value) ?? 0
                case "#EXT-X-TARGETDURATION": targetDuration = value
                case "#EXT-X-KEY":
                    key = Self.attributes(value)
                    pending.keyTagged = true
                case "#EXT-X-MAP":
                    let attributes = Self.attributes(value)
                    map = (attributes["URI"] ?? "", attributes["BYTERANGE"].flatMap { Self.range($0, previousEnd: nil) })
                case "#EXT-X-DISCONTINUITY": pending.discontinuity = true
                case "#EXT-X-GAP": pending.gap = true
                case "#EXT-X-PROGRAM-DATE-TIME": pending.date = value
                case "#EXTINF": pending.duration = String(value.prefix { $0 != "," })
                case "#EXT-X-BYTERANGE": byteRange = Self.range(value, previousEnd: nil)
                default: break
                }
                continue
            }
            let number = msn ?? mediaSequence
            msn = number + 1
            if let range = byteRange, range.offset < 0 {
                byteRange = (range.length, lastRangeEnd[line] ?? 0)
            }
            if let range = byteRange { lastRangeEnd[line] = range.offset + range.length }
            entries.append(
                Entry(
                    msn: number, uri: line, duration: pending.duration, key: key, keyTagged: pending.keyTagged,
                    discontinuity: pending.discontinuity, gap: pending.gap, programDateTime: pending.date, byteRange: byteRange,
                    map: map))
            pending = (false, false, false, "", nil)
            byteRange = nil
        }
        self.targetDuration = targetDuration
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.entries = entries
        self.tagLines = tagLines
    }

    /// `#NAME:VALUE` as (`#NAME`, `VALUE`); a tag without a value as (line, "").
    static func split(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        return (String(line[..<colon]), String(line[line.index(after: colon)...]))
    }

    /// An attribute list (`A=1,B="x,y",C=0x…`), quotes removed.
    static func attributes(_ list: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(list)
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces)
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let close = body.firstIndex(of: "\"") ?? body.endIndex
                value = body[..<close]
                rest = close < body.endIndex ? body[body.index(after: close)...] : ""
            } else {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<comma]
                rest = rest[comma...]
            }
            if rest.first == "," { rest = rest.dropFirst() }
            result[name] = String(value)
        }
        return result
    }

    /// `len@off` (offset -1 when omitted: it follows the previous range of the same URI).
    static func range(_ text: String, previousEnd: Int?) -> (length: Int, offset: Int)? {
        let parts = text.split(separator: "@")
        guard let length = parts.first.flatMap({ Int($0) }) else { return nil }
        return (length, parts.count > 1 ? Int(parts[1]) ?? -1 : previousEnd ?? -1)
    }

    /// The attribute lists of every `name` tag (`#EXT-X-I-FRAME-STREAM-INF`, …) in a playlist.
    static func tags(_ name: String, in text: String) -> [[String: String]] {
        text.split(separator: "\n").filter { $0.hasPrefix("\(name):") }.map { attributes(String($0.dropFirst(name.count + 1))) }
    }
}

// MARK: - Tools

/// Runs tools with input and output in files, so a tool that stops reading early or writes a lot
/// cannot block the test.
enum Tool {
    struct Outcome {
        var status: Int32
        var output: [UInt8]
        var errors: String
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    static func run(_ tool: String, _ arguments: [String], input: [UInt8] = [], environment: [String: String]? = nil) throws -> Outcome {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-tool-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputFile = directory.appendingPathComponent("input")
        let outputFile = directory.appendingPathComponent("output")
        let errorFile = directory.appendingPathComponent("errors")
        try Data(input).write(to: inputFile)
        try Data().write(to: outputFile)
        try Data().write(to: errorFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = try FileHandle(forReadingFrom: inputFile)
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, output: Array(try Data(contentsOf: outputFile)),
            errors: String(decoding: try Data(contentsOf: errorFile), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `headwater lint --strict -` on `playlist` (and `--previous` when given): every finding,
    /// warnings included, as lines; empty when it passes with zero warnings.
    static func lintFindings(_ playlist: String, previous: String? = nil) throws -> [String] {
        var arguments = ["lint", "--strict"]
        var previousFile: URL?
        if let previous {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("hw-previous-\(UUID()).m3u8")
            try previous.write(to: file, atomically: true, encoding: .utf8)
            previousFile = file
            arguments += ["--previous", file.path]
        }
        defer { if let previousFile { try? FileManager.default.removeItem(at: previousFile) } }
        let result = try HeadwaterProcess.run(arguments + ["-"], stdin: playlist)
        let findings = (result.stdout + result.stderr).split(separator: "\n").map(String.init)
        return result.status == 0 && findings.isEmpty ? [] : findings + (findings.isEmpty ? ["lint exit \(result.status)"] : [])
    }

    /// One video frame per entry: ffmpeg decodes `bytes` (MPEG-TS) with no error, and ffprobe sees
    /// exactly one video frame, a key I frame of `resolution`. The problems found, empty when none.
    static func decodesAsOneKeyFrame(_ bytes: [UInt8], resolution: String, ffmpeg: String, ffprobe: String) throws -> [String] {
        var problems: [String] = []
        let decode = try run(ffmpeg, ["-hide_banner", "-v", "error", "-f", "mpegts", "-i", "pipe:0", "-map", "0:v", "-f", "null", "-"], input: bytes)
        if decode.status != 0 || !decode.errors.isEmpty { problems.append("ffmpeg exit \(decode.status): \(decode.errors.prefix(300))") }
        let probe = try run(
            ffprobe,
            ["-v", "error", "-f", "mpegts", "-i", "pipe:0", "-select_streams", "v", "-show_frames",
                "-show_entries", "frame=key_frame,pict_type,width,height", "-of", "compact=p=0"],
            input: bytes)
        if probe.status != 0 || !probe.errors.isEmpty { problems.append("ffprobe exit \(probe.status): \(probe.errors.prefix(300))") }
        let frames = probe.text.split(separator: "\n").map { line in
            Dictionary(
                line.split(separator: "|").map { field -> (String, String) in
                    let parts = field.split(separator: "=", maxSplits: 1)
                    return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
                }, uniquingKeysWith: { first, _ in first })
        }
        if frames.count != 1 { problems.append("\(frames.count) video frames: \(probe.text.prefix(300))") }
        if let frame = frames.first {
            if frame["key_frame"] != "1" || frame["pict_type"] != "I" { problems.append("not a key I frame: \(frame)") }
            let size = "\(frame["width"] ?? "?")x\(frame["height"] ?? "?")"
            if size != resolution { problems.append("\(size), not \(resolution)") }
        }
        return problems
    }
}

extension [UInt8] {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
