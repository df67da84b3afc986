import Foundation
public import HeadwaterHLS
public import HeadwaterLiveWindow
public import HeadwaterStitching
import Yams

/// The ad configuration: `Config/ads.yaml` — creatives (VOD packages on disk), the slate, pods and
/// the rules that pick them (every key is documented in `Config/README.md`) — as one
/// ``AdRuleSet`` version, together with where each of its parts was written, so that every problem
/// found later (``validate(channel:renditions:targetDuration:maximumSegmentDuration:)``) is reported
/// as `file:line: key.path: message` like the rest of the configuration.
///
/// Loading checks what does not depend on a channel: the YAML (unknown keys are errors), each
/// package (it parses, is VOD, its files exist inside it), references between creatives, pods and
/// rules, frequency caps, hours, tracking URLs. Each channel that uses the ads then checks the
/// creatives against its own renditions and target duration.
public struct AdConfiguration: Sendable, Hashable {
    /// The rule set, with the version given to ``load(file:publicDirectory:version:)``.
    public var ruleSet: AdRuleSet
    /// The file as given (the `file` of every problem).
    public var file: String
    /// ``RuleSetIssue/path`` → where it was written; a path not listed maps through its parent.
    var locations: [String: Location]
    /// The slate is one of the creatives: its problems are reported once, under `creatives`.
    var slateIsCreative: Bool
    /// The first key frame of each creative's MPEG-TS segments, by the URL stitched playlists list
    /// it at: for stitched I-frame playlists.
    public var keyFrames: [String: KeyFrameLocation] = [:]

    struct Location: Sendable, Hashable {
        var keyPath: String
        var line: Int?
        /// Prepended to the message (the media playlist and line inside a package).
        var detail: String = ""
    }

    /// Reads `file`; relative paths in it resolve against its directory. `publicDirectory` is the
    /// server's static root (`server.public`), under which each package's URL defaults to its path.
    public static func load(file: String, publicDirectory: String?, version: UInt64) throws(ConfigurationError)
        -> AdConfiguration
    {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigurationError(problems: [.init(file: file, line: nil, keyPath: "", message: "cannot read the ad configuration file")])
        }
        return try parse(
            String(decoding: data, as: UTF8.self), file: file,
            baseDirectory: PathNormalization.directory(of: file), publicDirectory: publicDirectory, version: version)
    }

    /// Parses `text` (the contents of `file`) and loads the packages it names. Throws every problem
    /// found at once.
    public static func parse(
        _ text: String, file: String, baseDirectory: String, publicDirectory: String?, version: UInt64
    ) throws(ConfigurationError) -> AdConfiguration {
        let root = try YAMLReader.compose(text, file: file)
        var parser = AdConfigurationParser(file: file, text: text, baseDirectory: baseDirectory, publicDirectory: publicDirectory)
        let ruleSet = parser.parse(root, version: version)
        var configuration = AdConfiguration(
            ruleSet: ruleSet, file: file, locations: parser.locations, slateIsCreative: parser.slateIsCreative)
        configuration.keyFrames = parser.keyFrames
        // What does not depend on a channel's renditions: references, caps, hours, tracking, ids.
        var problems = parser.problems
        let structural = ruleSet.validate(renditions: [], targetDuration: Int.max)
            .filter { issue in !parser.failedCreatives.contains { issue.message == "unknown creative \($0.debugDescription)" } }
        problems += configuration.problems(for: structural, channel: nil)
        if !problems.isEmpty { throw ConfigurationError(problems: problems) }
        return configuration
    }

    /// Every problem in using these ads on `channel`, whose renditions are `renditions` (the content's
    /// names, `v0`, `audio-alt`, …) and whose EXT-X-TARGETDURATION is `targetDuration`: each creative
    /// and the slate must have every rendition, segmented alike in all of them, with EXTINFs that
    /// round to at most the target duration (and none above `maximumSegmentDuration`, when given:
    /// pass the content's nominal segment duration so pods never run ahead of the content).
    public func validate(
        channel: String, renditions: [String], targetDuration: Int, maximumSegmentDuration: HLSDuration?
    ) -> [ConfigurationError.Problem] {
        let issues = ruleSet.validate(
            renditions: renditions, targetDuration: targetDuration, maximumSegmentDuration: maximumSegmentDuration)
        return problems(for: issues, channel: channel)
    }

    /// The problems for `issues`, at the key paths and lines they were written at.
    func problems(for issues: [RuleSetIssue], channel: String?) -> [ConfigurationError.Problem] {
        let suffix = channel.map { " (channel \($0.debugDescription))" } ?? ""
        var problems: [ConfigurationError.Problem] = []
        for issue in issues {
            if slateIsCreative, issue.path == "slate" || issue.path.hasPrefix("slate.") { continue }
            var path: Substring = Substring(issue.path)
            var location: Location?
            while location == nil {
                location = locations[String(path)]
                guard location == nil, let parent = Self.parent(of: path) else { break }
                path = parent
            }
            let problem = ConfigurationError.Problem(
                file: file, line: location?.line, keyPath: location?.keyPath ?? issue.path,
                message: (location?.detail ?? "") + issue.message + suffix)
            if !problems.contains(problem) { problems.append(problem) }
        }
        return problems
    }

    /// `a.b["c.d"][2]` → `a.b["c.d"]` → `a.b` → `a`; `nil` for a single component.
    static func parent(of path: Substring) -> Substring? {
        var quoted = false
        var escaped = false
        var boundary: Substring.Index?
        var index = path.startIndex
        while index < path.endIndex {
            let character = path[index]
            if escaped {
                escaped = false
            } else if quoted {
                if character == "\\" { escaped = true } else if character == "\"" { quoted = false }
            } else if character == "\"" {
                quoted = true
            } else if (character == "." || character == "["), index > path.startIndex {
                boundary = index
            }
            index = path.index(after: index)
        }
        return boundary.map { path[..<$0] }
    }
}
