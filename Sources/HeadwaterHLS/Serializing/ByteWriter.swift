/// A growable output buffer written through a raw pointer: the serializer's hot path appends
/// hundreds of small pieces per segment, and `Array.append` pays a uniqueness and capacity check
/// for each. One `finish()` copies the bytes into an array.
@usableFromInline
struct ByteWriter: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var count: Int

    @usableFromInline
    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        self.base = .allocate(capacity: self.capacity)
        self.count = 0
    }

    deinit { base.deallocate() }

    @inlinable
    mutating func reserve(_ additional: Int) {
        if count + additional > capacity { grow(count + additional) }
    }

    @usableFromInline
    mutating func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inlinable
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inlinable
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    @inlinable
    mutating func append(_ string: StaticString) {
        string.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
    }

    @inlinable
    mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    @inlinable
    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Appends a non-negative integer in decimal.
    @inlinable
    mutating func appendDecimal(_ value: UInt64) {
        reserve(20)
        count += DecimalWriter.write(value, to: base + count)
    }

    /// Appends `value` with exactly `width` digits (zero-padded; `value` must fit).
    @inlinable
    mutating func appendPadded(_ value: UInt64, width: Int) {
        reserve(width)
        var rest = value
        var index = count + width - 1
        while index >= count {
            base[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            index -= 1
        }
        count += width
    }

    @usableFromInline
    consuming func finish() -> [UInt8] {
        let count = self.count
        let base = self.base
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress!.update(from: base, count: count)
            initialized = count
        }
    }

    /// Appends the written bytes to `array`.
    @usableFromInline
    consuming func finish(appendingTo array: inout [UInt8]) {
        array.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
    }
}
