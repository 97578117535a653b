#!/usr/bin/env bash
# Type-checks every ```swift block of Integrations/EventBusPostgres/README.md and
# Integrations/EventBusRemote/README.md against this package's debug build (which holds the
# EventBus, EventBusRemote, EventBusPostgres and postgres-nio modules), in the Swift 6 language mode
# with warnings as errors: the integrations' part of the doc-block check (scripts/check-doc-blocks.sh
# does the library's README and articles against the root build). with-postgres.sh runs it after
# its build, so CI's Postgres stage reuses that build; no server is needed.
#
#   Integrations/EventBusPostgres/scripts/check-readme-blocks.sh [bin-path]
#
# A block that starts with `// Package.swift` is the arguments of a manifest's `Package(...)`,
# type-checked against PackageDescription. Every other block is a main.swift (declarations and
# statements, `await` allowed) that imports EventBus, EventBusRemote, Foundation (and, on the Postgres
# page, EventBusPostgres, as its quick start does) and DocFixtures, a module made from the fixtures below: what the examples take from the app around them (`client`,
# `listen`, `logger`, keys…); what a block declares shadows them.
set -euo pipefail
pkg=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$(swift build --package-path "$pkg" --show-bin-path)}
[ -e "$bin/Modules/EventBusPostgres.swiftmodule" ] || { echo "no EventBusPostgres module in $bin: build first"; exit 1; }

exec python3 - "$pkg" "$bin" <<'PY'
import os, pathlib, re, shutil, subprocess, sys, tempfile, time

started = time.monotonic()
pkg, bin = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
root = pkg.parent.parent
swiftc = shutil.which("swiftc")
manifest_api = pathlib.Path(os.path.realpath(swiftc)).parent.parent / "lib/swift/pm/ManifestAPI"

# The C modules the Swift ones depend on (NIO's, the library's shims): their module maps.
flags = ["-swift-version", "6", "-warnings-as-errors", "-I", str(bin / "Modules")]
maps = list(bin.glob("*/module.modulemap")) + [
    m for m in list((pkg / ".build/checkouts").glob("*/Sources/*/include/module.modulemap"))
    + list((root / "Sources").glob("*/include/module.modulemap"))]
for m in maps:
    flags += ["-Xcc", f"-fmodule-map-file={m.resolve()}", "-I", str(m.resolve().parent)]

fixtures = """
import EventBus
import EventBusPostgres
import Foundation
import Logging
import PostgresNIO

/// The database password, the cluster's shared keys, the app's logger, an order's id.
public let secret = "secret"
public let clusterKey = Data(repeating: 7, count: 32)
public let sharedKey = Data(repeating: 7, count: 32)
public let key = Data(repeating: 7, count: 32)
public let logger = Logger(label: "app")
public let id = UUID()
/// The app's pool and its listening connection's settings.
public let client = PostgresClient(
    configuration: .init(host: "db", username: "app", password: secret, database: "app", tls: .disable))
public let listen = PostgresConnection.Configuration(
    host: "db", username: "app", password: secret, database: "app", tls: .disable)
"""

documents = [pkg / "README.md", pkg.parent / "EventBusRemote/README.md"]
fence = re.compile(r"^```(\S*)\s*$")
work = pathlib.Path(tempfile.mkdtemp(prefix="readme-blocks."))
failures, count = [], 0
try:
    (work / "fixtures").mkdir()
    (work / "fixtures/Fixtures.swift").write_text(fixtures)
    made = subprocess.run(
        [swiftc, "-emit-module", "-parse-as-library", "-module-name", "DocFixtures", *flags,
         "-emit-module-path", str(work / "fixtures/DocFixtures.swiftmodule"), str(work / "fixtures/Fixtures.swift")],
        capture_output=True, text=True)
    if made.returncode != 0:
        sys.exit("README blocks: the fixtures do not build:\n" + made.stdout + made.stderr)
    for doc in documents:
        lines = doc.read_text().split("\n")
        i = 0
        while i < len(lines):
            m = fence.match(lines[i])
            if not m:
                i += 1
                continue
            lang, first = m.group(1), i + 2
            i += 1
            body = []
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            i += 1
            if lang == "":
                failures.append(f"{doc}:{first - 1}: a fenced block must name its language")
            if lang != "swift":
                continue
            count += 1
            directory = work / str(count)
            directory.mkdir()
            if body and body[0].startswith("// Package.swift"):
                head = ["import PackageDescription", "let package = Package(", 'name: "MyApp",']
                source = directory / "Package.swift"
                source.write_text("\n".join(head + body + [")"]) + "\n")
                command = [swiftc, "-typecheck", "-swift-version", "6", "-I", str(manifest_api),
                           "-package-description-version", "6.0", str(source)]
            else:
                head = ["import EventBus", "import EventBusRemote", "import Foundation", "import DocFixtures"]
                if doc == documents[0]:
                    head.append("import EventBusPostgres")  # the page's quick start imports it
                source = directory / "main.swift"
                source.write_text("\n".join(head + [f'#sourceLocation(file: "{doc}", line: {first})'] + body) + "\n")
                command = [swiftc, "-typecheck", *flags, "-I", str(work / "fixtures"), str(source)]
            result = subprocess.run(command, capture_output=True, text=True, cwd=directory)
            if result.returncode != 0:
                failures.append(f"{doc}:{first - 1}: swift block does not type-check:\n"
                                + (result.stdout + result.stderr).rstrip())
finally:
    shutil.rmtree(work, ignore_errors=True)
for failure in failures:
    print(failure, end="\n\n")
if failures:
    sys.exit(f"README blocks: FAIL, {len(failures)} problems (above)")
print(f"README blocks: {count} Swift blocks of the Postgres and Remote READMEs type-checked, "
      f"Swift 6 mode, warnings as errors, in {time.monotonic() - started:.0f} s")
PY
