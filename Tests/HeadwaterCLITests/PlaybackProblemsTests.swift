import Testing

/// How an ffmpeg reader's log is judged (``RealClients/ServeCommandTests/playbackProblems(_:seconds:)``):
/// synthetic logs, so each verdict is checked without a player.
@Suite("ffmpeg log verdicts")
struct PlaybackProblemsTests {
    static func log(time: String, ending: String, extra: String = "") -> String {
        "[info] frame=  10 fps= 25 q=-0.0 size=N/A time=00:00:05.00 bitrate=N/A speed=1x\n\(extra)"
            + "[info] frame= 750 fps= 25 q=-0.0 Lsize=N/A time=\(time) bitrate=N/A speed=1x\n[verbose] \(ending)\n"
    }

    static let judge = RealClients.ServeCommandTests.playbackProblems

    @Test("a read that reached its -t is clean")
    func reached() {
        #expect(Self.judge(Self.log(time: "00:00:30.00", ending: "No more output streams to write to, finishing."), 30).isEmpty)
    }

    @Test("ffmpeg's output clock reaching -t early across a discontinuity is ffmpeg's end, not a problem")
    func outputClockJumped() {
        #expect(Self.judge(Self.log(time: "00:00:22.01", ending: "No more output streams to write to, finishing."), 30).isEmpty)
    }

    @Test("an input that ended early (a stale playlist) is a problem, whatever the progress time")
    func inputEnded() {
        #expect(Self.judge(Self.log(time: "00:00:12.00", ending: "No more inputs to read from, finishing."), 30).count == 1)
        #expect(Self.judge(Self.log(time: "00:00:30.00", ending: "No more inputs to read from, finishing."), 30).count == 1)
    }

    @Test("a read that stopped short without saying why is a problem")
    func stoppedShort() {
        #expect(Self.judge(Self.log(time: "00:00:12.00", ending: "Exiting normally."), 30).count == 1)
    }

    @Test("errors and failed segments are problems; discontinuity noise is not")
    func errorsAndNoise() {
        let noisy = Self.log(
            time: "00:00:30.00", ending: "No more output streams to write to, finishing.",
            extra: "[hls @ 0x1] [error] Packet corrupt (stream = 0, dts = 1)\n")
        #expect(Self.judge(noisy, 30).isEmpty)
        let failing = Self.log(
            time: "00:00:30.00", ending: "No more output streams to write to, finishing.",
            extra: "[hls @ 0x1] [warning] Failed to open segment 7 of playlist 0\n[http @ 0x2] [error] HTTP error 404 Not Found\n")
        #expect(Self.judge(failing, 30).count == 3)
    }
}
