/// The PART-TARGET of a package cut into low-latency parts, and the check that makes the cut usable
/// (HLS-RULES F3): one implementation for every package Headwater cuts, the looping channel's and
/// the ad creatives' and slate's.
public enum PartCutting {
    /// The PART-TARGET (µs) of segments cut into `parts`: the longest part, rounded up to the
    /// millisecond, so that every part is at most it (F3).
    public static func partTarget(of parts: [[MediaPart]]) -> Int64 {
        let longest = parts.lazy.flatMap { $0 }.map(\.durationMicroseconds).max() ?? 0
        return (longest + 999) / 1000 * 1000
    }

    /// The first part F3's floor refuses: shorter than 85 % of `partTarget`, yet neither the last of
    /// its segment nor one starting with a key frame (a player would stall on a run of them).
    public static func firstShortPart(in parts: [[MediaPart]], partTarget: Int64) -> (segment: Int, part: Int)? {
        for (segment, segmentParts) in parts.enumerated() {
            for (index, part) in segmentParts.enumerated().dropLast() where !part.independent {
                if part.durationMicroseconds * 100 < partTarget * 85 { return (segment, index) }
            }
        }
        return nil
    }
}
