/// Why a video access unit is a key frame: a picture a decoder can start from with nothing before it
/// but the program tables and the parameter sets the access unit carries itself.
///
/// Decided from the NAL unit types alone (and, for an H.264 open GOP, the recovery point SEI message
/// and the slice type). The adaptation field's `random_access_indicator` is no part of the decision:
/// muxers set it on audio frames and on PCR packets too, and some leave it off key frames, so
/// ``IFrameIndex`` records it only as a hint (``IFrameIndex/Entry/randomAccessIndicator``).
public enum KeyFrameKind: Sendable, Hashable {
    /// An H.264 IDR picture: its slices have `nal_unit_type` 5 (ITU-T H.264 §7.4.1.2.4).
    case h264IDR
    /// An H.264 intra picture that a recovery point SEI message with `recovery_frame_cnt` 0 marks as
    /// a random access point (§D.2.8): the key frames of an open GOP (x264 `open-gop`).
    case h264RecoveryPoint
    /// An H.265 IRAP picture (ITU-T H.265 §3.73): BLA (`nal_unit_type` 16–18), IDR (19, 20) or
    /// CRA (21). The picture decodes on its own; the RASL pictures that may follow a CRA or BLA do
    /// not, but they are other access units, outside the key frame's range.
    case hevcIRAP(nalUnitType: UInt8)

    /// Classifies the access unit in `bytes[range]`, an Annex B byte stream (a video PES packet's
    /// payload); `nil` when it is not a key frame.
    ///
    /// H.264 is decided by the first slice NAL unit (every slice of an IDR picture is an IDR slice);
    /// H.265 by the first VCL NAL unit of the base layer.
    init?(accessUnit bytes: [UInt8], range: Range<Int>, format: VideoFormat) {
        var units = NALUnitIterator(bytes, range: range)
        switch format {
        case .h264:
            var recoveryPoint = false
            while let unit = units.next() {
                switch bytes[unit.lowerBound] & 0x1F {
                case 5:
                    self = .h264IDR
                    return
                case 1...4:
                    guard recoveryPoint, Self.isIntraSlice(bytes, unit) else { return nil }
                    self = .h264RecoveryPoint
                    return
                case 6:
                    if Self.announcesImmediateRecovery(rbsp(bytes, (unit.lowerBound + 1)..<unit.upperBound)) {
                        recoveryPoint = true
                    }
                default:
                    continue
                }
            }
        case .hevc:
            while let unit = units.next() {
                guard unit.count >= 2 else { continue }
                let type = (bytes[unit.lowerBound] >> 1) & 0x3F
                let layer = (bytes[unit.lowerBound] & 1) << 5 | bytes[unit.lowerBound + 1] >> 3
                guard type <= 31, layer == 0 else { continue }  // not VCL, or an enhancement layer
                guard (16...21).contains(type) else { return nil }
                self = .hevcIRAP(nalUnitType: type)
                return
            }
        }
        return nil
    }

    /// Whether an H.264 slice NAL unit is an I or SI slice: `slice_type` (after `first_mb_in_slice`)
    /// modulo 5 is 2 or 4 (§7.4.3). Reads only the start of the slice header.
    private static func isIntraSlice(_ bytes: [UInt8], _ unit: Range<Int>) -> Bool {
        let header = rbsp(bytes, (unit.lowerBound + 1)..<min(unit.upperBound, unit.lowerBound + 33))
        var reader = RBSPReader(header)
        do throws(BitstreamError) {
            _ = try reader.ue("first_mb_in_slice")
            let sliceType = try reader.ue("slice_type", max: 9) % 5
            return sliceType == 2 || sliceType == 4
        } catch {
            return false
        }
    }

    /// Whether an H.264 SEI RBSP holds a recovery point message (`payloadType` 6) with
    /// `recovery_frame_cnt` 0: output is exact from this very picture on (§7.3.2.3, §D.1.8).
    private static func announcesImmediateRecovery(_ sei: [UInt8]) -> Bool {
        var position = 0
        /// `payloadType` or `payloadSize`: 0xFF bytes each add 255, the first other byte ends it.
        func number() -> Int? {
            var value = 0
            while position < sei.count {
                let byte = sei[position]
                position += 1
                value += Int(byte)
                if byte != 0xFF { return value }
            }
            return nil
        }
        // Another message follows while more than the rbsp_trailing_bits byte remains.
        while sei.count - position > 1 {
            guard let type = number(), let size = number() else { return false }
            let body = position..<min(position + size, sei.count)
            if type == 6 {
                var reader = RBSPReader(Array(sei[body]))
                return (try? reader.ue("recovery_frame_cnt")) == 0
            }
            position = body.upperBound
        }
        return false
    }
}
