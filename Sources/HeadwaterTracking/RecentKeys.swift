/// A set of at most `capacity` keys that forgets the key not seen for the longest time first
/// (CLOCK, a constant-memory approximation of least-recently-used): inserting into a full set
/// evicts a key that was not ``touch(_:)``ed since the clock hand last passed it.
///
/// For beacon dedupe this matters: a session re-lists an ad's events on every playlist reload, so
/// its keys stay referenced while the ad is in its window and only keys of ads that left every
/// window are evicted.
struct RecentKeys<Key: Hashable> {
    let capacity: Int
    /// Every key held, and whether it was touched since the hand last passed it.
    private var referenced: [Key: Bool] = [:]
    /// The keys in slot order; the hand sweeps it.
    private var slots: [Key] = []
    private var hand = 0

    init(capacity: Int) {
        precondition(capacity > 0, "RecentKeys needs a capacity of at least 1")
        self.capacity = capacity
    }

    var count: Int { slots.count }

    /// Whether `key` is held; marks it recently seen if so.
    mutating func touch(_ key: Key) -> Bool {
        guard let index = referenced.index(forKey: key) else { return false }
        referenced.values[index] = true
        return true
    }

    /// Adds `key`, which must not be held, evicting another when full.
    mutating func insert(_ key: Key) {
        guard slots.count == capacity else {
            slots.append(key)
            referenced[key] = false
            return
        }
        // At most one full sweep clears every mark, so this ends within 2 × capacity steps.
        while referenced[slots[hand]] == true {
            referenced[slots[hand]] = false
            hand = (hand + 1) % capacity
        }
        referenced[slots[hand]] = nil
        slots[hand] = key
        referenced[key] = false
        hand = (hand + 1) % capacity
    }
}
