#!/usr/bin/env bash
# Prints a `--filter` pattern that selects the tests of a test binary carrying a Swift Testing tag:
# the suites and tests whose traits include `.tags(.<tag>)`, as the binary itself lists them (its
# event stream names each test's tags), so the tag in the source is the one list.
#
#   scripts/tagged-suites.sh .build/debug/EventBusPackageTests.xctest stress
set -euo pipefail
binary=$1 tag=$2
stream=$(mktemp)
trap 'rm -f "$stream"' EXIT
"$binary" --testing-library swift-testing --list-tests \
    --experimental-event-stream-output "$stream" --experimental-event-stream-version 0 >/dev/null 2>&1
python3 - "$stream" ".$tag" <<'PY'
import json, re, sys
ids = []
for line in open(sys.argv[1]):
    record = json.loads(line)
    payload = record.get("payload", {})
    if record.get("kind") == "test" and sys.argv[2] in payload.get("_tags", []):
        # A suite's id is its module-qualified type name; a test's ends in its source location.
        ids.append(re.escape(payload["id"].split("/")[0] if payload.get("kind") == "suite" else payload["id"]))
if not ids:
    sys.exit(f"no test is tagged {sys.argv[2]}")
print("^(" + "|".join(sorted(set(ids))) + ")(/|$)")
PY
