import Foundation
import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterMedia

/// Low-latency parts of a loop package (HLS-RULES F3): every segment of every rendition cut into byte
/// ranges at frame boundaries, on the same clock in every rendition, so that the live channel
/// publishes parts as the wall clock reaches them.
extension LoopPackage {
    /// The package with every segment cut into parts of about `target` µs: each at most PART-TARGET
    /// (the longest part, rounded up to the millisecond) and, apart from the last of a segment and
    /// those that start with a key frame, at least 85 % of it — or a load error naming the part that
    /// is not, since a player would stall on it.
    public func cuttingParts(every target: Int64) throws(LoadError) -> LoopPackage {
        var package = self
        var longest: Int64 = 0
        for index in package.renditions.indices {
            var parts: [[MediaPart]] = []
            for segment in package.renditions[index].segments {
                guard let data = FileManager.default.contents(atPath: segment.file.path) else {
                    throw LoadError(description: "\(segment.file.path): cannot read file")
                }
                let duration = segment.duration.microseconds
                let cut: [MediaPart]
                do {
                    cut = try TransportStreamParts.cut(
                        [UInt8](data), segmentDurationMicroseconds: duration,
                        at: TransportStreamParts.cutTimes(segmentDurationMicroseconds: duration, partTargetMicroseconds: target))
                } catch {
                    throw LoadError(description: "\(segment.file.path): cannot cut into parts: \(error)")
                }
                longest = max(longest, cut.map(\.durationMicroseconds).max() ?? 0)
                parts.append(cut)
            }
            package.renditions[index].parts = parts
        }
        let partTarget = HLSDuration(microseconds: (longest + 999) / 1000 * 1000)
        for rendition in package.renditions {
            for (segmentIndex, parts) in rendition.parts.enumerated() {
                for (partIndex, part) in parts.enumerated().dropLast() where !part.independent {
                    guard part.durationMicroseconds * 100 >= partTarget.microseconds * 85 else {
                        let file = rendition.segments[segmentIndex].file.path
                        throw LoadError(
                            description: "\(file): part \(partIndex) lasts \(HLSDuration(microseconds: part.durationMicroseconds)) s, under 85 % of PART-TARGET \(partTarget) s (F3); set another source.part_target for this package")
                    }
                }
            }
        }
        package.partTarget = partTarget
        return package
    }
}
