import Foundation
import HeadwaterConfiguration
import Testing

@Suite("Configuration: channel encryption and server.key_secret_env")
struct EncryptionConfigurationTests {
    /// A push channel `demo` whose `encryption` block (line 5) holds `lines` (from line 6 on).
    static func pushChannel(encryption lines: [String]) -> String {
        "channels:\n  demo:\n    source:\n      type: push\n    encryption:\n"
            + lines.map { "      \($0)\n" }.joined()
    }

    /// The problems `text` is refused with, as `file:line: key.path: message` lines (none if it parses).
    static func problems(_ text: String, baseDirectory: String = "/c") -> [String] {
        do {
            _ = try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: baseDirectory)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test("an encryption block parses with every key; absent keys take their defaults; without one a channel is clear")
    func parses() throws {
        let full = try HeadwaterConfiguration.parse(
            Self.pushChannel(encryption: ["method: AES-128", "rotate_every: 3", "ads: clear", "key_access: token"]),
            file: "h.yaml", baseDirectory: "/c")
        #expect(
            full.channels[0].encryption
                == ChannelEncryption(method: .aes128, rotateEvery: 3, ads: .clear, keyAccess: .token))

        let minimal = try HeadwaterConfiguration.parse(
            Self.pushChannel(encryption: ["method: AES-128"]), file: "h.yaml", baseDirectory: "/c")
        let defaults = try #require(minimal.channels[0].encryption)
        #expect(defaults.method == .aes128)
        #expect(defaults.rotateEvery == 0)
        #expect(defaults.ads == .clear)
        #expect(defaults.keyAccess == .open)

        let zero = try HeadwaterConfiguration.parse(
            Self.pushChannel(encryption: ["method: AES-128", "rotate_every: 0", "ads: clear", "key_access: open"]),
            file: "h.yaml", baseDirectory: "/c")
        #expect(zero.channels[0].encryption == ChannelEncryption())

        let flow = try HeadwaterConfiguration.parse(
            "channels:\n  demo:\n    source: {type: directory, path: /d}\n    encryption: {method: AES-128, rotate_every: 1000000}\n",
            file: "h.yaml", baseDirectory: "/c")
        #expect(flow.channels[0].encryption?.rotateEvery == 1_000_000)

        let clear = try HeadwaterConfiguration.parse(
            "channels:\n  demo:\n    source: {type: push}\n", file: "h.yaml", baseDirectory: "/c")
        #expect(clear.channels[0].encryption == nil)
        #expect(HeadwaterConfiguration.Channel(name: "x", source: .push(.init())).encryption == nil)
    }

    @Test(
        "every bad encryption value is one file:line: key.path: message",
        arguments: [
            (["method: AES-256"], "h.yaml:6: channels.demo.encryption.method: must be AES-128 (the only method supported), got \"AES-256\""),
            (["method: aes-128"], "h.yaml:6: channels.demo.encryption.method: must be AES-128 (the only method supported), got \"aes-128\""),
            (["method: AES-128", "rotate_every: -1"], "h.yaml:7: channels.demo.encryption.rotate_every: must be between 0 and 1000000, got -1"),
            (["method: AES-128", "rotate_every: 1000001"], "h.yaml:7: channels.demo.encryption.rotate_every: must be between 0 and 1000000, got 1000001"),
            (["method: AES-128", "rotate_every: \"x\""], "h.yaml:7: channels.demo.encryption.rotate_every: must be an integer"),
            (["method: AES-128", "ads: maybe"], "h.yaml:7: channels.demo.encryption.ads: must be clear, got \"maybe\""),
            (
                ["method: AES-128", "ads: encrypted"],
                "h.yaml:7: channels.demo.encryption.ads: encrypted ads are not supported yet; ads and slate are served clear, announced with EXT-X-KEY:METHOD=NONE (use clear)"
            ),
            (["method: AES-128", "key_access: sometimes"], "h.yaml:7: channels.demo.encryption.key_access: must be open or token, got \"sometimes\""),
            (
                ["method: AES-128", "rotate: 3"],
                "h.yaml:7: channels.demo.encryption.rotate: unknown key (expected one of: ads, key_access, method, rotate_every)"
            ),
            (["rotate_every: 3"], "h.yaml:6: channels.demo.encryption.method: required: AES-128 (the only method supported)"),
        ])
    func badValue(_ lines: [String], _ expected: String) {
        #expect(Self.problems(Self.pushChannel(encryption: lines)) == [expected])
    }

    @Test("an encryption value that is not a mapping is refused at its line")
    func notAMapping() {
        let text = "channels:\n  demo:\n    source: {type: push}\n    encryption: AES-128\n"
        #expect(Self.problems(text) == ["h.yaml:4: channels.demo.encryption: must be a mapping (key: value lines)"])
    }

    @Test("a pull source in reference mode cannot be encrypted (its segments never pass through Headwater); fetch mode can")
    func referencePull() throws {
        let text = """
            channels:
              up:
                source: {type: pull, url: "http://upstream/live/master.m3u8", mode: reference}
                encryption: {method: AES-128}
            """
        #expect(
            Self.problems(text) == [
                "h.yaml:4: channels.up.encryption: a pull source in reference mode lists the upstream's segment URLs, which Headwater cannot encrypt; use mode: fetch, or remove the encryption block"
            ])
        let fetch = try HeadwaterConfiguration.parse(
            text.replacingOccurrences(of: "reference", with: "fetch"), file: "h.yaml", baseDirectory: "/c")
        #expect(fetch.channels[0].encryption == ChannelEncryption())
    }

    /// A loop package in a new temporary directory: `master.m3u8`, a video playlist `v0/index.m3u8`
    /// and an alternate audio playlist `a0/index.m3u8`, whose segments are given by their tag lines.
    /// Segment files are not written: the check reads playlists only.
    struct Package {
        let directory: String
        var master: String { directory + "/master.m3u8" }

        init(video: [String], audio: [String] = []) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-encryption-\(UUID())").path
            for rendition in ["v0", "a0"] {
                try FileManager.default.createDirectory(atPath: directory + "/" + rendition, withIntermediateDirectories: true)
            }
            let master = """
                #EXTM3U
                #EXT-X-VERSION:3
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="en",DEFAULT=YES,AUTOSELECT=YES,URI="a0/index.m3u8"
                #EXT-X-STREAM-INF:BANDWIDTH=800000,AUDIO="aud"
                v0/index.m3u8

                """
            try master.write(toFile: self.master, atomically: true, encoding: .utf8)
            try Self.media(video).write(toFile: directory + "/v0/index.m3u8", atomically: true, encoding: .utf8)
            try Self.media(audio).write(toFile: directory + "/a0/index.m3u8", atomically: true, encoding: .utf8)
        }

        /// A VOD media playlist of two 2 s segments, `tags` before the first.
        static func media(_ tags: [String]) -> String {
            (["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:2", "#EXT-X-PLAYLIST-TYPE:VOD"] + tags
                + ["#EXTINF:2.000,", "seg-0.ts", "#EXTINF:2.000,", "seg-1.ts", "#EXT-X-ENDLIST", ""])
                .joined(separator: "\n")
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }

        /// A loop channel `demo` on this package; with `encryption`, its block is on line 6.
        func configuration(encrypted: Bool) -> String {
            "channels:\n  demo:\n    source:\n      type: loop\n      package: \(master)\n"
                + (encrypted ? "    encryption:\n      method: AES-128\n      rotate_every: 2\n" : "")
        }
    }

    static let aesKey = #"#EXT-X-KEY:METHOD=AES-128,URI="key.bin",IV=0x00000000000000000000000000000001"#

    @Test("a loop package whose media playlists already carry EXT-X-KEY (not NONE) cannot be encrypted again")
    func alreadyEncryptedLoop() throws {
        let package = try Package(video: [Self.aesKey])
        defer { package.remove() }
        #expect(
            Self.problems(package.configuration(encrypted: true)) == [
                "h.yaml:6: channels.demo.encryption: the loop package \(package.master) is already encrypted (EXT-X-KEY METHOD=AES-128 in v0/index.m3u8); remove the encryption block or use a clear package"
            ])
        // Without the block, the package is the source's business (served as it is).
        #expect(Self.problems(package.configuration(encrypted: false)) == [])
    }

    @Test("an encrypted alternate-audio playlist is found too, with its own method")
    func alreadyEncryptedAudio() throws {
        let package = try Package(video: [], audio: [#"#EXT-X-KEY:METHOD=SAMPLE-AES,URI="key.bin""#])
        defer { package.remove() }
        #expect(
            Self.problems(package.configuration(encrypted: true)) == [
                "h.yaml:6: channels.demo.encryption: the loop package \(package.master) is already encrypted (EXT-X-KEY METHOD=SAMPLE-AES in a0/index.m3u8); remove the encryption block or use a clear package"
            ])
    }

    @Test("a clear loop package (no key, or METHOD=NONE) takes an encryption block; an unreadable one is left to the loader")
    func clearLoop() throws {
        for tags in [[], ["#EXT-X-KEY:METHOD=NONE"]] {
            let package = try Package(video: tags, audio: tags)
            defer { package.remove() }
            let configuration = try HeadwaterConfiguration.parse(
                package.configuration(encrypted: true), file: "h.yaml", baseDirectory: "/c")
            #expect(configuration.channels[0].encryption == ChannelEncryption(rotateEvery: 2), "\(tags)")
        }
        let missing = try HeadwaterConfiguration.parse(
            "channels:\n  demo:\n    source: {type: loop, package: /nonexistent/master.m3u8}\n    encryption: {method: AES-128}\n",
            file: "h.yaml", baseDirectory: "/c")
        #expect(missing.channels[0].encryption == ChannelEncryption())
    }

    @Test("server.key_secret_env names the key secret's variable (default HEADWATER_KEY_SECRET), checked like the other *_env keys")
    func keySecretEnvironmentVariable() throws {
        let channel = "channels:\n  demo:\n    source: {type: push}\n"
        #expect(try HeadwaterConfiguration.parse(channel, file: "h.yaml", baseDirectory: "/c").server.keySecretEnvironmentVariable
            == "HEADWATER_KEY_SECRET")
        let named = try HeadwaterConfiguration.parse(
            "server:\n  key_secret_env: DEMO_KEY_SECRET\n" + channel, file: "h.yaml", baseDirectory: "/c")
        #expect(named.server.keySecretEnvironmentVariable == "DEMO_KEY_SECRET")
        #expect(named.server.sessionKeyEnvironmentVariable == "HEADWATER_SESSION_KEY")
        #expect(named.server.adminTokenEnvironmentVariable == "HEADWATER_ADMIN_TOKEN")
        #expect(
            Self.problems("server:\n  key_secret_env: 9-secret\n" + channel) == [
                "h.yaml:2: server.key_secret_env: must name an environment variable (letters, digits and '_', not starting with a digit), got \"9-secret\""
            ])
        #expect(Self.problems("server:\n  key_secret_env: \"\"\n" + channel) == ["h.yaml:2: server.key_secret_env: must be a non-empty string"])
    }
}
