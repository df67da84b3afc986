/// One PES packet of an elementary stream, reassembled from its transport packets: what the
/// I-frame index and the part cutter both read, so they walk a segment's packets one way.
struct PESPacket {
    /// From the first byte of its first transport packet to the end of its last.
    var range: Range<Int>
    /// The PES packet's bytes (header and payload), without transport packet headers.
    var bytes: [UInt8]
    /// Some transport packet of it was scrambled: its bytes cannot be read.
    var scrambled: Bool
    /// `random_access_indicator` of its first transport packet (ISO/IEC 13818-1 §2.4.3.5).
    var randomAccessIndicator: Bool

    /// Calls `visit` with every PES packet of `pid` in `bytes`, in stream order; `packets` are the
    /// offsets of the transport packets (``TransportStreamProbe/packetOffsets(_:)``).
    static func forEach(in bytes: [UInt8], packets: [Int], pid: UInt16, _ visit: (PESPacket) -> Void) {
        var current: PESPacket?
        for offset in packets {
            guard let packet = TransportPacket(bytes, at: offset), packet.pid == pid else { continue }
            if packet.unitStart {
                if let finished = current { visit(finished) }
                current = PESPacket(
                    range: offset..<offset, bytes: [], scrambled: false,
                    randomAccessIndicator: randomAccessIndicator(bytes, at: offset))
            }
            guard var pes = current else { continue }
            current = nil  // `pes` holds the only reference to its bytes while they grow
            pes.range = pes.range.lowerBound..<(offset + TransportStreamProbe.packetSize)
            if packet.scrambled {
                pes.scrambled = true
            } else if let payload = packet.payload {
                pes.bytes += bytes[payload]
            }
            current = pes
        }
        if let finished = current { visit(finished) }
    }

    /// `random_access_indicator` of the packet at `offset`, when it has an adaptation field with flags.
    static func randomAccessIndicator(_ bytes: [UInt8], at offset: Int) -> Bool {
        let adaptationFieldControl = (bytes[offset + 3] >> 4) & 3
        return adaptationFieldControl & 2 != 0 && bytes[offset + 4] > 0 && bytes[offset + 5] & 0x40 != 0
    }
}
