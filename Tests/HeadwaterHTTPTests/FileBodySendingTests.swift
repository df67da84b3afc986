@testable import HeadwaterHTTP
import Testing

/// How a `sendfile` body goes out (``FileBodySending``): corked over 256 KiB whatever its number of
/// slices (a 300 KiB segment once lost its TCP_CORK when slicing came in), in 512 KiB slices.
@Suite("File body sending")
struct FileBodySendingTests {
    static let cases: [(length: Int64, corked: Bool)] = [
        (56_000, false),  // a typical live segment: one region, uncorked
        (262_144, false),
        (262_145, true),
        (307_200, true),  // 300 KiB: one slice, corked
        (1_048_576, true),  // two slices, corked
    ]

    @Test func bodiesOverTheThresholdAreCorked() {
        for (length, corked) in Self.cases {
            #expect(FileBodySending.corks(bodyLength: length) == corked, "\(length) bytes")
        }
    }

    @Test func aBodyGoesOutInSlicesThatCoverItOnce() {
        let slice = FileBodySending.sendfileSlice
        #expect(FileBodySending.slices(from: 0, to: 300 * 1024) == [0..<(300 * 1024)])
        #expect(FileBodySending.slices(from: 100, to: 100 + 2 * slice) == [100..<(100 + slice), (100 + slice)..<(100 + 2 * slice)])
        #expect(FileBodySending.slices(from: 7, to: 7 + 2 * slice + 1).map(\.count) == [Int(slice), Int(slice), 1])
        #expect(FileBodySending.slices(from: 5, to: 5).isEmpty)
    }
}
