import HeadwaterSCTE35
import Testing

/// The worked examples of HLS-RULES.md section I6 (and D17): each decodes to exactly the listed
/// values and re-encodes to the identical bytes (scte35-go's golden pattern).
@Suite("SCTE 35 spec samples (HLS-RULES I6)")
struct SpecSampleTests {
    // MARK: Ex 1 — SCTE 35 §14.2

    @Test func spec14_2_spliceInsert() throws {
        let section = try SpliceInfoSection(base64: Vectors.ex1Base64)
        let expected = SpliceInfoSection(
            payload: .clear(
                command: .spliceInsert(SpliceInsert(
                    eventID: 0x4800_008F,
                    scheduledEvent: .init(
                        outOfNetwork: true,
                        mode: .program(SpliceTime(ptsTime: 0x0_7369_C02E)),
                        breakDuration: BreakDuration(autoReturn: true, duration: 0x0_0052_CCF5),
                        uniqueProgramID: 0,
                        availNum: 0,
                        availsExpected: 0,
                        eventIDComplianceFlag: true
                    )
                )),
                descriptors: [.avail(AvailDescriptor(providerAvailID: 309))]
            ),
            ptsAdjustment: 0,
            tier: 0xFFF,
            cwIndex: 0xFF,
            sapType: .unspecified
        )
        #expect(section == expected)
        #expect(section.sectionSyntaxIndicator == false)
        #expect(section.privateIndicator == false)
        #expect(section.protocolVersion == 0)
        #expect(section.isEncrypted == false)
        #expect(section.encryptionAlgorithm == 0)

        let insert = try #require(section.command?.spliceInsert)
        #expect(insert.eventID == 1_207_959_695)
        #expect(insert.isOutOfNetwork)
        #expect(insert.cueDirection == .out)
        #expect(insert.programSpliceTime?.ptsTime == 1_936_310_318)
        #expect(section.splicePTS == 1_936_310_318)
        #expect(section.splicePTSMicroseconds == 21_514_559_089)
        #expect(section.splicePTSSeconds == 21514.559089)
        #expect(section.plannedDurationTicks == 5_426_421)
        #expect(section.plannedDurationMicroseconds == 60_293_567)
        #expect(section.plannedDurationSeconds == 60.293567)
        #expect(section.cueDirection == .out)
        #expect(section.descriptors.first?.identifier == SpliceDescriptor.cueIdentifier)

        #expect(try section.encoded() == Vectors.bytes(hex: Vectors.ex1Hex))
        #expect(try section.hexString() == Vectors.ex1Hex)
        #expect(try section.base64String() == Vectors.ex1Base64)
        #expect(try SpliceInfoSection(hex: Vectors.ex1Hex) == section)
    }

    @Test func spec14_2_crc() {
        let bytes = Vectors.bytes(hex: Vectors.ex1Hex)
        #expect(bytes.count == 50)
        #expect(CRC32MPEG2.checksum(bytes.dropLast(4)) == 0x62DB_A30A)
        #expect(CRC32MPEG2.checksum(bytes) == 0)
    }

    // MARK: Ex 2 — SCTE 35 §14.1

    @Test func spec14_1_timeSignalPlacementOpportunityStart() throws {
        let section = try SpliceInfoSection(base64: Vectors.ex2Base64)
        let descriptor = SegmentationDescriptor(
            eventID: 0x4800_008E,
            scheduledEvent: .init(
                deliveryRestrictions: .init(
                    webDeliveryAllowed: false, noRegionalBlackout: true, archiveAllowed: true, deviceRestrictions: .unrestricted),
                components: nil,
                duration: 0x00_01A5_99B0,
                upid: SegmentationUPID(type: .ti, bytes: [0x00, 0x00, 0x00, 0x00, 0x2C, 0xA0, 0xA1, 0x8A]),
                typeID: .providerPlacementOpportunityStart,
                segmentNum: 2,
                segmentsExpected: 0,
                subSegment: nil
            ),
            eventIDComplianceIndicator: true
        )
        let expected = SpliceInfoSection(
            command: .timeSignal(TimeSignal(ptsTime: 0x0_72BD_0050)),
            descriptors: [.segmentation(descriptor)]
        )
        #expect(section == expected)
        #expect(section.command?.timeSignal?.ptsTime == 1_924_989_008)
        #expect(section.splicePTSSeconds == 21388.766756)
        #expect(section.plannedDurationTicks == 27_630_000)
        #expect(section.plannedDurationSeconds == 307.0)
        #expect(section.cueDirection == .out)
        let segmentation = try #require(section.segmentationDescriptors.first)
        #expect(segmentation.typeID?.rawValue == 0x34)
        #expect(segmentation.typeID?.name == "Provider Placement Opportunity Start")
        #expect(segmentation.typeID?.hasSubSegments == true)
        #expect(segmentation.scheduledEvent?.subSegment == nil)  // older encoder: absent, not 0
        #expect(segmentation.scheduledEvent?.upid.type.name == "TI")

        #expect(try section.hexString() == Vectors.ex2Hex)
        #expect(try section.base64String() == Vectors.ex2Base64)
    }

    // MARK: Ex 3 — AWS MediaConvert

    @Test func aws_mediaconvert_oatcls_out() throws {
        let section = try SpliceInfoSection(base64: Vectors.awsOutBase64)
        #expect(section.cwIndex == 0x00)  // differs from the SCTE vectors (0xFF)
        #expect(section.tier == 0xFFF)
        #expect(section.command == .timeSignal(TimeSignal(ptsTime: 900_000)))
        #expect(section.splicePTSSeconds == 10.0)
        let descriptor = try #require(section.segmentationDescriptors.first)
        #expect(descriptor.eventID == 1)
        let event = try #require(descriptor.scheduledEvent)
        #expect(event.components == nil)
        #expect(event.duration == nil)
        #expect(section.plannedDurationTicks == nil)
        #expect(event.upid == SegmentationUPID(type: .adi, bytes: []))
        #expect(event.typeID == .providerPlacementOpportunityStart)
        #expect(event.segmentNum == 0)
        #expect(event.segmentsExpected == 1)
        #expect(event.subSegment == nil)
        #expect(event.deliveryRestrictions == .init(
            webDeliveryAllowed: false, noRegionalBlackout: false, archiveAllowed: true, deviceRestrictions: .unrestricted))
        #expect(section.cueDirection == .out)
        #expect(CRC32MPEG2.checksum(Vectors.bytes(base64: Vectors.awsOutBase64).dropLast(4)) == 0x34C5_4667)
        #expect(try section.hexString() == Vectors.awsOutHex)
        #expect(try section.base64String() == Vectors.awsOutBase64)
    }

    @Test func aws_mediaconvert_oatcls_in() throws {
        let section = try SpliceInfoSection(base64: Vectors.awsInBase64)
        #expect(section.cwIndex == 0x00)
        #expect(section.splicePTS == 3_600_000)
        #expect(section.splicePTSSeconds == 40.0)
        let event = try #require(section.segmentationDescriptors.first?.scheduledEvent)
        #expect(section.segmentationDescriptors.first?.eventID == 1)
        #expect(event.typeID == .providerPlacementOpportunityEnd)
        #expect(event.typeID.name == "Provider Placement Opportunity End")
        #expect(section.cueDirection == .in)
        #expect(CRC32MPEG2.checksum(Vectors.bytes(base64: Vectors.awsInBase64).dropLast(4)) == 0x37BF_9F90)
        #expect(try section.base64String() == Vectors.awsInBase64)

        // The 30 s between out and in matches #EXT-X-CUE-OUT:30.000.
        let out = try SpliceInfoSection(base64: Vectors.awsOutBase64)
        #expect(try #require(section.splicePTSMicroseconds) - (try #require(out.splicePTSMicroseconds)) == 30_000_000)
    }

    // MARK: D17 / Ex 4 — RFC 8216 §8.10 (illustrative, CRC is zero)

    @Test func rfc8216_d17_out_decodesStructurallyWithoutCRC() throws {
        let bytes = Vectors.bytes(hex: Vectors.d17OutHex)
        let section = try SpliceInfoSection(hex: Vectors.d17OutHex, verifyCRC: false)
        #expect(section.sapType.rawValue == 0)  // "00", not the usual "11"
        #expect(section.tier == 0)
        #expect(section.cwIndex == 0xFF)
        let insert = try #require(section.command?.spliceInsert)
        #expect(insert.eventID == 0x6FFF_FFF0)
        #expect(insert.reserved == 0)
        #expect(insert.cueDirection == .out)
        let event = try #require(insert.scheduledEvent)
        #expect(event.eventIDComplianceFlag == false)
        #expect(event.reserved == 0)
        #expect(event.mode == .program(SpliceTime(ptsTime: 0x1_622D_CAFF, reserved: 0)))
        #expect(event.breakDuration == BreakDuration(autoReturn: false, duration: 5_399_394, reserved: 0))
        #expect(section.splicePTSMicroseconds == 66_023_728_344)
        #expect(section.plannedDurationMicroseconds == 59_993_267)
        // The descriptor's identifier is not 'CUEI', so it stays opaque.
        #expect(section.descriptors == [.unknown(UnknownDescriptor(tag: 0x00, identifier: 0x0298_96F5, privateBytes: [0, 0, 0, 0x87]))])

        // Everything but the (recomputed) CRC round-trips.
        let encoded = try section.encoded()
        #expect(Array(encoded.dropLast(4)) == Array(bytes.dropLast(4)))
        #expect(CRC32MPEG2.checksum(encoded) == 0)
    }

    @Test func rfc8216_d17_out_failsCRC() {
        #expect(throws: SCTE35Error.crcMismatch(expected: 0, computed: 0xD922_2E4F)) {
            try SpliceInfoSection(hex: Vectors.d17OutHex)
        }
    }

    @Test func rfc8216_d17_in_decodesStructurallyWithoutCRC() throws {
        let bytes = Vectors.bytes(hex: Vectors.d17InHex)
        let section = try SpliceInfoSection(hex: Vectors.d17InHex, verifyCRC: false)
        let insert = try #require(section.command?.spliceInsert)
        #expect(insert.eventID == 0x6FFF_FFF0)
        #expect(insert.cueDirection == .in)
        #expect(insert.breakDuration == nil)
        #expect(section.splicePTSMicroseconds == 66_083_721_611)
        #expect(Array(try section.encoded().dropLast(4)) == Array(bytes.dropLast(4)))

        // in − out = break_duration = 59.993 s (D17).
        let out = try SpliceInfoSection(hex: Vectors.d17OutHex, verifyCRC: false)
        let outPTS = try #require(out.splicePTS)
        let inPTS = try #require(section.splicePTS)
        #expect(inPTS - outPTS == out.plannedDurationTicks)

        #expect(throws: SCTE35Error.crcMismatch(expected: 0, computed: 0x6E2E_2547)) {
            try SpliceInfoSection(bytes: bytes)
        }
    }
}
