@testable import HeadwaterHTTP
import NIOCore
import Testing

/// The deadline and cap decisions as values, on made-up instants: what each deadline counts from,
/// what resets it, and when the timer is told to look again.
@Suite("Connection deadlines and admission (decisions)")
struct ConnectionDeadlinesTests {
    static let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
    static func at(_ seconds: Double) -> NIODeadline { t0 + .nanoseconds(Int64(seconds * 1e9)) }

    static func deadlines(
        idle: Int64 = 60, head: Int64 = 10, body: Int64 = 10, rate: Int = 1000, send: Int64 = 60
    ) -> ConnectionDeadlines {
        var limits = ConnectionLimits()
        limits.requestHeadTimeout = .seconds(head)
        limits.bodyTimeout = .seconds(body)
        limits.minimumBodyRate = rate
        limits.sendTimeout = .seconds(send)
        return ConnectionDeadlines(idleTimeout: .seconds(idle), limits: limits, now: t0)
    }

    @Test func aHeadThatKeepsTricklingMissesItsDeadlineEvenThoughTheConnectionIsNeverIdle() {
        var deadlines = Self.deadlines()
        let started = Self.at(1)
        for second in 1...9 {
            deadlines.read(1, at: Self.at(Double(second)), body: false)
            #expect(deadlines.check(at: Self.at(Double(second)), activity: .head(since: started)) == .checkAgain(at: Self.at(11)))
        }
        #expect(deadlines.check(at: Self.at(10.99), activity: .head(since: started)) == .checkAgain(at: Self.at(11)))
        #expect(deadlines.check(at: Self.at(11), activity: .head(since: started)) == .expired(.requestHead))
    }

    @Test func betweenRequestsOnlyTheIdleTimeoutApplies() {
        var deadlines = Self.deadlines()
        deadlines.read(100, at: Self.at(5), body: false)
        #expect(deadlines.check(at: Self.at(30), activity: .betweenRequests) == .checkAgain(at: Self.at(65)))
        #expect(deadlines.check(at: Self.at(65), activity: .betweenRequests) == .idle)
    }

    @Test func aSlowReaderOfALongResponseIsNeitherIdleNorLateWhileItsSocketDrains() {
        var deadlines = Self.deadlines(idle: 600, send: 60)
        // Looked at again an idle timeout later, in case the response is over by then.
        #expect(deadlines.check(at: Self.at(500), activity: .responding) == .checkAgain(at: Self.at(1100)))
        deadlines.writabilityChanged(writable: false, at: Self.at(500))
        #expect(deadlines.check(at: Self.at(559), activity: .responding) == .checkAgain(at: Self.at(560)))
        deadlines.writabilityChanged(writable: true, at: Self.at(559))  // a slice drained: progress
        deadlines.writabilityChanged(writable: false, at: Self.at(559.5))
        #expect(deadlines.check(at: Self.at(600), activity: .responding) == .checkAgain(at: Self.at(619.5)))
        #expect(deadlines.check(at: Self.at(619.5), activity: .responding) == .expired(.send))
    }

    @Test func anUploadMustKeepUpTheMinimumRateInEachPeriod() {
        var deadlines = Self.deadlines(body: 10, rate: 1000)  // 10,000 bytes per 10 s period
        deadlines.read(6000, at: Self.at(1), body: true)
        deadlines.read(4000, at: Self.at(9), body: true)
        // The first period (1 s … 11 s) brought exactly 10,000 bytes: the next one begins.
        #expect(deadlines.check(at: Self.at(11), activity: .body) == .checkAgain(at: Self.at(21)))
        deadlines.read(9999, at: Self.at(20), body: true)
        #expect(deadlines.check(at: Self.at(21), activity: .body) == .expired(.requestBody))
    }

    @Test func theBodyPeriodStartsAfreshAtEachUploadAndIsForgottenBetweenRequests() {
        var deadlines = Self.deadlines(body: 10, rate: 1000)
        deadlines.read(10, at: Self.at(1), body: true)
        #expect(deadlines.check(at: Self.at(2), activity: .responding) == .checkAgain(at: Self.at(62)))
        // A later upload: its own period, from its first check or byte, not the old one's bytes.
        #expect(deadlines.check(at: Self.at(30), activity: .body) == .checkAgain(at: Self.at(40)))
        deadlines.read(20_000, at: Self.at(35), body: true)
        #expect(deadlines.check(at: Self.at(40), activity: .body) == .checkAgain(at: Self.at(50)))
    }

    @Test func aZeroTimeoutTurnsItsDeadlineOff() {
        var deadlines = Self.deadlines(idle: 0, head: 0, send: 0)
        deadlines.writabilityChanged(writable: false, at: Self.at(1))
        #expect(deadlines.check(at: Self.at(10_000), activity: .head(since: Self.at(1))) == .checkAgain(at: .distantFuture))
    }

    @Test func admissionCapsTheTotalAndEachAddressAndReleasesBoth() {
        var limits = ConnectionLimits()
        limits.maxConnections = 3
        limits.maxConnectionsPerClient = 2
        var admission = ConnectionAdmission(limits: limits)
        #expect(admission.admit(client: "10.0.0.1") == nil)
        #expect(admission.admit(client: "10.0.0.1") == nil)
        #expect(admission.admit(client: "10.0.0.1") == .clientCapacity)
        #expect(admission.admit(client: "10.0.0.2") == nil)
        #expect(admission.admit(client: "10.0.0.3") == .capacity)
        #expect(admission.open == 3)
        admission.release(client: "10.0.0.1")
        #expect(admission.admit(client: "10.0.0.3") == nil)
        admission.release(client: "10.0.0.2")
        admission.release(client: "10.0.0.3")
        admission.release(client: "10.0.0.1")
        #expect(admission.open == 0)
        #expect(admission.openByClient.isEmpty)  // no address is remembered once its connections close

        limits.maxConnectionsPerClient = 0  // no per-address cap
        admission = ConnectionAdmission(limits: limits)
        for _ in 0..<3 { #expect(admission.admit(client: "10.0.0.1") == nil) }
        #expect(admission.admit(client: "10.0.0.1") == .capacity)
    }
}
