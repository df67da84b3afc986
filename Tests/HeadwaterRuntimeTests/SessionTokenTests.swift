import Foundation
import HeadwaterLiveWindow
@testable import HeadwaterRuntime
import HeadwaterTesting
import Testing


/// Session tokens: the signed, self-contained viewer session of `/ssai/…` URLs.
@Suite("Session tokens")
struct SessionTokenTests {
    static let secret = Array("a secret of thirty-two bytes!!!!".utf8)
    static let signer = try! SessionSigner(secret: secret)
    static let now: Int64 = 1_795_000_000_000

    static let typical = SessionToken(
        channel: "news",
        id: "5D2E1A1C-8F3B-4D62-9A7E-0C4B2F8E1D90",
        start: now - 60_000,
        targeting: ["channel": "news", "device": "tv", "geo": "fr"]
    )

    // MARK: - Round trip and encoding

    @Test func signedTokenVerifiesToTheSameSession() throws {
        let text = Self.signer.sign(Self.typical)
        let token = try Self.signer.verify(text, channel: "news", now: Self.now)
        #expect(token == Self.typical)
    }

    @Test func typicalTokenIsCompactAndURLSafe() {
        let text = Self.signer.sign(Self.typical)
        #expect(text.utf8.count < 200, "\(text.utf8.count) characters: \(text)")
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".utf8)
        #expect(text.utf8.allSatisfy(allowed.contains), "\(text)")
        #expect(text.utf8.filter { $0 == UInt8(ascii: ".") }.count == 1)
        // The MAC is 16 bytes: 22 base64url characters.
        #expect(text.split(separator: ".").last?.count == 22)
    }

    @Test func payloadLayoutIsVersionThenLengthPrefixedFieldsWithSortedKeys() {
        let token = SessionToken(channel: "news", id: "abc", start: 1000, targeting: ["geo": "fr", "channel": "news"])
        let expected: [UInt8] =
            [1, 0xD0, 0x0F]  // version, zigzag(1000) = 2000 as LEB128
            + [4] + Array("news".utf8) + [3] + Array("abc".utf8)
            + [2] + [7] + Array("channel".utf8) + [4] + Array("news".utf8) + [3] + Array("geo".utf8) + [2]
            + Array("fr".utf8)
        #expect(token.encoded() == expected)
        #expect(SessionToken(channel: "", id: "", start: -1).encoded() == [1, 1, 0, 0, 0])
    }

    @Test func sameSessionAlwaysEncodesToTheSameBytes() throws {
        var a: [String: String] = [:]
        var b: [String: String] = [:]
        let pairs = (0..<16).map { ("k\($0)", "v\($0)") }
        for (k, v) in pairs { a[k] = v }
        for (k, v) in pairs.reversed() { b[k] = v }
        let first = SessionToken(channel: "c", id: "i", start: 5, targeting: a)
        let second = SessionToken(channel: "c", id: "i", start: 5, targeting: b)
        #expect(first.encoded() == second.encoded())
        #expect(Self.signer.sign(first) == Self.signer.sign(second))
        // Another signer with the same secret (another node) writes the same text.
        let other = try SessionSigner(secret: Self.secret)
        #expect(other.sign(first) == Self.signer.sign(first))
        #expect(try other.verify(Self.signer.sign(first), channel: "c", now: 5) == first)
    }

    // MARK: - Forgery and tampering

    @Test func changingAnyPayloadByteBreaksTheSignature() throws {
        let text = Self.signer.sign(Self.typical)
        let parts = text.split(separator: ".")
        let payload = try #require(Base64URL.decode(parts[0].utf8))
        for index in payload.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var altered = payload
                altered[index] ^= mask
                let forged = Base64URL.encode(altered) + "." + parts[1]
                #expect(throws: SessionTokenError.badSignature, "byte \(index) ^ \(mask)") {
                    try Self.signer.verify(forged, channel: "news", now: Self.now)
                }
            }
        }
        // Appending or removing a byte too.
        for altered in [payload + [0], Array(payload.dropLast())] {
            #expect(throws: SessionTokenError.badSignature) {
                try Self.signer.verify(Base64URL.encode(altered) + "." + parts[1], channel: "news", now: Self.now)
            }
        }
    }

    @Test func changingAnyMACByteBreaksTheSignature() throws {
        let text = Self.signer.sign(Self.typical)
        let parts = text.split(separator: ".")
        let mac = try #require(Base64URL.decode(parts[1].utf8))
        #expect(mac.count == 16)
        for index in mac.indices {
            var altered = mac
            altered[index] ^= 0x01
            #expect(throws: SessionTokenError.badSignature, "MAC byte \(index)") {
                try Self.signer.verify(parts[0] + "." + Base64URL.encode(altered), channel: "news", now: Self.now)
            }
        }
    }

    @Test func changingAnyCharacterOfTheTextIsRefused() {
        let text = Array(Self.signer.sign(Self.typical).utf8)
        for index in text.indices {
            for replacement in Array("Aa0-_.=+/ %".utf8) where replacement != text[index] {
                var altered = text
                altered[index] = replacement
                let string = String(decoding: altered, as: UTF8.self)
                do {
                    let token = try Self.signer.verify(string, channel: "news", now: Self.now)
                    Issue.record("accepted \(string) (index \(index)) as \(token)")
                } catch .badSignature, .malformed {
                } catch {
                    Issue.record("unexpected \(error) for index \(index)")
                }
            }
        }
    }

    @Test func tokenSignedWithAnotherKeyIsRefused() throws {
        let other = try SessionSigner(secret: Array("another secret, also long enough".utf8))
        let text = other.sign(Self.typical)
        #expect(throws: SessionTokenError.badSignature) {
            try Self.signer.verify(text, channel: "news", now: Self.now)
        }
        let random = SessionSigner.random()
        #expect(throws: SessionTokenError.badSignature) {
            try random.verify(Self.signer.sign(Self.typical), channel: "news", now: Self.now)
        }
        #expect(throws: SessionTokenError.badSignature) {
            try Self.signer.verify(SessionSigner.random().sign(Self.typical), channel: "news", now: Self.now)
        }
        #expect(
            SessionTokenError.badSignature.description
                == "session token signature does not match (forged or altered)")
    }

    @Test func tokenOfAnotherChannelIsRefused() {
        let text = Self.signer.sign(Self.typical)
        #expect(throws: SessionTokenError.foreignChannel(token: "news", requested: "sports")) {
            try Self.signer.verify(text, channel: "sports", now: Self.now)
        }
        #expect(
            SessionTokenError.foreignChannel(token: "news", requested: "sports").description
                == "session token is for channel news, not sports")
    }

    // MARK: - Time

    @Test func sessionsExpireAfterTheMaximumAge() throws {
        var token = Self.typical
        token.start = Self.now - 24 * 3_600_000
        #expect(try Self.signer.verify(Self.signer.sign(token), channel: "news", now: Self.now) == token)
        token.start -= 1
        let text = Self.signer.sign(token)
        do {
            _ = try Self.signer.verify(text, channel: "news", now: Self.now)
            Issue.record("accepted an expired session")
        } catch .expired(let age, let maxAge) {
            #expect(age == .milliseconds(24 * 3_600_000 + 1))
            #expect(maxAge == .seconds(86_400))
        } catch {
            Issue.record("unexpected \(error)")
        }
        // A shorter maximum age, given by the caller.
        token.start = Self.now - 61_000
        #expect(throws: SessionTokenError.expired(age: .seconds(61), maxAge: .seconds(60))) {
            try Self.signer.verify(Self.signer.sign(token), channel: "news", now: Self.now, maxAge: .seconds(60))
        }
        #expect(
            SessionTokenError.expired(age: .seconds(90_000), maxAge: .seconds(86_400)).description
                == "session token expired: started 90000 s ago, sessions last 86400 s")
    }

    @Test func sessionsStartingInTheFutureAreRefusedBeyondTheSkew() throws {
        var token = Self.typical
        token.start = Self.now + 30_000
        #expect(try Self.signer.verify(Self.signer.sign(token), channel: "news", now: Self.now) == token)
        token.start += 1
        #expect(throws: SessionTokenError.startsInFuture(by: .milliseconds(30_001))) {
            try Self.signer.verify(Self.signer.sign(token), channel: "news", now: Self.now)
        }
        #expect(throws: SessionTokenError.startsInFuture(by: .milliseconds(30_001))) {
            try Self.signer.verify(Self.signer.sign(token), channel: "news", now: Self.now, allowedSkew: .seconds(30))
        }
        #expect(try Self.signer.verify(Self.signer.sign(token), channel: "news", now: Self.now, allowedSkew: .seconds(31)) == token)
    }

    @Test func extremeStartTimesNeitherTrapNorPass() throws {
        let pairs: [(start: Int64, now: Int64)] = [
            (.min, 0), (.min, Self.now), (.min, .max), (.min + 1, .max), (.max, .min), (.max, 0), (.max, Self.now),
            (0, .max), (0, .min), (-1, .max),
        ]
        for (start, now) in pairs {
            let token = SessionToken(channel: "news", id: "x", start: start)
            #expect(throws: SessionTokenError.self, "start \(start) now \(now)") {
                try Self.signer.verify(Self.signer.sign(token), channel: "news", now: now)
            }
        }
        // Extreme but close together: accepted.
        let token = SessionToken(channel: "news", id: "x", start: .min + 1)
        #expect(try Self.signer.verify(Self.signer.sign(token), channel: "news", now: .min) == token)
    }

    // MARK: - Malformed input

    @Test(arguments: [
        ("", "empty"),
        ("abc", "no '.'"),
        (".", "not base64url"),
        (".AAAAAAAAAAAAAAAAAAAAAA", "not base64url"),
        ("AQ.", "signature is not 16 bytes"),
        ("AQ.AAAA", "signature is not 16 bytes"),
        ("!!!.???", "not base64url"),
        ("AQ==.AAAAAAAAAAAAAAAAAAAAAA", "not base64url"),
        ("AQ.AAAAAAAAAAAAAAAAAAAAAA.AA", "not base64url"),
        ("A.AAAAAAAAAAAAAAAAAAAAAA", "not base64url"),
        ("AR.AAAAAAAAAAAAAAAAAAAAAA", "not base64url"),  // non-zero unused bits: not canonical
        ("AQ AQ.AAAAAAAAAAAAAAAAAAAAAA", "not base64url"),
        ("AQ.AAAAAAAAAAAAAAAAAAAAAAAA", "signature is not 16 bytes"),
        (String(repeating: "A", count: 2049), "longer than 2048 bytes"),
        (String(repeating: "A", count: 3000) + ".AAAAAAAAAAAAAAAAAAAAAA", "longer than 2048 bytes"),
    ])
    func malformedTextIsRefused(text: String, reason: String) {
        #expect(throws: SessionTokenError.malformed(reason)) {
            try Self.signer.verify(text, channel: "news", now: Self.now)
        }
    }

    /// A genuine MAC over a payload that does not decode: the decoder's own checks.
    @Test(arguments: [
        ([2] + [0, 0, 0, 0], "unknown version 2"),
        ([0], "unknown version 0"),
        ([1], "truncated"),
        ([1, 0, 4] + Array("ne".utf8), "truncated"),
        ([1, 0, 0, 0, 0, 0], "trailing bytes"),
        ([1, 0x80, 0x00, 0, 0, 0], "non-minimal number"),
        ([1] + [UInt8](repeating: 0xFF, count: 9) + [0x02] + [0, 0, 0], "number too large"),
        ([1, 0, 1, 0xFF, 0, 0], "text is not UTF-8"),
        ([1, 0, 0, 0, 5, 1, 0x61, 0], "truncated targeting"),
        ([1, 0, 0, 0, 2, 1, 0x62, 0, 1, 0x61, 0], "targeting keys out of order"),
        ([1, 0, 0, 0, 2, 1, 0x61, 0, 1, 0x61, 0], "targeting keys out of order"),
    ] as [([UInt8], String)])
    func genuinelySignedBadPayloadIsMalformed(payload: [UInt8], reason: String) {
        let text = Self.signer.sign(payload: payload)
        #expect(throws: SessionTokenError.malformed(reason)) {
            try Self.signer.verify(text, channel: "", now: 0)
        }
    }

    @Test func everyErrorDescriptionIsOneLine() {
        let errors: [SessionTokenError] = [
            .malformed("truncated"), .badSignature, .foreignChannel(token: "a", requested: "b"),
            .expired(age: .seconds(100_000), maxAge: .seconds(86_400)), .startsInFuture(by: .seconds(60)),
        ]
        for error in errors {
            #expect(!error.description.isEmpty && !error.description.contains("\n"))
            #expect(error.refusal.kind == .forbidden)
        }
        #expect(SessionTokenError.malformed("no '.'").description == "session token is malformed (no '.')")
    }

    // MARK: - Keys and ids

    @Test func secretsShorterThan16BytesAreRefused() throws {
        #expect(throws: SessionSecretError(length: 15)) { try SessionSigner(secret: [UInt8](repeating: 7, count: 15)) }
        #expect(throws: SessionSecretError(length: 0)) { try SessionSigner(secret: [UInt8]()) }
        _ = try SessionSigner(secret: [UInt8](repeating: 7, count: 16))
        _ = try SessionSigner(secret: [UInt8](repeating: 7, count: 4096))
        #expect(SessionSecretError(length: 3).description == "session secret is 3 bytes; at least 16 are needed")
    }

    @Test func playerSessionIDIsUsedWhenValidElseARandomOne() {
        var generator = SeededRandom(seed: 1)
        let uuid = "5D2E1A1C-8F3B-4D62-9A7E-0C4B2F8E1D90"
        #expect(SessionToken.sessionID(playbackSessionID: uuid, using: &generator) == uuid)
        let longest = String(repeating: "~", count: 64)
        #expect(SessionToken.sessionID(playbackSessionID: longest, using: &generator) == longest)
        for invalid in [nil, "", String(repeating: "a", count: 65), "has space", "tab\t", "é", "nul\u{0}"] {
            let id = SessionToken.sessionID(playbackSessionID: invalid, using: &generator)
            #expect(id != invalid)
            #expect(id.utf8.count == 22, "\(id)")
            #expect(SessionToken.isValidSessionID(id))
        }
        let ids = Set((0..<1000).map { _ in SessionToken.sessionID(playbackSessionID: nil) })
        #expect(ids.count == 1000)
    }

    // MARK: - Property

    @Test("sign/verify round-trips 500 random sessions; any altered character is refused")
    func randomSessionsRoundTrip() throws {
        let base = ProcessInfo.processInfo.environment["HEADWATER_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 0...UInt64(UInt32.max))
        for seed in base..<(base + 500) {
            var random = SeededRandom(seed: seed)
            func text(_ range: ClosedRange<Int>, _ alphabet: [Character]) -> String {
                String((0..<random.int(range)).map { _ in random.pick(alphabet) })
            }
            let printable = (0x20...0x7E).map { Character(Unicode.Scalar(UInt8($0))) } + ["é", "日", "🎬"]
            let keyAlphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789_-.")
            var targeting: [String: String] = [:]
            for _ in 0..<random.int(0...8) { targeting[text(0...32, keyAlphabet)] = text(0...64, printable) }
            let token = SessionToken(
                channel: text(0...30, printable),
                id: text(0...64, printable),
                start: random.chance(0.1) ? Int64(bitPattern: random.next()) : Self.now - Int64(random.int(0...86_400_000)),
                targeting: targeting
            )
            let signed = Self.signer.sign(token)
            guard signed.utf8.count <= SessionSigner.maxTokenLength else { continue }
            let decoded = try SessionToken(decoding: Base64URL.decode(signed.split(separator: ".")[0].utf8)!)
            #expect(decoded == token, "seed \(seed) (HEADWATER_SEED=\(seed))")
            #expect(decoded.encoded() == token.encoded(), "seed \(seed) (HEADWATER_SEED=\(seed))")
            if token.start <= Self.now, token.start >= Self.now - 86_400_000 {
                #expect(
                    try Self.signer.verify(signed, channel: token.channel, now: Self.now) == token,
                    "seed \(seed) (HEADWATER_SEED=\(seed))")
            }
            var bytes = Array(signed.utf8)
            let index = random.below(bytes.count)
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".utf8)
            var replacement = random.pick(alphabet)
            while replacement == bytes[index] { replacement = random.pick(alphabet) }
            bytes[index] = replacement
            do {
                let accepted = try Self.signer.verify(
                    String(decoding: bytes, as: UTF8.self), channel: token.channel, now: Self.now, maxAge: .seconds(Int64.max / 1000))
                Issue.record("seed \(seed) (HEADWATER_SEED=\(seed)): altered index \(index) accepted as \(accepted)")
            } catch .badSignature, .malformed {
            } catch {
                Issue.record("seed \(seed) (HEADWATER_SEED=\(seed)): altered index \(index) gave \(error)")
            }
        }
    }
}

/// Targeting of new sessions from the starting request.
@Suite("Session targeting")
struct SessionTargetingTests {
    static func targeting(_ query: String, headers: [(String, String)] = [], copying: Set<String> = []) throws(SessionTargetingError)
        -> [String: String]
    {
        try SessionTargeting.targeting(
            channel: "news",
            rawQuery: query[...],
            headers: headers.map { (name: $0.0, value: $0.1) },
            copyingHeaders: copying
        )
    }

    @Test func queryParametersAndChannelBecomeTargeting() throws {
        #expect(try Self.targeting("device=tv&geo=fr") == ["channel": "news", "device": "tv", "geo": "fr"])
        #expect(try Self.targeting("") == ["channel": "news"])
        #expect(try Self.targeting("a=1&&b=2&") == ["channel": "news", "a": "1", "b": "2"])
        #expect(try Self.targeting("flag") == ["channel": "news", "flag": ""])
        #expect(try Self.targeting("q=a%20b+c%7E") == ["channel": "news", "q": "a b c~"])
        #expect(try Self.targeting("k_-9=" + String(repeating: "v", count: 128))["k_-9"]?.count == 128)
        let longestKey = String(repeating: "k", count: 32)
        #expect(try Self.targeting(longestKey + "=1")[longestKey] == "1")
        let sixteen = (0..<16).map { "k\($0)=\($0)" }.joined(separator: "&")
        #expect(try Self.targeting(sixteen).count == 17)
        // Already-split items, as the HTTP layer's parser gives them.
        let items: [(name: String, value: String)] = [("device", "tv")]
        let none: [(name: String, value: String)] = []
        #expect(
            try SessionTargeting.targeting(channel: "c", query: items, headers: none, copyingHeaders: [])
                == ["channel": "c", "device": "tv"])
    }

    @Test(arguments: [
        ("Device=tv", SessionTargetingError.invalidKey("Device")),
        ("=tv", .invalidKey("")),
        ("dev ice=tv", .invalidKey("dev ice")),
        ("dev.ice=tv", .invalidKey("dev.ice")),
        ("d%C3%A9=tv", .invalidKey("dé")),
        (String(repeating: "k", count: 33) + "=1", .keyTooLong(String(repeating: "k", count: 33), limit: 32)),
        ("channel=sports", .reservedKey("channel")),
        ("session=abc", .reservedKey("session")),
        ("header.user-agent=x", .reservedKey("header.user-agent")),
        ("header.=x", .reservedKey("header.")),
        ("geo=fr&geo=de", .duplicateKey("geo")),
        ("geo=f%26r", .invalidValue(key: "geo")),
        ("geo=f%3Dr", .invalidValue(key: "geo")),
        ("geo=fr=x", .invalidValue(key: "geo")),
        ("geo=%0A", .invalidValue(key: "geo")),
        ("geo=%C3%A9", .invalidValue(key: "geo")),
        ("geo=%7F", .invalidValue(key: "geo")),
        ("geo=" + String(repeating: "v", count: 129), .valueTooLong(key: "geo", limit: 128)),
        ("geo=%zz", .invalidPercentEncoding),
        ("geo=%4", .invalidPercentEncoding),
        ((0..<17).map { "k\($0)=1" }.joined(separator: "&"), .tooManyParameters(limit: 16)),
    ])
    func malformedQueriesAreRefused(query: String, error: SessionTargetingError) {
        #expect(throws: error) { try Self.targeting(query) }
        #expect(error.refusal.kind == .badRequest)
        #expect(!error.description.contains("\n"))
    }

    @Test func configuredHeadersAreCopiedTruncatedAndMadePrintable() throws {
        let userAgent = "Mozilla/5.0 " + String(repeating: "x", count: 200)
        let targeting = try Self.targeting(
            "geo=fr",
            headers: [
                ("User-Agent", userAgent), ("Accept-Language", "fr"), ("accept-language", "en"),
                ("X-Forwarded-For", "203.0.113.9"), ("X-Device", "tv\u{1}é"), ("Cookie", "secret"),
            ],
            copying: ["user-agent", "accept-language", "x-device", "x-forwarded-for"]
        )
        #expect(targeting["header.user-agent"] == String(userAgent.prefix(128)))
        #expect(targeting["header.accept-language"] == "fr, en")
        #expect(targeting["header.x-forwarded-for"] == "203.0.113.9")
        #expect(targeting["header.x-device"] == "tv???")
        #expect(targeting["header.cookie"] == nil)
        #expect(targeting["geo"] == "fr" && targeting["channel"] == "news")
        #expect(targeting.count == 6)
        // Nothing copied unless configured.
        #expect(try Self.targeting("", headers: [("User-Agent", "x")]) == ["channel": "news"])
    }

    @Test func errorsEchoClientTextHarmlessly() {
        let error = SessionTargetingError.invalidKey("bad\nkey" + String(repeating: "z", count: 100))
        #expect(!error.description.contains("\n"))
        #expect(error.description.utf8.count < 120, "\(error.description)")
        #expect(
            SessionTargetingError.reservedKey("session").description == "targeting key 'session' is reserved")
    }
}
