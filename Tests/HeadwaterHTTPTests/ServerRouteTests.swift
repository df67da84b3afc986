import HeadwaterLiveWindow
import HeadwaterHTTP
import NIOHTTP1
import Testing

struct RouteCase: CustomTestStringConvertible, Sendable {
    let target: String
    let expected: Result<Route, Refusal>

    init(_ target: String, _ route: Route) {
        self.target = target
        self.expected = .success(route)
    }

    init(_ target: String, rejectedBecause reason: String) {
        self.target = target
        self.expected = .failure(Refusal(.badRequest, reason))
    }

    var testDescription: String { target }
}

let routeTable: [RouteCase] = [
    .init("/live/demo/master.m3u8", .multivariantPlaylist(channel: "demo")),
    .init("/live/demo/v1.m3u8", .mediaPlaylist(channel: "demo", rendition: "v1")),
    .init("/live/demo/v1.m3u8?_HLS_msn=12&_HLS_part=2", .mediaPlaylist(channel: "demo", rendition: "v1")),
    .init("/live/demo/v1.m3u8?_HLS_skip=YES", .mediaPlaylist(channel: "demo", rendition: "v1")),
    .init("/live/demo/audio%20en.m3u8", .mediaPlaylist(channel: "demo", rendition: "audio en")),
    .init("/live/demo/v1/seg42.ts", .segment(channel: "demo", rendition: "v1", name: "seg42.ts")),
    .init("/live/demo/v1/seg42.ts?token=abc", .segment(channel: "demo", rendition: "v1", name: "seg42.ts")),
    .init("/healthz", .health),
    .init("/healthz?verbose=1", .health),
    .init("/readyz", .readiness),
    .init("/metrics", .metrics),
    .init("/ingest/demo/v1.m3u8", .ingest(channel: "demo", path: ["v1.m3u8"])),
    .init("/ingest/demo/v1/seg42.ts", .ingest(channel: "demo", path: ["v1", "seg42.ts"])),
    .init("*", .server),
    .init("/", .staticFile(path: [])),
    .init("/index.html", .staticFile(path: ["index.html"])),
    .init("/js/app.js", .staticFile(path: ["js", "app.js"])),
    .init("/healthz/extra", .staticFile(path: ["healthz", "extra"])),
    .init("/metrics/extra", .staticFile(path: ["metrics", "extra"])),
    // Nothing can live here.
    .init("/.env", .notFound),
    .init("/js/.git/config", .notFound),
    .init("/docs/", .notFound),
    .init("/live", .notFound),
    .init("/live/demo", .notFound),
    .init("/live/demo/", .notFound),
    .init("/live/demo/.m3u8", .notFound),
    .init("/live/demo/v1.ts", .notFound),
    .init("/live/demo/v1/", .notFound),
    .init("/live/demo/v1/seg/extra", .notFound),
    .init("/ingest", .notFound),
    .init("/ingest/demo", .notFound),
    .init("/ingest/demo/", .notFound),
    // Hostile targets: RequestTarget's reason.
    .init("/live/../etc/passwd", rejectedBecause: "request path contains a '.' or '..' segment"),
    .init("/live/%2e%2e/x.m3u8", rejectedBecause: "request path contains a '.' or '..' segment"),
    .init("/static/.%2E/secret", rejectedBecause: "request path contains a '.' or '..' segment"),
    .init("/live/demo/v1/a%00.ts", rejectedBecause: "request path contains a control character"),
    .init("/live/demo/v1%2fx.m3u8", rejectedBecause: "request path contains an encoded '/' inside a segment"),
    .init("/a\\b", rejectedBecause: "request path contains a backslash"),
    .init(
        "http://example.com/live/demo/master.m3u8",
        rejectedBecause: "request target must be an absolute path starting with '/'"
    ),
    .init("//evil/x", rejectedBecause: "request path contains an empty segment ('//')"),
    // Malformed LL-HLS directives on playlists (HLS-RULES F10).
    .init("/live/demo/v1.m3u8?_HLS_msn=abc", rejectedBecause: "_HLS_msn must be a non-negative integer"),
    .init("/live/demo/v1.m3u8?_HLS_msn=-1", rejectedBecause: "_HLS_msn must be a non-negative integer"),
    .init("/live/demo/v1.m3u8?_HLS_part=1", rejectedBecause: "_HLS_part requires _HLS_msn"),
    .init("/live/demo/v1.m3u8?_HLS_msn=3&_HLS_part=x", rejectedBecause: "_HLS_part must be a non-negative integer"),
    .init("/live/demo/master.m3u8?_HLS_skip=maybe", rejectedBecause: "_HLS_skip must be YES or v2"),
]

@Suite("Route")
struct ServerRouteTests {
    @Test(arguments: routeTable)
    func parses(_ testCase: RouteCase) {
        #expect(Route.parse(testCase.target) == testCase.expected)
    }

    @Test func allowedMethods() {
        #expect(Route.multivariantPlaylist(channel: "d").allowedMethods == [.GET, .HEAD, .OPTIONS])
        #expect(Route.segment(channel: "d", rendition: "r", name: "s").allowedMethods == [.GET, .HEAD, .OPTIONS])
        #expect(Route.staticFile(path: []).allowedMethods == [.GET, .HEAD, .OPTIONS])
        #expect(Route.ingest(channel: "d", path: ["x"]).allowedMethods == [.PUT, .POST, .DELETE, .OPTIONS])
        #expect(Route.server.allowedMethods == [.OPTIONS])
    }

    @Test func templatesNeverCarryTheRawPath() {
        #expect(
            Route.segment(channel: "demo", rendition: "v1", name: "s.ts").template
                == "/live/{channel}/{rendition}/{segment}"
        )
        #expect(Route.staticFile(path: ["secret"]).template == "/{file}")
    }
}
