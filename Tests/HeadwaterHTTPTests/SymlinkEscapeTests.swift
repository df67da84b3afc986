import Foundation
@testable import HeadwaterHTTP
import HeadwaterLiveWindow
import HeadwaterRuntime
import HeadwaterTesting
import Logging
import NIOCore
import Testing

/// Files stay inside their roots (issue 18: `GET /passwd-link` once answered `/etc/passwd`): a
/// symbolic link below the public directory, or a segment file that is one, is followed only when
/// `server.follow_symlinks: inside` allows it and it stays beneath its root; a refused one answers
/// 404 as a missing file does, and is counted. Decided by the kernel (`openat2`), or by the explicit
/// check where the kernel has none: both are run on the same cases.
@Suite("Symlinks never lead out of a served root", .serialized)
struct SymlinkEscapeTests {
    /// A root with a file, a subdirectory, links of every kind, and a file outside it.
    struct Tree {
        let base: TemporaryDirectory
        var root: String { base.path + "/root" }
        var outside: String { base.path + "/outside.txt" }

        init() throws {
            base = try TemporaryDirectory()
            try base.write("root/real.txt", Array("real".utf8))
            try base.write("root/v2/index.html", Array("v2".utf8))
            try base.write("outside.txt", Array("secret".utf8))
            let links: [(String, String)] = [
                ("passwd-link", "/etc/passwd"),
                ("alias.txt", "real.txt"),
                ("latest", "v2"),
                ("up.txt", "../outside.txt"),
                ("escape", ".."),
                ("etc", "/etc"),
                ("absolute-inside.txt", base.path + "/root/real.txt"),
                ("loop", "loop"),
                ("v2/back.txt", "../real.txt"),
            ]
            for (name, target) in links {
                try FileManager.default.createSymbolicLink(atPath: root + "/" + name, withDestinationPath: target)
            }
        }
    }

    /// What `relative` opens to beneath the tree's root: its bytes, or the failure.
    static func open(_ relative: String, in tree: Tree, _ symlinks: SymlinkPolicy, kernel: Bool) -> Result<String, OpenFile.Failure> {
        OpenFile.open(ConfinedPath(root: tree.root, relative: relative, symlinks: symlinks), resolvingInKernel: kernel).map { file in
            defer { file.close() }
            var buffer = ByteBuffer()
            _ = file.read(offset: 0, count: 64, appendingTo: &buffer)
            return String(buffer: buffer)
        }
    }

    @Test("what each path opens to, under each policy, by the kernel and by the explicit check", arguments: [true, false])
    func openBeneathRoot(kernel: Bool) throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        let refused = Result<String, OpenFile.Failure>.failure(.refusedSymlink)
        let cases: [(path: String, never: Result<String, OpenFile.Failure>, inside: Result<String, OpenFile.Failure>)] = [
            ("real.txt", .success("real"), .success("real")),
            ("v2/index.html", .success("v2"), .success("v2")),
            ("passwd-link", refused, refused),
            ("alias.txt", refused, .success("real")),
            ("latest/index.html", refused, .success("v2")),
            ("v2/back.txt", refused, .success("real")),
            ("up.txt", refused, refused),
            ("escape/outside.txt", refused, refused),
            ("etc/passwd", refused, refused),
            ("missing.txt", .failure(.notFound), .failure(.notFound)),
            ("v2", .failure(.notRegularFile), .failure(.notRegularFile)),
            ("../outside.txt", .failure(.notFound), .failure(.notFound)),
            ("v2/../real.txt", .failure(.notFound), .failure(.notFound)),
            ("./real.txt", .failure(.notFound), .failure(.notFound)),
            ("v2//index.html", .failure(.notFound), .failure(.notFound)),
        ]
        for (path, never, inside) in cases {
            #expect(Self.open(path, in: tree, .never, kernel: kernel) == never, "\(path), never, kernel \(kernel)")
            #expect(Self.open(path, in: tree, .inside, kernel: kernel) == inside, "\(path), inside, kernel \(kernel)")
        }
        // A loop of links: refused with no link allowed; an error like any other when links are.
        #expect(Self.open("loop", in: tree, .never, kernel: kernel) == refused)
        #expect(Self.open("loop", in: tree, .inside, kernel: kernel) == .failure(.failed(errno: ELOOP)))
        // An absolute link is refused by the kernel even when it lands inside; the explicit check,
        // which sees only where the file is, lets that one through (README: links must be relative).
        #expect(Self.open("absolute-inside.txt", in: tree, .never, kernel: kernel) == refused)
        #expect(Self.open("absolute-inside.txt", in: tree, .inside, kernel: kernel) == (kernel ? refused : .success("real")))
    }

    @Test("a segment file that is a link is refused unless it stays in its directory under `inside`")
    func segmentFiles() throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        func open(_ name: String, _ symlinks: SymlinkPolicy) -> OpenFile.Failure? {
            switch OpenFile.open(ConfinedPath(file: tree.root + "/" + name, symlinks: symlinks)) {
            case .success(let file):
                file.close()
                return nil
            case .failure(let failure): return failure
            }
        }
        #expect(open("real.txt", .never) == nil)
        #expect(open("passwd-link", .never) == .refusedSymlink)
        #expect(open("alias.txt", .never) == .refusedSymlink)
        #expect(open("alias.txt", .inside) == nil)
        #expect(open("passwd-link", .inside) == .refusedSymlink)
        #expect(open("up.txt", .inside) == .refusedSymlink)
        #expect(ConfinedPath(file: "/srv/state/seg-1.ts", symlinks: .never) == ConfinedPath(root: "/srv/state", relative: "seg-1.ts", symlinks: .never))
        #expect(ConfinedPath(file: "/seg.ts", symlinks: .never).description == "/seg.ts")
    }

    // MARK: - Over real sockets

    static func get(_ target: String, port: Int) async throws -> RawResponse {
        let (responses, _) = try await HostFieldTests.exchange("GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n", port: port)
        return try #require(responses.first, "no response to \(target)")
    }

    static func counted(_ metrics: OriginMetrics, _ root: String) -> String? {
        String(decoding: metrics.exposition(channels: []), as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("headwater_symlinks_refused_total{root=\"\(root)\"}") }.map { String($0.split(separator: " ").last ?? "") }
    }

    @Test("GET of a link to /etc/passwd answers 404 like a missing file and is counted; traversal stays refused", arguments: [true, false])
    func passwdLinkOverSockets(fastPath: Bool) async throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        let metrics = OriginMetrics()
        let log = LogRecorder()
        try await withServer(
            configure: {
                $0.publicDirectory = tree.root
                $0.fastPathAnswers = fastPath
                $0.metrics = metrics
            }, logger: log.logger
        ) { port in
            #expect(Self.counted(metrics, "static") == "0", "made at 0 with the server")
            let missing = try await Self.get("/no-such-file", port: port)
            for target in ["/passwd-link", "/etc/passwd", "/up.txt", "/alias.txt", "/latest/index.html"] {
                let response = try await Self.get(target, port: port)
                #expect(response.status == 404, "\(target)")
                #expect(response.body == missing.body, "\(target): answered as a missing file")
                #expect(!HostFieldTests.text(response).contains("root:"), "\(target)")
            }
            #expect(Self.counted(metrics, "static") == "5")
            #expect(log.count("cannot open static file", atLeast: .warning) == 5, "\(log.lines)")
            #expect(try await Self.get("/real.txt", port: port).status == 200)
            // `..` and its encodings never reach the file system.
            for target in ["/../outside.txt", "/%2e%2e/outside.txt", "/v2/%2E%2E/%2e%2e/outside.txt", "/..%2foutside.txt", "/v2/..%5c..%5coutside.txt", "/escape/outside.txt"] {
                let response = try await Self.get(target, port: port)
                #expect([400, 404].contains(response.status), "\(target): \(response.status)")
                #expect(!HostFieldTests.text(response).contains("secret"), "\(target)")
            }
        }
    }

    @Test("with follow_symlinks: inside, links within the root are served, and those leading out still answer 404")
    func insideOverSockets() async throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        let metrics = OriginMetrics()
        try await withServer(
            configure: {
                $0.publicDirectory = tree.root
                $0.followSymlinks = .inside
                $0.metrics = metrics
            }
        ) { port in
            for _ in 0..<2 {  // the second time from the fast path's cache
                let alias = try await Self.get("/alias.txt", port: port)
                #expect(alias.status == 200 && HostFieldTests.text(alias) == "real")
                let latest = try await Self.get("/latest/index.html", port: port)
                #expect(latest.status == 200 && HostFieldTests.text(latest) == "v2")
            }
            for target in ["/passwd-link", "/up.txt", "/etc/passwd", "/escape/outside.txt"] {
                #expect(try await Self.get(target, port: port).status == 404, "\(target)")
            }
            #expect(Self.counted(metrics, "static") == "4")
        }
    }

    /// The fast path keeps a served file's head and descriptor: a file replaced by a link after it
    /// was served is opened again through the same confinement, not served from the cache.
    @Test("a file served, then replaced by a link to /etc/passwd, answers 404 from the fast path's cache")
    func cachedFileReplacedByLink() async throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        try tree.base.write("root/swap.txt", Array("before".utf8))
        try await withServer(configure: { $0.publicDirectory = tree.root }) { port in
            let first = try await Self.get("/swap.txt", port: port)
            #expect(first.status == 200 && HostFieldTests.text(first) == "before")
            try FileManager.default.removeItem(atPath: tree.root + "/swap.txt")
            try FileManager.default.createSymbolicLink(atPath: tree.root + "/swap.txt", withDestinationPath: "/etc/passwd")
            let second = try await Self.get("/swap.txt", port: port)
            #expect(second.status == 404 && !HostFieldTests.text(second).contains("root:"), "\(HostFieldTests.text(second))")
        }
    }

    @Test("a listed segment whose file is a link to /etc/passwd answers 404 and is counted")
    func segmentLinkOverSockets() async throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        let passwd = try #require(FileManager.default.contents(atPath: "/etc/passwd"))
        let segments = [
            "seg1.ts": segmentFile(path: tree.root + "/passwd-link", length: passwd.count, tag: "s1"),
            "seg2.ts": segmentFile(path: tree.root + "/real.txt", length: 4, tag: "s2"),
        ]
        let metrics = OriginMetrics()
        try await withServer(content: Fixture.content(segments: segments), configure: { $0.metrics = metrics }) { port in
            let link = try await Self.get("/live/demo/v1/seg1.ts", port: port)
            #expect(link.status == 404 && !HostFieldTests.text(link).contains("root:"), "\(HostFieldTests.text(link))")
            #expect(try await Self.get("/live/demo/v1/seg2.ts", port: port).status == 200)
            #expect(Self.counted(metrics, "segment") == "1")
        }
    }
}
