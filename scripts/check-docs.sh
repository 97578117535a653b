#!/usr/bin/env bash
# Builds the DocC catalogs (EventBus, EventBusFoundation, EventBusJSON) with warnings as errors, so that every
# ``symbol`` link in the articles and doc comments must resolve, and prints the abstract coverage of each:
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
# Every public type, member and global of the three modules must have a summary (DocC's abstract
# coverage, 100 %), and so must every public symbol of EventBusTesting (which has no catalog: its
# symbol graph is read): below that the check fails and lists what has none, with its file and line.
# Members the compiler synthesizes from another module's protocol extensions (Collection's
# `enumerated()`, Equatable's `!=`) are left out of the graphs (-symbol-graph-skip-synthesized-members):
# they are documented where they are declared, and they are not ours to document. Every member
# declared in these modules counts, whoever is editing its file.
#
#   scripts/check-docs.sh    (DOCS_SCRATCH_PATH=dir sets the build's scratch path; default .build-docs)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scratch=${DOCS_SCRATCH_PATH:-.build-docs}

# One build emits the graphs of EventBus and EventBusFoundation (and EventBusFoundation's extensions);
# the next ones, with the same flags, add EventBusTesting's and EventBusJSON's (EventBus is not rebuilt).
for target in EventBusFoundation EventBusTesting EventBusJSON; do
    swift build --target "$target" -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir \
        -Xswiftc "$work/symbols" -Xswiftc -emit-extension-block-symbols -Xswiftc -symbol-graph-skip-synthesized-members \
        --scratch-path "$scratch" \
        >"$work/build.log" 2>&1 || { cat "$work/build.log"; echo "docs: FAIL (build of $target)"; exit 1; }
done
mkdir "$work/core" "$work/foundation" "$work/testing" "$work/json"
mv "$work"/symbols/EventBusJSON.symbols.json "$work"/symbols/EventBusJSON@*.symbols.json "$work/json/"
mv "$work"/symbols/EventBusTesting.symbols.json "$work"/symbols/EventBusTesting@*.symbols.json "$work/testing/"
mv "$work"/symbols/EventBusFoundation.symbols.json "$work"/symbols/EventBusFoundation@*.symbols.json "$work/foundation/"
mv "$work"/symbols/EventBus.symbols.json "$work/core/"
for graph in "$work"/symbols/EventBus@*.symbols.json; do [ -e "$graph" ] && mv "$graph" "$work/core/"; done

# convert NAME SYMBOL-DIR [DOCC OPTIONS...]: builds Sources/NAME/Documentation.docc into
# $work/NAME.doccarchive, sets `summary` to "types X, members Y, globals Z" from DocC's coverage
# table, and adds to `undocumented` each symbol of the catalog that has no summary (from the
# archive's documentation-coverage.json, located through the symbol graphs).
undocumented=""
convert() {
    local name=$1 symbols=$2
    shift 2
    docc convert "Sources/$name/Documentation.docc" --additional-symbol-graph-dir "$symbols" \
        --output-path "$work/$name.doccarchive" --fallback-display-name "$name" --fallback-bundle-identifier "$name" \
        --enable-experimental-external-link-support "$@" \
        --warnings-as-errors --experimental-documentation-coverage --coverage-summary-level brief \
        >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; echo "docs: FAIL ($name catalog)"; exit 1; }
    local types members globals
    types=$(grep -E '^Types' "$work/$name.log" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
    members=$(grep -E '^Members' "$work/$name.log" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
    globals=$(grep -E '^Globals' "$work/$name.log" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
    summary="types $types, members $members, globals ${globals:-none}"
    undocumented+=$(python3 - "$work/$name.doccarchive/documentation-coverage.json" "$symbols" <<'PY'
import collections, glob, json, re, sys

coverage, symbols = json.load(open(sys.argv[1])), collections.defaultdict(list)
for path in glob.glob(sys.argv[2] + "/*.symbols.json"):
    for symbol in json.load(open(path))["symbols"]:
        symbols["/".join(symbol["pathComponents"])].append(symbol)
seen = set()
for entry in coverage:
    if not entry["kind"]["isSymbol"] or entry["hasAbstract"] or entry["kind"]["name"] == "CollectionGroup":
        continue
    # doc://Bundle/documentation/Module/Type/member-disambiguation → Type/member
    components = entry["referencePath"].split("/documentation/", 1)[1].split("/")[1:]
    path = "/".join(re.sub(r"-(swift\.[a-z.]+|[0-9a-z]{4,6}(-swift\.[a-z.]+)?)$", "", c) for c in components)
    located = [s for s in symbols.get(path, []) if s.get("location")]
    # Of overloads, those with no comment; else the comment does not begin with a summary (a line
    # such as "0." is a list to DocC).
    located = [s for s in located if not s.get("docComment")] or located
    places = sorted(
        "%s:%d" % (s["location"]["uri"].split("/Sources/", 1)[-1], s["location"]["position"]["line"] + 1)
        for s in located
    ) or ["(implicit, e.g. a synthesized Codable init: write it out to document it)"]
    for place in places:
        if (place, path) not in seen:
            seen.add((place, path))
            print("  %s  %s (%s)" % (place, path, entry["kind"]["name"]))
PY
)$'\n'
}

# complete "(n/m)": whether n == m.
complete() { [[ $1 =~ \(([0-9]+)/([0-9]+)\) ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; }

convert EventBus "$work/core"
core=$summary
convert EventBusFoundation "$work/foundation" --dependency "$work/EventBus.doccarchive"
foundation=$summary
convert EventBusJSON "$work/json" --dependency "$work/EventBus.doccarchive"
json=$summary

# EventBusTesting has no catalog: its public symbols are counted in its graphs (an extension block is
# not a symbol of its own), and one with no doc comment is listed like the catalogs' ones.
testing=$(python3 - "$work/testing" <<'PY'
import glob, json, sys

total, missing = 0, []
for path in sorted(glob.glob(sys.argv[1] + "/*.symbols.json")):
    for symbol in json.load(open(path))["symbols"]:
        if symbol["accessLevel"] not in ("public", "open") or symbol["kind"]["identifier"] == "swift.extension":
            continue
        total += 1
        lines = [line["text"].strip() for line in (symbol.get("docComment") or {}).get("lines", [])]
        if not lines or not lines[0]:
            location = symbol.get("location")
            place = "%s:%d" % (location["uri"].split("/Sources/", 1)[-1], location["position"]["line"] + 1) if location else "(implicit)"
            missing.append("  %s  %s" % (place, "/".join(symbol["pathComponents"])))
print("symbols %d%%(%d/%d)" % (100 * (total - len(missing)) // max(total, 1), total - len(missing), total))
print("\n".join(missing))
PY
)
undocumented+=$(tail -n +2 <<<"$testing")$'\n'
testing=$(head -n 1 <<<"$testing")
summaries="summaries: EventBus $core; EventBusFoundation $foundation; EventBusJSON $json; EventBusTesting (no catalog) $testing"
for figure in $(grep -oE '\([0-9]+/[0-9]+\)' <<<"$core $foundation $json $testing"); do
    if ! complete "$figure"; then
        echo "Public symbols with no summary (a /// line above the declaration):"
        grep -v '^$' <<<"$undocumented" | sort -u
        echo "docs: FAIL (every public type, member and global needs a summary; $summaries)"
        exit 1
    fi
done
echo "docs: the three DocC catalogs built with no warnings, every public symbol documented; $summaries"
