import Foundation
import HeadwaterConfiguration
import Testing

/// `server.public` is named at a line and must be a directory; `server.follow_symlinks` says which
/// links below it are followed (Config/README.md).
@Suite("server.public and server.follow_symlinks")
struct PublicDirectoryTests {
    static func parse(_ server: String) throws(ConfigurationError) -> HeadwaterConfiguration {
        let text = "server:\n\(server)channels:\n  demo:\n    source: {type: push, target_duration: 2}\n"
        return try HeadwaterConfiguration.parse(text, file: "h.yaml", baseDirectory: "/srv/hw")
    }

    @Test("the public directory's line and the symlink policy are read; never is the default")
    func parsed() throws {
        let plain = try Self.parse("  cors: true\n  public: site\n")
        #expect(plain.server.publicDirectory == "/srv/hw/site")
        #expect(plain.server.publicDirectoryLine == 3)
        #expect(plain.server.followSymlinks == .never)
        #expect(try Self.parse("  follow_symlinks: inside\n").server.followSymlinks == .inside)
        #expect(try Self.parse("  follow_symlinks: never\n").server.followSymlinks == .never)
        #expect(throws: ConfigurationError.self) { try Self.parse("  follow_symlinks: yes\n") }
        do {
            _ = try Self.parse("  follow_symlinks: [inside]\n")
            Issue.record("a list is not a policy")
        } catch {
            #expect(error.problems.first?.keyPath == "server.follow_symlinks", "\(error)")
        }
    }

    @Test("a public directory that is missing or a file is a problem at its line; a directory is none")
    func checkedOnDisk() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hw-public-\(UUID())").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        var server = HeadwaterConfiguration.Server()
        #expect(server.publicDirectoryProblem(file: "h.yaml") == nil, "no public directory, nothing to check")
        server.publicDirectory = base + "/site"
        server.publicDirectoryLine = 4
        let missing = try #require(server.publicDirectoryProblem(file: "h.yaml"))
        #expect(missing.description == "h.yaml:4: server.public: \"\(base)/site\" does not exist: the static root must be a directory")
        _ = FileManager.default.createFile(atPath: base + "/site", contents: Data())
        #expect(server.publicDirectoryProblem(file: "h.yaml")?.message.contains("is not a directory") == true)
        try FileManager.default.removeItem(atPath: base + "/site")
        try FileManager.default.createDirectory(atPath: base + "/site", withIntermediateDirectories: false)
        #expect(server.publicDirectoryProblem(file: "h.yaml") == nil)
        // A link to a directory is a directory: the root is the operator's path, links and all.
        try FileManager.default.createSymbolicLink(atPath: base + "/link", withDestinationPath: "site")
        server.publicDirectory = base + "/link"
        #expect(server.publicDirectoryProblem(file: "h.yaml") == nil)
    }
}
