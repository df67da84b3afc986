/// Which side of a break a cue marks, i.e. which `EXT-X-DATERANGE` attribute carries it
/// (HLS-RULES D10/D11): `.out` → `SCTE35-OUT` (leave the network, break starts),
/// `.in` → `SCTE35-IN` (return to the network, break ends).
public enum CueDirection: String, Sendable, Hashable, Codable {
    case out
    case `in`
}
