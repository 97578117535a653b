#!/usr/bin/env bash
# Builds the DocC catalogs with warnings as errors, so that every ``symbol`` link in the articles
# and doc comments must resolve, and prints the abstract coverage of each:
#
#   - Sources/EventBus/Documentation.docc against the EventBus symbol graph;
#   - Sources/EventBusFoundation/Documentation.docc against the EventBusFoundation symbol graphs:
#     its own symbols (EventBusFoundation.symbols.json) and its extensions of other modules' types
#     (EventBusFoundation@EventBus.symbols.json for EventBus, SubscriberMaker and EventSubscribing;
#     EventBusFoundation@Foundation.symbols.json for NSObject), emitted as extension blocks as
#     swift-docc-plugin does. DocC files those extensions under an extended module named EventBus, so
#     in that catalog ``EventBus/EventBus/on(notification:object:)`` is the bridge's member and a
#     relative ``EventBus/...`` link never reaches the core. Core symbols are linked with absolute
#     links, ``/EventBus/SubscriberMaker/atQueue(_:)``, which DocC resolves in the core's archive,
#     passed as a dependency (its experimental external link support, as swift-docc-plugin's combined
#     documentation uses it).
#   - Sources/EventBusJSON/Documentation.docc against the EventBusJSON symbol graphs, the same way
#     (its deprecated `EventBus.JSONValue` aliases are an extension of the core's class).
#
#   scripts/check-docs.sh    (DOCS_SCRATCH_PATH=dir sets the build's scratch path; default .build-docs)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scratch=${DOCS_SCRATCH_PATH:-.build-docs}

# Two builds emit the graphs of EventBus, EventBusFoundation and EventBusJSON (and their extensions).
for target in EventBusFoundation EventBusJSON; do
  swift build --target "$target" -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir \
      -Xswiftc "$work/symbols" -Xswiftc -emit-extension-block-symbols --scratch-path "$scratch" \
      >"$work/build.log" 2>&1 || { cat "$work/build.log"; echo "docs: FAIL (build)"; exit 1; }
done
mkdir "$work/core" "$work/foundation" "$work/json"
mv "$work"/symbols/EventBusFoundation.symbols.json "$work"/symbols/EventBusFoundation@*.symbols.json "$work/foundation/"
mv "$work"/symbols/EventBusJSON.symbols.json "$work"/symbols/EventBusJSON@*.symbols.json "$work/json/"
mv "$work"/symbols/EventBus.symbols.json "$work/core/"
for graph in "$work"/symbols/EventBus@*.symbols.json; do [ -e "$graph" ] && mv "$graph" "$work/core/"; done

# convert NAME SYMBOL-DIR [DOCC OPTIONS...]: builds Sources/NAME/Documentation.docc into
# $work/NAME.doccarchive, and sets `summary` to "types X, members Y" from DocC's coverage table.
convert() {
    local name=$1 symbols=$2
    shift 2
    docc convert "Sources/$name/Documentation.docc" --additional-symbol-graph-dir "$symbols" \
        --output-path "$work/$name.doccarchive" --fallback-display-name "$name" --fallback-bundle-identifier "$name" \
        --enable-experimental-external-link-support "$@" \
        --warnings-as-errors --experimental-documentation-coverage --coverage-summary-level brief \
        >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; echo "docs: FAIL ($name catalog)"; exit 1; }
    local types members
    types=$(grep -E '^Types' "$work/$name.log" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
    members=$(grep -E '^Members' "$work/$name.log" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
    summary="types $types, members $members"
}

convert EventBus "$work/core"
core=$summary
convert EventBusFoundation "$work/foundation" --dependency "$work/EventBus.doccarchive"
foundation=$summary
convert EventBusJSON "$work/json" --dependency "$work/EventBus.doccarchive"
echo "docs: the DocC catalogs built with no warnings; summaries: EventBus $core; EventBusFoundation $foundation; EventBusJSON $summary"
