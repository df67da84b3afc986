import HeadwaterHTTP
import HeadwaterTesting
import Testing

private func evaluate(
    _ range: String?,
    length: Int64,
    ifRange: String? = nil,
    entityTag: String = "\"seg-42\"",
    lastModified: Int64? = nil
) -> ByteRangeRequest {
    ByteRangeRequest.evaluate(
        range: range,
        ifRange: ifRange,
        length: length,
        entityTag: entityTag,
        lastModifiedSeconds: lastModified
    )
}

struct ByteRangeCase: CustomTestStringConvertible, Sendable {
    let range: String?
    let length: Int64
    let expected: ByteRangeRequest
    let note: String

    init(_ range: String?, _ length: Int64, _ expected: ByteRangeRequest, _ note: String) {
        self.range = range
        self.length = length
        self.expected = expected
        self.note = note
    }

    var testDescription: String { "\(note): \(range.map { "'\($0)'" } ?? "nil") on \(length) bytes" }
}

/// RFC 9110 §14.1.2, "Examples of bytes range specifiers" (a 10000-byte representation).
let rfc9110Examples: [ByteRangeCase] = [
    .init("bytes=0-499", 10000, .partial(first: 0, last: 499), "the first 500 bytes"),
    .init("bytes=500-999", 10000, .partial(first: 500, last: 999), "the second 500 bytes"),
    .init("bytes=-500", 10000, .partial(first: 9500, last: 9999), "the final 500 bytes (suffix)"),
    .init("bytes=9500-", 10000, .partial(first: 9500, last: 9999), "the final 500 bytes (open-ended)"),
    .init("bytes=0-0,-1", 10000, .full, "first and last bytes only: multiple ranges → full"),
    .init("bytes=500-600,601-999", 10000, .full, "second 500, non-canonical: multiple → full"),
    .init("bytes=500-700,601-999", 10000, .full, "second 500, overlapping: multiple → full"),
]

let edgeCases: [ByteRangeCase] = [
    .init(nil, 1000, .full, "no Range"),
    .init("bytes=0-0", 1000, .partial(first: 0, last: 0), "first byte"),
    .init("bytes=0-", 1000, .partial(first: 0, last: 999), "open-ended from 0 is a 206 of everything"),
    .init("bytes=999-999", 1000, .partial(first: 999, last: 999), "last byte"),
    .init("bytes=-1", 1000, .partial(first: 999, last: 999), "suffix of 1"),
    .init("bytes=-1000", 1000, .partial(first: 0, last: 999), "suffix equal to length"),
    .init("bytes=-5000", 1000, .partial(first: 0, last: 999), "suffix larger than length → whole"),
    .init("bytes=-0", 1000, .unsatisfiable, "zero-length suffix"),
    .init("bytes=0-4999", 1000, .partial(first: 0, last: 999), "last-pos past the end is clamped"),
    .init("bytes=10-9007199254740991", 1000, .partial(first: 10, last: 999), "LL-HLS hint (2^53-1) clamps"),
    .init("bytes=0-99999999999999999999999", 1000, .partial(first: 0, last: 999), "last-pos overflowing Int64"),
    .init("bytes=1000-", 1000, .unsatisfiable, "first-pos == length"),
    .init("bytes=2000-", 1000, .unsatisfiable, "first-pos > length"),
    .init("bytes=2000-3000", 1000, .unsatisfiable, "range wholly past the end"),
    .init("bytes=99999999999999999999999-", 1000, .unsatisfiable, "first-pos overflowing Int64"),
    .init("bytes=-99999999999999999999999", 1000, .partial(first: 0, last: 999), "suffix overflowing Int64"),
    .init("bytes=5-1", 1000, .full, "last < first is invalid → ignored"),
    .init("bytes=2000-1", 1000, .full, "invalid wins over unsatisfiable"),
    .init("items=0-1", 1000, .full, "unknown unit"),
    .init("BYTES=0-1", 1000, .partial(first: 0, last: 1), "unit is case-insensitive"),
    .init("Bytes=0-1", 1000, .partial(first: 0, last: 1), "unit is case-insensitive"),
    .init("byte=0-1", 1000, .full, "wrong unit"),
    .init("bytes", 1000, .full, "no ="),
    .init("bytes=", 1000, .full, "empty range-set"),
    .init("bytes=,", 1000, .full, "only empty elements"),
    .init("=0-1", 1000, .full, "no unit"),
    .init("bytes=-", 1000, .full, "dash alone"),
    .init("bytes=--1", 1000, .full, "double dash"),
    .init("bytes=1", 1000, .full, "no dash"),
    .init("bytes=a-b", 1000, .full, "letters"),
    .init("bytes=0x10-0x20", 1000, .full, "hex"),
    .init("bytes=+1-2", 1000, .full, "sign"),
    .init("bytes=1-2-3", 1000, .full, "extra dash"),
    .init("bytes=0-1;x", 1000, .full, "trailing junk"),
    .init("bytes=0-499 ", 1000, .partial(first: 0, last: 499), "trailing OWS of the field"),
    .init(" \tbytes=0-499", 1000, .partial(first: 0, last: 499), "leading OWS of the field"),
    .init("bytes= 0-499", 1000, .full, "no OWS after = unless a comma follows"),
    .init("bytes=  ,0-499", 1000, .partial(first: 0, last: 499), "OWS before a leading empty element"),
    .init("bytes =0-499", 1000, .full, "no OWS before ="),
    .init("bytes=0 -499", 1000, .full, "no OWS inside a range-spec"),
    .init("bytes=0- 499", 1000, .full, "no OWS inside a range-spec"),
    .init("bytes=0-499,", 1000, .partial(first: 0, last: 499), "trailing empty element"),
    .init("bytes=,0-499", 1000, .partial(first: 0, last: 499), "leading empty element"),
    .init("bytes=, \t0-499 , ,", 1000, .partial(first: 0, last: 499), "OWS around commas, empty elements"),
    .init("bytes=0-1, 5-6", 1000, .full, "two ranges → full"),
    .init("bytes=0-1,x", 1000, .full, "second element invalid"),
    .init("bytes=5000-6000,7000-", 1000, .full, "multiple unsatisfiable ranges are still ignored"),
    .init("bytes=0-0", 0, .unsatisfiable, "zero-length representation: int-range"),
    .init("bytes=0-", 0, .unsatisfiable, "zero-length representation: open-ended"),
    .init("bytes=-1", 0, .full, "zero-length: non-zero suffix is satisfiable but has no Content-Range"),
    .init("bytes=-0", 0, .unsatisfiable, "zero-length: zero suffix"),
    .init("bytes=0-0", 1, .partial(first: 0, last: 0), "one-byte representation"),
    .init("bytes=00000-00001", 1000, .partial(first: 0, last: 1), "leading zeros"),
]

@Test(arguments: rfc9110Examples)
func rfc9110ExamplesTable(_ c: ByteRangeCase) {
    #expect(evaluate(c.range, length: c.length) == c.expected)
}

@Test(arguments: edgeCases)
func rangeEdgeCases(_ c: ByteRangeCase) {
    #expect(evaluate(c.range, length: c.length) == c.expected)
}

@Test func contentRangeFieldValues() {
    // RFC 9110 §14.4 examples.
    #expect(ByteRangeRequest.contentRange(first: 42, last: 1233, length: 1234) == "bytes 42-1233/1234")
    #expect(ByteRangeRequest.contentRange(first: 21010, last: 47021, length: 47022) == "bytes 21010-47021/47022")
    #expect(ByteRangeRequest.contentRange(first: 0, last: 499, length: 1234) == "bytes 0-499/1234")
    #expect(ByteRangeRequest.unsatisfiedContentRange(length: 1234) == "bytes */1234")
}

struct IfRangeCase: CustomTestStringConvertible, Sendable {
    let ifRange: String
    let entityTag: String
    let lastModified: Int64?
    let honoured: Bool
    var testDescription: String { "If-Range '\(ifRange)' vs \(entityTag) / \(lastModified.map(String.init) ?? "nil")" }
}

private let lm: Int64 = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT

@Test(arguments: [
    IfRangeCase(ifRange: "\"seg-42\"", entityTag: "\"seg-42\"", lastModified: nil, honoured: true),
    IfRangeCase(ifRange: "  \"seg-42\" ", entityTag: "\"seg-42\"", lastModified: nil, honoured: true),
    IfRangeCase(ifRange: "\"seg-43\"", entityTag: "\"seg-42\"", lastModified: nil, honoured: false),
    IfRangeCase(ifRange: "W/\"seg-42\"", entityTag: "\"seg-42\"", lastModified: nil, honoured: false),
    IfRangeCase(ifRange: "\"seg-42\"", entityTag: "W/\"seg-42\"", lastModified: nil, honoured: false),
    IfRangeCase(ifRange: "\"seg-42\", \"seg-43\"", entityTag: "\"seg-42\"", lastModified: nil, honoured: false),
    IfRangeCase(ifRange: "\"seg-42", entityTag: "\"seg-42\"", lastModified: nil, honoured: false),
    IfRangeCase(ifRange: "seg-42", entityTag: "\"seg-42\"", lastModified: nil, honoured: false),
    IfRangeCase(ifRange: "\"\"", entityTag: "\"\"", lastModified: nil, honoured: true),
    IfRangeCase(ifRange: "Sun, 06 Nov 1994 08:49:37 GMT", entityTag: "\"x\"", lastModified: lm, honoured: true),
    IfRangeCase(ifRange: "Sunday, 06-Nov-94 08:49:37 GMT", entityTag: "\"x\"", lastModified: lm, honoured: true),
    IfRangeCase(ifRange: "Sun Nov  6 08:49:37 1994", entityTag: "\"x\"", lastModified: lm, honoured: true),
    IfRangeCase(ifRange: "Sun, 06 Nov 1994 08:49:38 GMT", entityTag: "\"x\"", lastModified: lm, honoured: false),
    IfRangeCase(ifRange: "Sun, 06 Nov 1994 08:49:36 GMT", entityTag: "\"x\"", lastModified: lm, honoured: false),
    IfRangeCase(ifRange: "Wed, 09 Nov 1994 08:49:37 GMT", entityTag: "\"x\"", lastModified: lm + 3 * 86_400, honoured: true),
    IfRangeCase(ifRange: "Sun, 06 Nov 1994 08:49:37 GMT", entityTag: "\"x\"", lastModified: nil, honoured: false),
    IfRangeCase(ifRange: "yesterday", entityTag: "\"x\"", lastModified: lm, honoured: false),
    IfRangeCase(ifRange: "", entityTag: "\"x\"", lastModified: lm, honoured: false),
])
func ifRange(_ c: IfRangeCase) {
    let result = evaluate("bytes=0-9", length: 100, ifRange: c.ifRange, entityTag: c.entityTag, lastModified: c.lastModified)
    #expect(result == (c.honoured ? .partial(first: 0, last: 9) : .full))
}

@Test func ifRangeWithoutRangeIsIgnored() {
    #expect(evaluate(nil, length: 100, ifRange: "\"seg-42\"") == .full)
}

@Test func ifRangeMatchStillAllowsUnsatisfiable() {
    #expect(evaluate("bytes=500-", length: 100, ifRange: "\"seg-42\"") == .unsatisfiable)
}

// MARK: - Property test against a slow reference

/// A deliberately naive reading of RFC 9110 §14, written with `split` and `Int64(_:)`.
private func reference(_ field: String, length: Int64) -> ByteRangeRequest {
    func isOWS(_ c: Character) -> Bool { c == " " || c == "\t" }
    var text = Substring(field)
    while let c = text.first, isOWS(c) { text.removeFirst() }
    while let c = text.last, isOWS(c) { text.removeLast() }
    guard let equals = text.firstIndex(of: "=") else { return .full }
    guard text[..<equals].lowercased() == "bytes" else { return .full }
    let elements = text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)

    func number(_ s: Substring) -> Int64? {
        guard !s.isEmpty, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(s) ?? .max
    }

    var specs: [(first: Int64?, last: Int64?)] = []  // first == nil: suffix of `last`
    for (index, raw) in elements.enumerated() {
        var element = raw
        if index > 0 { while let c = element.first, isOWS(c) { element.removeFirst() } }
        if index < elements.count - 1 { while let c = element.last, isOWS(c) { element.removeLast() } }
        if element.isEmpty { continue }
        if element.first == "-" {
            guard let n = number(element.dropFirst()) else { return .full }
            specs.append((nil, n))
            continue
        }
        let parts = element.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let first = number(parts[0]) else { return .full }
        if parts[1].isEmpty {
            specs.append((first, nil))
        } else {
            guard let last = number(parts[1]) else { return .full }
            specs.append((first, last))
        }
    }
    guard specs.count == 1 else { return .full }
    let spec = specs[0]
    if let first = spec.first {
        if let last = spec.last, last < first { return .full }
        if first >= length { return .unsatisfiable }
        return .partial(first: first, last: Swift.min(spec.last ?? length - 1, length - 1))
    }
    let suffix = spec.last!
    if suffix == 0 { return .unsatisfiable }
    if length == 0 { return .full }
    return .partial(first: Swift.max(0, length - suffix), last: length - 1)
}

/// Random Range fields built from the grammar's pieces, then mutated.
private func randomRangeField(_ r: inout SeededRandom, length: Int64) -> String {
    let units = ["bytes", "bytes", "bytes", "BYTES", "Bytes", "byte", "items", "", "by tes"]
    let ows = ["", "", "", " ", "\t", "  "]
    func position() -> String {
        switch r.int(0...9) {
        case 0: "0"
        case 1: String(length)
        case 2: String(Swift.max(0, length - 1))
        case 3: String(length + 1)
        case 4: "99999999999999999999"
        case 5: "9223372036854775807"
        case 6: "000" + String(r.int(0...50))
        default: String(r.int(0...Int(length) * 2 + 2))
        }
    }
    var field = r.pick(ows) + r.pick(units) + (r.chance(0.95) ? "=" : "")
    let count = r.int(0...3)
    for index in 0..<count {
        if index > 0 || r.chance(0.1) { field += r.pick(ows) + "," + r.pick(ows) }
        switch r.int(0...6) {
        case 0: field += "-" + position()
        case 1: field += position() + "-"
        case 2: field += ""
        default: field += position() + "-" + position()
        }
    }
    if r.chance(0.1) { field += r.pick(ows) + "," }
    field += r.pick(ows)
    // Mutations: insert, delete or replace a byte with one the grammar cares about.
    let alphabet = Array(" \t,-=0123456789aW\";")
    var characters = Array(field)
    for _ in 0..<(r.chance(0.3) ? r.int(1...2) : 0) {
        let c = r.pick(alphabet)
        switch r.int(0...2) {
        case 0: characters.insert(c, at: r.int(0...characters.count))
        case 1 where !characters.isEmpty: characters.remove(at: r.int(0...(characters.count - 1)))
        default: if !characters.isEmpty { characters[r.int(0...(characters.count - 1))] = c }
        }
    }
    return String(characters)
}

@Test(arguments: 0..<8)
func matchesReferenceOnRandomFields(seedIndex: Int) {
    let seed = 0x5EED_0000 + UInt64(seedIndex)
    var r = SeededRandom(seed: seed)
    for _ in 0..<2_500 {
        let length: Int64 = r.chance(0.1) ? 0 : Int64(r.int(1...20_000))
        let field = randomRangeField(&r, length: length)
        let expected = reference(field, length: length)
        let actual = evaluate(field, length: length)
        #expect(actual == expected, "seed \(seed): '\(field)' on \(length) bytes")
        if actual != expected { return }
        if case .partial(let first, let last) = actual {
            #expect(0 <= first && first <= last && last < length)
        }
    }
}

// MARK: - Seeded randomness
