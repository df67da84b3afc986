import HeadwaterSCTE35
import Testing

/// Values built in code encode and decode back to themselves; text forms round-trip; values that
/// do not fit their fields are reported instead of truncated.
@Suite("Round trips")
struct RoundTripTests {
    static let richSegmentation = SegmentationDescriptor(
        eventID: 0xDEAD_BEEF,
        scheduledEvent: .init(
            deliveryRestrictions: .init(
                webDeliveryAllowed: true, noRegionalBlackout: true, archiveAllowed: false, deviceRestrictions: .restrictGroup2),
            components: [.init(componentTag: 1, ptsOffset: 0), .init(componentTag: 2, ptsOffset: (1 << 33) - 1)],
            duration: (1 << 40) - 1,
            upid: SegmentationUPID(type: .uri, bytes: Array("urn:uuid:5a3c".utf8)),
            typeID: .distributorPlacementOpportunityStart,
            segmentNum: 3,
            segmentsExpected: 4,
            subSegment: .init(num: 1, expected: 2)
        ),
        eventIDComplianceIndicator: false
    )

    static let builtSections: [SpliceInfoSection] = [
        .spliceInsert(eventID: 7, outOfNetwork: true, ptsTime: 1_000_000, duration: 2_700_000, availNum: 1, availsExpected: 2),
        .spliceInsert(eventID: 8, outOfNetwork: false, ptsTime: nil),
        .spliceInsert(eventID: 9, outOfNetwork: true, ptsTime: 5, duration: 90_000, autoReturn: false,
                      descriptors: [.avail(AvailDescriptor(providerAvailID: 12))], ptsAdjustment: (1 << 33) - 1, tier: 0x123),
        .spliceInsertCancel(eventID: .max),
        .timeSignal(ptsTime: 0x1_FFFF_FFFF, descriptors: [.segmentation(richSegmentation)]),
        .timeSignal(ptsTime: nil, descriptors: [
            .segmentation(SegmentationDescriptor(eventID: 1, scheduledEvent: nil)),
            .dtmf(DTMFDescriptor(preroll: 0, characters: [])),
            .time(TimeDescriptor(taiSeconds: (1 << 48) - 1, taiNanoseconds: 999_999_999, utcOffset: 37)),
            .unknown(UnknownDescriptor(tag: 0xF0, identifier: 0x4142_4344, privateBytes: [])),
        ]),
        .spliceNull(descriptors: [.avail(AvailDescriptor(providerAvailID: 1))]),
        SpliceInfoSection(command: .privateCommand(PrivateCommand(identifier: 1, privateBytes: []))),
        SpliceInfoSection(command: .spliceSchedule(bytes: [1, 2, 3])),
        SpliceInfoSection(command: .bandwidthReservation, sapType: .type2),
        SpliceInfoSection(payload: .encrypted(.init(spliceCommandLength: 0xFFF, bytes: [])), encryptionAlgorithm: 63),
    ]

    @Test(arguments: builtSections)
    func builtValuesRoundTrip(_ section: SpliceInfoSection) throws {
        let bytes = try section.encoded()
        #expect(CRC32MPEG2.checksum(bytes) == 0)
        #expect(Int(bytes[1] & 0x0F) << 8 | Int(bytes[2]) == bytes.count - 3)
        let decoded = try SpliceInfoSection(bytes: bytes)
        #expect(decoded == section)
        #expect(try decoded.encoded() == bytes)
        #expect(try SpliceInfoSection(hex: section.hexString()) == section)
        #expect(try SpliceInfoSection(base64: section.base64String()) == section)
        #expect(try SpliceInfoSection(text: section.hexString()) == section)
        #expect(try SpliceInfoSection(text: section.base64String()) == section)
    }

    @Test(arguments: Vectors.all.map(\.name))
    func everyVectorReencodesIdentically(_ name: String) throws {
        let bytes = try #require(Vectors.all.first { $0.name == name }?.bytes)
        let section = try SpliceInfoSection(bytes: bytes)
        #expect(try section.encoded() == bytes)
    }

    @Test func builderHelpers() throws {
        let section = SpliceInfoSection.spliceInsert(
            eventID: 0x4800_008F, outOfNetwork: true, ptsTime: (1 << 33) + 10, duration: 5_426_421, ptsAdjustment: 100)
        // pts_time is reduced modulo 2^33; pts_adjustment is added modulo 2^33.
        #expect(section.command?.spliceInsert?.programSpliceTime?.ptsTime == 10)
        #expect(section.splicePTS == 110)
        #expect(section.adjustedPTS((1 << 33) - 50) == 50)
        #expect(section.plannedDurationMicroseconds == 60_293_567)
        #expect(section.cueDirection == .out)
        #expect(section.command?.spliceInsert?.breakDuration?.autoReturn == true)
        #expect(try section.hexString().hasPrefix("0xFC30"))
    }

    @Test func ticksConversions() {
        #expect(Ticks90kHz.microseconds(0) == 0)
        #expect(Ticks90kHz.microseconds(90_000) == 1_000_000)
        #expect(Ticks90kHz.microseconds(1) == 11)  // 11.11 µs
        #expect(Ticks90kHz.microseconds(5) == 56)  // 55.56 µs
        #expect(Ticks90kHz.microseconds(.max) == Int64.max)
        #expect(Ticks90kHz.ticks(microseconds: 1_000_000) == 90_000)
        #expect(Ticks90kHz.ticks(microseconds: 60_293_567) == 5_426_421)
        #expect(Ticks90kHz.ticks(microseconds: -5) == 0)
        #expect(Ticks90kHz.ticks(microseconds: .max) > 0)
        #expect(Ticks90kHz.seconds(27_630_000) == 307.0)
        #expect(Ticks90kHz.adjusted(.max, by: .max) < Ticks90kHz.ptsModulus)
    }

    @Test func textForms() throws {
        let bytes = Vectors.bytes(hex: Vectors.ex1Hex)
        let bare = String(Vectors.ex1Hex.dropFirst(2))
        let lower = bare.lowercased()
        for text in [Vectors.ex1Hex, "0X" + bare, bare, lower, "0x" + lower] {
            #expect(try SpliceInfoSection(hex: text).encoded() == bytes)
            #expect(try SpliceInfoSection(text: text).encoded() == bytes)
        }
        #expect(try SpliceInfoSection(text: "  \(Vectors.ex1Base64)\n").encoded() == bytes)
        #expect(try SpliceInfoSection(text: "\t\(Vectors.ex1Hex) ").encoded() == bytes)
        // Unpadded base64 is accepted too.
        #expect(try SpliceInfoSection(base64: String(Vectors.ex2Base64.dropLast(2))).hexString() == Vectors.ex2Hex)
    }

    @Test func valuesThatDoNotFitAreReported() {
        #expect(throws: SCTE35Error.valueOutOfRange(field: "pts_time", value: 1 << 33, bitWidth: 33)) {
            try SpliceInfoSection(command: .timeSignal(TimeSignal(ptsTime: 1 << 33))).encoded()
        }
        #expect(throws: SCTE35Error.valueOutOfRange(field: "pts_adjustment", value: 1 << 33, bitWidth: 33)) {
            try SpliceInfoSection(command: .spliceNull, ptsAdjustment: 1 << 33).encoded()
        }
        #expect(throws: SCTE35Error.valueOutOfRange(field: "tier", value: 0x1000, bitWidth: 12)) {
            try SpliceInfoSection(command: .spliceNull, tier: 0x1000).encoded()
        }
        #expect(throws: SCTE35Error.valueOutOfRange(field: "dtmf_count", value: 8, bitWidth: 3)) {
            try SpliceInfoSection.spliceNull(descriptors: [.dtmf(DTMFDescriptor(preroll: 1, characters: Array("12345678".utf8)))]).encoded()
        }
        let longUPID = SegmentationDescriptor(
            eventID: 1, scheduledEvent: .init(upid: SegmentationUPID(type: .uri, bytes: Array(repeating: 0x41, count: 256)), typeID: .breakStart))
        #expect(throws: SCTE35Error.valueOutOfRange(field: "segmentation_upid_length", value: 256, bitWidth: 8)) {
            try SpliceInfoSection.timeSignal(ptsTime: 0, descriptors: [.segmentation(longUPID)]).encoded()
        }
        let bigDescriptor = UnknownDescriptor(tag: 0x80, identifier: 1, privateBytes: Array(repeating: 0, count: 252))
        #expect(throws: SCTE35Error.lengthOutOfRange(field: "descriptor_length", length: 256, maximum: 255)) {
            try SpliceInfoSection.spliceNull(descriptors: [.unknown(bigDescriptor)]).encoded()
        }
        #expect(throws: SCTE35Error.lengthOutOfRange(field: "splice_command_length", length: 0xFFF, maximum: 0xFFE)) {
            try SpliceInfoSection(command: .privateCommand(PrivateCommand(identifier: 0, privateBytes: Array(repeating: 0, count: 0xFFB)))).encoded()
        }
        #expect(throws: SCTE35Error.lengthOutOfRange(field: "section_length", length: 4101, maximum: 0xFFF)) {
            try SpliceInfoSection(command: .privateCommand(PrivateCommand(identifier: 0, privateBytes: Array(repeating: 0, count: 4080)))).encoded()
        }
    }

    @Test func subSegmentIsIgnoredForTypesWithoutIt() throws {
        var descriptor = Self.richSegmentation
        descriptor.scheduledEvent?.typeID = .programStart
        let section = SpliceInfoSection.timeSignal(ptsTime: 1, descriptors: [.segmentation(descriptor)])
        let decoded = try SpliceInfoSection(bytes: section.encoded())
        #expect(decoded.segmentationDescriptors.first?.scheduledEvent?.subSegment == nil)
    }

    @Test func errorsDescribeThemselvesOnOneLine() {
        let errors: [SCTE35Error] = [
            .unexpectedEndOfData(field: "pts_time", bitOffset: 83),
            .invalidTableID(0xFD),
            .invalidSectionLength(declared: 47, actual: 46),
            .crcMismatch(expected: 0, computed: 0xD922_2E4F),
            .spliceCommandLengthOverrun(declared: 300, available: 20),
            .spliceCommandLengthMismatch(commandType: 5, declared: 21, parsed: 20),
            .unknownSpliceCommandLength(commandType: 0xFF),
            .descriptorLoopLengthOverrun(declared: 11, available: 10),
            .descriptorLoopTrailingBytes(byteOffset: 46, bytes: [0x00]),
            .descriptorLengthOverrun(byteOffset: 36, tag: 0, declared: 9, available: 8, bytes: [0x00, 0x09]),
            .descriptorLengthMismatch(tag: 0, declared: 9, parsed: 8),
            .invalidHex(offset: 3),
            .invalidBase64(offset: 4),
            .valueOutOfRange(field: "tier", value: 4096, bitWidth: 12),
            .lengthOutOfRange(field: "section_length", length: 5000, maximum: 4095),
        ]
        for error in errors {
            #expect(!error.description.isEmpty)
            #expect(!error.description.contains("\n"))
        }
        #expect(SCTE35Error.crcMismatch(expected: 0, computed: 0xD922_2E4F).description
            == "CRC mismatch: expected 0x00000000, computed 0xD9222E4F")
    }
}
