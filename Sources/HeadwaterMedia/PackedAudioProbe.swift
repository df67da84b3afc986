/// Probes a packed audio segment (HLS-RULES B18; RFC 8216bis §3.1.3): optional ID3v2 tags, the
/// first carrying the PRIV frame `com.apple.streaming.transportStreamTimestamp`, then ADTS (AAC),
/// MPEG audio (MP3), AC-3 or E-AC-3 frames.
public enum PackedAudioProbe {
    /// The PRIV owner identifier that carries the 33-bit 90 kHz timestamp of the first frame.
    public static let timestampOwner = "com.apple.streaming.transportStreamTimestamp"

    /// Probes `bytes`, a whole segment. ``SegmentProbe/firstPTS`` is the ID3 timestamp (`nil` without
    /// one) and the duration is the sample count over the sample rate. The first frame must follow
    /// the ID3 tags directly; later damage is skipped by resynchronising.
    ///
    /// - Throws: ``MediaProbeError/invalidID3Tag(reason:)`` or ``MediaProbeError/notPackedAudio``.
    public static func probe(_ bytes: [UInt8]) throws(MediaProbeError) -> SegmentProbe {
        var offset = 0
        var timestamp: UInt64?
        while offset + 3 <= bytes.count, bytes[offset] == 0x49, bytes[offset + 1] == 0x44, bytes[offset + 2] == 0x33 {
            let tag = try ID3Tag(bytes, at: offset)
            timestamp = timestamp ?? tag.timestamp
            offset = tag.end
        }
        let scan = AudioFrameScan(bytes, from: offset, syntax: nil, firstFrameAtStart: true)
        guard let header = scan.first else { throw .notPackedAudio }
        let info = AudioInfo(
            format: header.format, codec: header.codec, objectType: header.objectType,
            sampleRate: header.sampleRate, channels: header.channels)
        return SegmentProbe(
            codecs: [info.codec], streams: [], video: nil, audio: info, firstPTS: timestamp,
            durationMicroseconds: scan.sampleDurationMicroseconds, startsWithIDR: false,
            startsWithPATAndPMT: false, programCount: 0, byteCount: bytes.count)
    }
}

/// An ID3v2.2–2.4 tag (id3.org ID3v2.3.0 §3, ID3v2.4.0-structure §3), read only to skip it and to
/// find the HLS timestamp PRIV frame.
struct ID3Tag {
    /// Offset just past the tag (and its footer, if any).
    var end: Int
    /// The 33-bit value of the `com.apple.streaming.transportStreamTimestamp` PRIV frame.
    var timestamp: UInt64?

    private static let owner = Array(PackedAudioProbe.timestampOwner.utf8) + [0]

    init(_ bytes: [UInt8], at start: Int) throws(MediaProbeError) {
        guard start >= 0, start + 10 <= bytes.count else { throw .invalidID3Tag(reason: "header truncated") }
        let version = bytes[start + 3]
        let flags = bytes[start + 5]
        guard (2...4).contains(version) else { throw .invalidID3Tag(reason: "unsupported version 2.\(version)") }
        guard let size = Self.syncsafe(bytes[(start + 6)..<(start + 10)]) else {
            throw .invalidID3Tag(reason: "tag size is not a syncsafe integer")
        }
        let bodyEnd = start + 10 + size
        end = bodyEnd + (version == 4 && flags & 0x10 != 0 ? 10 : 0)
        guard end <= bytes.count else {
            throw .invalidID3Tag(reason: "tag size \(size) exceeds the \(bytes.count - start - 10) bytes available")
        }
        timestamp = nil

        var position = start + 10
        if flags & 0x40 != 0, version >= 3 {  // extended header
            guard position + 4 <= bodyEnd else { throw .invalidID3Tag(reason: "extended header truncated") }
            let raw = bytes[position..<(position + 4)]
            // v2.4: syncsafe size including itself; v2.3: plain size excluding itself.
            let length = version == 4 ? Self.syncsafe(raw) : Self.plain(raw).map { $0 + 4 }
            guard let length, length >= 4, position + length <= bodyEnd else {
                throw .invalidID3Tag(reason: "extended header overruns the tag")
            }
            position += length
        }

        let headerLength = version == 2 ? 6 : 10
        let idLength = version == 2 ? 3 : 4
        while position + headerLength <= bodyEnd, bytes[position] != 0 {  // a zero byte starts the padding
            let sizeBytes = bytes[(position + idLength)..<(position + 2 * idLength)]
            let frameSize = version == 4 ? Self.syncsafe(sizeBytes) : Self.plain(sizeBytes)
            guard let frameSize, position + headerLength + frameSize <= bodyEnd else {
                throw .invalidID3Tag(reason: "frame at offset \(position) overruns the tag")
            }
            let body = (position + headerLength)..<(position + headerLength + frameSize)
            if idLength == 4, Array(bytes[position..<(position + 4)]) == Array("PRIV".utf8), timestamp == nil {
                timestamp = Self.timestamp(in: bytes[body])
            }
            position = body.upperBound
        }
    }

    /// 28-bit syncsafe integer (four bytes, top bit of each clear).
    private static func syncsafe(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count == 4, bytes.allSatisfy({ $0 & 0x80 == 0 }) else { return nil }
        return bytes.reduce(0) { $0 << 7 | Int($1) }
    }

    /// Big-endian integer of up to four bytes.
    private static func plain(_ bytes: ArraySlice<UInt8>) -> Int? {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    /// The timestamp in a PRIV frame body owned by the HLS timestamp identifier.
    private static func timestamp(in body: ArraySlice<UInt8>) -> UInt64? {
        guard body.count >= owner.count + 8, body.prefix(owner.count).elementsEqual(owner) else { return nil }
        let value = body.dropFirst(owner.count).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return value & Timestamps.mask
    }
}
