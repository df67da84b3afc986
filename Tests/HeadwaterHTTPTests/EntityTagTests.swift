import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterTesting
import Testing

@Test func segmentTagFromStableId() {
    #expect(EntityTag.segment(id: "run7-1042").value == "\"run7-1042\"")
    #expect(!EntityTag.segment(id: "run7-1042").isWeak)
    #expect(EntityTag.segment(id: "").value == "\"\"")
}

@Test(arguments: [
    ("a b", "\"a%20b\""),
    ("q\"uote", "\"q%22uote\""),
    ("100%", "\"100%25\""),
    ("back\\slash", "\"back%5Cslash\""),
    ("tab\tnul\u{0}", "\"tab%09nul%00\""),
    ("del\u{7F}", "\"del%7F\""),
    ("caf\u{E9}", "\"caf%C3%A9\""),
    ("W/x", "\"W/x\""),
    ("!#$&'()*+,./:;<=>?@[]^_`{|}~", "\"!#$&'()*+,./:;<=>?@[]^_`{|}~\""),
])
func segmentTagEscapesWhatAnOpaqueTagCannotHold(_ id: String, _ expected: String) {
    let tag = EntityTag.segment(id: id)
    #expect(tag.value == expected)
    #expect(EntityTag(tag.value) != nil, "the result must be a valid entity-tag")
}

@Test func escapingIsInjective() {
    // `%` is itself escaped, so an id that looks escaped cannot collide with one that was.
    #expect(EntityTag.segment(id: "a b") != EntityTag.segment(id: "a%20b"))
    #expect(EntityTag.segment(id: "a%20b").value == "\"a%2520b\"")
}

@Test func segmentTagFromContentHash() {
    #expect(EntityTag.segment(contentHash: 0).value == "\"0000000000000000\"")
    #expect(EntityTag.segment(contentHash: 0xaf63_dc4c_8601_ec8c).value == "\"af63dc4c8601ec8c\"")
    #expect(EntityTag.segment(contentHash: .max).value == "\"ffffffffffffffff\"")
}

@Test func playlistTags() {
    let tag = EntityTag.playlist(channel: "news", rendition: "720p", version: 42)
    #expect(tag.value == "\"news-720p-v42\"")
    #expect(tag.gzipped.value == "\"news-720p-v42-gz\"")
    #expect(tag.gzipped != tag)
    #expect(!tag.gzipped.isWeak)
    #expect(EntityTag.playlist(channel: "a b", rendition: "x\"", version: .max).value == "\"a%20b-x%22-v18446744073709551615\"")
    #expect(EntityTag("W/\"x\"")?.gzipped.value == "W/\"x-gz\"")
}

@Test(arguments: [
    ("\"abc\"", true), ("W/\"abc\"", true), ("\"\"", true), (" \"abc\" ", false), ("\"a\u{80}\"", true),
    ("abc", false), ("\"abc", false), ("abc\"", false), ("w/\"abc\"", false), ("\"a\"b\"", false),
    ("\"a b\"", false), ("\"a\u{7F}\"", false), ("\"a\",\"b\"", false), ("", false), ("W/", false),
] as [(String, Bool)])
func validatesFieldValues(_ text: String, _ valid: Bool) {
    #expect((EntityTag(text) != nil) == valid)
}

@Test func weakness() {
    #expect(EntityTag("W/\"a\"")?.isWeak == true)
    #expect(EntityTag("\"W/a\"")?.isWeak == false)
}

@Test func fnv1a64KnownVectors() {
    #expect(FNV1a64.hash([UInt8]()) == 0xcbf2_9ce4_8422_2325)
    #expect(FNV1a64.hash(Array("a".utf8)) == 0xaf63_dc4c_8601_ec8c)
    var empty = FNV1a64()
    empty.update([UInt8]())
    #expect(empty.hexDigest == "cbf29ce484222325")
    var a = FNV1a64()
    a.update([0x61])
    #expect(a.hexDigest == "af63dc4c8601ec8c")
    #expect(FNV1a64.hash("foobar".utf8) == 0x8594_4171_f739_67e8)
    #expect(FNV1a64.hash((0...255).map { UInt8($0) }) == 0x4242_dc52_49c3_3625)
}

@Test func fnv1a64Streams() {
    let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    var hasher = FNV1a64()
    var start = 0
    var r = SeededRandom(seed: 0xF17)
    while start < bytes.count {
        let end = min(bytes.count, start + r.int(0...700))
        bytes[start..<end].withUnsafeBytes { hasher.update($0) }
        start = end
    }
    #expect(hasher.value == FNV1a64.hash(bytes))
    // A non-contiguous sequence takes the byte-by-byte path and agrees.
    #expect(FNV1a64.hash(bytes.lazy.map { $0 }) == FNV1a64.hash(bytes))
}
