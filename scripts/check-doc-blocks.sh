#!/usr/bin/env bash
# Type-checks every ```swift block of README.md and of the DocC catalogs (Sources/*/Documentation.docc)
# against the built modules, in the Swift 6 language mode with warnings as errors, so that each
# example is Swift a user can paste.
#
#   scripts/check-doc-blocks.sh [build-dir]     (default: runs swift build, then uses its bin path)
#
# How a block is compiled. Each block is its own file, which imports EventBus, Foundation,
# EventBusFoundation (when the build has that module) and DocFixtures, a module made from
# scripts/doc-blocks/Fixtures.swift: the app code an example takes for granted (`bus`, `LoginEvent`,
# `ChatMessage`, `ProfileScreen`, `renderQueue`...) and, where the platform has none, stand-ins for
# UIKit's `UIViewController` and Combine's `ObservableObject` with the same isolation. What a block
# declares shadows the fixtures. An HTML comment on the line right before the fence (GitHub and DocC
# do not render it) says how to compile the block; the default is `top-level`:
#
#   <!-- doc-check: top-level -->  the block is a main.swift: declarations and statements, `await`
#                                  allowed, top-level code on the main actor (as in an app's main.swift)
#   <!-- doc-check: library -->    declarations only, compiled as a library file (for @Test functions)
#   <!-- doc-check: inside T -->   statements that run in a method of the fixture class T (`self` is a
#                                  T): for lines written inside a screen, such as `subscribe(...)`
#   <!-- doc-check: manifest -->   the arguments of a Package.swift's `Package(...)`, type-checked
#                                  against PackageDescription
#   <!-- doc-check: needs M -->    declarations (as `library`) that need module M, such as SwiftUI:
#                                  type-checked where M can be imported, reported as skipped elsewhere
#                                  (SwiftUI does not exist on Linux)
#
# A block's `import` lines are moved to the top of its file; `import EventBusFoundation` is dropped
# when the build has no such module (the bridge is then still part of EventBus), and a block that
# uses the bridge's API (subscribeNotification, bridge(...), NotificationEvent...) must show that
# import. Errors are reported at the markdown file's own line numbers. Every fenced block must name
# its language, so that no Swift block escapes the check; other languages (sh, bash) are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
  build=$1
else
  swift build >/dev/null
  build=$(swift build --show-bin-path)
fi
[ -e "$build/Modules/EventBus.swiftmodule" ] || { echo "no EventBus module in $build/Modules: run swift build"; exit 1; }

exec python3 - "$build" <<'PY'
import concurrent.futures, os, pathlib, re, shutil, subprocess, sys, tempfile

build = pathlib.Path(sys.argv[1]).resolve()
modules = build / "Modules"
has_foundation_module = (modules / "EventBusFoundation.swiftmodule").exists()
swiftc = shutil.which("swiftc")
manifest_api = pathlib.Path(os.path.realpath(swiftc)).parent.parent / "lib/swift/pm/ManifestAPI"
shims = pathlib.Path("Sources/_EventBusShims/include").resolve()
flags = ["-swift-version", "6", "-diagnostic-style", "llvm", "-I", str(modules), "-I", str(shims)]

documents = [pathlib.Path("README.md")] + sorted(pathlib.Path("Sources").glob("*/Documentation.docc/*.md"))
fence = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
directive = re.compile(r"^\s*<!--\s*doc-check:\s*(.*?)\s*-->\s*$")
modes = {"top-level", "library", "inside", "manifest", "needs"}
importable = {}  # module name -> whether `import M` type-checks here
# The API of the EventBusFoundation product: a block that uses it must show its import.
bridge_api = re.compile(r"\b(subscribeNotification|bridge(AppLifecycle)?\(|on\(notification:|NotificationEvent|"
                        r"EventBus\(notificationCenter:|notificationCenter\b|notificationBridgeIssueHandler|"
                        r"NotificationBridgeIssue|AppLifecycleEvent)")

problems, blocks = [], []
for doc in documents:
    lines = doc.read_text().split("\n")
    i = 0
    while i < len(lines):
        m = fence.match(lines[i])
        if not m:
            i += 1
            continue
        indent, marker, lang = m.groups()
        start = i
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(marker):
            i += 1
        body = [line[len(indent):] if line.startswith(indent) else line for line in lines[start + 1:i]]
        i += 1
        if not lang:
            problems.append(f"{doc}:{start + 1}: a code block without a language: name it (swift, sh, text...)")
            continue
        if lang != "swift":
            continue
        mode, arg = "top-level", None
        d = directive.match(lines[start - 1]) if start > 0 else None
        if d:
            words = d.group(1).split()
            mode, arg = words[0], (words[1] if len(words) > 1 else None)
            if mode not in modes or (mode in ("inside", "needs")) != (arg is not None):
                problems.append(f"{doc}:{start}: unknown doc-check directive '{d.group(1)}'")
                continue
        text = "\n".join(body)
        imports_bridge = re.search(r"^\s*import\s+EventBusFoundation\s*$", text, re.M)
        if mode != "manifest" and bridge_api.search(text) and not imports_bridge:
            problems.append(f"{doc}:{start + 1}: this block uses the NotificationCenter bridge "
                            f"('{bridge_api.search(text).group(0)}'): show `import EventBusFoundation` in it")
        blocks.append((doc, start + 2, mode, arg, body))  # start + 2: the block's first line, 1-based

work = pathlib.Path(tempfile.mkdtemp(prefix="doc-blocks."))
try:
    fixtures = subprocess.run(
        [swiftc, "-emit-module", "-parse-as-library", "-module-name", "DocFixtures", *flags,
         "-emit-module-path", str(work / "DocFixtures.swiftmodule"), "scripts/doc-blocks/Fixtures.swift"],
        capture_output=True, text=True)
    if fixtures.returncode != 0:
        sys.exit(fixtures.stdout + fixtures.stderr + "doc blocks: FAIL, scripts/doc-blocks/Fixtures.swift does not compile")

    def can_import(module):
        if module not in importable:
            probe = work / f"probe-{module}.swift"
            probe.write_text(f"import {module}\n")
            importable[module] = subprocess.run([swiftc, "-typecheck", *flags, str(probe)],
                                                capture_output=True).returncode == 0
        return importable[module]

    def check(index, block):
        doc, first, mode, arg, body = block
        if mode == "needs" and not can_import(arg):
            return None, f"{doc}:{first - 1}: swift block (needs {arg})", ""
        imports, code = [], []
        for line in body:
            if re.match(r"\s*import\s+\w+\s*$", line):
                if has_foundation_module or line.split()[-1] != "EventBusFoundation":
                    imports.append(line.strip())
                code.append("")  # keeps the line numbers
            else:
                code.append(line)
        if mode == "manifest":
            head = ["import PackageDescription", "let package = Package(", 'name: "MyApp",']
            tail = [")"]
            command = [swiftc, "-typecheck", "-swift-version", "6", "-diagnostic-style", "llvm",
                       "-I", str(manifest_api), "-package-description-version", "6.0"]
        else:
            head = ["import EventBus", "import Foundation", "import DocFixtures"]
            if has_foundation_module:
                head.append("import EventBusFoundation")
            head += imports
            tail = []
            if mode == "inside":
                head += [f"extension {arg} {{", "func docBlock() {"]
                tail = ["}", "}"]
            command = [swiftc, "-typecheck", "-warnings-as-errors", *flags, "-I", str(work)]
            if mode in ("library", "needs"):
                command.append("-parse-as-library")
        directory = work / str(index)
        directory.mkdir()
        name = {"manifest": "Package.swift", "top-level": "main.swift"}.get(mode, "Block.swift")
        source = directory / name
        source.write_text("\n".join(head + code + tail) + "\n")
        result = subprocess.run(command + [str(source)], capture_output=True, text=True, cwd=directory)
        output = result.stdout + result.stderr

        # Diagnostics at the markdown's own lines: line n of the file is line first + n - len(head) - 1.
        def relocate(m):
            line = int(m.group(1)) - len(head)
            if 1 <= line <= len(code):
                return f"{doc}:{first + line - 1}:"
            return f"{doc}:{first}: (wrapper line {m.group(1)}):"
        output = re.sub(re.escape(str(source)) + r":(\d+):", relocate, output)
        output = output.replace(str(source), str(doc))
        return result.returncode == 0, f"{doc}:{first - 1}: swift block ({mode}{' ' + arg if arg else ''})", output

    for module in {b[3] for b in blocks if b[2] == "needs"}:
        can_import(module)  # once, before the parallel checks
    jobs = min(4, os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda item: check(*item), enumerate(blocks)))
finally:
    shutil.rmtree(work, ignore_errors=True)

skipped = [where for ok, where, _ in results if ok is None]
for ok, where, output in results:
    if ok is False:
        problems.append(f"{where} does not type-check:\n{output.rstrip()}")
for problem in problems:
    print(problem, end="\n\n")
readme = sum(1 for b in blocks if b[0].name == "README.md")
articles = len({b[0] for b in blocks if b[0].name != "README.md"})
failed = sum(1 for ok, _, _ in results if ok is False)
bridge = "EventBusFoundation" if has_foundation_module else "the bridge inside EventBus"
if problems:
    print(f"doc blocks: FAIL, {failed} of {len(blocks)} Swift blocks do not type-check, "
          f"{len(problems) - failed} other problems (above)")
    sys.exit(1)
missing = sorted({b[3] for b in blocks if b[2] == "needs" and not importable.get(b[3], True)})
note = f"; {len(skipped)} skipped here, needing {', '.join(missing)}" if skipped else ""
print(f"doc blocks: {len(blocks) - len(skipped)} of {len(blocks)} Swift blocks type-checked ({readme} in README.md, "
      f"{len(blocks) - readme} in {articles} DocC articles), Swift 6 mode, against {bridge}{note}")
PY
