import Foundation
import HeadwaterLiveWindow
@testable import HeadwaterRuntime
import Testing

/// Key tokens: what an entitlement service issues for `/live` key requests.
@Suite("Encryption: key tokens")
struct EncryptionKeyTokenTests {
    static let secretText = "5f2b7c0e9a1d4e3f8b6a0c2d4e6f8091a3b5c7d9e1f30415263748596a7b8c9d"
    static let signer = try! KeyTokenSigner(secretText: secretText)
    /// 2026-11-15 in Unix seconds, and "now" a minute earlier, in µs as `WallClock` gives it.
    static let expiry: UInt64 = 1_794_700_800
    static let now = Int64(expiry - 60) * 1_000_000

    static let forged = Refusal(.forbidden, "key token signature does not match (forged or altered)")

    static func refusal(_ token: String?, channel: String = "news", now: Int64 = EncryptionKeyTokenTests.now) -> Refusal? {
        do throws(Refusal) {
            try signer.verify(token, channel: channel, now: now)
            return nil
        } catch {
            return error
        }
    }

    /// Python, following the format documented on ``KeyTokenSigner`` and nothing else.
    static let pythonMint = """
        import base64, hashlib, hmac, sys
        secret, channel, expiry = sys.argv[1], sys.argv[2], int(sys.argv[3])
        payload = b"\\x01" + expiry.to_bytes(8, "big") + channel.encode()
        mac = hmac.new(secret.encode(), payload, hashlib.sha256).digest()
        print(base64.urlsafe_b64encode(payload + mac).rstrip(b"=").decode())
        """

    @Test func validTokenIsAcceptedUntilItsExpirySecond() {
        let token = Self.signer.mint(channel: "news", expiry: Self.expiry)
        #expect(Self.refusal(token) == nil)
        #expect(Self.refusal(token, now: 0) == nil)
        let lastMicrosecond = Int64(Self.expiry) * 1_000_000 - 1
        #expect(Self.refusal(token, now: lastMicrosecond) == nil)
        #expect(Self.refusal(token, now: lastMicrosecond + 1) == Refusal(.forbidden, "key token expired 0 s ago"))
        #expect(Self.refusal(token, now: Int64(Self.expiry + 90) * 1_000_000) == Refusal(.forbidden, "key token expired 90 s ago"))
    }

    @Test func tokenMintedByAnIndependentImplementationIsAccepted() throws {
        for (channel, expiry) in [("news", Self.expiry), ("sports-2_hd", 4_102_444_800), (String(repeating: "c", count: 64), Self.expiry)] {
            let token = try EncryptionReference.python(Self.pythonMint, [Self.secretText, channel, String(expiry)])
            #expect(Self.refusal(token, channel: channel) == nil, "\(token)")
            #expect(token == Self.signer.mint(channel: channel, expiry: expiry))
        }
        // A Python token that has expired is refused as expired, not as forged.
        let old = try EncryptionReference.python(Self.pythonMint, [Self.secretText, "news", String(Self.expiry - 120)])
        #expect(Self.refusal(old) == Refusal(.forbidden, "key token expired 60 s ago"))
    }

    @Test func tokenLayoutIsVersionExpiryChannelAndTheWholeMAC() throws {
        let token = Self.signer.mint(channel: "news", expiry: 0x0102_0304_0506_0708)
        let bytes = try #require(Base64URL.decode(token.utf8))
        #expect(bytes.count == 1 + 8 + 4 + 32)
        #expect(Array(bytes.prefix(13)) == [1, 1, 2, 3, 4, 5, 6, 7, 8] + Array("news".utf8))
        #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
    }

    @Test func forgedSignatureIsRefused() throws {
        let bytes = try #require(Base64URL.decode(Self.signer.mint(channel: "news", expiry: Self.expiry).utf8))
        for index in bytes.indices.suffix(32) {
            var altered = bytes
            altered[index] ^= 0x01
            #expect(Self.refusal(Base64URL.encode(altered)) == Self.forged, "MAC byte \(index)")
        }
        let otherSigner = try KeyTokenSigner(secretText: String(Self.secretText.reversed()))
        #expect(Self.refusal(otherSigner.mint(channel: "news", expiry: Self.expiry)) == Self.forged)
    }

    @Test func alteredChannelOrExpiryIsAForgery() throws {
        let bytes = try #require(Base64URL.decode(Self.signer.mint(channel: "news", expiry: Self.expiry).utf8))
        // "news" → "newr", keeping the MAC of "news": refused as altered even where "newr" is asked for.
        var channel = bytes
        channel[12] ^= 0x01
        #expect(Self.refusal(Base64URL.encode(channel), channel: "newr") == Self.forged)
        #expect(Self.refusal(Base64URL.encode(channel), channel: "news") == Self.forged)
        // A later expiry.
        var expiry = bytes
        expiry[7] ^= 0x10
        #expect(Self.refusal(Base64URL.encode(expiry)) == Self.forged)
        // A version byte changed.
        var version = bytes
        version[0] = 2
        #expect(Self.refusal(Base64URL.encode(version)) == Self.forged)
    }

    @Test func genuineTokenForAnotherChannelIsRefusedAsSuch() {
        let token = Self.signer.mint(channel: "sports", expiry: Self.expiry)
        #expect(Self.refusal(token) == Refusal(.forbidden, "key token is for channel sports, not news"))
        // A prefix of the channel is another channel too.
        #expect(Self.refusal(Self.signer.mint(channel: "new", expiry: Self.expiry)) == Refusal(.forbidden, "key token is for channel new, not news"))
        // A name outside the naming rules is not repeated.
        #expect(Self.refusal(Self.signer.mint(channel: "bad name\n", expiry: Self.expiry)) == Refusal(.forbidden, "key token is for another channel, not news"))
    }

    @Test func missingAndMalformedTokensAreRefused() {
        #expect(Self.refusal(nil) == Refusal(.forbidden, "key token missing"))
        #expect(Self.refusal("") == Refusal(.forbidden, "key token missing"))
        let cases: [(String, String)] = [
            ("not base64!", "not base64url"),
            ("A", "not base64url"),
            ("AQID", "too short"),
            (String(repeating: "A", count: 257), "longer than 256 characters"),
            (Base64URL.encode([UInt8](repeating: 1, count: 41)), "too short"),
            (Self.signer.mint(channel: "news", expiry: Self.expiry) + "=", "not base64url"),
        ]
        for (token, detail) in cases {
            #expect(Self.refusal(token) == Refusal(.forbidden, "key token is malformed (\(detail))"), "\(token)")
        }
    }

    @Test func unknownVersionWithAGenuineMACIsMalformed() throws {
        var payload: [UInt8] = [2]
        withUnsafeBytes(of: Self.expiry.bigEndian) { payload += $0 }
        payload += Array("news".utf8)
        let mac = try HMACReference.sha256(key: Array(Self.secretText.utf8), payload)
        #expect(Self.refusal(Base64URL.encode(payload + mac)) == Refusal(.forbidden, "key token is malformed (unknown version 2)"))
    }

    @Test func everyRefusalIsForbiddenOneLineDistinctAndNeverRepeatsTheToken() {
        let token = Self.signer.mint(channel: "news", expiry: Self.expiry)
        var altered = Array(token.utf8)
        altered[altered.count - 1] = altered.last == UInt8(ascii: "A") ? UInt8(ascii: "Q") : UInt8(ascii: "A")
        let refusals = [
            Self.refusal(nil),
            Self.refusal("%%%"),
            Self.refusal(String(decoding: altered, as: UTF8.self)),
            Self.refusal(Self.signer.mint(channel: "sports", expiry: Self.expiry)),
            Self.refusal(token, now: Int64(Self.expiry) * 1_000_000),
        ].compactMap { $0 }
        #expect(refusals.count == 5)
        #expect(Set(refusals.map(\.reason)).count == 5)
        for refusal in refusals {
            #expect(refusal.kind == .forbidden)
            #expect(!refusal.reason.contains("\n"))
            #expect(!refusal.reason.contains(String(token.prefix(12))), "\(refusal.reason)")
            #expect(!refusal.reason.contains(String(Self.secretText.prefix(12))), "\(refusal.reason)")
        }
    }

    @Test func secretShorterThanThirtyTwoBytesIsRefused() {
        #expect(throws: KeySecretError("key token secret is 31 bytes; at least 32 are needed (openssl rand -hex 32)")) {
            try KeyTokenSigner(secretText: String(repeating: "s", count: 31))
        }
        #expect(throws: KeySecretError("key token secret is 0 bytes; at least 32 are needed (openssl rand -hex 32)")) {
            try KeyTokenSigner(secret: [])
        }
        #expect(throws: Never.self) { try KeyTokenSigner(secretText: String(repeating: "s", count: 32)) }
    }
}

/// HMAC-SHA256 through Python's `hmac`, for payloads the signer will not mint.
enum HMACReference {
    static func sha256(key: [UInt8], _ message: [UInt8]) throws -> [UInt8] {
        let script = "import hashlib, hmac, sys; print(hmac.new(bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), hashlib.sha256).hexdigest())"
        let hex = try EncryptionReference.python(script, [EncryptionReference.hex(key), EncryptionReference.hex(message)])
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }
}
