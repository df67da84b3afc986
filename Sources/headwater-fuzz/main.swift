// libFuzzer entry point for Headwater's parsers and server (see README.md here; the targets are in
// FuzzTarget.swift). `Tests/tools/fuzz.sh` builds and runs them:
//
//     swift build -c debug --product headwater-fuzz --scratch-path .build-fuzz \
//         -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
//     HEADWATER_FUZZ_TARGET=h2 .build-fuzz/debug/headwater-fuzz CORPUS_DIR -max_total_time=60
//
// SwiftPM links an executable's `main` to the module's own entry point (`--defsym main=…`), so
// libFuzzer's `main` is never used; with FUZZING the entry point hands over to libFuzzer through
// `LLVMFuzzerRunDriver` instead. Normal build: `headwater-fuzz FILE…` runs each file through the
// same checks, to replay a crash input (`crash-…`) without the sanitizer toolchain.
// `HEADWATER_FUZZ_TARGET=list` prints the targets' names.

import Foundation

/// The target this process fuzzes (or lists the targets and exits).
let target: FuzzTarget = {
    let requested = ProcessInfo.processInfo.environment["HEADWATER_FUZZ_TARGET"]
    if requested == "list" {
        for target in FuzzTarget.allCases { print(target.rawValue) }
        exit(0)
    }
    guard let target = FuzzTarget.named(requested) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("headwater-fuzz: no target \"\(requested ?? "")\"; the targets: \(names)\n".utf8))
        exit(2)
    }
    guard target.run([]) else {
        FileHandle.standardError.write(Data("headwater-fuzz: \(target.rawValue) needs a debug build (it uses @testable import)\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
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
exit(runFuzzerDriver(&argc, &argv) { data, size in fuzz(data, size) })
#else
let paths = CommandLine.arguments.dropFirst()
if paths.isEmpty {
    print("usage: HEADWATER_FUZZ_TARGET=<target> headwater-fuzz FILE… (replays inputs; build with -sanitize=fuzzer to fuzz, see main.swift)")
}
for path in paths {
    guard let data = FileManager.default.contents(atPath: path) else {
        print("headwater-fuzz: cannot read \(path)")
        exit(1)
    }
    _ = target.run([UInt8](data))
    print("\(path): ok")
}
#endif
