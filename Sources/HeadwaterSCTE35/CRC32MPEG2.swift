/// CRC-32/MPEG-2, the checksum in every MPEG-2 private section including `splice_info_section()`.
///
/// Polynomial `0x04C11DB7`, initial value `0xFFFFFFFF`, MSB-first (not reflected), no final XOR
/// (HLS-RULES I5). Running it over a whole section, `CRC_32` included, yields `0` — a cheap
/// integrity check that needs no parsing.
public enum CRC32MPEG2 {
    /// The CRC of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(byte))]
        }
        return crc
    }

    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index) << 24
        for _ in 0..<8 {
            crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1
        }
        return crc
    }
}
