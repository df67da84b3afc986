#!/usr/bin/env python3
"""Module-graph check: fails when Headwater's target graph drifts from its layering.

Usage: python3 Tests/tools/check-module-graph.py [--package-json FILE] [--root DIR]

Reads the package's targets, their paths and declared dependencies from
`swift package dump-package` run in the package root (cheap: it evaluates the manifest and
builds nothing), or from FILE (the same JSON) with --package-json. --root is the package root
whose sources are scanned (default: the package this script lives in). Every .swift file of a
target (Sources/<name>, Tests/<name> for test targets, or the target's `path`; `sources` and
`exclude` are honoured) is scanned for import declarations, whatever their attributes, access
level or kind (`@testable import X`, `package import X`, `import struct X.Y`, ...), including
those inside `#if canImport(...)` blocks. Comments and string literals are skipped.

Checks, one line per violation (`module-graph: TARGET: message`), exit status 1 if any:
  1. a target the layer table below does not know (a new target is placed on purpose);
  2. a declared dependency or an import of a target on the same or a higher layer (and a
     production target using the test support);
  3. a pure target (layers 0 and 1) importing or depending on anything but lower pure targets:
     no Foundation, Dispatch, platform C library, Synchronization, _Concurrency, NIO, Logging,
     Metrics, package product or C target;
  4. used but undeclared: an import of a module that is neither a declared dependency (target
     or product) nor a stdlib, platform or toolchain module;
  5. declared but unused: a dependency of a non-test target that none of its files imports
     (ALLOW-UNUSED entries below exempt one dependency, with the reason).
Test targets and the test support (HeadwaterTesting) and the C/system targets are exempt from
layering; they still get check 4, and all but test targets check 5. Targets without Swift
sources (C, system library) have no imports to compare, so checks 4 and 5 skip them.
On success prints a summary (layer, files, lines, dependencies of each target) and exits 0.
Exit status 2: the package description could not be read.
"""

import argparse
import json
import os
import re
import subprocess
import sys

# --------------------------------------------------------------------------------------------
# The layering. A target may depend on (and import) only targets of a strictly lower layer.
# (layer, short name, targets)
LAYERS = [
    # Layer 0, pure model: the values of the domain and their text/binary forms (HLS playlists,
    # SCTE-35 cues, media segment probing). Values in, values out: no I/O, no clock.
    (0, "model", ["HeadwaterHLS", "HeadwaterSCTE35", "HeadwaterMedia"]),
    # Layer 1, pure decisions: what to do given the model (ad stitching, the live window),
    # still values in, values out.
    (1, "decisions", ["HeadwaterStitching", "HeadwaterLiveWindow"]),
    # Layer 2, configuration: reads and validates the configuration into typed values.
    (2, "configuration", ["HeadwaterConfiguration"]),
    # Layer 3, runtime: the running state (channels, stores, clock, metrics) and ad tracking
    # (beacon dispatch); the first layer with I/O and concurrency.
    (3, "runtime", ["HeadwaterRuntime", "HeadwaterTracking"]),
    # Layer 4, sources: what feeds channels (loop, directory, push, pull from an upstream).
    (4, "sources", ["HeadwaterSources"]),
    # Layer 5, HTTP: the origin server on SwiftNIO.
    (5, "http", ["HeadwaterHTTP"]),
    # Layer 6, executables: the composition roots (server, benchmarks, fuzz entry points).
    (6, "executables", ["headwater", "headwater-bench", "headwater-fuzz"]),
]
# Pure layers: values in, values out. Their targets import only pure targets of a lower layer.
PURE_LAYERS = {0, 1}
# What a pure target may import besides lower pure targets.
PURE_ALLOWED_MODULES = {"Swift"}

# Exempt from layering (still checked for declared/imported consistency). Targets of type
# "test" are exempt without being listed.
TEST_SUPPORT = {"HeadwaterTesting"}  # shared by the test targets; production must not use it
C_TARGETS = {"CHeadwaterZlib", "CHeadwaterAllocationCounter"}  # C and system-library targets

# Modules available without a declared dependency.
STDLIB_MODULES = {
    "Swift", "_Concurrency", "_StringProcessing", "RegexBuilder", "Synchronization",
    "Observation", "Distributed", "Cxx", "CxxStdlib",
}
PLATFORM_MODULES = {  # shipped with the toolchain / OS, as SwiftPM on Linux provides them
    "Foundation", "FoundationEssentials", "FoundationInternationalization",
    "FoundationNetworking", "FoundationXML", "Dispatch",
    "Glibc", "Darwin", "Musl", "WinSDK", "ucrt", "Android", "Bionic", "WASILibc",
}
TOOLCHAIN_TEST_MODULES = {"Testing", "XCTest"}

# A product's module, where it is not the product's name (none so far: NIOCore, Logging,
# Metrics, Prometheus, AsyncHTTPClient, ArgumentParser, ServiceLifecycle, UnixSignals, Crypto,
# _CryptoExtras, Yams are all module = product).
PRODUCT_MODULES = {}

# Declared-but-unused exemptions, one per line, exactly in this form (TARGET DEP reason):
#   "# allow-unused: TARGET DEP reason"  (at the start of a line, without the quotes)
# ALLOW-UNUSED (starts empty)
# END ALLOW-UNUSED

# --------------------------------------------------------------------------------------------

SOURCE_EXTENSIONS = {".swift", ".c", ".cc", ".cpp", ".cxx", ".m", ".mm", ".h", ".hh", ".hpp", ".s", ".S"}
C_EXTRA_FILES = {"module.modulemap"}

IMPORT_RE = re.compile(
    r"^\s*(?:(?:@\w+(?:\([^)]*\))?|public|package|internal|fileprivate|private|open)\s+)*"
    r"import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func|actor|macro)\s+)?"
    r"`?([A-Za-z_][A-Za-z0-9_]*)`?"
)


def layer_table():
    layer_of, name_of = {}, {}
    for layer, name, targets in LAYERS:
        name_of[layer] = name
        for t in targets:
            layer_of[t] = layer
    return layer_of, name_of


def allow_unused_entries():
    """The `# allow-unused: TARGET DEP reason` lines of this script."""
    entries = {}
    with open(os.path.abspath(__file__), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"# allow-unused: (\S+) (\S+) (\S.*)$", line.rstrip("\n"))
            if m:
                entries[(m.group(1), m.group(2))] = m.group(3)
    return entries


def module_name(target_name):
    """The module a target builds (SwiftPM's c99name: headwater-bench -> headwater_bench)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", target_name)
    return "_" + name if name[:1].isdigit() else name


INTERESTING_RE = re.compile(r'[/"#]')


def code_only(text):
    """The text with comments and string-literal contents blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(text[i:]) - len(text[i:].lstrip("#"))
            q = i + hashes
            multiline = text.startswith('"""', q)
            close = ('"""' if multiline else '"') + "#" * hashes
            j = q + (3 if multiline else 1)
            while j < n:
                if hashes == 0 and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(close, j):
                    j += len(close)
                    break
                if not multiline and text[j] == "\n":  # unterminated: stop at the line's end
                    break
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            m = INTERESTING_RE.search(text, i + 1)
            j = m.start() if m else n
            out.append(text[i:j])
            i = j
    return "".join(out)


def swift_imports(text):
    """[(module, line number)] for each import declaration of a Swift file."""
    found = []
    for number, line in enumerate(code_only(text).split("\n"), start=1):
        for statement in line.split(";"):
            m = IMPORT_RE.match(statement)
            if m:
                found.append((m.group(1), number))
    return found


def target_files(root, target):
    """(directory relative to root, [source files relative to root]) of a target."""
    if target.get("path"):
        base = target["path"]
    elif target["type"] == "test":
        base = os.path.join("Tests", target["name"])
    elif target["type"] == "plugin":
        base = os.path.join("Plugins", target["name"])
    else:
        base = os.path.join("Sources", target["name"])
    base = os.path.normpath(base)
    absolute = os.path.join(root, base)
    if not os.path.isdir(absolute):
        return base, None
    excluded = [os.path.normpath(os.path.join(absolute, e)) for e in target.get("exclude") or []]
    included = target.get("sources")
    included = None if included is None else [os.path.normpath(os.path.join(absolute, s)) for s in included]

    def inside(path, prefixes):
        return any(path == p or path.startswith(p + os.sep) for p in prefixes)

    files = []
    for directory, subdirectories, names in os.walk(absolute):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in sorted(names):
            path = os.path.join(directory, name)
            if name.startswith(".") or inside(path, excluded):
                continue
            if included is not None and not inside(path, included):
                continue
            if os.path.splitext(name)[1] in SOURCE_EXTENSIONS or name in C_EXTRA_FILES:
                files.append(os.path.relpath(path, root))
    return base, files


def declared_dependencies(target, target_names):
    """[(dependency name, module, package or None)]; package None means a target of this package."""
    deps = []
    for dep in target.get("dependencies") or []:
        if "target" in dep:
            name = dep["target"][0]
            deps.append((name, module_name(name), None))
        elif "byName" in dep:
            name = dep["byName"][0]
            if name in target_names:
                deps.append((name, module_name(name), None))
            else:  # a product named without its package
                deps.append((name, PRODUCT_MODULES.get(name, name), "?"))
        elif "product" in dep:
            fields = dep["product"]
            name, package = fields[0], fields[1] or "?"
            module = PRODUCT_MODULES.get(name, name)
            aliases = fields[2] if len(fields) > 2 and isinstance(fields[2], dict) else {}
            deps.append((name, aliases.get(module, module), package))
    return deps


def load_package(args, root):
    if args.package_json:
        with open(args.package_json, encoding="utf-8") as f:
            return json.load(f)
    try:
        result = subprocess.run(["swift", "package", "dump-package"], cwd=root,
                                capture_output=True, text=True)
    except OSError as error:
        print(f"module-graph: cannot run swift package dump-package: {error}", file=sys.stderr)
        sys.exit(2)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        print("module-graph: swift package dump-package failed (is Package.swift valid?)", file=sys.stderr)
        sys.exit(2)
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package-json", metavar="FILE",
                        help="the output of `swift package dump-package` (default: run it in the root)")
    parser.add_argument("--root", metavar="DIR",
                        default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")),
                        help="the package root whose sources are scanned (default: this repository)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    try:
        package = load_package(args, root)
    except (OSError, ValueError) as error:
        print(f"module-graph: cannot read the package description: {error}", file=sys.stderr)
        return 2

    layer_of, layer_name = layer_table()
    allow_unused = allow_unused_entries()
    targets = package["targets"]
    target_names = {t["name"] for t in targets}
    target_of_module = {module_name(t["name"]): t for t in targets}
    violations = []
    summary = []

    def report(target, message):
        violations.append(f"module-graph: {target}: {message}")

    def describe_layer(layer):
        return f"layer {layer}"

    for target in targets:
        name, kind = target["name"], target["type"]
        is_test = kind == "test"
        exempt = is_test or name in TEST_SUPPORT or name in C_TARGETS
        layer = layer_of.get(name)
        known = exempt or layer is not None
        pure = layer in PURE_LAYERS
        if not known:
            report(name, f"is not in the layer table ({kind} target): place it in LAYERS (or the exempt "
                         f"sets) at the top of Tests/tools/check-module-graph.py")

        base, files = target_files(root, target)
        if files is None:
            report(name, f"its source directory {base} does not exist")
            continue
        swift_files = [f for f in files if f.endswith(".swift")]
        lines = 0
        imports = {}  # module -> first "file:line"
        for path in files:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                text = f.read()
            lines += text.count("\n") + (1 if text and not text.endswith("\n") else 0)
            if path.endswith(".swift"):
                for module, number in swift_imports(text):
                    imports.setdefault(module, f"{path}:{number}")

        declared = declared_dependencies(target, target_names)
        declared_modules = {module for _, module, _ in declared}
        summary.append((name, kind, layer, exempt, len(files), lines, declared))

        # Edges to targets of this package: declared ones, and imported ones (declared or not).
        edges = {}  # module -> (target dict, imported at or None)
        for dep_name, module, package_name in declared:
            if package_name is None and module in target_of_module:
                edges[module] = (target_of_module[module], imports.get(module))
        for module, where in imports.items():
            if module in target_of_module and module != module_name(name):
                edges[module] = (target_of_module[module], where)

        # 2. layering, and 3. purity, for the layered targets.
        if layer is not None and not exempt:
            for module, (other, where) in sorted(edges.items()):
                verb = "imports" if where else "depends on"
                at = f" (at {where})" if where else ""
                other_name = other["name"]
                other_layer = layer_of.get(other_name)
                if other["type"] == "test" or other_name in TEST_SUPPORT:
                    report(name, f"{verb} {other_name}, the test support, which production targets must not use{at}")
                elif other_name in C_TARGETS:
                    if pure:
                        report(name, f"{verb} {other_name} (a C target), but it is pure ({describe_layer(layer)}, "
                                     f"{layer_name[layer]}): pure targets use only lower pure targets{at}")
                elif other_layer is None:
                    continue  # not in the table: reported by check 1 for that target
                elif other_layer > layer:
                    report(name, f"{verb} {other_name} ({describe_layer(other_layer)}), which is above it "
                                 f"({describe_layer(layer)}){at}")
                elif other_layer == layer:
                    report(name, f"{verb} {other_name} ({describe_layer(other_layer)}), which is on its own layer "
                                 f"({describe_layer(layer)}); targets use only lower layers{at}")
            if pure:
                outside = {}  # module -> (what it is, where)
                for dep_name, module, package_name in declared:
                    if package_name is not None:
                        of = f" of {package_name}" if package_name != "?" else ""
                        outside[module] = (f"package product {dep_name}{of}", imports.get(module))
                for module, where in imports.items():
                    if module in target_of_module or module in PURE_ALLOWED_MODULES:
                        continue
                    if module in outside:
                        outside[module] = (outside[module][0], where)
                    elif module in PLATFORM_MODULES:
                        outside[module] = ("a platform module", where)
                    elif module in STDLIB_MODULES:
                        outside[module] = ("a stdlib module with concurrency or effects", where)
                    elif module in TOOLCHAIN_TEST_MODULES:
                        outside[module] = ("a test framework", where)
                    else:
                        outside[module] = ("a module from outside the package", where)
                for module, (what, where) in sorted(outside.items()):
                    verb = "imports" if where else "depends on"
                    at = f" (at {where})" if where else ""
                    report(name, f"{verb} {module} ({what}), but it is pure ({describe_layer(layer)}, "
                                 f"{layer_name[layer]}): values in, values out, only lower pure targets{at}")

        if not swift_files:
            continue  # C and system-library targets: no Swift imports to compare

        # 4. used but undeclared.
        for module, where in sorted(imports.items()):
            if module in declared_modules or module == module_name(name):
                continue
            if module in STDLIB_MODULES or module in PLATFORM_MODULES or module in TOOLCHAIN_TEST_MODULES:
                continue
            report(name, f"imports {module}, which it does not declare as a dependency (at {where})")

        # 5. declared but unused (not for test targets: they often declare extras).
        if not is_test:
            for dep_name, module, package_name in declared:
                if module in imports or (name, dep_name) in allow_unused:
                    continue
                what = ("target" if package_name is None else
                        "product" if package_name == "?" else f"product of {package_name}")
                report(name, f"declares {dep_name} ({what}) but none of its {len(swift_files)} Swift files imports it")

    if violations:
        for line in violations:
            print(line)
        print(f"module-graph: {len(violations)} violation(s); layers and rules: Tests/tools/check-module-graph.py",
              file=sys.stderr)
        return 1

    # The summary: layered targets by layer, then test support, C targets, tests.
    def order(row):
        name, kind, layer, exempt, *_ = row
        if not exempt:
            group = layer
        elif name in TEST_SUPPORT:
            group = 100
        elif name in C_TARGETS:
            group = 101
        else:
            group = 102
        return (group, name.lower())

    rows = [("layer", "target", "files", "lines", "depends on (targets | products)")]
    for name, kind, layer, exempt, files, lines, declared in sorted(summary, key=order):
        if not exempt:
            where = f"{layer} {layer_name[layer]}"
        elif name in TEST_SUPPORT:
            where = "- test support"
        elif name in C_TARGETS:
            where = "- C"
        else:
            where = "- test"
        local = [d for d, _, p in declared if p is None]
        products = [d for d, _, p in declared if p is not None]
        depends = ", ".join(local) or "-"
        if products:
            depends += " | " + ", ".join(products)
        rows.append((where, name, str(files), str(lines), depends))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    print(f"module-graph: ok: {len(summary)} targets, {len(LAYERS)} layers, no violations")
    for where, name, files, lines, depends in rows:
        print(f"{where:<{widths[0]}}  {name:<{widths[1]}}  {files:>{widths[2]}}  {lines:>{widths[3]}}  {depends}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
