#!/usr/bin/env bash
# Builds the DocC catalog against the library's symbol graph with warnings as errors: every
# ``symbol`` link in the articles and doc comments must resolve. Prints the abstract coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swift build --target EventBus -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir \
    -Xswiftc "$work/symbols" --scratch-path .build-docs >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
docc convert Sources/EventBus/Documentation.docc --additional-symbol-graph-dir "$work/symbols" \
    --output-path "$work/out" --fallback-display-name EventBus --fallback-bundle-identifier EventBus \
    --warnings-as-errors --experimental-documentation-coverage --coverage-summary-level brief >"$work/docc.log" 2>&1 \
    || { cat "$work/docc.log"; echo "docs: FAIL"; exit 1; }
types=$(grep -E '^Types' "$work/docc.log" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
members=$(grep -E '^Members' "$work/docc.log" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
echo "docs: DocC built with no warnings; summaries on types $types, members $members"
