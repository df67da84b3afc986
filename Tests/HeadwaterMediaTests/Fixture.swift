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

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny deterministic generator, so a failure names a
/// reproducible iteration.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}
