import Foundation
import HeadwaterMedia
import Testing

/// Every I-frame entry, cut out of its segment as a client fetches it (the segment's PAT and PMT,
/// then the entry's byte range), decodes with ffmpeg as exactly one key frame of the rendition's
/// resolution: demo and slate segments of every video rendition, and segments made here with
/// several key frames each (closed and open GOPs, H.264 and H.265).
///
/// ffmpeg and ffprobe are required (Tests/tools/install-test-clients.sh installs them): without them
/// these tests fail, they do not skip.
@Suite("I-frame ranges decode with ffmpeg")
struct IFrameDecodeTests {
    static let demoSegments = ["v0", "v1", "v2"].flatMap { rendition in
        ["demo/\(rendition)/seg-00000.ts", "demo/\(rendition)/seg-00004.ts", "demo/\(rendition)/seg-00009.ts"]
            + ["slate/\(rendition)/seg-00000.ts"]
    }

    @Test(arguments: demoSegments)
    func publicSegment(_ path: String) throws {
        let tools = try MediaTools()
        let bytes = [UInt8](try Data(contentsOf: IFrameIndexTests.publicDirectory.appendingPathComponent(path)))
        let index = try #require(try IFrameIndex.index(transportStream: bytes), "\(path): no video")
        let resolution = try Self.declaredResolution(path)
        #expect(index.video.resolution == resolution, "\(path)")
        #expect(!index.entries.isEmpty, "\(path)")
        for entry in index.entries {
            try Self.expectDecodesAlone(bytes, index, entry, resolution: resolution, tools, label: path)
        }
    }

    /// Segments with a key frame every 12 frames (0.48 s) for 2 s: five entries each, four of them
    /// in the middle of the segment.
    enum Encoding: String, CaseIterable, Sendable {
        case h264ClosedGOP
        case h264OpenGOP
        case hevcOpenGOP

        var arguments: [String] {
            switch self {
            case .h264ClosedGOP:
                return [
                    "-c:v", "libx264", "-preset", "veryfast", "-threads", "1", "-bf", "2", "-g", "12", "-keyint_min", "12",
                    "-sc_threshold", "0",
                ]
            case .h264OpenGOP:
                return [
                    "-c:v", "libx264", "-preset", "veryfast", "-threads", "1", "-bf", "2",
                    "-x264-params", "keyint=12:min-keyint=12:scenecut=0:open-gop=1",
                ]
            case .hevcOpenGOP:
                return [
                    "-c:v", "libx265", "-preset", "veryfast", "-x265-params",
                    "keyint=12:min-keyint=12:scenecut=0:open-gop=1:frame-threads=1:pools=1:log-level=error",
                ]
            }
        }

        /// The key frames after the first.
        var laterKind: KeyFrameKind {
            switch self {
            case .h264ClosedGOP: return .h264IDR
            case .h264OpenGOP: return .h264RecoveryPoint
            case .hevcOpenGOP: return .hevcIRAP(nalUnitType: 21)
            }
        }
    }

    @Test(arguments: Encoding.allCases)
    func severalKeyFramesPerSegment(_ encoding: Encoding) throws {
        let tools = try MediaTools()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("headwater-iframes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("segment.ts")
        let encode = try MediaTools.run(
            tools.ffmpeg,
            ["-hide_banner", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25", "-t", "2",
                "-pix_fmt", "yuv420p"] + encoding.arguments + ["-f", "mpegts", output.path],
            input: [])
        try #require(encode.status == 0, "ffmpeg could not encode \(encoding): \(encode.errors)")

        let bytes = [UInt8](try Data(contentsOf: output))
        let probe = try TransportStreamProbe.probe(bytes)
        let index = try #require(IFrameIndex(transportStream: bytes, probe: probe))
        try IFrameIndexTests.checkInvariants(index, bytes, probe, "\(encoding)")
        #expect(index.entries.count == 5, "\(encoding): \(index.entries.map(\.pts))")
        let kinds = index.entries.map(\.kind)
        #expect(kinds.dropFirst().allSatisfy { $0 == encoding.laterKind }, "\(encoding): \(kinds)")
        #expect(index.entries.dropLast().allSatisfy { $0.durationMicroseconds == 480_000 }, "\(encoding)")
        for entry in index.entries {
            try Self.expectDecodesAlone(bytes, index, entry, resolution: "320x180", tools, label: "\(encoding)")
        }
    }

    // MARK: Helpers

    /// Cuts the segment's PAT and PMT and the entry's range out of `bytes` and has ffmpeg decode
    /// them: no error, and ffprobe sees exactly one video frame, a key frame of `resolution`.
    static func expectDecodesAlone(
        _ bytes: [UInt8], _ index: IFrameIndex, _ entry: IFrameIndex.Entry, resolution: String, _ tools: MediaTools,
        label: String
    ) throws {
        let tables = try #require(index.initializationSection, "\(label): no PAT and PMT")
        let cut = Array(bytes[tables]) + Array(bytes[entry.range])
        let context = "\(label) \(entry.range.count)@\(entry.range.lowerBound)"

        let decode = try MediaTools.run(
            tools.ffmpeg, ["-hide_banner", "-v", "error", "-f", "mpegts", "-i", "pipe:0", "-f", "null", "-"], input: cut)
        #expect(decode.status == 0, "\(context): ffmpeg exited \(decode.status)")
        #expect(decode.errors.isEmpty, "\(context): ffmpeg reported: \(decode.errors)")

        let probe = try MediaTools.run(
            tools.ffprobe,
            ["-v", "error", "-f", "mpegts", "-i", "pipe:0", "-select_streams", "v", "-show_frames",
                "-show_entries", "frame=key_frame,pict_type,width,height", "-of", "compact=p=0"],
            input: cut)
        #expect(probe.status == 0 && probe.errors.isEmpty, "\(context): ffprobe: \(probe.errors)")
        let frames = probe.output.split(separator: "\n").map { line in
            Dictionary(
                line.split(separator: "|").map { field -> (String, String) in
                    let parts = field.split(separator: "=", maxSplits: 1)
                    return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
                }, uniquingKeysWith: { first, _ in first })
        }
        #expect(frames.count == 1, "\(context): \(frames.count) video frames: \(probe.output)")
        let frame = try #require(frames.first, "\(context): no video frame")
        #expect(frame["key_frame"] == "1", "\(context): \(frame)")
        #expect(frame["pict_type"] == "I", "\(context): \(frame)")
        #expect("\(frame["width"] ?? "?")x\(frame["height"] ?? "?")" == resolution, "\(context): \(frame)")
    }

    /// RESOLUTION of the rendition `path` (`package/rendition/segment`) in its package's master playlist.
    static func declaredResolution(_ path: String) throws -> String {
        let parts = path.split(separator: "/")
        let master = try String(
            contentsOf: IFrameIndexTests.publicDirectory.appendingPathComponent("\(parts[0])/master.m3u8"), encoding: .utf8)
        let lines = master.split(separator: "\n").map(String.init)
        let at = try #require(lines.firstIndex(of: "\(parts[1])/index.m3u8"), "\(path): not in \(parts[0])/master.m3u8")
        let attribute = try #require(
            lines[at - 1].split(separator: ",").first { $0.hasPrefix("RESOLUTION=") }, "\(path): no RESOLUTION")
        return String(attribute.dropFirst("RESOLUTION=".count))
    }
}

/// ffmpeg and ffprobe, found on PATH, and a way to run them.
struct MediaTools {
    let ffmpeg: String
    let ffprobe: String

    /// Fails the test, with how to install them, when either is missing.
    init() throws {
        let install = "Tests/tools/install-test-clients.sh installs it"
        ffmpeg = try #require(Self.which("ffmpeg"), "ffmpeg is required (\(install))")
        ffprobe = try #require(Self.which("ffprobe"), "ffprobe is required (\(install))")
    }

    static func which(_ tool: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    struct Outcome {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs `tool` with `input` on its standard input (from a file, so a tool that stops reading
    /// early cannot block or signal the test) and its output and errors collected in files.
    static func run(_ tool: String, _ arguments: [String], input: [UInt8]) throws -> Outcome {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("headwater-run-\(UUID())")
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
        process.standardInput = try FileHandle(forReadingFrom: inputFile)
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus,
            output: String(decoding: try Data(contentsOf: outputFile), as: UTF8.self),
            errors: String(decoding: try Data(contentsOf: errorFile), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
