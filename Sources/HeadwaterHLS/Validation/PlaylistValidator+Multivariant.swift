/// Multivariant playlist rules: renditions (E6–E8), variants (E2–E5, E9) and session tags
/// (E10–E12).
extension PlaylistValidator {
    static let renditionTypes: Set<String> = ["AUDIO", "VIDEO", "SUBTITLES", "CLOSED-CAPTIONS"]

    static func checkRenditions(_ playlist: MultivariantPlaylist, into report: inout IssueReport) {
        let version = playlist.version ?? 1
        for (index, rendition) in playlist.renditions.enumerated() {
            let here = PlaylistLocation.rendition(index)
            let attributes = rendition.attributes
            let type = rendition.type
            let name = "EXT-X-MEDIA \"\(rendition.name)\""
            guard renditionTypes.contains(type) else {
                report.error("E7", "\(name) TYPE=\(type) is not AUDIO, VIDEO, SUBTITLES or CLOSED-CAPTIONS", at: here)
                continue
            }
            for flag in ["DEFAULT", "AUTOSELECT", "FORCED"] {
                if let value = attributes.enumerated(flag), value != "YES", value != "NO" {
                    report.error("E7", "\(name) \(flag)=\(value) must be YES or NO", at: here)
                }
            }
            if attributes.yesNo("DEFAULT") == true, attributes.yesNo("AUTOSELECT") == false {
                report.error(
                    "E7", "\(name) has DEFAULT=YES with AUTOSELECT=NO; AUTOSELECT must be YES when DEFAULT=YES",
                    at: here)
            }
            if attributes.contains("FORCED"), type != "SUBTITLES" {
                report.error("E7", "\(name) has FORCED on TYPE=\(type); FORCED is only for SUBTITLES", at: here)
            }
            if type == "CLOSED-CAPTIONS" {
                if let instream = attributes.string("INSTREAM-ID") {
                    if !isInstreamID(instream) {
                        report.error(
                            "E7", "\(name) INSTREAM-ID=\"\(instream)\" is not CC1–CC4 or SERVICE1–SERVICE63", at: here)
                    }
                } else {
                    report.error("E7", "\(name) is CLOSED-CAPTIONS without INSTREAM-ID; it is required", at: here)
                }
                if rendition.uri != nil {
                    report.error(
                        "E6", "\(name) is CLOSED-CAPTIONS with a URI; closed captions must not have one", at: here)
                }
            } else if attributes.contains("INSTREAM-ID"), version < 13 {
                report.error(
                    "E7", "\(name) has INSTREAM-ID on TYPE=\(type); INSTREAM-ID is only for CLOSED-CAPTIONS", at: here)
            }
            if type == "SUBTITLES", rendition.uri == nil {
                report.error("E6", "\(name) is SUBTITLES without URI; subtitles renditions need one", at: here)
            }
            if type != "AUDIO" {
                let audioOnly = ["CHANNELS", "BIT-DEPTH", "SAMPLE-RATE"].filter(attributes.contains)
                if !audioOnly.isEmpty {
                    report.error(
                        "E7",
                        "\(name) has \(audioOnly.joined(separator: ", ")) on TYPE=\(type); they are only for AUDIO",
                        at: here)
                }
            } else if !attributes.contains("CHANNELS") {
                report.warning(
                    "E7", "\(name) is AUDIO without CHANNELS; every audio rendition should state it", at: here)
            }
        }

        // E8: per group, distinct NAMEs and at most one DEFAULT=YES.
        var groups: [String: [Int]] = [:]
        var order: [String] = []
        for (index, rendition) in playlist.renditions.enumerated() {
            let key = "\(rendition.type) \"\(rendition.groupID)\""
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(index)
        }
        for key in order {
            let members = groups[key]!
            var names: [String: Int] = [:]
            for index in members {
                let name = playlist.renditions[index].name
                if let earlier = names[name] {
                    report.error(
                        "E8",
                        "EXT-X-MEDIA NAME \"\(name)\" appears twice in group \(key) (renditions \(earlier) and \(index)); names must be distinct",
                        at: .rendition(index))
                } else {
                    names[name] = index
                }
            }
            let defaults = members.filter { playlist.renditions[$0].isDefault }
            if defaults.count > 1 {
                report.error(
                    "E8", "group \(key) has \(defaults.count) renditions with DEFAULT=YES; at most one is allowed",
                    at: .rendition(defaults[1]))
            }
        }
    }

    private static func isInstreamID(_ value: String) -> Bool {
        if value.hasPrefix("CC"), let n = Int(value.dropFirst(2)), (1...4).contains(n), value.count == 3 { return true }
        if value.hasPrefix("SERVICE"), let n = Int(value.dropFirst(7)), (1...63).contains(n),
            !value.dropFirst(7).hasPrefix("0")
        {
            return true
        }
        return false
    }

    static func checkVariants(_ playlist: MultivariantPlaylist, into report: inout IssueReport) {
        var groupTypes: [String: Set<String>] = [:]  // GROUP-ID → TYPEs
        for rendition in playlist.renditions { groupTypes[rendition.groupID, default: []].insert(rendition.type) }
        let noneCaptions = playlist.variants.filter { $0.attributes["CLOSED-CAPTIONS"] == .token("NONE") }.count
        let scored = playlist.variants.filter { $0.attributes.contains("SCORE") }.count

        func checkGroupReference(_ attributes: AttributeList, at here: PlaylistLocation, into report: inout IssueReport)
        {
            for (attribute, type) in [("AUDIO", "AUDIO"), ("VIDEO", "VIDEO"), ("SUBTITLES", "SUBTITLES")] {
                guard let group = attributes.string(attribute) else { continue }
                if groupTypes[group]?.contains(type) != true {
                    report.error(
                        "E5", "\(attribute)=\"\(group)\" names no EXT-X-MEDIA group of TYPE=\(type)", at: here)
                }
            }
        }

        for (index, variant) in playlist.variants.enumerated() {
            let here = PlaylistLocation.variant(index)
            let attributes = variant.attributes
            checkGroupReference(attributes, at: here, into: &report)
            switch attributes["CLOSED-CAPTIONS"] {
            case .quoted(let group)?:
                if groupTypes[group]?.contains("CLOSED-CAPTIONS") != true {
                    report.error(
                        "E5", "CLOSED-CAPTIONS=\"\(group)\" names no EXT-X-MEDIA group of TYPE=CLOSED-CAPTIONS",
                        at: here)
                }
                if noneCaptions > 0 {
                    report.error(
                        "E5",
                        "CLOSED-CAPTIONS=\"\(group)\" while other variants use CLOSED-CAPTIONS=NONE; if one uses NONE, all must",
                        at: here)
                }
            case nil:
                if noneCaptions > 0 {
                    report.error(
                        "E5",
                        "no CLOSED-CAPTIONS while other variants use CLOSED-CAPTIONS=NONE; if one uses NONE, all must",
                        at: here)
                }
            default:
                break
            }
            if !attributes.contains("CODECS") {
                report.warning(
                    "E3", "EXT-X-STREAM-INF \(variant.uri) has no CODECS; every variant should list its codecs",
                    at: here)
            }
            if let average = variant.averageBandwidth, average > variant.bandwidth {
                report.warning(
                    "E2",
                    "AVERAGE-BANDWIDTH \(average) is above BANDWIDTH \(variant.bandwidth); the peak cannot be below the average",
                    at: here)
            }
            checkVariantEnumerations(attributes, at: here, into: &report)
            if scored > 0, !attributes.contains("SCORE") {
                report.warning(
                    "E4", "EXT-X-STREAM-INF \(variant.uri) has no SCORE while other variants do; all should", at: here)
            }
        }

        for (index, variant) in playlist.iFrameVariants.enumerated() {
            let here = PlaylistLocation.iFrameVariant(index)
            checkGroupReference(variant.attributes, at: here, into: &report)
            checkVariantEnumerations(variant.attributes, at: here, into: &report)
            let undefined = ["FRAME-RATE", "AUDIO", "SUBTITLES", "CLOSED-CAPTIONS"].filter(variant.attributes.contains)
            if !undefined.isEmpty {
                report.warning(
                    "E9",
                    "EXT-X-I-FRAME-STREAM-INF \(variant.uri) has \(undefined.joined(separator: ", ")), which are not defined for I-frame variants",
                    at: here)
            }
        }
    }

    /// E4: HDCP-LEVEL and VIDEO-RANGE values.
    private static func checkVariantEnumerations(
        _ attributes: AttributeList, at here: PlaylistLocation, into report: inout IssueReport
    ) {
        if let hdcp = attributes.enumerated("HDCP-LEVEL"), !["TYPE-0", "TYPE-1", "NONE"].contains(hdcp) {
            report.error("E4", "HDCP-LEVEL=\(hdcp) must be TYPE-0, TYPE-1 or NONE", at: here)
        }
        if let range = attributes.enumerated("VIDEO-RANGE"), !["SDR", "HLG", "PQ"].contains(range) {
            report.error("E4", "VIDEO-RANGE=\(range) must be SDR, HLG or PQ", at: here)
        }
    }

    static func checkSessionTags(_ playlist: MultivariantPlaylist, into report: inout IssueReport) {
        // E10: SESSION-DATA.
        let dataHere = PlaylistLocation.tag("EXT-X-SESSION-DATA")
        var seen: Set<[String?]> = []
        for data in playlist.sessionData {
            let attributes = data.attributes
            let name = "EXT-X-SESSION-DATA \"\(data.dataID)\""
            switch (attributes.contains("VALUE"), attributes.contains("URI")) {
            case (true, true): report.error("E10", "\(name) has both VALUE and URI; it needs exactly one", at: dataHere)
            case (false, false):
                report.error("E10", "\(name) has neither VALUE nor URI; it needs exactly one", at: dataHere)
            default: break
            }
            if let format = attributes.enumerated("FORMAT"), format != "JSON", format != "RAW" {
                report.error("E10", "\(name) FORMAT=\(format) must be JSON or RAW", at: dataHere)
            }
            let language = attributes.string("LANGUAGE")
            if !seen.insert([data.dataID, language]).inserted {
                report.error(
                    "E10",
                    "\(name) appears twice with LANGUAGE \(language.map { "\"\($0)\"" } ?? "absent"); DATA-ID and LANGUAGE must be unique together",
                    at: dataHere)
            }
        }

        // E11: SESSION-KEY.
        let keyHere = PlaylistLocation.tag("EXT-X-SESSION-KEY")
        var keys: Set<AttributeList> = []
        for sessionKey in playlist.sessionKeys {
            let key = Key(attributes: sessionKey.attributes)
            if key.method == "NONE" {
                report.error("E11", "EXT-X-SESSION-KEY METHOD=NONE; a session key must name a real method", at: keyHere)
            } else {
                checkKey(key, rule: "E11", at: keyHere, into: &report)
            }
            if !keys.insert(sessionKey.attributes).inserted {
                report.error(
                    "E11", "EXT-X-SESSION-KEY \(key.uri ?? "") appears twice with identical attributes", at: keyHere)
            }
        }

        // E12: CONTENT-STEERING PATHWAY-ID names a pathway of some variant.
        if let steering = playlist.contentSteering, let pathway = steering.attributes.string("PATHWAY-ID") {
            let pathways = Set(playlist.variants.map { $0.attributes.string("PATHWAY-ID") ?? "." })  // "." is the default
            if !pathways.contains(pathway) {
                report.error(
                    "E12", "EXT-X-CONTENT-STEERING PATHWAY-ID=\"\(pathway)\" matches no variant's PATHWAY-ID",
                    at: .tag("EXT-X-CONTENT-STEERING"))
            }
        }
    }
}
