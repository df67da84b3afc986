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
        var all: [[MediaPart]] = []
        var files: [String] = []
        for index in package.renditions.indices {
            var parts: [[MediaPart]] = []
            for segment in package.renditions[index].segments {
                guard let data = FileManager.default.contents(atPath: segment.file.path) else {
                    throw LoadError(description: "\(segment.file.path): cannot read file")
                }
                let duration = segment.duration.microseconds
                do {
                    parts.append(
                        try TransportStreamParts.cut(
                            [UInt8](data), segmentDurationMicroseconds: duration,
                            at: TransportStreamParts.cutTimes(segmentDurationMicroseconds: duration, partTargetMicroseconds: target)))
                } catch {
                    throw LoadError(description: "\(segment.file.path): cannot cut into parts: \(error)")
                }
                files.append(segment.file.path)
            }
            package.renditions[index].parts = parts
            all += parts
        }
        let partTarget = PartCutting.partTarget(of: all)
        if let short = PartCutting.firstShortPart(in: all, partTarget: partTarget) {
            let duration = HLSDuration(microseconds: all[short.segment][short.part].durationMicroseconds)
            throw LoadError(
                description: "\(files[short.segment]): part \(short.part) lasts \(duration) s, under 85 % of PART-TARGET \(HLSDuration(microseconds: partTarget)) s (F3); set another source.part_target for this package")
        }
        package.partTarget = HLSDuration(microseconds: partTarget)
        return package
    }
}
