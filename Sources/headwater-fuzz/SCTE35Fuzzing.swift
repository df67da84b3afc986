import HeadwaterSCTE35

/// The SCTE-35 decoder, as the playlist tags and `headwater scte35 decode` feed it: binary
/// sections, and their hex and base64 text forms.
enum SCTE35Fuzzing {
    /// Decodes `bytes` as a splice_info_section without CRC verification (so the fuzzer reaches the
    /// structure); whatever decodes must encode, and decode again to an equal value.
    static func binary(_ bytes: [UInt8]) {
        let section: SpliceInfoSection
        do throws(SCTE35Error) {
            section = try SpliceInfoSection(bytes: bytes, verifyCRC: false)
        } catch {
            return
        }
        checkRoundTrips(section)
    }

    /// Decodes `bytes` as text, hex or base64 (`SpliceInfoSection(text:)`, which picks the form);
    /// what decodes must survive both text forms and the binary one.
    static func text(_ bytes: [UInt8]) {
        let section: SpliceInfoSection
        do throws(SCTE35Error) {
            section = try SpliceInfoSection(text: String(decoding: bytes, as: UTF8.self), verifyCRC: false)
        } catch {
            return
        }
        checkRoundTrips(section)
    }

    private static func checkRoundTrips(_ section: SpliceInfoSection) {
        let encoded: [UInt8]
        let hex: String
        let base64: String
        do throws(SCTE35Error) {
            encoded = try section.encoded()
            hex = try section.hexString()
            base64 = try section.base64String()
        } catch {
            fatalError("a decoded section does not encode: \(error)")
        }
        guard let again = try? SpliceInfoSection(bytes: encoded), again == section else {
            fatalError("decode → encode → decode changed the section: \(section)")
        }
        guard let fromHex = try? SpliceInfoSection(text: hex), fromHex == section else {
            fatalError("the hex form \(hex) does not decode to the section: \(section)")
        }
        guard let fromBase64 = try? SpliceInfoSection(text: base64), fromBase64 == section else {
            fatalError("the base64 form \(base64) does not decode to the section: \(section)")
        }
    }
}
