import HeadwaterRuntime
import Testing

@Suite("headwater --version")
struct VersionTests {
    @Test("--version prints HeadwaterVersion.current alone on standard output and exits 0")
    func version() throws {
        let result = try HeadwaterProcess.run(["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == HeadwaterVersion.current + "\n")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        // Packaging (build-deb.sh) turns it into a Debian version: it must start with a digit.
        #expect(HeadwaterVersion.current.first?.isNumber == true, "\(HeadwaterVersion.current)")
    }

    @Test("--help lists --version")
    func help() throws {
        let result = try HeadwaterProcess.run(["--help"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("--version"), "\(result.stdout)")
    }
}
