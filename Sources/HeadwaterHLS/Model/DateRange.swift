/// `EXT-X-DATERANGE` (RFC 8216bis §4.4.5.1): a range of time with attributes — ad breaks with their
/// SCTE-35 cues (§4.4.5.1.1), interstitials (Appendix D), program metadata.
///
/// A live origin may publish several tags with the same ``id`` over time: later tags may *add*
/// attributes (DURATION, SCTE35-IN when the break ends) but never change or drop one (D8). The
/// live-update checker enforces that across reloads.
public struct DateRange: AttributeListTag {
    public static let tagName = "EXT-X-DATERANGE"
    public static let schema: [AttributeSpec] = [
        .init("ID", .quotedString, required: true),
        .init("CLASS", .quotedString),
        .init("START-DATE", .quotedDate),  // required unless an earlier same-ID tag has it (§4.4.5.1)
        .init("CUE", .enumeratedStringList),
        .init("END-DATE", .quotedDate),
        .init("DURATION", .decimalFloatingPoint),
        .init("PLANNED-DURATION", .decimalFloatingPoint),
        .init("SCTE35-CMD", .hexadecimalSequence),
        .init("SCTE35-OUT", .hexadecimalSequence),
        .init("SCTE35-IN", .hexadecimalSequence),
        .init("END-ON-NEXT", .enumeratedString),
    ]
    public static let allowsClientAttributes = true

    public var attributes: AttributeList
    public init(attributes: AttributeList) { self.attributes = attributes }

    /// Builds a date range with attributes in the spec's order.
    public init(
        id: String,
        class classValue: String? = nil,
        startDate: ProgramDateTime?,
        endDate: ProgramDateTime? = nil,
        duration: HLSDuration? = nil,
        plannedDuration: HLSDuration? = nil,
        scte35Out: [UInt8]? = nil,
        scte35In: [UInt8]? = nil,
        scte35Cmd: [UInt8]? = nil,
        clientAttributes: [Attribute] = []
    ) {
        var list: AttributeList = [Attribute("ID", .quoted(id))]
        if let classValue { list["CLASS"] = .quoted(classValue) }
        if let startDate { list["START-DATE"] = .date(startDate) }
        if let endDate { list["END-DATE"] = .date(endDate) }
        if let duration { list["DURATION"] = .decimal(duration) }
        if let plannedDuration { list["PLANNED-DURATION"] = .decimal(plannedDuration) }
        if let scte35Cmd { list["SCTE35-CMD"] = .hex(scte35Cmd) }
        if let scte35Out { list["SCTE35-OUT"] = .hex(scte35Out) }
        if let scte35In { list["SCTE35-IN"] = .hex(scte35In) }
        list.attributes.append(contentsOf: clientAttributes)
        self.attributes = list
    }

    public var id: String { attributes.string("ID") ?? "" }
    public var `class`: String? { attributes.string("CLASS") }
    public var startDate: ProgramDateTime? { attributes.date("START-DATE") }
    public var endDate: ProgramDateTime? { attributes.date("END-DATE") }
    public var duration: HLSDuration? { attributes.decimal("DURATION") }
    public var plannedDuration: HLSDuration? { attributes.decimal("PLANNED-DURATION") }
    public var cue: [String]? { attributes.list("CUE") }
    public var endOnNext: Bool { attributes.enumerated("END-ON-NEXT") == "YES" }
    public var scte35Cmd: [UInt8]? { attributes.hexBytes("SCTE35-CMD") }
    public var scte35Out: [UInt8]? { attributes.hexBytes("SCTE35-OUT") }
    public var scte35In: [UInt8]? { attributes.hexBytes("SCTE35-IN") }

    /// The `X-` attributes, in order.
    public var clientAttributes: [Attribute] { attributes.attributes.filter { $0.name.hasPrefix("X-") } }
}

extension DateRange {
    /// The date ranges of a new head segment when the segments that carried `carried` slid out:
    /// a range the head already has (same ID) takes the carried attributes it lacks, the others go
    /// first, before any later same-ID tag — so a client that sees only the new playlist still
    /// knows every open range with all its attributes (D8, §6.2.1).
    public static func carrying(_ carried: [DateRange], onto own: [DateRange]) -> [DateRange] {
        var own = own
        var leading: [DateRange] = []
        for range in carried {
            if let index = own.firstIndex(where: { $0.id == range.id }) {
                for attribute in range.attributes.attributes where !own[index].attributes.contains(attribute.name) {
                    own[index].attributes.attributes.append(attribute)
                }
            } else {
                leading.append(range)
            }
        }
        return leading + own
    }
}
