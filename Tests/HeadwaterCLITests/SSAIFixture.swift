import Foundation
import Testing

/// A temporary site for the ad-insertion tests: a config whose demo channel has a break every 20 s
/// (8 s long), an `ads.yaml` over the committed demo creatives with tracking beacons to a local
/// endpoint, and a public directory with the creatives (copied: a link out of the public
/// directory is never followed) and any test pages.
struct SSAIFixture {
    let directory: URL
    let site: URL
    let config: URL
    let ads: URL

    static let sessionKey = "test-session-key-0123456789abcdef"
    static let adminToken = "test-admin-token"

    init(beaconPort: Int? = nil, every: Int = 20, duration: Int = 8, markers: String = "daterange") throws {
        let repository = RealClients.ServeCommandTests.repository
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hw-ssai-\(UUID())")
        site = directory.appendingPathComponent("site")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        for name in ["ads", "slate"] {
            try FileManager.default.copyItem(
                at: repository.appendingPathComponent("Public/\(name)"), to: site.appendingPathComponent(name))
        }
        let publicAds = repository.appendingPathComponent("Public/ads").path
        let tracking = beaconPort.map { port in
            """
                tracking:
                  impression: ["http://127.0.0.1:\(port)/impression?session={session}&ad={ad}"]
                  midpoint: ["http://127.0.0.1:\(port)/midpoint?session={session}&ad={ad}"]
                  complete: ["http://127.0.0.1:\(port)/complete?session={session}&ad={ad}"]
            """
        } ?? ""
        ads = directory.appendingPathComponent("ads.yaml")
        try """
            creatives:
              ad1:
                package: \(publicAds)/ad1/master.m3u8
                url: /ads/ad1/
            \(tracking)
              ad2:
                package: \(publicAds)/ad2/master.m3u8
                url: /ads/ad2/
              ad3:
                package: \(publicAds)/ad3/master.m3u8
                url: /ads/ad3/
              ad4:
                package: \(publicAds)/ad4/master.m3u8
                url: /ads/ad4/
            slate: {package: \(repository.path)/Public/slate/master.m3u8, url: /slate/}
            pods:
              tv: {ads: [ad1]}
              phone: {ads: [ad3, ad4]}
              everyone: {ads: [ad2]}
            rules:
              - id: tv
                when: {device: [tv]}
                pods: [tv]
              - id: phone
                when: {device: [phone]}
                pods: [phone]
              - id: default
                pods: [everyone]
            """.write(to: ads, atomically: true, encoding: .utf8)
        config = directory.appendingPathComponent("headwater.yaml")
        try """
            server:
              public: \(site.path)
              cors: true
              ads: \(ads.path)
            channels:
              demo:
                source:
                  type: loop
                  package: \(repository.path)/Public/demo/master.m3u8
                window: 30
                ads:
                  markers: \(markers)
                  schedule: {every: \(every), duration: \(duration)}
            """.write(to: config, atomically: true, encoding: .utf8)
    }

    /// What `serve` needs in its environment: the shared session key and the admin token.
    static let environment = ["HEADWATER_SESSION_KEY": sessionKey, "HEADWATER_ADMIN_TOKEN": adminToken]

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// The media playlist URIs (with their session tokens) of a session's multivariant playlist.
    static func mediaURIs(_ multivariant: String) -> [String] {
        multivariant.split(separator: "\n").compactMap { line -> String? in
            if line.hasPrefix("#EXT-X-MEDIA:"), let range = line.range(of: "URI=\"") {
                return String(line[range.upperBound...].prefix { $0 != "\"" })
            }
            return line.hasPrefix("#") || line.isEmpty ? nil : String(line)
        }
    }

    /// The body of an HTTP/1.0 response text.
    static func body(_ response: String) -> String {
        response.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    }
}
