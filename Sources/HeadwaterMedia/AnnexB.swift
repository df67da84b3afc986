/// Iterates the NAL units of an Annex B byte stream (H.264 Annex B, H.265 Annex B): each element is
/// the range of one NAL unit (header included, start code and trailing zero bytes excluded).
struct NALUnitIterator: IteratorProtocol {
    private let bytes: [UInt8]
    private let end: Int
    /// Start of the next NAL unit's payload (just after its start code), or `nil` when done.
    private var nextStart: Int?

    init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        let clamped = range.clamped(to: 0..<bytes.count)
        end = clamped.upperBound
        nextStart = nil
        if let code = startCode(from: clamped.lowerBound) { nextStart = code + 3 }
    }

    mutating func next() -> Range<Int>? {
        while let start = nextStart {
            let following = startCode(from: start)
            var stop = following ?? end
            nextStart = following.map { $0 + 3 }
            // Drop trailing_zero_8bits and the leading zero of a four-byte start code.
            while stop > start, bytes[stop - 1] == 0 { stop -= 1 }
            if stop > start { return start..<stop }
        }
        return nil
    }

    /// The offset of the next `00 00 01` at or after `position`, if any.
    private func startCode(from position: Int) -> Int? {
        var index = position
        while index + 2 < end {
            let third = bytes[index + 2]
            if third > 1 {
                index += 3  // no start code can begin at index, index+1 or index+2
            } else if third == 1, bytes[index] == 0, bytes[index + 1] == 0 {
                return index
            } else {
                index += 1
            }
        }
        return nil
    }
}

/// Removes emulation prevention bytes (`00 00 03` → `00 00`, H.264 §7.4.1, H.265 §7.4.2) from
/// `bytes[range]`, giving the raw byte sequence payload.
func rbsp(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
    let clamped = range.clamped(to: 0..<bytes.count)
    var output: [UInt8] = []
    output.reserveCapacity(clamped.count)
    var zeros = 0
    for index in clamped {
        let byte = bytes[index]
        if zeros >= 2, byte == 3 {
            zeros = 0
            continue
        }
        output.append(byte)
        zeros = byte == 0 ? zeros + 1 : 0
    }
    return output
}
