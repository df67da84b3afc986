/// EXT-X-DATERANGE rules of one playlist (D1–D14, A7 for SCTE35-* values, H7) and the per-ID view
/// of date ranges that the live-update checker also uses.
extension PlaylistValidator {
    static func checkDateRanges(_ playlist: MediaPlaylist, into report: inout IssueReport) {
        let groups = DateRangeGroup.groups(in: playlist)
        guard let first = groups.first else { return }
        // A delta update (EXT-X-SKIP) leaves out the skipped segments' tags: the PROGRAM-DATE-TIME
        // (D7) and a range's first tag with its START-DATE (D2) may be among them.
        let isDelta = playlist.skip != nil
        if !isDelta, !playlist.segments.contains(where: { $0.tags.programDateTime != nil }) {
            report.error(
                "D7",
                "EXT-X-DATERANGE \"\(first.id)\" in a playlist without EXT-X-PROGRAM-DATE-TIME; date ranges need at least one",
                at: .dateRange(id: first.id))
        }
        for group in groups { check(group, isDelta: isDelta, into: &report) }
    }

    private static func check(_ group: DateRangeGroup, isDelta: Bool, into report: inout IssueReport) {
        let here = PlaylistLocation.dateRange(id: group.id)
        let name = "EXT-X-DATERANGE \"\(group.id)\""
        if group.id.isEmpty {
            report.error("D1", "EXT-X-DATERANGE with an empty ID; ID must identify the range", at: here)
        }

        // D2: the first tag of an ID carries START-DATE.
        if group.tags[0].startDate == nil, !isDelta {
            let later = group.tags.dropFirst().contains { $0.startDate != nil } ? " (a later tag has it)" : ""
            report.error(
                "D2", "\(name) first appears without START-DATE\(later); the first tag of an ID must carry it", at: here
            )
        }

        // D8: same-ID tags in one playlist agree on every attribute they share.
        var seen = group.tags[0].attributes
        for tag in group.tags.dropFirst() {
            for attribute in tag.attributes.attributes {
                if let earlier = seen[attribute.name] {
                    if !sameValue(earlier, attribute.value) {
                        report.error(
                            "D8",
                            "\(name) has \(attribute.name)=\(show(earlier)) and later \(attribute.name)=\(show(attribute.value)); same-ID tags must not change an attribute",
                            at: here)
                    }
                } else {
                    seen.attributes.append(attribute)
                }
            }
        }

        // D4: END-DATE, DURATION and START-DATE agree.
        let merged = group.merged
        let start = merged.date("START-DATE")
        let endDate = merged.date("END-DATE")
        let duration = merged.decimal("DURATION")
        if let start, let endDate, endDate < start {
            report.error("D4", "\(name) END-DATE \(endDate) is before START-DATE \(start)", at: here)
        } else if let start, let endDate, let duration {
            let expected = start.adding(duration)
            if differ(endDate, expected) {
                report.error(
                    "D4", "\(name) END-DATE \(endDate) is not START-DATE + DURATION \(show(duration)) = \(expected)",
                    at: here)
            }
        }

        // D6: END-ON-NEXT.
        if let endOnNext = merged.enumerated("END-ON-NEXT") {
            if endOnNext != "YES" {
                report.error("D6", "\(name) END-ON-NEXT=\(endOnNext); the only valid value is YES", at: here)
            }
            if merged["CLASS"] == nil {
                report.error("D6", "\(name) has END-ON-NEXT=YES without CLASS; END-ON-NEXT requires CLASS", at: here)
            }
            let forbidden = ["DURATION", "END-DATE"].filter { merged.contains($0) }
            if !forbidden.isEmpty {
                report.error(
                    "D6",
                    "\(name) has END-ON-NEXT=YES with \(forbidden.joined(separator: " and ")); they are not allowed together",
                    at: here)
            }
        }

        // D3: CUE is a list of PRE, POST, ONCE, and never both PRE and POST.
        if let cue = merged.list("CUE") {
            let unknown = cue.filter { !["PRE", "POST", "ONCE"].contains($0) }
            if !unknown.isEmpty {
                report.error(
                    "D3",
                    "\(name) CUE=\"\(cue.joined(separator: ","))\" has \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")); only PRE, POST and ONCE are defined",
                    at: here)
            } else if cue.contains("PRE"), cue.contains("POST") {
                report.error("D3", "\(name) CUE has both PRE and POST; it must not contain both", at: here)
            }
        }

        // D12: with SCTE-35 signalling, a later same-ID tag adds the end (DURATION or END-DATE).
        let scte35Names = ["SCTE35-CMD", "SCTE35-OUT", "SCTE35-IN"]
        if scte35Names.contains(where: merged.contains),
            group.tags.dropFirst().contains(where: {
                !$0.attributes.contains("DURATION") && !$0.attributes.contains("END-DATE")
            })
        {
            report.error(
                "D12", "\(name) repeats without DURATION or END-DATE; a later SCTE-35 tag of an ID must add the end",
                at: here)
        }

        // A7, D9, D10, D13, D14: the SCTE-35 values.
        for attribute in scte35Names {
            guard case .token(let text)? = merged[attribute] else { continue }
            checkUppercaseHex(text, attribute: "\(name) \(attribute)", at: here, into: &report)
            guard let bytes = HexSequence.decode(text) else { continue }
            switch SpliceInfoSummary.inspect(bytes) {
            case .failure(let malformed):
                report.error(
                    "D9", "\(name) \(attribute) \(malformed.reason); it must be a whole splice_info_section", at: here)
            case .success(let summary):
                guard let insert = summary.spliceInsert else { continue }
                if insert.isCancelled {
                    report.warning(
                        "D14",
                        "\(name) \(attribute) is a cancelled splice_insert (event 0x\(String(insert.eventID, radix: 16, uppercase: true))); cancelled splices should not appear",
                        at: here)
                    continue
                }
                if attribute == "SCTE35-OUT", insert.outOfNetwork == false {
                    report.error(
                        "D10",
                        "\(name) SCTE35-OUT holds a splice_insert with out_of_network_indicator=0; an in cue belongs in SCTE35-IN",
                        at: here)
                }
                if attribute == "SCTE35-IN", insert.outOfNetwork == true {
                    report.error(
                        "D10",
                        "\(name) SCTE35-IN holds a splice_insert with out_of_network_indicator=1; an out cue belongs in SCTE35-OUT",
                        at: here)
                }
                if attribute == "SCTE35-OUT", let ticks = insert.breakDuration,
                    let planned = merged.decimal("PLANNED-DURATION")
                {
                    let breakDuration = HLSDuration(microseconds: Int64((ticks * 100 + 4) / 9))
                    if abs((planned - breakDuration).microseconds) > 1_000 {
                        report.error(
                            "D13",
                            "\(name) PLANNED-DURATION \(show(planned)) differs from the cue's break_duration \(show(breakDuration)) s",
                            at: here)
                    }
                }
            }
        }

        // H7: an interstitial names its asset exactly one way.
        if merged.string("CLASS") == "com.apple.hls.interstitial" {
            let sources = ["X-ASSET-URI", "X-ASSET-LIST"].filter { merged.contains($0) }
            if sources.count != 1 {
                report.error(
                    "H7",
                    "\(name) is an interstitial with \(sources.isEmpty ? "neither" : "both") X-ASSET-URI and X-ASSET-LIST; it needs exactly one",
                    at: here)
            }
        }
    }
}

/// All EXT-X-DATERANGE tags of one ID in one playlist, in order, and their merged attributes
/// (the first value of each attribute; D8 reports the disagreements).
struct DateRangeGroup {
    var id: String
    var tags: [DateRange]
    var merged: AttributeList

    /// The groups in order of first appearance (segment tags, then the trailing tags).
    static func groups(in playlist: MediaPlaylist) -> [DateRangeGroup] {
        var order: [String] = []
        var byID: [String: DateRangeGroup] = [:]
        func add(_ range: DateRange) {
            if byID[range.id] == nil {
                order.append(range.id)
                byID[range.id] = DateRangeGroup(id: range.id, tags: [range], merged: range.attributes)
                return
            }
            byID[range.id]!.tags.append(range)
            for attribute in range.attributes.attributes where !byID[range.id]!.merged.contains(attribute.name) {
                byID[range.id]!.merged.attributes.append(attribute)
            }
        }
        for segment in playlist.segments { segment.tags.dateRanges.forEach(add) }
        playlist.trailingTags.dateRanges.forEach(add)
        return order.map { byID[$0]! }
    }

    var range: DateRange { DateRange(attributes: merged) }
}
