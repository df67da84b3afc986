import HeadwaterHLS
import HeadwaterTesting
import Testing

@Suite("HLSDuration")
struct HLSDurationTests {
    @Test(
        "decimal text parses to exact microseconds",
        arguments: [
            ("10", 10_000_000), ("10.010", 10_010_000), ("6.006006", 6_006_006), ("0", 0), ("0.000", 0),
            ("2.002", 2_002_000), ("4.8", 4_800_000), ("10.", 10_000_000), (".5", 500_000),
            ("999999999999", 999_999_999_999_000_000), ("0.000001", 1), ("007.5", 7_500_000),
        ] as [(String, Int64)]
    )
    func parsesDecimal(_ text: String, _ microseconds: Int64) {
        #expect(HLSDuration(decimal: text)?.microseconds == microseconds)
    }

    @Test(
        "digits past the sixth decimal round half up",
        arguments: [
            ("0.0000004", 0), ("0.0000005", 1), ("0.0000009", 1), ("1.2345674", 1_234_567), ("1.2345675", 1_234_568),
            ("0.9999995", 1_000_000), ("10.0100004999", 10_010_000), ("59.9999999", 60_000_000),
        ] as [(String, Int64)]
    )
    func roundsSeventhDecimal(_ text: String, _ microseconds: Int64) {
        #expect(HLSDuration(decimal: text)?.microseconds == microseconds)
    }

    @Test(
        "anything that is not a plain decimal number is rejected",
        arguments: [
            "", ".", "-", "-1", "+1", "1e3", "1.2.3", " 1", "1 ", "1,5", "0x10", "abc", "1-", "nan", "inf",
            "1000000000000",  // 13 integer digits: more than 31,000 years
        ]
    )
    func rejectsNonDecimal(_ text: String) {
        #expect(HLSDuration(decimal: text) == nil)
    }

    @Test(
        "negative values only when allowed",
        arguments: [("-3.5", -3_500_000), ("-0.000001", -1), ("12", 12_000_000), ("-0", 0)] as [(String, Int64)]
    )
    func signed(_ text: String, _ microseconds: Int64) {
        #expect(HLSDuration(decimal: text, allowNegative: true)?.microseconds == microseconds)
    }

    @Test("a minus sign is accepted only in first position", arguments: ["1-2", "--1", "1.-5", "-"])
    func misplacedMinus(_ text: String) {
        #expect(HLSDuration(decimal: text, allowNegative: true) == nil)
    }

    @Test(
        "canonical text has 3 to 6 decimals",
        arguments: [
            (0, "0.000"), (2_000_000, "2.000"), (10_010_000, "10.010"), (6_006_006, "6.006006"), (1_500, "0.0015"),
            (4_800_000, "4.800"), (123_456_780, "123.45678"), (1, "0.000001"), (-3_500_000, "-3.500"),
            (999_999_999_999_999_999, "999999999999.999999"),
        ] as [(Int64, String)]
    )
    func canonicalText(_ microseconds: Int64, _ text: String) {
        #expect(HLSDuration(microseconds: microseconds).description == text)
        var bytes: [UInt8] = []
        HLSDuration(microseconds: microseconds).write(into: &bytes)
        #expect(bytes == Array(text.utf8))
    }

    @Test("canonical text parses back to the same value (10,000 random values)")
    func textRoundTrip() {
        var random = SeededRandom(seed: 0x5EED_D0_4A71)
        for _ in 0..<10_000 {
            let value = HLSDuration(microseconds: Int64(random.int(-999_999_999_999_999_999...999_999_999_999_999_999)))
            #expect(HLSDuration(decimal: value.description, allowNegative: true) == value, "\(value.microseconds)")
        }
    }

    /// Rounding the seventh decimal could carry into a thirteenth integer digit that the writer would
    /// write and the parser reject; the parser therefore rejects values whose rounding leaves the
    /// writable range, and everything it accepts is written as text that parses back equal.
    @Test("every value parsed from text is written as text that parses", arguments: ["999999999999.9999995", "999999999999.999999", "999999999999.9999994"])
    func acceptedTextIsWritable(_ text: String) throws {
        guard let value = HLSDuration(decimal: text) else {
            #expect(text == "999999999999.9999995", "only the value that rounds out of range is rejected")
            return
        }
        #expect(HLSDuration(decimal: value.description) == value, "\(text) → \(value.description)")
    }

    @Test(
        "roundedSeconds rounds half up, as EXTINF is compared with TARGETDURATION (B1)",
        arguments: [
            (0, 0), (499_999, 0), (500_000, 1), (6_499_999, 6), (6_500_000, 7), (10_010_000, 10), (9_999_999, 10),
        ] as [(Int64, Int64)]
    )
    func roundedSeconds(_ microseconds: Int64, _ seconds: Int64) {
        #expect(HLSDuration(microseconds: microseconds).roundedSeconds == seconds)
    }

    @Test("integer form for version < 3 playlists rounds, and never writes a negative number")
    func integerForm() {
        for (microseconds, text) in [(10_500_000, "11"), (10_499_999, "10"), (0, "0"), (-2_000_000, "0")] as [(Int64, String)] {
            var bytes: [UInt8] = []
            HLSDuration(microseconds: microseconds).writeInteger(into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == text)
        }
    }

    @Test("sums of 2.002 s segments stay exact over a day (no floating-point drift)")
    func exactSums() {
        var total = HLSDuration.zero
        let segment = HLSDuration(decimal: "2.002")!
        for _ in 0..<43_157 { total += segment }
        #expect(total == HLSDuration(microseconds: 86_400_314_000))
        #expect(total.description == "86400.314")
        total -= segment
        #expect(total + segment - segment == total)
    }

    @Test("constructors and ordering")
    func constructorsAndOrdering() {
        #expect(HLSDuration.seconds(6) == HLSDuration(microseconds: 6_000_000))
        #expect(HLSDuration.milliseconds(6_006) == HLSDuration(microseconds: 6_006_000))
        #expect(HLSDuration.zero.microseconds == 0)
        #expect(HLSDuration.milliseconds(999) < .seconds(1))
        #expect(HLSDuration(microseconds: -1) < .zero)
        #expect(HLSDuration(microseconds: 2_500_000).seconds == 2.5)
    }
}
