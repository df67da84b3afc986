/// Why a segment could not be probed.
///
/// The probes never trap on input: every problem found in the bytes is reported through one of these
/// cases, and ``description`` explains it in one line suitable for a log.
public enum MediaProbeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No `0x47` sync byte at 188-byte spacing was found: not an MPEG-2 transport stream (or a
    /// segment encrypted as a whole, such as AES-128).
    case notTransportStream
    /// No valid program association table (PID 0, `table_id` 0, correct CRC) was found.
    case missingProgramAssociationTable
    /// The program association table lists no program.
    case noProgram
    /// The program association table points at `pid`, but no valid program map table was found there.
    case missingProgramMapTable(pid: UInt16)
    /// The program map table lists no elementary stream.
    case noElementaryStreams
    /// The video stream on `pid` carries no sequence parameter set, so its codec and size are unknown.
    case missingParameterSets(pid: UInt16)
    /// Every sequence parameter set on `pid` failed to parse; `reason` describes the first failure.
    case invalidParameterSet(pid: UInt16, reason: String)
    /// The audio stream on `pid` carries no complete, decodable frame.
    case missingAudioFrames(pid: UInt16)
    /// The packets of `pid` are scrambled (`transport_scrambling_control` ≠ 0), so they cannot be inspected.
    case scrambled(pid: UInt16)
    /// The stream on `pid` has no PES packet with a PTS, so the segment cannot be placed in time.
    case missingTimestamps(pid: UInt16)
    /// No ADTS, MPEG audio, AC-3 or E-AC-3 frame was found: not packed audio.
    case notPackedAudio
    /// The ID3v2 tag in front of packed audio is malformed.
    case invalidID3Tag(reason: String)

    public var description: String {
        switch self {
        case .notTransportStream:
            return "not an MPEG-2 transport stream: no 0x47 sync byte at 188-byte spacing"
        case .missingProgramAssociationTable:
            return "no valid program association table (PID 0x0000)"
        case .noProgram:
            return "the program association table lists no program"
        case .missingProgramMapTable(let pid):
            return "no valid program map table on PID \(pidText(pid))"
        case .noElementaryStreams:
            return "the program map table lists no elementary stream"
        case .missingParameterSets(let pid):
            return "no sequence parameter set in the video stream on PID \(pidText(pid))"
        case .invalidParameterSet(let pid, let reason):
            return "invalid sequence parameter set on PID \(pidText(pid)): \(reason)"
        case .missingAudioFrames(let pid):
            return "no complete audio frame in the stream on PID \(pidText(pid))"
        case .scrambled(let pid):
            return "the packets of PID \(pidText(pid)) are scrambled"
        case .missingTimestamps(let pid):
            return "no PES packet with a PTS on PID \(pidText(pid))"
        case .notPackedAudio:
            return "not packed audio: no ADTS, MPEG audio, AC-3 or E-AC-3 frame found"
        case .invalidID3Tag(let reason):
            return "invalid ID3v2 tag: \(reason)"
        }
    }
}

/// `0x`-prefixed, four-digit upper-case hex of a PID, for messages.
func pidText(_ pid: UInt16) -> String {
    hexString(UInt64(pid), digits: 4, uppercase: true, prefix: "0x")
}

/// Zero-padded hex of `value`.
func hexString(_ value: UInt64, digits: Int, uppercase: Bool, prefix: String = "") -> String {
    let raw = String(value, radix: 16, uppercase: uppercase)
    let padding = raw.count < digits ? String(repeating: "0", count: digits - raw.count) : ""
    return prefix + padding + raw
}
