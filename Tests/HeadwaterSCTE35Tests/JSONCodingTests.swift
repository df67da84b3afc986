import Foundation
import HeadwaterSCTE35
import Testing

/// The Codable form uses the standard's field names and round-trips through Foundation's JSON
/// coders (what `headwater scte35 decode | encode` relies on).
@Suite("JSON")
struct JSONCodingTests {
    @Test(arguments: (Vectors.all + Vectors.badCRC).map(\.name))
    func jsonRoundTrip(_ name: String) throws {
        let bytes = try #require((Vectors.all + Vectors.badCRC).first { $0.name == name }?.bytes)
        let section = try SpliceInfoSection(bytes: bytes, verifyCRC: false)
        let json = try JSONEncoder().encode(section)
        let decoded = try JSONDecoder().decode(SpliceInfoSection.self, from: json)
        #expect(decoded == section)
        #expect(try decoded.encoded() == section.encoded())
    }

    @Test func fieldNamesFollowTheStandard() throws {
        let section = try SpliceInfoSection(base64: Vectors.ex1Base64)
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(section)) as? [String: Any])
        #expect(object["table_id"] as? Int == 0xFC)
        #expect(object["section_length"] as? Int == 47)
        #expect(object["sap_type"] as? Int == 3)
        #expect(object["cw_index"] as? Int == 255)
        #expect(object["tier"] as? Int == 0xFFF)
        #expect(object["splice_command_length"] as? Int == 20)
        #expect(object["descriptor_loop_length"] as? Int == 10)
        #expect(object["crc_32"] as? String == "0x62DBA30A")
        #expect(object["pts_seconds"] as? Double == 21514.559089)
        let command = try #require(object["splice_command"] as? [String: Any])
        #expect(command["splice_command_type"] as? Int == 5)
        #expect(command["splice_event_id"] as? Int == 0x4800_008F)
        #expect(command["out_of_network_indicator"] as? Bool == true)
        #expect(command["reserved"] == nil)  // all ones: not shown
        let spliceTime = try #require(command["splice_time"] as? [String: Any])
        #expect(spliceTime["pts_time"] as? Int == 1_936_310_318)
        let breakDuration = try #require(command["break_duration"] as? [String: Any])
        #expect(breakDuration["auto_return"] as? Bool == true)
        #expect(breakDuration["duration"] as? Int == 5_426_421)
        let descriptor = try #require((object["splice_descriptors"] as? [[String: Any]])?.first)
        #expect(descriptor["splice_descriptor_tag"] as? Int == 0)
        #expect(descriptor["descriptor_length"] as? Int == 8)
        #expect(descriptor["identifier"] as? String == "CUEI")
        #expect(descriptor["provider_avail_id"] as? Int == 309)

        let ex2 = try SpliceInfoSection(base64: Vectors.ex2Base64)
        let ex2Object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(ex2)) as? [String: Any])
        let segmentation = try #require((ex2Object["splice_descriptors"] as? [[String: Any]])?.first)
        #expect(segmentation["segmentation_event_id"] as? Int == 0x4800_008E)
        #expect(segmentation["segmentation_type_id"] as? Int == 0x34)
        #expect(segmentation["segmentation_type_name"] as? String == "Provider Placement Opportunity Start")
        #expect(segmentation["segmentation_duration"] as? Int == 27_630_000)
        #expect(segmentation["segmentation_upid_type"] as? Int == 8)
        #expect(segmentation["segmentation_upid"] as? String == "0x000000002CA0A18A")
        #expect(segmentation["segment_num"] as? Int == 2)
        #expect(segmentation["segments_expected"] as? Int == 0)
        #expect(segmentation["sub_segment_num"] == nil)
    }

    @Test func handWrittenJSONUsesDefaults() throws {
        let json = """
            {
              "cw_index": 0,
              "splice_command": { "splice_command_type": 6, "splice_time": { "pts_time": 900000 } },
              "splice_descriptors": [ {
                "splice_descriptor_tag": 2, "identifier": "CUEI", "segmentation_event_id": 1,
                "delivery_not_restricted_flag": false, "web_delivery_allowed_flag": false,
                "no_regional_blackout_flag": false, "archive_allowed_flag": true, "device_restrictions": 3,
                "segmentation_upid_type": 9, "segmentation_upid": "0x",
                "segmentation_type_id": 52, "segment_num": 0, "segments_expected": 1
              } ]
            }
            """
        let section = try JSONDecoder().decode(SpliceInfoSection.self, from: Data(json.utf8))
        #expect(try section.hexString() == Vectors.awsOutHex)
    }

    @Test func invalidJSONIsRejected() {
        let wrongTable = #"{"table_id": 253, "splice_command": {"splice_command_type": 0}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SpliceInfoSection.self, from: Data(wrongTable.utf8)) }
        let badHex = #"{"splice_command": {"splice_command_type": 255, "identifier": 1, "private_bytes": "0xZZ"}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SpliceInfoSection.self, from: Data(badHex.utf8)) }
        let tooBig = #"{"splice_command": {"splice_command_type": 5, "splice_event_id": 4294967296}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SpliceInfoSection.self, from: Data(tooBig.utf8)) }
    }

    @Test func identifiersAcceptNumbersHexAndText() throws {
        for identifier in [#""CUEI""#, "1129661769", #""0x43554549""#] {
            let json = #"{"splice_command": {"splice_command_type": 255, "identifier": \#(identifier), "private_bytes": "0x01"}}"#
            let section = try JSONDecoder().decode(SpliceInfoSection.self, from: Data(json.utf8))
            #expect(section.command == .privateCommand(PrivateCommand(identifier: 0x4355_4549, privateBytes: [1])))
        }
    }

    @Test func nestedTypesRoundTripOnTheirOwn() throws {
        func roundTrip<T: Codable & Equatable>(_ value: T) throws {
            #expect(try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value)) == value)
        }
        try roundTrip(SpliceInsert.Mode.componentsImmediate(tags: [1, 2]))
        try roundTrip(SpliceInsert.Mode.components([.init(componentTag: 3, spliceTime: SpliceTime(ptsTime: 4))]))
        try roundTrip(SpliceInsert.Mode.programImmediate)
        try roundTrip(SpliceInsert.ScheduledEvent(outOfNetwork: false, mode: .program(SpliceTime(ptsTime: 7, reserved: 0))))
        try roundTrip(try #require(RoundTripTests.richSegmentation.scheduledEvent))
        try roundTrip(SpliceInfoSection.Payload.encrypted(.init(spliceCommandLength: 9, bytes: [0xAA])))
        try roundTrip(SpliceInfoSection.Payload.clear(command: .spliceNull, alignmentStuffing: [0xFF]))
        try roundTrip(SpliceCommand.unknown(type: 0x42, bytes: [1]))
        try roundTrip(SpliceDescriptor.unknown(UnknownDescriptor(tag: 0, identifier: 0x3078_3132, privateBytes: [])))  // "0x12" as ASCII
        try roundTrip(DTMFDescriptor(preroll: 1, characters: [0x00, 0xFF]))
        try roundTrip(SegmentationUPID(type: .init(0xEE), bytes: [0, 1]))
    }
}
