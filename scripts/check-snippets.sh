#!/usr/bin/env bash
# Type-checks every file in Snippets/ against the built EventBus module, and checks that README.md
# quotes Snippets/QuickStart.swift verbatim. Usage: scripts/check-snippets.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-.build/debug}
[ -d "$build/Modules" ] || swift build >/dev/null
for snippet in Snippets/*.swift; do
  swiftc -typecheck -swift-version 6 -I "$build/Modules" -I Sources/_EventBusShims/include "$snippet"
done
python3 - <<'PY'
import re, sys
readme = open("README.md").read()
snippet = open("Snippets/QuickStart.swift").read()
match = re.search(r"<!-- snippet: Snippets/QuickStart.swift[^>]*-->\n```swift\n(.*?)```", readme, re.S)
if not match or match.group(1) != snippet:
    sys.exit("README.md's quick start differs from Snippets/QuickStart.swift")
PY
echo "snippets: $(ls Snippets/*.swift | wc -l) type-checked; README quick start matches Snippets/QuickStart.swift"
