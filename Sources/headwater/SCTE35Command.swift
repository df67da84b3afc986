import ArgumentParser
import Foundation
import HeadwaterSCTE35

/// `headwater scte35 decode|encode`: inspect SCTE-35 cues as JSON with the standard's field names,
/// and turn (edited) JSON back into the hex and base64 that playlists carry.
///
/// `decode` output fed to `encode` reproduces the original bytes (only `CRC_32` is recomputed, so a
/// cue decoded with `--no-verify-crc` comes back with a correct CRC), including the two forms cues
/// from the field take: a legacy `splice_command_length` of `0xFFF` and MPEG-TS stuffing after the
/// section (see ``SpliceInfoSection``'s JSON form).
struct SCTE35Command: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scte35",
        abstract: "Decode and encode SCTE-35 splice_info_section cues.",
        subcommands: [Decode.self, Encode.self]
    )

    struct Decode: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a cue as JSON with the SCTE 35 field names.",
            discussion: """
                CUE is hex (0xFC30…, as in EXT-X-DATERANGE SCTE35-OUT/IN/CMD; the 0x is optional) or \
                base64 (/DA…, as in EXT-OATCLS-SCTE35). Exit status 1 with a one-line reason on \
                standard error if it does not decode. MPEG-TS stuffing after the section (0xFF bytes, \
                as copied from a transport packet) is accepted and shown as trailing_stuffing_byte_count; \
                a legacy splice_command_length of 0xFFF is shown as 4095.
                """
        )

        @Argument(help: "The cue in hex or base64, or - for standard input.") var cue: String
        @Flag(name: .customLong("no-verify-crc"), help: "Decode even when CRC_32 is wrong (e.g. the RFC 8216 §8.10 example).")
        var noVerifyCRC = false

        func run() throws {
            let text = cue == "-" ? scte35ReadStandardInput() : cue
            let section: SpliceInfoSection
            do {
                section = try SpliceInfoSection(text: text, verifyCRC: !noVerifyCRC)
            } catch {
                throw scte35Fail(error.description)
            }
            if noVerifyCRC {
                do {
                    _ = try SpliceInfoSection(text: text, verifyCRC: true)
                } catch .crcMismatch(let expected, let computed) {
                    scte35Warn("warning: CRC_32 is \(scte35Hex(expected)) but the section computes to \(scte35Hex(computed)); ignored")
                } catch {}
            }
            do {
                print(try SCTE35OrderedJSON.render(section))
            } catch {
                throw scte35Fail("cannot render JSON: \(error)")
            }
        }
    }

    struct Encode: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Encode JSON (as printed by decode) into a cue.",
            discussion: """
                Length fields, crc_32 and the informative *_name/*_seconds fields are recomputed, so \
                edit the values and leave those alone; only a splice_command_length of 4095 (the \
                legacy "unknown" 0xFFF) is kept, and trailing_stuffing_byte_count appends that many \
                0xFF bytes after the section. Prints "hex: 0x…" and "base64: …" lines, or \
                only the bare value with --format hex or --format base64.
                """
        )

        enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
            case both, hex, base64
        }

        @Argument(help: "The JSON text, or - for standard input.") var json: String
        @Option(help: "What to print: both, hex or base64.") var format: OutputFormat = .both

        func run() throws {
            let data = json == "-" ? Data(scte35ReadStandardInput().utf8) : Data(json.utf8)
            let section: SpliceInfoSection
            do {
                section = try JSONDecoder().decode(SpliceInfoSection.self, from: data)
            } catch let error as DecodingError {
                throw scte35Fail(scte35Describe(error))
            } catch {
                throw scte35Fail("invalid JSON: \(error)")
            }
            let bytes: [UInt8]
            do {
                bytes = try section.encoded()
            } catch {
                throw scte35Fail(error.description)
            }
            let hex = "0x" + bytes.map { scte35HexByte($0) }.joined()
            let base64 = Data(bytes).base64EncodedString()
            switch format {
            case .both:
                print("hex: \(hex)")
                print("base64: \(base64)")
            case .hex:
                print(hex)
            case .base64:
                print(base64)
            }
        }
    }
}

// MARK: - Helpers (file-private in spirit; prefixed to stay clear of other commands' helpers)

private func scte35ReadStandardInput() -> String {
    String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
}

/// Prints `headwater: scte35: message` (one line) on standard error and returns exit status 1.
private func scte35Fail(_ message: String) -> ExitCode {
    scte35Warn(message)
    return ExitCode(1)
}

private func scte35Warn(_ message: String) {
    let line = "headwater: scte35: " + message.split(whereSeparator: \.isNewline).joined(separator: " ") + "\n"
    FileHandle.standardError.write(Data(line.utf8))
}

private func scte35HexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}

private func scte35Hex(_ value: UInt32) -> String {
    "0x" + [24, 16, 8, 0].map { scte35HexByte(UInt8(truncatingIfNeeded: value >> UInt32($0))) }.joined()
}

/// One line for a JSON decoding error: what is wrong and where (`splice_command.splice_time.pts_time`).
private func scte35Describe(_ error: DecodingError) -> String {
    func path(_ keys: [any CodingKey]) -> String {
        let rendered = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
        return rendered.isEmpty ? "top level" : rendered.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
    }
    switch error {
    case .keyNotFound(let key, let context):
        return "invalid JSON: missing \(path(context.codingPath + [key]))"
    case .valueNotFound(_, let context), .typeMismatch(_, let context), .dataCorrupted(let context):
        return "invalid JSON at \(path(context.codingPath)): \(context.debugDescription)"
    @unknown default:
        return "invalid JSON: \(error)"
    }
}

// MARK: - Ordered JSON output

/// Pretty JSON with object keys in the order the model encodes them — the order of the SCTE 35
/// syntax tables. (Foundation's `JSONEncoder` on Linux orders keys by hash, and `.sortedKeys`
/// would scatter related fields.) Only rendering needs this; `encode` reads with `JSONDecoder`.
enum SCTE35OrderedJSON {
    static func render(_ value: some Encodable) throws -> String {
        let root = Node()
        try value.encode(to: NodeEncoder(node: root, codingPath: []))
        var out = ""
        root.write(to: &out, indent: "")
        return out
    }

    /// A JSON value under construction; a class because nested containers write into it later.
    final class Node {
        enum Value {
            case scalar(String)
            case array([Node])
            case object([(key: String, node: Node)])
        }

        var value: Value = .scalar("null")

        init(_ value: Value = .scalar("null")) { self.value = value }

        func makeObject() {
            if case .object = value { return }
            value = .object([])
        }

        func set(_ key: String, _ node: Node) {
            guard case .object(var pairs) = value else { return }
            if let index = pairs.firstIndex(where: { $0.key == key }) {
                pairs[index].node = node
            } else {
                pairs.append((key, node))
            }
            value = .object(pairs)
        }

        func append(_ node: Node) {
            guard case .array(var items) = value else { return }
            items.append(node)
            value = .array(items)
        }

        func write(to out: inout String, indent: String) {
            let inner = indent + "  "
            switch value {
            case .scalar(let text):
                out += text
            case .array(let items):
                guard !items.isEmpty else { out += "[]"; return }
                out += "[\n"
                for (index, item) in items.enumerated() {
                    out += inner
                    item.write(to: &out, indent: inner)
                    out += index == items.count - 1 ? "\n" : ",\n"
                }
                out += indent + "]"
            case .object(let pairs):
                guard !pairs.isEmpty else { out += "{}"; return }
                out += "{\n"
                for (index, pair) in pairs.enumerated() {
                    out += inner + Node.quote(pair.key) + ": "
                    pair.node.write(to: &out, indent: inner)
                    out += index == pairs.count - 1 ? "\n" : ",\n"
                }
                out += indent + "}"
            }
        }

        static func quote(_ string: String) -> String {
            var out = "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }

        /// A scalar node for a primitive, or `nil` if `value` is not one.
        static func scalar(_ value: Any) throws -> Node? {
            switch value {
            case let bool as Bool: return Node(.scalar(bool ? "true" : "false"))
            case let string as String: return Node(.scalar(quote(string)))
            case let double as Double:
                guard double.isFinite else {
                    throw EncodingError.invalidValue(double, .init(codingPath: [], debugDescription: "non-finite number"))
                }
                return Node(.scalar("\(double)"))
            case let float as Float: return try scalar(Double(float))
            case let integer as any BinaryInteger: return Node(.scalar("\(integer)"))
            default: return nil
            }
        }

        static func encode(_ value: some Encodable, codingPath: [any CodingKey]) throws -> Node {
            if let node = try scalar(value) { return node }
            let node = Node()
            try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
            return node
        }
    }

    struct NodeEncoder: Encoder {
        let node: Node
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            node.makeObject()
            return KeyedEncodingContainer(Keyed(node: node, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            node.value = .array([])
            return Unkeyed(node: node, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            Single(node: node, codingPath: codingPath)
        }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        var codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { node.set(key.stringValue, Node()) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            node.set(key.stringValue, try Node.encode(value, codingPath: codingPath + [key]))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            let child = Node()
            node.set(key.stringValue, child)
            return NodeEncoder(node: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = Node()
            node.set(key.stringValue, child)
            return NodeEncoder(node: child, codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder { NodeEncoder(node: node, codingPath: codingPath) }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            let child = Node()
            node.set(key.stringValue, child)
            return NodeEncoder(node: child, codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey]
        var count: Int {
            if case .array(let items) = node.value { return items.count }
            return 0
        }

        mutating func encodeNil() throws { node.append(Node()) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            node.append(try Node.encode(value, codingPath: codingPath))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let child = Node()
            node.append(child)
            return NodeEncoder(node: child, codingPath: codingPath).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let child = Node()
            node.append(child)
            return NodeEncoder(node: child, codingPath: codingPath).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let child = Node()
            node.append(child)
            return NodeEncoder(node: child, codingPath: codingPath)
        }
    }

    struct Single: SingleValueEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey]

        mutating func encodeNil() throws { node.value = .scalar("null") }

        mutating func encode<T: Encodable>(_ value: T) throws {
            node.value = try Node.encode(value, codingPath: codingPath).value
        }
    }
}
