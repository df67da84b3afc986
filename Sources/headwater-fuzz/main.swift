// libFuzzer entry point for the playlist parser (the Swift counterpart of gohlslib's
// FuzzPlaylistUnmarshal).
//
// Fuzzing build, in its own scratch path so it does not disturb the normal build:
//
//     swift build -c debug --product headwater-fuzz --scratch-path .build-fuzz \
//         -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
//     mkdir -p fuzz-corpus && cp Tests/HeadwaterHLSTests/Fixtures/*/*.m3u8 fuzz-corpus/
//     .build-fuzz/debug/headwater-fuzz fuzz-corpus -max_total_time=60
//
// SwiftPM links an executable's `main` to the module's own entry point (`--defsym main=…`), so
// libFuzzer's `main` is never used; with FUZZING the entry point hands over to libFuzzer through
// `LLVMFuzzerRunDriver` instead. Normal build: `headwater-fuzz FILE…` runs each file through the
// same checks, to replay a crash input (`crash-…`) without the sanitizer toolchain.

import Foundation
import HeadwaterHLS
import HeadwaterSCTE35

/// Which decoder to fuzz: `HEADWATER_FUZZ_TARGET=scte35` fuzzes the SCTE-35 decoder, anything else
/// the playlist parser.
let fuzzTarget = ProcessInfo.processInfo.environment["HEADWATER_FUZZ_TARGET"] == "scte35" ? "scte35" : "playlist"

/// Decodes `bytes` as a splice_info_section without CRC verification (so the fuzzer reaches the
/// structure); whatever decodes must encode, and decode again to an equal value.
func fuzzSCTE35(_ bytes: [UInt8]) {
    let section: SpliceInfoSection
    do throws(SCTE35Error) {
        section = try SpliceInfoSection(bytes: bytes, verifyCRC: false)
    } catch {
        return
    }
    let encoded: [UInt8]
    do throws(SCTE35Error) {
        encoded = try section.encoded()
    } catch {
        fatalError("a decoded section does not encode: \(error)")
    }
    guard let again = try? SpliceInfoSection(bytes: encoded), again == section else {
        fatalError("decode → encode → decode changed the section: \(section)")
    }
}

func fuzzOne(_ bytes: [UInt8]) {
    if fuzzTarget == "scte35" { fuzzSCTE35(bytes) } else { fuzzPlaylist(bytes) }
}

/// Parses `bytes`; if they parse, the canonical text must parse back to an equal value. Any
/// difference is a bug, reported by trapping so that libFuzzer saves the input.
func fuzzPlaylist(_ bytes: [UInt8]) {
    let parser = PlaylistParser()
    let playlist: Playlist
    do throws(PlaylistParseError) {
        playlist = try parser.parse(bytes)
    } catch {
        precondition(error.line >= 1, "error without a line: \(error)")
        return
    }
    let text = PlaylistSerializer.serialize(playlist)
    let reparsed: Playlist
    do throws(PlaylistParseError) {
        reparsed = try parser.parse(text)
    } catch {
        fatalError("the canonical text does not parse: \(error)\n\(String(decoding: text, as: UTF8.self))")
    }
    guard reparsed == playlist else {
        fatalError("serialize → parse changed the value; canonical text:\n\(String(decoding: text, as: UTF8.self))")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzOne(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if FUZZING
/// `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size))`
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(
    runFuzzerDriver(&argc, &argv) { data, size in
        guard let data, size > 0 else {
            fuzzOne([])
            return 0
        }
        return fuzz(data, size)
    })
#else
let paths = CommandLine.arguments.dropFirst()
if paths.isEmpty {
    print("usage: headwater-fuzz FILE… (replays inputs; build with -sanitize=fuzzer to fuzz, see main.swift)")
}
for path in paths {
    guard let data = FileManager.default.contents(atPath: path) else {
        print("headwater-fuzz: cannot read \(path)")
        exit(1)
    }
    fuzzOne([UInt8](data))
    print("\(path): ok")
}
#endif
