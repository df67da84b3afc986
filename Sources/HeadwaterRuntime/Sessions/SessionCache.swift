import HeadwaterHLS
import HeadwaterStitching
import NIOConcurrencyHelpers

/// Sessions whose tokens verified recently, by token text, with their latest pod decisions: a player
/// reloads its playlist every few seconds with the same token, and each reload would otherwise check
/// the MAC, decode the token and replay the session's decisions (with frequency caps, a decision
/// replays the session's earlier breaks).
///
/// Only a cache: sessions stay stateless. An entry is made from a verified token alone, and whatever it
/// holds is recomputed the same on a miss, so eviction, another node or a restart change no byte. It is
/// strictly bounded: at most ``capacity`` entries (two generations of half as many, the older
/// dropped whole when the younger fills; an entry used again moves to the younger), each with at
/// most ``decisionsPerSession`` decisions, whatever the number of sessions.
final class SessionCache: Sendable {
    /// A verified session, and the pods it gets in its latest breaks. Immutable (one reference to copy
    /// per request); ``remembering(_:for:)`` makes the next one. It keeps what every request needs
    /// and no more (about 500 bytes with its key): a decision that is not remembered needs the
    /// session's targeting, read again from its token.
    final class Entry: Sendable {
        /// The token's channel and start (``SessionToken``), for the checks every request makes.
        let channel: String
        let start: Int64
        let session: StitchedSession
        /// Newest last.
        let decisions: [Decision]

        convenience init(_ token: SessionToken, session: StitchedSession) {
            self.init(channel: token.channel, start: token.start, session: session, decisions: [])
        }

        private init(channel: String, start: Int64, session: StitchedSession, decisions: [Decision]) {
            self.channel = channel
            self.start = start
            self.session = session
            self.decisions = decisions
        }

        /// The pod remembered for `adBreak`, `.some(nil)` for "not stitched", `nil` when unknown.
        func pod(for adBreak: AdBreak) -> StitchedPod?? {
            let key = Decision.Break(adBreak)
            for decision in decisions.reversed() where decision.adBreak == key { return .some(decision.pod) }
            return nil
        }

        /// This entry with `pod` remembered for `adBreak` (and the oldest decision forgotten if full).
        func remembering(_ pod: StitchedPod?, for adBreak: AdBreak) -> Entry {
            var decisions = decisions
            if decisions.count == SessionCache.decisionsPerSession { decisions.removeFirst() }
            decisions.append(Decision(adBreak: Decision.Break(adBreak), pod: pod))
            return Entry(channel: channel, start: start, session: session, decisions: decisions)
        }
    }

    /// A decision for one break.
    struct Decision: Sendable {
        /// A break as its log records it: its first media sequence number, start date and pinned
        /// rule-set version (no two breaks of a channel share the first two; no string to hash).
        struct Break: Hashable, Sendable {
            let startMediaSequence: UInt64
            let startDate: ProgramDateTime
            let ruleSetVersion: UInt64

            init(_ adBreak: AdBreak) {
                self.startMediaSequence = adBreak.startMediaSequence
                self.startDate = adBreak.startDate
                self.ruleSetVersion = adBreak.ruleSetVersion
            }
        }

        let adBreak: Break
        let pod: StitchedPod?
    }

    /// Entries at most (a few hundred bytes each, a few megabytes in all).
    let capacity: Int
    /// Decisions kept per session: the breaks one window shows (one or two) and a little more.
    static let decisionsPerSession = 4

    private let state: NIOLockedValueBox<Generations>

    private struct Generations {
        var young: [String: Entry] = [:]
        var old: [String: Entry] = [:]
    }

    init(capacity: Int = 8_192) {
        precondition(capacity >= 2, "a session cache holds at least two entries")
        self.capacity = capacity
        self.state = NIOLockedValueBox(Generations())
    }

    /// The entry for `token`, if its session was verified recently.
    func entry(for token: String) -> Entry? {
        var dropped: [String: Entry] = [:]
        defer { withExtendedLifetime(dropped) {} }  // freed after the lock is released
        return state.withLockedValue { generations in
            if let entry = generations.young[token] { return entry }
            guard let entry = generations.old.removeValue(forKey: token) else { return nil }
            dropped = Self.insert(entry, for: token, into: &generations, capacity: capacity)
            return entry
        }
    }

    /// Remembers `entry` for `token` (which verified).
    func store(_ entry: Entry, for token: String) {
        var dropped: [String: Entry] = [:]
        defer { withExtendedLifetime(dropped) {} }
        state.withLockedValue { generations in
            dropped = Self.insert(entry, for: token, into: &generations, capacity: capacity)
        }
    }

    /// Entries held (tests).
    var count: Int { state.withLockedValue { $0.young.count + $0.old.count } }

    /// Inserts into the younger generation; when that is full, it becomes the older and the older is
    /// returned, to be freed outside the lock.
    private static func insert(_ entry: Entry, for token: String, into generations: inout Generations, capacity: Int)
        -> [String: Entry]
    {
        generations.young[token] = entry
        guard generations.young.count >= capacity / 2 else { return [:] }
        let dropped = generations.old
        generations.old = generations.young
        generations.young = [:]
        generations.young.reserveCapacity(capacity / 2)
        return dropped
    }
}

/// The session a stitched playlist is served to, as ``AdInsertion``'s stitch observer sees it: its
/// id, and how to turn text taken from the playlist as rendered for the placeholder session (a
/// tracking URL) into this session's.
public struct StitchedSession: Sendable {
    /// The session id (``SessionToken/id``).
    public let id: String
    /// ``StitchedPlaylistTemplate/sessionText(_:)`` of ``id``: what tracking URLs carry.
    let text: [UInt8]
    private let placeholder: [UInt8]

    /// - Parameter placeholder: the placeholder session id's bytes.
    init(id: String, placeholder: [UInt8]) {
        self.id = id
        self.text = StitchedPlaylistTemplate.sessionText(id)
        self.placeholder = placeholder
    }

    /// `text` with every occurrence of the placeholder session id replaced by this session's id as
    /// tracking URLs carry it (percent-encoded).
    public func personalize(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.count >= placeholder.count else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + self.text.count)
        var index = 0
        var changed = false
        while index < bytes.count {
            if bytes[index] == placeholder[0], index + placeholder.count <= bytes.count,
                bytes[index..<(index + placeholder.count)].elementsEqual(placeholder)
            {
                out.append(contentsOf: self.text)
                index += placeholder.count
                changed = true
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return changed ? String(decoding: out, as: UTF8.self) : text
    }
}
