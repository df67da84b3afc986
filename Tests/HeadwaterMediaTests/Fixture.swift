import Foundation

/// Loads a file from `Tests/HeadwaterMediaTests/Fixtures` (see its README for how each was made).
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static let transportStreams = [
        "main_640x360_25fps.ts", "baseline_416x234.ts", "high_854x480_cqm.ts", "main_29.97fps.ts",
        "high444_161x91.ts", "interlaced_352x200.ts", "hevc_320x180.ts", "audio_only_aac.ts", "audio_ac3.ts",
        "audio_eac3.ts", "audio_mp3.ts",
    ]

    static let packedAudio = ["packed_aac_id3.aac", "audio_44100_mono.aac", "audio_51.ac3"]
}
