import HeadwaterHLS
import Testing

@Suite("Attribute lists (§4.2, A6, A7)")
struct AttributeListParserTests {
    @Test("names, quoted values and tokens are kept in order, as written")
    func parsesInOrder() throws {
        let list = try AttributeListParser.parse(
            #"METHOD=AES-128,URI="https://k.example/key?a=1,b=2",IV=0x0123456789ABCDEF0123456789ABCDEF,X-1=-3.5"#)
        #expect(list.names == ["METHOD", "URI", "IV", "X-1"])
        #expect(list["METHOD"] == .token("AES-128"))
        #expect(list["URI"] == .quoted("https://k.example/key?a=1,b=2"))
        #expect(list["IV"] == .token("0x0123456789ABCDEF0123456789ABCDEF"))
        #expect(list["X-1"] == .token("-3.5"))
    }

    @Test("a quoted string may be empty and may hold commas, '=', '#', spaces and non-ASCII text")
    func quotedContent() throws {
        let list = try AttributeListParser.parse(#"A="",B=" a=b, #c ",C="日本 🎬""#)
        #expect(list["A"] == .quoted(""))
        #expect(list["B"] == .quoted(" a=b, #c "))
        #expect(list["C"] == .quoted("日本 🎬"))
    }

    @Test("a token runs to the next comma and may contain '='")
    func tokenWithEquals() throws {
        let list = try AttributeListParser.parse("SCTE35=/DAlAAAAAAAAAP/wFAUAAAABf+/+AAAAAH4AUmXAAAAAAAA=,N=1")
        #expect(list["SCTE35"] == .token("/DAlAAAAAAAAAP/wFAUAAAABf+/+AAAAAH4AUmXAAAAAAAA="))
        #expect(list["N"] == .token("1"))
    }

    @Test(
        "malformed lists fail",
        arguments: [
            "", "A", "A=", "=1", "A=1,", "A=1,,B=2", "A=\"x", "A=\"x\"y", "A=x\"y\"", "A=1 ,B=2", "A=1, B=2", "A= 1",
            "a=1", "A_B=1", "A B=1", "A=1\tB", ",A=1", "A=\"x\nB\"",
        ]
    )
    func malformed(_ text: String) {
        let failure = #expect(throws: AttributeListParser.Failure.self) { try AttributeListParser.parse(text) }
        #expect(failure?.isDuplicate == false)
        #expect(failure?.message.isEmpty == false)
    }

    @Test("a name twice is a duplicate (A6)")
    func duplicate() {
        let failure = #expect(throws: AttributeListParser.Failure.self) {
            try AttributeListParser.parse(#"ID="a",DURATION=1,ID="b""#)
        }
        #expect(failure?.isDuplicate == true)
    }

    @Test("vendor spellings are accepted only with strictNames: false")
    func lenientNames() throws {
        let text = "ElapsedTime=2.000,Duration=30,vendor_id=7"
        #expect(throws: AttributeListParser.Failure.self) { try AttributeListParser.parse(text) }
        let list = try AttributeListParser.parse(text, strictNames: false)
        #expect(list.names == ["ElapsedTime", "Duration", "vendor_id"])
        #expect(list.decimal("ElapsedTime") == .seconds(2))
    }

    @Test("256 attributes parse; 257 do not")
    func attributeCountLimit() throws {
        func list(_ count: Int) -> String { (0..<count).map { "A\($0)=\($0)" }.joined(separator: ",") }
        #expect(try AttributeListParser.parse(list(256)).attributes.count == 256)
        #expect(throws: AttributeListParser.Failure.self) { try AttributeListParser.parse(list(257)) }
    }

    @Test("typed readers")
    func typedReaders() throws {
        let list = try AttributeListParser.parse(
            #"N=42,BIG=18446744073709551615,OVER=18446744073709551616,D=10.010,S=-2.5,Y=YES,NO=NO,MAYBE=MAYBE,"#
                + #"H=0xABC,L=0xdeadBEEF,R=1920x1080,Q="2026-11-21T17:36:00Z",BR="1000@200",B2="500",C="PRE,ONCE",QN="42""#)
        #expect(list.integer("N") == 42)
        #expect(list.integer("BIG") == UInt64.max)
        #expect(list.integer("OVER") == nil)
        #expect(list.integer("QN") == nil, "a quoted number is not a decimal-integer")
        #expect(list.integer("ABSENT") == nil)
        #expect(list.decimal("D") == HLSDuration(microseconds: 10_010_000))
        #expect(list.decimal("S") == HLSDuration(microseconds: -2_500_000))
        #expect(list.yesNo("Y") == true)
        #expect(list.yesNo("NO") == false)
        #expect(list.yesNo("MAYBE") == nil)
        #expect(list.enumerated("MAYBE") == "MAYBE")
        #expect(list.hexBytes("H") == [0x0A, 0xBC], "an odd digit count reads as if a leading zero were present")
        #expect(list.hexBytes("L") == [0xDE, 0xAD, 0xBE, 0xEF])
        #expect(list.hexBytes("N") == nil)
        #expect(list.resolution("R") == Resolution(width: 1920, height: 1080))
        #expect(list.date("Q")?.millisecondsSinceEpoch == 1_795_282_560_000)
        #expect(list.byteRange("BR") == ByteRange(length: 1000, offset: 200))
        #expect(list.byteRange("B2") == ByteRange(length: 500))
        #expect(list.list("C") == ["PRE", "ONCE"])
        #expect(list.string("C") == "PRE,ONCE")
        #expect(list.string("N") == "42")
    }

    @Test("the subscript replaces in place, appends new names, and removes with nil")
    func subscriptEditing() {
        var list: AttributeList = [Attribute("A", .token("1")), Attribute("B", .token("2"))]
        list["A"] = .quoted("x")
        list["C"] = .token("3")
        #expect(list.names == ["A", "B", "C"])
        #expect(list["A"] == .quoted("x"))
        list["B"] = nil
        list["ABSENT"] = nil
        #expect(list.names == ["A", "C"])
        #expect(list.contains("C") && !list.contains("B"))
        #expect(!list.isEmpty && AttributeList().isEmpty)
    }

    @Test("value builders write the canonical forms")
    func valueBuilders() {
        #expect(AttributeValue.integer(UInt64.max) == .token("18446744073709551615"))
        #expect(AttributeValue.decimal(HLSDuration(microseconds: 30_000_000)) == .token("30.000"))
        #expect(AttributeValue.hex([0x00, 0xFC, 0x30]) == .token("0x00FC30"))
        #expect(AttributeValue.yesNo(true) == .token("YES"))
        #expect(AttributeValue.date(ProgramDateTime(millisecondsSinceEpoch: 0)) == .quoted("1970-01-01T00:00:00.000Z"))
        #expect(AttributeValue.quoted("a").text == "a" && AttributeValue.token("b").text == "b")
    }

    @Test(
        "attribute types accept exactly their values (A7)",
        arguments: [
            (AttributeType.decimalInteger, AttributeValue.token("0"), true), (.decimalInteger, .token("-1"), false),
            (.decimalInteger, .token("1.0"), false), (.decimalInteger, .quoted("1"), false),
            (.decimalInteger, .token("18446744073709551616"), false), (.hexadecimalSequence, .token("0xFC30"), true),
            (.hexadecimalSequence, .token("0X0"), true), (.hexadecimalSequence, .token("0x"), false),
            (.hexadecimalSequence, .token("FC30"), false), (.hexadecimalSequence, .token("0xG0"), false),
            (.decimalFloatingPoint, .token("2.002"), true), (.decimalFloatingPoint, .token("-2.002"), false),
            (.signedDecimalFloatingPoint, .token("-2.002"), true), (.signedDecimalFloatingPoint, .quoted("1"), false),
            (.quotedString, .quoted(""), true), (.quotedString, .token("x"), false), (.enumeratedString, .token("YES"), true),
            (.enumeratedString, .quoted("YES"), false), (.enumeratedStringList, .quoted("PRE,ONCE"), true),
            (.decimalResolution, .token("1280x720"), true), (.decimalResolution, .token("1280X720"), false),
            (.decimalResolution, .token("1280x"), false), (.quotedDate, .quoted("2026-11-21T17:36:00Z"), true),
            (.quotedDate, .quoted("yesterday"), false), (.quotedDate, .token("2026-11-21T17:36:00Z"), false),
            (.quotedByteRange, .quoted("100@0"), true), (.quotedByteRange, .quoted("100@"), false),
            (.quotedByteRange, .token("100@0"), false), (.quotedStringOrNone, .token("NONE"), true),
            (.quotedStringOrNone, .token("cc1"), false), (.quotedStringOrNone, .quoted("cc1"), true),
            (.clientValue, .quoted("anything"), true), (.clientValue, .token("0xAB"), true),
            (.clientValue, .token("-12.5"), true), (.clientValue, .token("YES"), false),
        ] as [(AttributeType, AttributeValue, Bool)]
    )
    func typeAcceptance(_ type: AttributeType, _ value: AttributeValue, _ accepted: Bool) {
        #expect(type.accepts(value) == accepted)
    }

    @Test("hexadecimal sequences encode upper case and decode either case")
    func hexSequence() {
        #expect(HexSequence.encode([0xFC, 0x30, 0x00]) == "0xFC3000")
        #expect(HexSequence.encode([]) == "0x")
        #expect(HexSequence.decode("0xfc3000") == [0xFC, 0x30, 0x00])
        #expect(HexSequence.decode("0XFC") == [0xFC])
        #expect(HexSequence.decode("0x") == nil)
        #expect(HexSequence.decode("FC") == nil)
        #expect(HexSequence.decode("0xZZ") == nil)
        let bytes: [UInt8] = (0...255).map { UInt8($0) }
        #expect(HexSequence.decode(HexSequence.encode(bytes)) == bytes)
    }

    @Test(
        "byte ranges and resolutions",
        arguments: ["1000", "1000@0", "0@18446744073709551615", "18446744073709551615@18446744073709551615"]
    )
    func byteRangeRoundTrip(_ text: String) throws {
        #expect(try #require(ByteRange(text)).description == text)
    }

    @Test("malformed byte ranges", arguments: ["", "@0", "10@", "10@@0", "-1", "1@2@3", "1 @2", "0x10", "18446744073709551616"])
    func malformedByteRange(_ text: String) {
        #expect(ByteRange(text) == nil)
    }

    @Test("malformed resolutions", arguments: ["", "x", "1x", "x1", "1x1x1", "-1x1", "2147483648x1", "1920*1080"])
    func malformedResolution(_ text: String) {
        #expect(Resolution(text) == nil)
    }
}
