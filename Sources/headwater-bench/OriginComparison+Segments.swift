import ArgumentParser
import Foundation

/// Segments by the URLs a CDN pulls: the demo channel's 40–56 KB segments at
/// `/live/{channel}/{rendition}/{msn}.ts`, and a 1 MiB segment pushed into a push channel, against
/// nginx serving the same bytes by a static path.
extension OriginComparison {
    static let liveRendition = "/live/demo/v1"

    // MARK: Snapshot

    /// The live-URL row's nginx side: every segment the demo's v1 playlist lists now, fetched by its
    /// live URL and written to `/bench/live/v1/<msn>.ts`, so that nginx serves the very bytes.
    /// The demo loops 10 segments and lists 15, so any later window lists the same files.
    func snapshotLiveSegments(_ http: LoopbackClient) async throws {
        let paths = try currentLiveSegmentPaths()
        guard !paths.isEmpty else { throw ValidationError("GET \(Self.liveRendition).m3u8 lists no segment") }
        for path in paths {
            let (status, _, body) = try await http.fetch(path)
            guard status == 200, !body.isEmpty else { throw ValidationError("GET \(path): \(status); expected 200") }
            let copy = OriginFixture.liveSegmentDirectory + "/" + (path.split(separator: "/").last.map(String.init) ?? path)
            try fixture.write(body, to: copy)
            snapshot.liveSegmentPaths.append(copy)
            snapshot.liveSegments.append(body)
        }
        let sizes = snapshot.liveSegments.map(\.count)
        print(
            "           \(paths.count) segments of \(Self.liveRendition).m3u8 (\(sizes.min() ?? 0)–\(sizes.max() ?? 0) bytes) written to "
                + "\(OriginFixture.liveSegmentDirectory)/<msn>.ts for nginx")
    }

    /// The segment paths the demo's v1 media playlist lists at this moment (a plain `GET`, from
    /// synchronous code between two runs).
    func currentLiveSegmentPaths() throws -> [String] {
        let response = try RawHTTP.get(port: headwaterPort, path: Self.liveRendition + ".m3u8")
        guard let (status, _, body) = RawHTTP.split(response), status == 200 else {
            throw ValidationError("GET \(Self.liveRendition).m3u8: not 200")
        }
        return String(decoding: body, as: UTF8.self).split(whereSeparator: \.isNewline)
            .filter { !$0.hasPrefix("#") && !$0.isEmpty }
            .map { $0.hasPrefix("/") ? String($0) : "/live/demo/" + $0 }
    }

    /// Pushes the 1 MiB segment into the push channel as an encoder would (`PUT` the segments, then
    /// a media playlist listing them) and waits until the channel lists them; keeps the first one's
    /// live path. Three copies of 6 s each: a rendition is published once it lists three target
    /// durations.
    func pushSegment(_ http: LoopbackClient) async throws {
        let channel = OriginFixture.pushChannel
        let token = [("Authorization", "Bearer \(OriginFixture.ingestToken)")]
        var playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:0\n"
        for index in 0..<3 {
            let (status, answer) = try await http.put("/ingest/\(channel)/v1-\(index).ts", body: snapshot.segment, headers: token)
            guard (200..<300).contains(status) else {
                throw ValidationError("PUT /ingest/\(channel)/v1-\(index).ts: \(status) \(String(decoding: answer, as: UTF8.self))")
            }
            playlist += "#EXTINF:6.000,\nv1-\(index).ts\n"
        }
        let (playlistStatus, playlistAnswer) = try await http.put("/ingest/\(channel)/v1.m3u8", body: Array(playlist.utf8), headers: token)
        guard (200..<300).contains(playlistStatus) else {
            throw ValidationError("PUT /ingest/\(channel)/v1.m3u8: \(playlistStatus) \(String(decoding: playlistAnswer, as: UTF8.self))")
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let (status, _, body) = try await http.fetch("/live/\(channel)/v1.m3u8")
            if status == 200,
                let uri = String(decoding: body, as: UTF8.self).split(whereSeparator: \.isNewline).first(where: {
                    !$0.hasPrefix("#") && $0.hasSuffix(".ts")
                })
            {
                snapshot.pushedPath = uri.hasPrefix("/") ? String(uri) : "/live/\(channel)/" + uri
                print(
                    "           pushed 3 × \(snapshot.segment.count) bytes into channel \(channel) (PUT /ingest/\(channel)/…); "
                        + "the first is live at \(snapshot.pushedPath)")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the pushed segment was not listed in /live/\(channel)/v1.m3u8 within 20 s")
    }

    // MARK: The rows

    /// The demo's segments by their live URLs, round-robin over what the media playlist lists at
    /// the start of each run (the fast path's segment route: the channel's snapshot, the file's
    /// cached head, sendfile), against nginx serving the same files by static paths. Per MiB, like
    /// the 1 MiB row: the segments differ in size.
    func liveSegmentsRow() throws {
        guard let headwater, let nginx else { throw ValidationError("the servers are not running") }
        let headwaterList = fixture.directory.appendingPathComponent("live-segments-headwater.txt")
        let nginxList = fixture.directory.appendingPathComponent("live-segments-nginx.txt")
        try (snapshot.liveSegmentPaths.joined(separator: "\n") + "\n").write(to: nginxList, atomically: true, encoding: .utf8)
        let listNow: () throws -> [String: String] = { [self] in
            try (currentLiveSegmentPaths().joined(separator: "\n") + "\n").write(to: headwaterList, atomically: true, encoding: .utf8)
            return ["HEADWATER_PATHS": headwaterList.path]
        }
        let sizes = snapshot.liveSegments.map(\.count)
        let runner = WrkRunner(wrk: tools.wrk, taskset: tools.taskset, script: tools.wrkScript, connections: settings.byteConnections)
        let (medians, failed) = try compare(
            "segments by live URL \(Self.liveRendition)/<msn>.ts, round-robin over the playlist's \(sizes.count), \(settings.byteConnections) connections",
            [
                Contender(
                    name: "headwater", url: headwaterBase + "/", server: headwater, environment: listNow,
                    note: "HEADWATER_PATHS: the segments \(Self.liveRendition).m3u8 lists, read again before each run"),
                Contender(
                    name: "nginx", url: nginxBase + "/", server: nginx, environment: { ["HEADWATER_PATHS": nginxList.path] },
                    note: "HEADWATER_PATHS: the same bytes at \(OriginFixture.liveSegmentDirectory)/<msn>.ts"),
            ], load: runner,
            check: Self.bytesCheck(Double(sizes.min() ?? 0), Double(sizes.max() ?? 0) + 1024, "a segment and headers"))
        rows.append(
            row(
                "segments by live URL (\((sizes.min() ?? 0) / 1000)–\((sizes.max() ?? 0) / 1000) KB), c\(settings.byteConnections)",
                (medians[0], medians[1], failed), .bytes, targets: Targets()))
    }

    /// The 1 MiB segment pushed into the push channel, by its live URL, against nginx's static
    /// `/bench/segment-1m.ts` (the same bytes).
    func pushedSegmentRow() throws {
        guard RawHTTP.split(try RawHTTP.get(port: headwaterPort, path: snapshot.pushedPath))?.status == 200 else {
            throw ValidationError("GET \(snapshot.pushedPath): the pushed segment is no longer served")
        }
        guard let headwater, let nginx else { throw ValidationError("the servers are not running") }
        let size = Double(snapshot.segment.count)
        let runner = WrkRunner(wrk: tools.wrk, taskset: tools.taskset, script: tools.wrkScript, connections: settings.byteConnections)
        let (medians, failed) = try compare(
            "pushed 1 MiB segment by live URL \(snapshot.pushedPath) (nginx: \(OriginFixture.segmentPath)), \(settings.byteConnections) connections",
            [
                Contender(name: "headwater", url: headwaterBase + snapshot.pushedPath, server: headwater),
                Contender(name: "nginx", url: nginxBase + OriginFixture.segmentPath, server: nginx),
            ], load: runner, check: Self.segmentBytesCheck(size, connections: settings.byteConnections))
        rows.append(
            row("pushed 1 MiB segment by live URL, c\(settings.byteConnections)", (medians[0], medians[1], failed), .bytes, targets: Targets()))
    }
}
