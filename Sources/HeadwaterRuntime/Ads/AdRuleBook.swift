public import HeadwaterStitching
import NIOConcurrencyHelpers

/// Every version of the ad configuration (`ads.yaml`) loaded since the server started. A break pins
/// the version current when it started (``AdBreak/ruleSetVersion``), so a reload never changes a
/// decision already made (DESIGN invariant 7); the old versions stay here for as long as the
/// process runs — a version is a few kilobytes and reloads are rare.
public final class AdRuleBook: Sendable {
    private struct State {
        var current: AdRuleSet?
        var versions: [UInt64: AdRuleSet] = [:]
    }

    private let state: NIOLockedValueBox<State>

    public init(_ ruleSet: AdRuleSet? = nil) {
        var state = State()
        if let ruleSet {
            state.current = ruleSet
            state.versions[ruleSet.version] = ruleSet
        }
        self.state = NIOLockedValueBox(state)
    }

    /// The version new breaks pin, `nil` when no ad configuration is loaded.
    public var current: AdRuleSet? { state.withLockedValue { $0.current } }

    /// Every version, by ``AdRuleSet/version``: the stitcher's `ruleSets` argument (a copy-on-write
    /// dictionary, so reading it per request copies a reference).
    public var versions: [UInt64: AdRuleSet] { state.withLockedValue { $0.versions } }

    /// The next unused version number, for a reload.
    public var nextVersion: UInt64 { state.withLockedValue { ($0.versions.keys.max() ?? 0) + 1 } }

    /// Makes `ruleSet` current (a reload). Its version must be new.
    public func install(_ ruleSet: AdRuleSet) {
        state.withLockedValue { state in
            precondition(state.versions[ruleSet.version] == nil, "ad rule set versions are never reused")
            state.versions[ruleSet.version] = ruleSet
            state.current = ruleSet
        }
    }
}
