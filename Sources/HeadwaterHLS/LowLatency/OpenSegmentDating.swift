extension MediaPlaylist {
    /// This playlist as Headwater serves it to players: the open segment (the parts after the last
    /// complete segment, ``trailingTags``) carries no `EXT-X-PROGRAM-DATE-TIME`; it is dated once it
    /// is complete, where every player reads the date. The date it would have carried follows from
    /// the previous segment's (dates run on through the window, breaks included), so nothing is lost.
    ///
    /// Why: hls.js 1.6 (the player in the tests, and in most web players) throws an uncaught
    /// `TypeError` ("reading 'programDateTime'") while parsing a playlist whose open segment is dated
    /// and whose last dated complete segment holds the start of an `EXT-X-DATERANGE`: mapping the
    /// range to a segment, it indexes one past its list of complete segments. The player then stops
    /// for good with no error event: a viewer whose player loads the playlist while the segment
    /// after a break's first one is still open gets a black player. A dated open segment is valid
    /// HLS, and so is one dated only when complete; the second is what every player can read.
    public var datingOnlyCompleteSegments: MediaPlaylist {
        guard trailingTags.programDateTime != nil else { return self }
        var playlist = self
        playlist.trailingTags.programDateTime = nil
        return playlist
    }
}
