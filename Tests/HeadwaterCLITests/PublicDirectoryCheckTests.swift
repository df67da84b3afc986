import Foundation
import Testing

/// `server.public` must be a directory the server can read: a typo is a configuration error at its
/// line (`file:line: server.public: …`, exit 78) in `check-config` and at `serve`'s start, not a
/// server that answers 404 to every static file; `server.follow_symlinks` takes `never` or `inside`.
@Suite("server.public and server.follow_symlinks in check-config and serve")
struct PublicDirectoryCheckTests {
    /// A directory with `headwater.yaml`: `server:` lines `server` and the demo loop channel.
    static func configuration(server: [String]) throws -> (directory: URL, config: URL) {
        try RealClients.AccessLogDestinationTests.configuration(server: server)
    }

    @Test("a public directory that does not exist, or is a file, fails check-config and serve with 78 at its line")
    func missingOrNotADirectory() throws {
        let (directory, config) = try Self.configuration(server: ["listen: 127.0.0.1:0", "public: site"])
        defer { try? FileManager.default.removeItem(at: directory) }
        let site = directory.appendingPathComponent("site").path

        var result = try HeadwaterProcess.run(["check-config", config.path])
        #expect(result.status == 78, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stderr.contains("\(config.path):3: server.public: \"\(site)\" does not exist: the static root must be a directory"),
            "\(result.stderr)")
        result = try HeadwaterProcess.run(["serve", "--config", config.path])
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(config.path):3: server.public: \"\(site)\" does not exist"), "\(result.stderr)")

        _ = FileManager.default.createFile(atPath: site, contents: Data("not a directory".utf8))
        result = try HeadwaterProcess.run(["check-config", config.path])
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(config.path):3: server.public: \"\(site)\" is not a directory"), "\(result.stderr)")

        try FileManager.default.removeItem(atPath: site)
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: false)
        result = try HeadwaterProcess.run(["check-config", config.path])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test("follow_symlinks takes never or inside; anything else is an error at its line")
    func followSymlinksValues() throws {
        let (directory, config) = try Self.configuration(server: ["follow_symlinks: always"])
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try HeadwaterProcess.run(["check-config", config.path])
        #expect(result.status == 78)
        #expect(
            result.stderr.contains("\(config.path):2: server.follow_symlinks: must be never or inside, got \"always\""),
            "\(result.stderr)")
        for value in ["never", "inside"] {
            let (other, file) = try Self.configuration(server: ["follow_symlinks: \(value)"])
            defer { try? FileManager.default.removeItem(at: other) }
            #expect(try HeadwaterProcess.run(["check-config", file.path]).status == 0, "\(value)")
        }
    }
}
