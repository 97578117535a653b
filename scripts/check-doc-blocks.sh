#!/usr/bin/env bash
# Type-checks every ```swift block of README.md, of the DocC catalogs (Sources/*/Documentation.docc)
# and of the logging, tracing and metrics integrations' READMEs against the built modules, in the Swift 6 language
# mode with warnings as errors, so that each example is Swift a user can paste; and runs every block
# that shows output, comparing what it prints with what it shows (see "Docs whose shown output is
# true" below).
#
#   scripts/check-doc-blocks.sh [build-dir]     (default: runs swift build, then uses its bin path)
#
# How a block is compiled. Each block is its own file, which imports EventBus, EventBusFoundation
# (when the build has that module) and DocFixtures, but not Foundation (a block that needs it shows
# its import, as an app's file must); DocFixtures is a module made from
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
#   <!-- doc-check: same-as PATH --> the block is the file PATH (relative to the repository's root),
#                                  word for word: compared with it, not compiled here; the package
#                                  that holds PATH builds it (Integrations/ObservabilityExample, the
#                                  swift-otel example, in CI's observability stage)
#
# Docs whose shown output is true. A block shows what it prints with `// prints: <line>` comments,
# one per line of standard output, at the statement that prints it (a statement that prints two
# lines takes a second `// prints: …` on the comment line below it); `// prints nothing` says a
# statement prints nothing (a reason may follow); `…` in a shown line stands for any text (a log
# line's timestamp). Every block with such a comment is also compiled into an executable (module
# `MyApp`, so types print as `MyApp.LoginEvent`; `#fileID` is `MyApp/main.swift`, lines as in the
# block), run with a 20 s timeout, and its standard output compared with those comments, line by
# line. Only `top-level` blocks can run. Any other comment that begins with `prints` is an error, so
# that no shown output escapes the comparison.
#
# Documents: README.md and the DocC catalogs, against this package's build; and
# the READMEs of Integrations/EventBusLogging, EventBusTracing and EventBusMetrics, against those
# packages' builds (made here with the flags of their CI stages, `swift build --build-tests
# -Xswiftc -warnings-as-errors`, so that the stages reuse them; the metrics tests' build has
# swift-prometheus, which its README's Prometheus block imports). A `needs EventBusTracing` block is
# type-checked against the tracing package's build. The Remote and Postgres READMEs need a server or
# their packages' own builds: the postgres stage checks them.
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
# The integrations whose READMEs are checked here, each against its own package's build, made with
# the flags of its CI stage (`swift build --build-tests -Xswiftc -warnings-as-errors`), so that the
# stage reuses it.
integration_builds=()
for integration in EventBusLogging EventBusTracing EventBusMetrics; do
  log=$(mktemp)
  (cd "Integrations/$integration" && swift build --build-tests -Xswiftc -warnings-as-errors) >"$log" 2>&1 \
    || { tail -40 "$log"; echo "doc blocks: FAIL, Integrations/$integration does not build"; exit 1; }
  rm -f "$log"
  integration_builds+=("$(cd "Integrations/$integration" && swift build --show-bin-path)")
done

exec python3 - "$build" "${integration_builds[@]}" <<'PY'
import concurrent.futures, os, pathlib, re, shutil, subprocess, sys, tempfile, time

started = time.monotonic()

build = pathlib.Path(sys.argv[1]).resolve()
logging_build, tracing_build, metrics_build = (pathlib.Path(p).resolve() for p in sys.argv[2:5])
swiftc = shutil.which("swiftc")
manifest_api = pathlib.Path(os.path.realpath(swiftc)).parent.parent / "lib/swift/pm/ManifestAPI"
shims = pathlib.Path("Sources/_EventBusShims/include").resolve()


class Build:
    """A package's debug build: the modules a block imports, the objects a running block links."""

    def __init__(self, directory, linked):
        self.modules = directory / "Modules"
        self.has_foundation_module = (self.modules / "EventBusFoundation.swiftmodule").exists()
        self.objects = [str(o) for target in linked for o in sorted((directory / f"{target}.build").glob("*.o"))]
        # The C modules of its dependencies (swift-atomics' `_AtomicsShims`, say), which a module
        # that a block imports may need.
        c_modules = sorted((directory.parent.parent / "checkouts").glob("*/Sources/*/include/module.modulemap"))
        self.flags = ["-swift-version", "6", "-diagnostic-style", "llvm", "-I", str(self.modules), "-I", str(shims)]
        for modulemap in c_modules:
            self.flags += ["-I", str(modulemap.parent)]


root_build = Build(build, ["_EventBusShims", "EventBus", "EventBusFoundation", "EventBusJSON"])
tracing = Build(tracing_build, ["_EventBusShims", "EventBus", "EventBusTracing"])
builds = {pathlib.Path("Integrations/EventBusLogging/README.md"):
          Build(logging_build, ["_EventBusShims", "EventBus", "Logging", "EventBusLogging"]),
          pathlib.Path("Integrations/EventBusTracing/README.md"): tracing,
          pathlib.Path("Integrations/EventBusMetrics/README.md"):
          Build(metrics_build, ["_EventBusShims", "EventBus", "CoreMetrics", "EventBusMetrics"])}
# The integration builds where a `needs M` block is type-checked when this package's build has no M.
module_builds = {"EventBusTracing": tracing}

documents = ([pathlib.Path("README.md")] + sorted(pathlib.Path("Sources").glob("*/Documentation.docc/*.md"))
             + sorted(builds))
output_comment = re.compile(r"//\s*prints(?:: (?P<line>.*?)|(?P<none> nothing\b.*))\s*$")
loose_output = re.compile(r"//\s*prints\b")
fence = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
directive = re.compile(r"^\s*<!--\s*doc-check:\s*(.*?)\s*-->\s*$")
modes = {"top-level", "library", "inside", "manifest", "needs", "same-as"}
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
            if mode not in modes or (mode in ("inside", "needs", "same-as")) != (arg is not None):
                problems.append(f"{doc}:{start}: unknown doc-check directive '{d.group(1)}'")
                continue
        text = "\n".join(body)
        expected, shows_output = [], False
        for n, line in enumerate(body):
            m = output_comment.search(line)
            if m:
                shows_output = True
                if m.group("line") is not None:
                    expected.append(m.group("line"))
            elif loose_output.search(line):
                problems.append(f"{doc}:{start + 2 + n}: write shown output as `// prints: <line>` or "
                                f"`// prints nothing`, so that it is compared")
        if shows_output and mode != "top-level":
            problems.append(f"{doc}:{start + 1}: a block that shows output must be top-level to run")
            shows_output = False
        imports_bridge = re.search(r"^\s*import\s+EventBusFoundation\s*$", text, re.M)
        if mode != "manifest" and bridge_api.search(text) and not imports_bridge:
            problems.append(f"{doc}:{start + 1}: this block uses the NotificationCenter bridge "
                            f"('{bridge_api.search(text).group(0)}'): show `import EventBusFoundation` in it")
        # start + 2: the block's first line, 1-based
        blocks.append((doc, start + 2, mode, arg, body, expected if shows_output else None))

work = pathlib.Path(tempfile.mkdtemp(prefix="doc-blocks."))
try:
    # DocFixtures, once per build it is compiled against: a module to type-check with, an object
    # for the blocks that run.
    for number, each in enumerate({id(b): b for b in [root_build, *builds.values()]}.values()):
        each.fixtures = work / f"fixtures-{number}"
        each.fixtures.mkdir()
        fixtures = subprocess.run(
            [swiftc, "-emit-module", "-emit-object", "-parse-as-library", "-module-name", "DocFixtures",
             *each.flags, "-emit-module-path", str(each.fixtures / "DocFixtures.swiftmodule"),
             "-o", str(each.fixtures / "DocFixtures.o"), "scripts/doc-blocks/Fixtures.swift"],
            capture_output=True, text=True)
        if fixtures.returncode != 0:
            sys.exit(fixtures.stdout + fixtures.stderr
                     + "doc blocks: FAIL, scripts/doc-blocks/Fixtures.swift does not compile")

    def can_import(module):
        if module not in importable:
            probe = work / f"probe-{module}.swift"
            probe.write_text(f"import {module}\n")
            importable[module] = subprocess.run([swiftc, "-typecheck", *root_build.flags, str(probe)],
                                                capture_output=True).returncode == 0
        return importable[module]

    def build_for(doc, mode, arg):
        """The build a block is checked against: its document's, or the integration's that has the
        module a `needs` block needs when this package's build lacks it."""
        if mode == "needs" and not can_import(arg) and arg in module_builds:
            return module_builds[arg]
        return builds.get(doc, root_build)

    def run(doc, directory, source, command, expected):
        """Builds the block into an executable, runs it, and compares its output with `expected`."""
        env = builds.get(doc, root_build)
        executable = directory / "block"
        linked = subprocess.run(
            [c for c in command if c not in ("-typecheck",)] + ["-module-name", "MyApp", "-o", str(executable),
             str(source), str(env.fixtures / "DocFixtures.o"), *env.objects],
            capture_output=True, text=True, cwd=directory)
        if linked.returncode != 0:
            return False, "does not build into an executable:\n" + linked.stdout + linked.stderr
        try:
            ran = subprocess.run([str(executable)], capture_output=True, text=True, timeout=20, cwd=directory)
        except subprocess.TimeoutExpired:
            return False, "did not finish within 20 s"
        actual = [line.rstrip() for line in ran.stdout.rstrip("\n").split("\n")] if ran.stdout.strip() else []
        def matches(shown, printed):  # `…` in a shown line stands for any text (a timestamp, say)
            return re.fullmatch(".*".join(map(re.escape, shown.split("…"))), printed, re.S) is not None
        agree = len(actual) == len(expected) and all(map(matches, expected, actual))
        if ran.returncode != 0 or not agree:
            report = [f"exit {ran.returncode}; shown (// prints:) and printed, line by line:"]
            for n in range(max(len(actual), len(expected))):
                shown = expected[n] if n < len(expected) else "(nothing)"
                printed = actual[n] if n < len(actual) else "(nothing)"
                same = matches(shown, printed)
                report.append(f"  {'ok ' if same else 'DIFF'} shown:   {shown}")
                if not same:
                    report.append(f"       printed: {printed}")
            if ran.stderr.strip():
                report.append("  stderr: " + ran.stderr.strip().replace("\n", "\n          "))
            return False, "\n".join(report)
        return True, ""

    def check(index, block):
        doc, first, mode, arg, body, expected = block
        env = build_for(doc, mode, arg)
        flags, has_foundation_module = env.flags, env.has_foundation_module
        if mode == "needs" and env is root_build and not can_import(arg):
            return None, f"{doc}:{first - 1}: swift block (needs {arg})", ""
        if mode == "same-as":
            quoted = pathlib.Path(arg)
            where = f"{doc}:{first - 1}: swift block (same-as {arg})"
            if not quoted.is_file():
                return False, where, f"{arg}: no such file"
            if "\n".join(body) + "\n" != quoted.read_text():
                return False, where, f"differs from {arg}: the block must be the file, word for word"
            return "same", where, ""
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
            head = ["import EventBus", "import DocFixtures"]
            if has_foundation_module:
                head.append("import EventBusFoundation")
            head += imports
            tail = []
            if mode == "inside":
                head += [f"extension {arg} {{", "func docBlock() {"]
                tail = ["}", "}"]
            command = [swiftc, "-typecheck", "-warnings-as-errors", *flags, "-I", str(env.fixtures)]
            if mode in ("library", "needs"):
                command.append("-parse-as-library")
        directory = work / str(index)
        directory.mkdir()
        name = {"manifest": "Package.swift", "top-level": "main.swift"}.get(mode, "Block.swift")
        source = directory / name
        # The block's own lines keep their numbers in #fileID/#line (what a running block prints).
        location = [] if mode == "manifest" else [f'#sourceLocation(file: "{source}", line: 1)']
        source.write_text("\n".join(head + location + code + tail) + "\n")
        offset = 0 if location else len(head)
        result = subprocess.run(command + [str(source)], capture_output=True, text=True, cwd=directory)
        output = result.stdout + result.stderr
        if result.returncode == 0 and expected is not None:
            ran, report = run(doc, directory, source, command, expected)
            if not ran:
                return False, f"{doc}:{first - 1}: swift block (runs: {len(expected)} lines shown)", report
            return "ran", f"{doc}:{first - 1}", ""

        # Diagnostics at the markdown's own lines: line n of the file is line first + n - len(head) - 1.
        def relocate(m):
            line = int(m.group(1)) - offset
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
same = sum(1 for ok, _, _ in results if ok == "same")
ran = sum(1 for ok, _, _ in results if ok == "ran")
for ok, where, output in results:
    if ok is False:
        verb = "" if "(runs:" in where or "(same-as" in where else " does not type-check"
        problems.append(f"{where}{verb}:\n{output.rstrip()}")
for problem in problems:
    print(problem, end="\n\n")
readme = sum(1 for b in blocks if b[0] == pathlib.Path("README.md"))
articles = len({b[0] for b in blocks if b[0] != pathlib.Path("README.md")})
failed = sum(1 for ok, _, _ in results if ok is False)
bridge = "EventBusFoundation" if root_build.has_foundation_module else "the bridge inside EventBus"
if problems:
    print(f"doc blocks: FAIL, {failed} of {len(blocks)} Swift blocks do not type-check, do not print what they show "
          f"or differ from the file they quote, {len(problems) - failed} other problems (above)")
    sys.exit(1)
missing = sorted({b[3] for b in blocks if b[2] == "needs" and not importable.get(b[3], True)
                  and b[3] not in module_builds})
note = f"; {len(skipped)} skipped here, needing {', '.join(missing)}" if skipped else ""
print(f"doc blocks: {len(blocks) - len(skipped) - same} of {len(blocks)} Swift blocks type-checked ({readme} in README.md, "
      f"{len(blocks) - readme} in {articles} DocC articles and integration READMEs), Swift 6 mode, against {bridge}{note}; "
      f"{ran} that show output ran and printed it; {same} the same as the file it quotes (built elsewhere), "
      f"in {time.monotonic() - started:.0f} s")
PY
