import HeadwaterSCTE35
import Testing

/// Commands and descriptors beyond the spec samples: vectors generated with threefive, and
/// hand-assembled ones for syntax threefive does not implement. Each decodes to the expected model
/// and re-encodes to the same bytes.
@Suite("Commands and descriptors")
struct CommandAndDescriptorTests {
    @Test func threefive_timeSignalWithSubSegments() throws {
        let section = try SpliceInfoSection(base64: Vectors.threefiveSubSegmentsBase64)
        let expected = SpliceInfoSection(
            command: .timeSignal(TimeSignal(ptsTime: 1_924_989_008)),
            descriptors: [.segmentation(SegmentationDescriptor(
                eventID: 0x1234_5678,
                scheduledEvent: .init(
                    deliveryRestrictions: .init(
                        webDeliveryAllowed: true, noRegionalBlackout: false, archiveAllowed: true, deviceRestrictions: .restrictGroup1),
                    duration: 5_400_000,
                    upid: SegmentationUPID(type: .adi, bytes: Array("SIGNAL:Ny/12345678".utf8)),
                    typeID: .providerPlacementOpportunityStart,
                    segmentNum: 1,
                    segmentsExpected: 2,
                    subSegment: .init(num: 3, expected: 4)
                )
            ))],
            ptsAdjustment: 9_000_000
        )
        #expect(section == expected)
        #expect(section.segmentationDescriptors.first?.scheduledEvent?.upid.text == "SIGNAL:Ny/12345678")
        // pts_adjustment applies: 21388.766756 + 100 s.
        #expect(section.splicePTSSeconds == 21488.766756)
        #expect(section.plannedDurationSeconds == 60.0)
        #expect(try section.base64String() == Vectors.threefiveSubSegmentsBase64)
    }

    @Test func threefive_privateCommand() throws {
        let section = try SpliceInfoSection(base64: Vectors.threefivePrivateCommandBase64)
        #expect(section.command == .privateCommand(PrivateCommand(identifier: 0x4355_4549, privateBytes: [0x01, 0x02, 0x03, 0xAB])))
        #expect(section.cwIndex == 0)
        #expect(section.descriptors.isEmpty)
        #expect(section.splicePTS == nil)
        #expect(section.cueDirection == nil)
        #expect(try section.base64String() == Vectors.threefivePrivateCommandBase64)
    }

    @Test func threefive_spliceNull() throws {
        let section = try SpliceInfoSection(base64: Vectors.threefiveSpliceNullBase64)
        #expect(section == SpliceInfoSection(command: .spliceNull, cwIndex: 0))
        #expect(try section.base64String() == Vectors.threefiveSpliceNullBase64)
        let built = try SpliceInfoSection.spliceNull().hexString()
        #expect(built.hasPrefix("0xFC3011000000000000FFFFF000000000"))  // cw_index 0xFF by default
        #expect(try SpliceInfoSection(hex: built) == .spliceNull())
    }

    @Test func threefive_spliceInsertImmediate() throws {
        let section = try SpliceInfoSection(base64: Vectors.threefiveImmediateInsertBase64)
        let expected = SpliceInsert(
            eventID: 42,
            scheduledEvent: .init(outOfNetwork: true, mode: .programImmediate, uniqueProgramID: 42))
        #expect(section.command == .spliceInsert(expected))
        #expect(section.splicePTS == nil)
        #expect(section.plannedDurationTicks == nil)
        #expect(section.cueDirection == .out)
        #expect(try section.base64String() == Vectors.threefiveImmediateInsertBase64)
    }

    @Test func threefive_spliceInsertTimed() throws {
        let section = try SpliceInfoSection(base64: Vectors.threefiveTimedInsertBase64)
        let expected = SpliceInfoSection.spliceInsert(
            eventID: 43, outOfNetwork: true, ptsTime: 9_045_000, duration: 2_700_000, uniqueProgramID: 43)
        #expect(section.command == expected.command)
        #expect(section.splicePTSSeconds == 100.5)
        #expect(section.plannedDurationSeconds == 30.0)
        #expect(try section.base64String() == Vectors.threefiveTimedInsertBase64)
    }

    @Test func threefive_bandwidthReservation() throws {
        let section = try SpliceInfoSection(base64: Vectors.threefiveBandwidthBase64)
        #expect(section.command == .bandwidthReservation)
        #expect(try section.base64String() == Vectors.threefiveBandwidthBase64)
    }

    @Test func threefive_dtmfAndTimeDescriptors() throws {
        let section = try SpliceInfoSection(base64: Vectors.threefiveDTMFTimeBase64)
        #expect(section.command == .timeSignal(TimeSignal(ptsTime: nil)))
        #expect(section.splicePTS == nil)
        #expect(section.descriptors == [
            .dtmf(DTMFDescriptor(preroll: 177, characters: Array("121#".utf8))),
            .time(TimeDescriptor(taiSeconds: 1_700_000_000, taiNanoseconds: 500_000_000, utcOffset: 37)),
        ])
        if case .dtmf(let dtmf) = section.descriptors.first { #expect(dtmf.text == "121#") }
        #expect(try section.base64String() == Vectors.threefiveDTMFTimeBase64)
    }

    @Test func spliceInsert_componentMode() throws {
        let section = try SpliceInfoSection(hex: Vectors.componentInsertHex)
        let expected = SpliceInsert(
            eventID: 1,
            scheduledEvent: .init(
                outOfNetwork: true,
                mode: .components([
                    .init(componentTag: 1, spliceTime: SpliceTime(ptsTime: 100)),
                    .init(componentTag: 2, spliceTime: SpliceTime(ptsTime: nil)),
                ]),
                uniqueProgramID: 1
            )
        )
        #expect(section.command == .spliceInsert(expected))
        #expect(section.splicePTS == nil)  // no program splice time
        let mode = try #require(section.command?.spliceInsert?.scheduledEvent?.mode)
        #expect(mode.programSpliceFlag == false)
        #expect(mode.spliceImmediateFlag == false)
        #expect(try section.hexString() == Vectors.componentInsertHex)
        // Built in code, the same cue encodes to the hand-assembled bytes.
        #expect(try SpliceInfoSection(command: .spliceInsert(expected)).hexString() == Vectors.componentInsertHex)
    }

    @Test func spliceInsert_componentImmediateRoundTrips() throws {
        let section = SpliceInfoSection(command: .spliceInsert(SpliceInsert(
            eventID: 9,
            scheduledEvent: .init(outOfNetwork: false, mode: .componentsImmediate(tags: [1, 2, 3]), availNum: 1, availsExpected: 2))))
        let decoded = try SpliceInfoSection(bytes: section.encoded())
        #expect(decoded == section)
        #expect(decoded.cueDirection == .in)
    }

    @Test func segmentationDescriptor_componentLoop() throws {
        let section = try SpliceInfoSection(hex: Vectors.componentSegmentationHex)
        let expected = SpliceInfoSection.timeSignal(
            ptsTime: 0,
            descriptors: [.segmentation(SegmentationDescriptor(
                eventID: 2,
                scheduledEvent: .init(
                    components: [.init(componentTag: 0x21, ptsOffset: 5)],
                    typeID: .programStart,
                    segmentNum: 1,
                    segmentsExpected: 1
                )
            ))]
        )
        #expect(section == expected)
        #expect(section.cueDirection == nil)  // Program Start is not a break boundary → SCTE35-CMD
        #expect(section.segmentationDescriptors.first?.typeID?.isStart == true)
        #expect(try expected.hexString() == Vectors.componentSegmentationHex)
    }

    @Test func segmentationDescriptor_cancelled() throws {
        let section = try SpliceInfoSection(hex: Vectors.cancelledSegmentationHex)
        let descriptor = try #require(section.segmentationDescriptors.first)
        #expect(descriptor == SegmentationDescriptor(eventID: 3, scheduledEvent: nil))
        #expect(descriptor.isCancelled)
        #expect(section.cueDirection == nil)
        #expect(try section.hexString() == Vectors.cancelledSegmentationHex)
    }

    @Test func spliceInsert_cancelled() throws {
        let section = try SpliceInfoSection(hex: Vectors.cancelledInsertHex)
        #expect(section == SpliceInfoSection.spliceInsertCancel(eventID: 4))
        #expect(section.command?.spliceInsert?.isCancelled == true)
        #expect(section.command?.spliceInsert?.isOutOfNetwork == false)
        #expect(section.cueDirection == nil)
        #expect(try section.hexString() == Vectors.cancelledInsertHex)
    }

    @Test func encryptedSectionIsKeptOpaque() throws {
        let section = try SpliceInfoSection(hex: Vectors.encryptedHex)
        #expect(section.isEncrypted)
        #expect(section.command == nil)
        #expect(section.descriptors.isEmpty)
        #expect(section.encryptionAlgorithm == 2)
        #expect(section.cwIndex == 5)
        #expect(section.payload == .encrypted(.init(spliceCommandLength: 5, bytes: Array(1...12))))
        #expect(section.splicePTS == nil)
        #expect(try section.hexString() == Vectors.encryptedHex)
    }

    @Test func reservedCommandAndDescriptorTypesRoundTrip() throws {
        let section = try SpliceInfoSection(hex: Vectors.unknownTypesHex)
        #expect(section.payload == .clear(
            command: .unknown(type: 0x10, bytes: [0xAB, 0xCD, 0xEF]),
            descriptors: [.unknown(UnknownDescriptor(tag: 0x09, identifier: SpliceDescriptor.cueIdentifier, privateBytes: [1, 2]))],
            alignmentStuffing: [0xFF, 0xFF]
        ))
        #expect(try section.hexString() == Vectors.unknownTypesHex)
    }

    @Test func legacyUnknownCommandLengthDecodes() throws {
        let section = try SpliceInfoSection(hex: Vectors.legacyCommandLengthHex)
        #expect(section.command == .spliceNull)
        #expect(section.legacyUnknownCommandLength)
        // Re-encoded as received, 0xFFF included (FieldEdgeCaseTests has more).
        let encoded = try section.encoded()
        #expect(encoded == Vectors.bytes(hex: Vectors.legacyCommandLengthHex))
        #expect(try SpliceInfoSection(bytes: encoded) == section)
    }

    @Test func segmentationTypeIDTable() {
        typealias TypeID = SegmentationDescriptor.TypeID
        #expect(TypeID(0x22).name == "Break Start")
        #expect(TypeID.breakEnd.cueDirection == .in)
        #expect(TypeID.providerAdvertisementStart.cueDirection == .out)
        #expect(TypeID.distributorPlacementOpportunityEnd.cueDirection == .in)
        #expect(TypeID.providerAdBlockStart.hasSubSegments)
        #expect(!TypeID.providerPlacementOpportunityEnd.hasSubSegments)
        #expect(TypeID.programStart.cueDirection == nil)
        #expect(TypeID.contentIdentification.isStart == nil)
        #expect(TypeID(0x99).name == nil)
        let subSegmentTypes = (0...255).map { TypeID(UInt8($0)) }.filter(\.hasSubSegments).map(\.rawValue)
        #expect(subSegmentTypes == [0x30, 0x32, 0x34, 0x36, 0x38, 0x3A, 0x44, 0x46])
    }
}
