/// The fuzz targets, chosen by `HEADWATER_FUZZ_TARGET=<name>` (unset: `playlist`).
///
/// Each one feeds its input to one parser or to the server and traps on any outcome other than a
/// clean refusal or a consistent result, so libFuzzer saves the input. The targets that reach
/// `internal` parts of HeadwaterHTTP use `@testable import`, which only debug builds allow (the fuzz
/// build is one); a release build has the others.
enum FuzzTarget: String, CaseIterable {
    /// Strict and tolerant playlist parsing, serialization, validation.
    case playlist
    /// Binary SCTE-35 sections.
    case scte35
    /// SCTE-35 sections as hex or base64 text.
    case scte35Text = "scte35-text"
    /// `headwater.yaml`.
    case config
    /// The fast path's HTTP/1 request-head scanner against NIO's decoder.
    case requestHead = "request-head"
    /// `Range` and `If-Range`.
    case range
    /// Request-targets and routes.
    case requestTarget = "request-target"
    /// Bytes into a server connection.
    case http1
    /// HTTP/2 frames into a server connection, after the h2c preface.
    case h2

    /// The target `HEADWATER_FUZZ_TARGET` names; `nil` for an unknown name.
    static func named(_ name: String?) -> FuzzTarget? {
        guard let name, !name.isEmpty else { return .playlist }
        return FuzzTarget(rawValue: name)
    }

    /// Runs one input; returns `false` if this build lacks the target.
    func run(_ bytes: [UInt8]) -> Bool {
        switch self {
        case .playlist: PlaylistFuzzing.run(bytes)
        case .scte35: SCTE35Fuzzing.binary(bytes)
        case .scte35Text: SCTE35Fuzzing.text(bytes)
        case .config: ConfigurationFuzzing.run(bytes)
        case .requestTarget: RequestTargetFuzzing.run(bytes)
        case .requestHead, .range, .http1, .h2:
            #if DEBUG
            switch self {
            case .requestHead: RequestHeadFuzzing.run(bytes)
            case .range: RangeFuzzing.run(bytes)
            case .http1: ServerFuzzing.http1(bytes)
            default: ServerFuzzing.http2(bytes)
            }
            #else
            return false
            #endif
        }
        return true
    }
}
