public import HeadwaterHLS

/// What a session's stitched playlist depends on for one content window, besides the session id
/// written into tracking URLs: for each break the window shows, the pod stitched there (or none).
///
/// Sessions with equal window decisions get the same stitched playlist for one content version,
/// except for the session id inside tracking URLs. So an origin can render a playlist once per
/// (content version, rendition, window decisions) and splice the session id in per request
/// (``Stitcher/render(content:rendition:breaks:decisions:sessionID:ruleSets:options:)``), instead of
/// rendering it per request; the bytes are the same as ``Stitcher/render(content:rendition:breaks:session:ruleSets:options:)``'s.
public struct WindowDecisions: Sendable, Hashable {
    /// The indices in the break log of the breaks the window shows
    /// (``Stitcher/windowBreaks(content:breaks:)``).
    public let breaks: Range<Int>
    /// Per break of ``breaks``, in order: the pod stitched there, `nil` when the break is not stitched
    /// for the session (it started before the session did).
    public let pods: [StitchedPod?]

    /// - Parameter decide: the session's pod for the break at an index of `breaks`
    ///   (``SessionDecisions/decision(at:)``).
    public init(breaks: Range<Int>, decide: (Int) throws(StitchingError) -> StitchedPod?) throws(StitchingError) {
        var pods: [StitchedPod?] = []
        pods.reserveCapacity(breaks.count)
        for index in breaks { pods.append(try decide(index)) }
        self.breaks = breaks
        self.pods = pods
    }

    /// The pod stitched in the break at `index` of the log, `nil` for none.
    func pod(at index: Int) -> StitchedPod? {
        precondition(breaks.contains(index), "the stitcher consulted break \(index), outside the window's \(breaks)")
        return pods[index - breaks.lowerBound]
    }
}

/// Of a ``PodDecision``, what a stitched playlist shows: the ads, under the rule-set version the
/// break pinned (its creatives). Which rule matched and which pods were capped change no byte.
public struct StitchedPod: Sendable, Hashable {
    public var ruleSetVersion: UInt64
    public var ads: [Pod.Ad]

    public init(ruleSetVersion: UInt64, ads: [Pod.Ad]) {
        self.ruleSetVersion = ruleSetVersion
        self.ads = ads
    }

    public init(_ decision: PodDecision) {
        self.init(ruleSetVersion: decision.ruleSetVersion, ads: decision.ads)
    }
}

extension Stitcher {
    /// The indices in `log` of the breaks a stitched rendering of `content` consults: from
    /// ``firstBreakReaching(_:_:)`` the content's first segment to the last that started at or before its last segment — or, for live low-latency
    /// content, its open segment, whose parts are stitched too. Empty when the content has no
    /// segments or no break reaches into it. O(log B).
    public static func windowBreaks(content: MediaPlaylist, breaks log: BreakLog) -> Range<Int> {
        guard !content.segments.isEmpty else { return 0..<0 }
        let first = content.effectiveMediaSequence
        let listed = first + UInt64(content.segments.count - 1)
        let last = content.partInformation != nil && !content.endList ? listed + 1 : listed
        guard let upper = log.lastBreakIndex(startingAtOrBefore: last) else { return 0..<0 }
        let lower = firstBreakReaching(first, log)
        return lower..<max(lower, upper + 1)
    }
}
