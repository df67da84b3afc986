import HeadwaterHLS
import HeadwaterLiveWindow
import HeadwaterStitching
import Yams

/// Reads the YAML of `ads.yaml` into an ``AdRuleSet``, loading the packages it names, and records
/// for each part of the rule set the key path and line it came from (``AdConfiguration/Location``)
/// so that ``AdRuleSet/validate(renditions:targetDuration:maximumSegmentDuration:)``'s issues can be
/// reported there. Syntax and loading problems are recorded as they are found; the rule set's own
/// checks (references, ranges) are left to `validate`, so each is written once.
struct AdConfigurationParser {
    private var reader: YAMLReader
    let baseDirectory: String
    let publicDirectory: String?
    private(set) var locations: [String: AdConfiguration.Location] = [:]
    private(set) var slateIsCreative = false
    /// The key frames of every creative's segments, by served URL.
    private(set) var keyFrames: [String: KeyFrameLocation] = [:]
    /// Creatives whose package did not load: references to them are not reported again.
    private(set) var failedCreatives: Set<String> = []
    /// The part length creatives and slate are cut into for low-latency stitched playlists (µs;
    /// `part_target`, default as the loop channel's), `nil` for whole segments only.
    private var partTarget: Int64? = HeadwaterConfiguration.Channel.Source.defaultPartTarget

    var problems: [ConfigurationError.Problem] { reader.problems }

    init(file: String, text: String, baseDirectory: String, publicDirectory: String?) {
        reader = YAMLReader(file: file, text: text)
        self.baseDirectory = baseDirectory
        self.publicDirectory = publicDirectory
    }

    /// The YAML keys of ``TrackingEvent``s.
    static let trackingKeys: [String: TrackingEvent] = [
        "impression": .impression, "first_quartile": .firstQuartile, "midpoint": .midpoint,
        "third_quartile": .thirdQuartile, "complete": .complete,
    ]

    mutating func parse(_ root: Node, version: UInt64) -> AdRuleSet {
        let entries = reader.mapping(root, "", allowed: ["part_target", "creatives", "slate", "pods", "rules"])
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        if let node = entry("part_target"), let setting = reader.partTarget(node, "part_target") {
            partTarget = setting.value
        }
        var creatives: [Creative] = []
        var slate = Creative(id: "slate", renditions: [:])
        var pods: [Pod] = []
        var rules: [AdRule] = []
        // Creatives first: the slate may name one, whatever the order of the keys.
        if let node = entry("creatives") {
            creatives = parseCreatives(node)
        } else {
            reader.fail(root, "creatives", "required: the ad creatives, by id")
        }
        if let node = entry("slate") {
            slate = parseSlate(node, creatives: creatives) ?? slate
        } else {
            reader.fail(root, "slate", "required: the package (or creative id) that fills breaks after the pod")
        }
        if let node = entry("pods") {
            pods = parsePods(node)
        } else {
            reader.fail(root, "pods", "required: the pods, by id")
        }
        if let node = entry("rules") {
            rules = parseRules(node)
        } else {
            reader.fail(root, "rules", "required: the rules that choose pods, in priority order")
        }
        return AdRuleSet(version: version, creatives: creatives, slate: slate, pods: pods, rules: rules)
    }

    // MARK: Creatives and slate

    private mutating func parseCreatives(_ node: Node) -> [Creative] {
        var creatives: [Creative] = []
        for (id, value, keyNode) in reader.mapping(node, "creatives") {
            let path = "creatives.\(id)"
            guard Naming.isValid(id) else {
                reader.fail(keyNode, path, "creative ids are letters, digits, '-' and '_'")
                continue
            }
            let issuePath = "creatives[\(id.debugDescription)]"
            locations[issuePath] = .init(keyPath: path, line: keyNode.mark?.line)
            let entries = reader.mapping(value, path, allowed: ["package", "url", "tracking"])
            var tracking: [TrackingEvent: [String]] = [:]
            if let trackingNode = entries.first(where: { $0.key == "tracking" })?.value {
                tracking = parseTracking(trackingNode, path: "\(path).tracking", issuePath: "\(issuePath).tracking")
            }
            let renditions = loadPackage(
                entries, node: value, path: path, packagePath: "\(path).package", issuePath: issuePath)
            if renditions == nil { failedCreatives.insert(id) }
            creatives.append(Creative(id: id, renditions: renditions ?? [:], tracking: tracking))
        }
        return creatives
    }

    private mutating func parseTracking(_ node: Node, path: String, issuePath: String) -> [TrackingEvent: [String]] {
        var tracking: [TrackingEvent: [String]] = [:]
        for (key, value, _) in reader.mapping(node, path, allowed: Set(Self.trackingKeys.keys)) {
            guard let event = Self.trackingKeys[key] else { continue }
            let urls = strings(value, "\(path).\(key)")
            for (index, url) in urls.enumerated() {
                locations["\(issuePath).\(event.rawValue)[\(index)]"] = .init(keyPath: url.path, line: url.node.mark?.line)
            }
            tracking[event] = urls.map(\.text)
        }
        return tracking
    }

    /// `slate: <creative id>`, `slate: <package path>` or `slate: {package: …, url: …}`.
    private mutating func parseSlate(_ node: Node, creatives: [Creative]) -> Creative? {
        if case .scalar(let scalar) = node, let creative = creatives.first(where: { $0.id == scalar.string }) {
            slateIsCreative = true
            locations["slate"] = .init(keyPath: "slate", line: node.mark?.line)
            return Creative(id: creative.id, renditions: creative.renditions)
        }
        locations["slate"] = .init(keyPath: "slate", line: node.mark?.line)
        let renditions: [String: CreativeRendition]?
        if case .scalar = node {
            guard let text = reader.string(node, "slate") else { return nil }
            renditions = loadPackage(path: text, pathNode: node, url: nil, packagePath: "slate", urlPath: "slate.url", issuePath: "slate")
        } else {
            let entries = reader.mapping(node, "slate", allowed: ["package", "url"])
            renditions = loadPackage(entries, node: node, path: "slate", packagePath: "slate.package", issuePath: "slate")
        }
        return renditions.map { Creative(id: "slate", renditions: $0) }
    }

    /// The renditions of the package named by `package` (and `url`) among `entries`.
    private mutating func loadPackage(
        _ entries: [(key: String, value: Node, keyNode: Node)], node: Node, path: String, packagePath: String,
        issuePath: String
    ) -> [String: CreativeRendition]? {
        let url = entries.first { $0.key == "url" }.flatMap { entry in
            reader.string(entry.value, "\(path).url").map { (text: $0, node: entry.value) }
        }
        guard let package = entries.first(where: { $0.key == "package" }) else {
            reader.fail(node, packagePath, "required: the creative's VOD multivariant playlist (e.g. ../Public/ads/ad1/master.m3u8)")
            return nil
        }
        guard let text = reader.string(package.value, packagePath) else { return nil }
        return loadPackage(
            path: text, pathNode: package.value, url: url, packagePath: packagePath, urlPath: "\(path).url",
            issuePath: issuePath)
    }

    private mutating func loadPackage(
        path text: String, pathNode: Node, url: (text: String, node: Node)?, packagePath: String, urlPath: String,
        issuePath: String
    ) -> [String: CreativeRendition]? {
        let multivariant = HeadwaterConfiguration.resolve(text, against: baseDirectory)
        guard let prefix = urlPrefix(for: multivariant, shown: text, pathNode: pathNode, url: url, packagePath: packagePath, urlPath: urlPath)
        else { return nil }
        let package: CreativePackage
        do {
            package = try CreativePackage.load(multivariantPath: multivariant, urlPrefix: prefix, partTarget: partTarget)
        } catch {
            reader.fail(pathNode, packagePath, error.message)
            return nil
        }
        let line = pathNode.mark?.line
        for rendition in package.renditions.values { keyFrames.merge(rendition.keyFrames) { first, _ in first } }
        locations["\(issuePath).renditions"] = .init(keyPath: packagePath, line: line)
        for (name, rendition) in package.renditions {
            let renditionPath = "\(issuePath).renditions[\(name.debugDescription)]"
            locations[renditionPath] = .init(keyPath: packagePath, line: line, detail: "\(rendition.playlist): ")
            for (index, segmentLine) in rendition.lines.enumerated() {
                locations["\(renditionPath).segments[\(index)]"] = .init(
                    keyPath: packagePath, line: line, detail: "\(rendition.playlist):\(segmentLine): ")
            }
        }
        return package.renditions.mapValues(\.media)
    }

    /// `url` as given (ending with `/`), or the package directory's path under `server.public`.
    private mutating func urlPrefix(
        for multivariant: String, shown: String, pathNode: Node, url: (text: String, node: Node)?, packagePath: String,
        urlPath: String
    ) -> String? {
        if let url {
            let text = url.text
            let shapeOK = text.hasPrefix("/") || text.hasPrefix("http://") || text.hasPrefix("https://")
            let bytesOK = !text.utf8.contains { $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") }
            guard shapeOK, bytesOK, !text.contains("?"), !text.contains("#") else {
                reader.fail(
                    url.node, urlPath,
                    "must be a root-relative path (/ads/ad1/) or an http:// or https:// URL, without spaces, quotes, query or fragment")
                return nil
            }
            return text.hasSuffix("/") ? text : text + "/"
        }
        guard let publicDirectory else {
            reader.fail(pathNode, packagePath, "no url given, and no server.public to derive it from; set url to where the package's directory is served")
            return nil
        }
        let root = PathNormalization.absolute(publicDirectory)
        let directory = PathNormalization.directory(of: PathNormalization.absolute(multivariant))
        guard directory.hasPrefix(root == "/" ? "/" : root + "/") else {
            reader.fail(
                pathNode, packagePath,
                "\(shown) is not under server.public (\(publicDirectory)); move it there or set url to where its directory is served")
            return nil
        }
        let relative = directory.dropFirst(root == "/" ? 1 : root.count + 1)
        return "/" + relative + "/"
    }

    // MARK: Pods

    private mutating func parsePods(_ node: Node) -> [Pod] {
        var pods: [Pod] = []
        for (id, value, keyNode) in reader.mapping(node, "pods") {
            let path = "pods.\(id)"
            guard Naming.isValid(id) else {
                reader.fail(keyNode, path, "pod ids are letters, digits, '-' and '_'")
                continue
            }
            let issuePath = "pods[\(pods.count)]"
            locations[issuePath] = .init(keyPath: path, line: keyNode.mark?.line)
            var pod = Pod(id: id, ads: [])
            let entries = reader.mapping(value, path, allowed: ["ads", "weight", "cap"])
            if let ads = entries.first(where: { $0.key == "ads" })?.value {
                pod.ads = parseAds(ads, path: "\(path).ads", issuePath: "\(issuePath).ads")
            } else {
                reader.fail(value, "\(path).ads", "required: the creatives the pod plays, in order")
            }
            if let weight = entries.first(where: { $0.key == "weight" })?.value {
                locations["\(issuePath).weight"] = .init(keyPath: "\(path).weight", line: weight.mark?.line)
                if let number = integer(weight, "\(path).weight") { pod.weight = number }
            }
            if let cap = entries.first(where: { $0.key == "cap" })?.value {
                pod.cap = parseCap(cap, path: "\(path).cap", issuePath: "\(issuePath).cap")
            }
            pods.append(pod)
        }
        return pods
    }

    /// Each item: a creative id (the ad id is the creative id) or `{creative: <id>, id: <ad id>}`.
    private mutating func parseAds(_ node: Node, path: String, issuePath: String) -> [Pod.Ad] {
        guard case .sequence(let sequence) = node, !sequence.isEmpty else {
            reader.fail(node, path, "must be a non-empty list of creative ids")
            return []
        }
        var ads: [Pod.Ad] = []
        for (index, item) in sequence.enumerated() {
            let itemPath = "\(path)[\(index)]"
            locations["\(issuePath)[\(ads.count)]"] = .init(keyPath: itemPath, line: item.mark?.line)
            if case .mapping = item {
                let entries = reader.mapping(item, itemPath, allowed: ["creative", "id"])
                guard let creative = entries.first(where: { $0.key == "creative" }) else {
                    reader.fail(item, "\(itemPath).creative", "required: the creative id")
                    continue
                }
                guard let creativeID = reader.string(creative.value, "\(itemPath).creative") else { continue }
                let adID = entries.first { $0.key == "id" }.flatMap { reader.string($0.value, "\(itemPath).id") }
                ads.append(Pod.Ad(id: adID ?? creativeID, creativeID: creativeID))
            } else if let creativeID = reader.string(item, itemPath) {
                ads.append(Pod.Ad(id: creativeID, creativeID: creativeID))
            }
        }
        return ads
    }

    private mutating func parseCap(_ node: Node, path: String, issuePath: String) -> FrequencyCap? {
        locations[issuePath] = .init(keyPath: path, line: node.mark?.line)
        let entries = reader.mapping(node, path, allowed: ["count", "per"])
        guard case .mapping = node else { return nil }
        var count: Int?
        var period: HLSDuration?
        for (key, value, _) in entries {
            locations["\(issuePath).\(key)"] = .init(keyPath: "\(path).\(key)", line: value.mark?.line)
            if key == "count" {
                count = integer(value, "\(path).count")
            } else {
                period = duration(value, "\(path).per")
            }
        }
        for key in ["count", "per"] where !entries.contains(where: { $0.key == key }) {
            reader.fail(node, "\(path).\(key)", key == "count" ? "required: shows allowed per period" : "required: the period, e.g. 600 or 10m")
        }
        guard let count, let period else { return nil }
        return FrequencyCap(count: count, per: period)
    }

    // MARK: Rules

    private mutating func parseRules(_ node: Node) -> [AdRule] {
        guard case .sequence(let sequence) = node else {
            reader.fail(node, "rules", "must be a list of rules (- id: …), in priority order")
            return []
        }
        var rules: [AdRule] = []
        for (index, item) in sequence.enumerated() {
            let path = "rules[\(index)]"
            let issuePath = "rules[\(rules.count)]"
            locations[issuePath] = .init(keyPath: path, line: item.mark?.line)
            let entries = reader.mapping(item, path, allowed: ["id", "when", "pods"])
            guard case .mapping = item else { continue }
            var rule = AdRule(id: "", podIDs: [])
            if let id = entries.first(where: { $0.key == "id" })?.value {
                locations["\(issuePath).id"] = .init(keyPath: "\(path).id", line: id.mark?.line)
                if let text = reader.string(id, "\(path).id") {
                    if Naming.isValid(text) {
                        rule.id = text
                    } else {
                        reader.fail(id, "\(path).id", "rule ids are letters, digits, '-' and '_'")
                    }
                }
            } else {
                reader.fail(item, "\(path).id", "required: names the rule in logs and decisions")
            }
            if let when = entries.first(where: { $0.key == "when" })?.value {
                parseConditions(when, into: &rule, path: "\(path).when", issuePath: issuePath)
            }
            if let pods = entries.first(where: { $0.key == "pods" })?.value {
                if case .sequence(let items) = pods {
                    for (number, item) in items.enumerated() {
                        let itemPath = "\(path).pods[\(number)]"
                        locations["\(issuePath).pods[\(rule.podIDs.count)]"] = .init(keyPath: itemPath, line: item.mark?.line)
                        if let podID = reader.string(item, itemPath) { rule.podIDs.append(podID) }
                    }
                } else {
                    reader.fail(pods, "\(path).pods", "must be a list of pod ids (empty for slate only)")
                }
            } else {
                reader.fail(item, "\(path).pods", "required: the pods the rule rotates among ([] for slate only)")
            }
            rules.append(rule)
        }
        return rules
    }

    /// `hours` (UTC hour ranges) and targeting conditions: `channel`, `header.<name>`, anything else a
    /// query parameter.
    private mutating func parseConditions(_ node: Node, into rule: inout AdRule, path: String, issuePath: String) {
        for (key, value, keyNode) in reader.mapping(node, path) {
            let keyPath = "\(path).\(key)"
            if key == "hours" {
                let list: Bool
                if case .sequence = value { list = true } else { list = false }
                for (index, range) in strings(value, keyPath).enumerated() {
                    guard let parsed = HourRange(range.text) else {
                        reader.fail(range.node, range.path, "must be HH-HH in UTC, e.g. 06-22 (22-06 wraps past midnight, 00-24 is all day), got \"\(range.text)\"")
                        continue
                    }
                    locations["\(issuePath).hours[\(rule.hours.count)]"] = .init(
                        keyPath: list ? "\(keyPath)[\(index)]" : keyPath, line: range.node.mark?.line)
                    rule.hours.append(parsed)
                }
            } else {
                locations["\(issuePath).conditions[\(key.debugDescription)]"] = .init(keyPath: keyPath, line: keyNode.mark?.line)
                rule.conditions[key] = Set(strings(value, keyPath).map(\.text))
            }
        }
    }

    // MARK: Values

    /// A scalar, or a list of scalars.
    private mutating func strings(_ node: Node, _ path: String) -> [(text: String, node: Node, path: String)] {
        switch node {
        case .scalar:
            return reader.string(node, path).map { [($0, node, path)] } ?? []
        case .sequence(let sequence):
            return sequence.enumerated().compactMap { index, item in
                let itemPath = "\(path)[\(index)]"
                return reader.string(item, itemPath).map { ($0, item, itemPath) }
            }
        default:
            reader.fail(node, path, "must be a string or a list of strings")
            return []
        }
    }

    private mutating func integer(_ node: Node, _ path: String) -> Int? {
        guard case .scalar(let scalar) = node, let value = Int(scalar.string) else {
            reader.fail(node, path, "must be an integer")
            return nil
        }
        return value
    }

    /// Seconds (`600`) or a number with a unit: `30s`, `10m`, `1h`, `1d`.
    private mutating func duration(_ node: Node, _ path: String) -> HLSDuration? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if case .scalar(let scalar) = node {
            var text = scalar.string
            var unit: Int64 = 1
            if let last = text.last, let multiplier = units[last] {
                unit = multiplier
                text.removeLast()
            }
            if let number = Int64(text), number >= 0, number <= 1_000_000_000 { return .seconds(number * unit) }
        }
        reader.fail(node, path, "must be a duration: seconds (600) or a number with s, m, h or d (30s, 10m, 1h, 1d)")
        return nil
    }
}
