import HeadwaterHTTP
import Testing

@Test(arguments: [
    (CacheClass.multivariantPlaylist, "public, max-age=3", 3),
    (.mediaPlaylist(targetDuration: 6), "public, max-age=3", 3),
    (.personalizedPlaylist, "private, no-store", nil),
    (.segment, "public, max-age=1209600, immutable", 1_209_600),
    (.notYetAvailable, "public, max-age=1", 1),
    (.error(targetDuration: 6), "public, max-age=6", 6),
    (.error(targetDuration: 2), "public, max-age=2", 2),
    (.error(targetDuration: 10), "public, max-age=6", 6),
    (.error(targetDuration: nil), "public, max-age=1", 1),
    (.error(targetDuration: 0), "public, max-age=1", 1),
    (.staticFile, "public, max-age=60", 60),
    (.health, "no-store", nil),
] as [(CacheClass, String, Int?)])
func cacheControlPerClass(_ cacheClass: CacheClass, _ cacheControl: String, _ maxAge: Int?) {
    let policy = CachePolicy(cacheClass)
    #expect(policy.cacheControl == cacheControl)
    #expect(policy.maxAge == maxAge)
}

/// G7/F19: a non-blocking playlist 200 lives 0.5×TD; rounded down, never below 1 s.
@Test(arguments: [(-5, 1), (0, 1), (1, 1), (2, 1), (3, 1), (4, 2), (5, 2), (6, 3), (7, 3), (10, 5), (12, 6), (200, 100)])
func mediaPlaylistMaxAgeIsHalfTheTargetDurationRoundedDown(_ targetDuration: Int, _ maxAge: Int) {
    let policy = CachePolicy(.mediaPlaylist(targetDuration: targetDuration))
    #expect(policy.maxAge == maxAge)
    #expect(policy.cacheControl == "public, max-age=\(maxAge)")
    if targetDuration >= 2 {
        #expect(2 * maxAge <= targetDuration, "never more than half the target duration")
    }
}

@Test func expiresFollowsMaxAge() {
    let now: Int64 = 1_767_225_600
    #expect(CachePolicy(.segment).expires(now: now) == now + 1_209_600)
    #expect(CachePolicy(.mediaPlaylist(targetDuration: 4)).expires(now: now) == now + 2)
    #expect(CachePolicy(.personalizedPlaylist).expires(now: now) == nil)
    #expect(CachePolicy(.health).expires(now: now) == nil)
}

/// C7/C8: a segment's Expires must not fall before its availability deadline (segment duration
/// plus the longest playlist containing it); 14 days covers any live window Headwater keeps.
@Test func segmentLifetimeOutlivesAnyLiveWindow() {
    let longestWindow = 6 * 3600 + 10  // a 6-hour DVR window plus one segment
    #expect(CachePolicy(.segment).maxAge! > longestWindow)
}

@Test func personalizedPlaylistsAreNeverShared() {
    let value = CachePolicy(.personalizedPlaylist).cacheControl
    #expect(value.contains("private") && value.contains("no-store") && !value.contains("public"))
}
