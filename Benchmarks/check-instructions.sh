#!/usr/bin/env bash
# The instruction gate: the cost targets of issue 9 as ratios of instruction counts, all measured in
# one run of this script by valgrind's callgrind (deterministic for the same binary and inputs,
# whatever else the machine is doing; the environment is pinned below).
#
#   ./check-instructions.sh            # measure, print the table, exit 1 if a target is missed
#   ./check-instructions.sh --report   # the same table, but never fails (exit 0)
#   JOBS=1 ./check-instructions.sh     # callgrind runs at once (default 2); counts do not change
#
# About 1–1.5 minutes on 2 cores (release build of EventBusInstructions first, if needed). Only the
# measured region (`measured(_:_:)` in EventBusInstructions) is counted: the populations of
# subscribers, even the 1,000,000 one, are built and warmed up outside it.
set -uo pipefail
cd "$(dirname "$0")"

# The targets. One per line: id, comparison, limit, what is compared.
#   max: the ratio must be <= limit;  min: the ratio must be >= limit.
# Ratios (see `ratio_of` below):
#   per-subscriber  (EventBus N=1000 - N=0) / 1000 over the same for the floor     (lower is better)
#   per-subscriber-value  the same for handlers given as a closure value, not a literal
#   publish-1-*     the other contender's instructions at N=1 over EventBus's      (higher is better)
#   subdispose-*    NotificationCenter's subscribe+dispose over EventBus's          (higher is better)
#   subdispose-flat EventBus's subscribe+dispose, max over min of 1k/10k/100k/1M    (lower is better)
read -r -d '' TARGETS <<'EOF'
per-subscriber          max  1.5   each extra synchronous subscriber, EventBus / floor
per-subscriber-value    max  1.75  the same, the handler a closure value (1.70x: its reabstraction thunk; goal 1.5x not met)
publish-1-nc-nil        min  10    publish to 1 subscriber, NotificationCenter userInfo:nil / EventBus
publish-1-opencombine   min  3.5   publish to 1 subscriber, OpenCombine / EventBus
subdispose-0            min  3     subscribe+dispose, 0 existing, NotificationCenter / EventBus
subdispose-10k          min  3     subscribe+dispose, 10k existing, NotificationCenter / EventBus
subdispose-100k         min  3     subscribe+dispose, 100k existing, NotificationCenter / EventBus
subdispose-flat         max  1.5   subscribe+dispose, EventBus, max / min over 1k, 10k, 100k, 1M existing
EOF

# Operations per scenario (instructions are divided by them). Publishes: enough to dwarf the call
# into the measured region. Subscribe+dispose: at least the population up to 100k, so that a
# periodic sweep with period max(256, population) (today's core) lands in the window and is
# amortised; at 1M, 200k (a sweep with a longer period is not seen: see Benchmarks/README.md).
SCENARIOS=(
    "publish_N=0_floor 20000"
    "publish_N=1_floor 20000"
    "publish_N=1000_floor 1000"
    "publish_N=0_closure-array 20000"
    "publish_N=1_closure-array 20000"
    "publish_N=1000_closure-array 1000"
    "publish_N=0_EventBus 20000"
    "publish_N=1_EventBus 20000"
    "publish_N=1000_EventBus 1000"
    "publish_N=0_EventBus-closure-value 20000"
    "publish_N=1000_EventBus-closure-value 1000"
    "publish_N=1_NotificationCenter-nil 20000"
    "publish_N=1_OpenCombine 20000"
    "subscribe+dispose_existing=0_EventBus 110000"
    "subscribe+dispose_existing=1k_EventBus 110000"
    "subscribe+dispose_existing=10k_EventBus 110000"
    "subscribe+dispose_existing=100k_EventBus 110000"
    "subscribe+dispose_existing=1M_EventBus 200000"
    "subscribe+dispose_existing=0_NotificationCenter 110000"
    "subscribe+dispose_existing=10k_NotificationCenter 110000"
    "subscribe+dispose_existing=100k_NotificationCenter 110000"
)

report_only=false
case "${1:-}" in
    --report) report_only=true ;;
    "") ;;
    *) echo "usage: $0 [--report]" >&2; exit 64 ;;
esac
jobs=${JOBS:-2}

# A missing tool or a failed build fails the gate (exit 1), unless --report.
give_up() {
    echo "instructions: FAIL: $1"
    if $report_only; then exit 0; else exit 1; fi
}
command -v valgrind >/dev/null || give_up "valgrind is needed (apt-get install valgrind)"
command -v objcopy >/dev/null || give_up "objcopy is needed (apt-get install binutils)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! swift build -c release --product EventBusInstructions >"$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log"
    give_up "swift build -c release --product EventBusInstructions failed"
fi
binary=$(swift build -c release --show-bin-path)/EventBusInstructions
# valgrind 3.19 cannot read the DWARF 5 Swift 6 writes; the symbol table is all it needs here.
objcopy --strip-debug "$binary" "$work/EventBusInstructions"

# One scenario under callgrind; writes "<instructions collected> <operations>" to $work/<scenario>,
# or nothing if the run failed (non-zero exit, e.g. an unknown scenario, or nothing collected).
# Pinned environment: hashing seeded deterministically (Dictionary/Set probe counts otherwise vary
# from run to run, NotificationCenter's by ~1.5 %), nothing else inherited but PATH.
measure() {
    local scenario=$1 operations=$2 collected
    if ! env -i PATH="$PATH" SWIFT_DETERMINISTIC_HASHING=1 \
        valgrind --tool=callgrind --callgrind-out-file="$work/$scenario.callgrind" --toggle-collect='*measured*' \
        "$work/EventBusInstructions" "$scenario" "$operations" >"$work/$scenario.log" 2>&1; then
        return 0
    fi
    collected=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/$scenario.log")
    rm -f "$work/$scenario.callgrind"
    if [[ -n "$collected" && "$collected" != 0 ]]; then echo "$collected $operations" >"$work/$scenario"; fi
}
export -f measure
export work

started=$SECONDS
printf '%s\n' "${SCENARIOS[@]}" | xargs -P "$jobs" -L 1 bash -c 'measure "$0" "$1"'
elapsed=$((SECONDS - started))

# Instructions per operation of a scenario, or empty if its run failed.
per_op() {
    [[ -s "$work/$1" ]] && awk '{ printf "%.1f", $1 / $2 }' "$work/$1"
}

# The table: every scenario's instructions per operation, then the checked ratios.
echo "instructions per operation (callgrind, SWIFT_DETERMINISTIC_HASHING=1, one run, ${elapsed}s):"
missing=()
for line in "${SCENARIOS[@]}"; do
    scenario=${line% *}
    value=$(per_op "$scenario")
    if [[ -z "$value" ]]; then missing+=("$scenario"); value="failed"; fi
    printf '  %-52s %12s\n' "$scenario" "$value"
done
echo

# Values the ratios need (empty if a run failed; awk then reports the ratio as missing).
v() { per_op "$1"; }
per_sub() {  # (N=1000 - N=0) / 1000 for a contender of the publish scenario
    local high low
    high=$(v "publish_N=1000_$1")
    low=$(v "publish_N=0_$1")
    [[ -n "$high" && -n "$low" ]] && awk -v h="$high" -v l="$low" 'BEGIN { printf "%.1f", (h - l) / 1000 }'
}
flat_values=()
for population in 1k 10k 100k 1M; do flat_values+=("$(v "subscribe+dispose_existing=${population}_EventBus")"); done

# "id measured reference ratio-definition" for each target; ratio = measured / reference.
declare -A measured reference
measured[per-subscriber]=$(per_sub EventBus);           reference[per-subscriber]=$(per_sub floor)
measured[per-subscriber-value]=$(per_sub EventBus-closure-value); reference[per-subscriber-value]=$(per_sub floor)
measured[publish-1-nc-nil]=$(v publish_N=1_NotificationCenter-nil); reference[publish-1-nc-nil]=$(v publish_N=1_EventBus)
measured[publish-1-opencombine]=$(v publish_N=1_OpenCombine);       reference[publish-1-opencombine]=$(v publish_N=1_EventBus)
for population in 0 10k 100k; do
    measured[subdispose-$population]=$(v "subscribe+dispose_existing=${population}_NotificationCenter")
    reference[subdispose-$population]=$(v "subscribe+dispose_existing=${population}_EventBus")
done
if [[ ${#flat_values[@]} -eq 4 && -n "${flat_values[0]}" && -n "${flat_values[1]}" && -n "${flat_values[2]}" && -n "${flat_values[3]}" ]]; then
    measured[subdispose-flat]=$(printf '%s\n' "${flat_values[@]}" | sort -g | tail -n 1)
    reference[subdispose-flat]=$(printf '%s\n' "${flat_values[@]}" | sort -g | head -n 1)
fi

printf '%-24s %-70s %10s %10s %8s %8s  %s\n' "target" "what" "numerator" "denominator" "ratio" "limit" "result"
failures=()
passes=0
while read -r id comparison limit what; do
    [[ -z "$id" ]] && continue
    num=${measured[$id]:-}
    den=${reference[$id]:-}
    if [[ -z "$num" || -z "$den" ]]; then
        printf '%-24s %-70s %10s %10s %8s %8s  %s\n' "$id" "$what" "${num:--}" "${den:--}" "-" "$comparison $limit" "FAIL (run failed)"
        failures+=("$id: run failed")
        continue
    fi
    verdict=$(awk -v n="$num" -v d="$den" -v c="$comparison" -v l="$limit" 'BEGIN {
        r = n / d
        ok = (c == "max") ? (r <= l) : (r >= l)
        printf "%.2f %s", r, ok ? "PASS" : "FAIL" }')
    ratio=${verdict% *}
    result=${verdict#* }
    sign=$([[ $comparison == max ]] && echo "<=" || echo ">=")
    printf '%-24s %-70s %10s %10s %7sx %7sx  %s\n' "$id" "$what" "$num" "$den" "$ratio" "$sign$limit" "$result"
    if [[ $result == PASS ]]; then passes=$((passes + 1)); else failures+=("$id ${ratio}x (limit $sign${limit}x)"); fi
done <<<"$TARGETS"

# Not gated, for the record: the same ratios against the closure-array rows (`Sink.take` body).
echo
printf '%-24s %-70s %10s %10s %8s\n' "info (not gated)" "what" "numerator" "denominator" "ratio"
info() {
    local id=$1 what=$2 num=$3 den=$4
    if [[ -n "$num" && -n "$den" ]]; then
        printf '%-24s %-70s %10s %10s %7sx\n' "$id" "$what" "$num" "$den" "$(awk -v n="$num" -v d="$den" 'BEGIN { printf "%.2f", n / d }')"
    fi
}
info per-subscriber-sink "each extra synchronous subscriber, EventBus / closure-array (Sink)" "$(per_sub EventBus)" "$(per_sub closure-array)"
info floor-vs-sink "each extra subscriber, closure-array (Sink) / floor" "$(per_sub closure-array)" "$(per_sub floor)"
info publish-1-floor "publish to 1 subscriber, EventBus / floor" "$(v publish_N=1_EventBus)" "$(v publish_N=1_floor)"
info publish-1-sink "publish to 1 subscriber, EventBus / closure-array (Sink)" "$(v publish_N=1_EventBus)" "$(v publish_N=1_closure-array)"
info publish-0 "publish to no subscriber, EventBus / floor N=0" "$(v publish_N=0_EventBus)" "$(v publish_N=0_floor)"
echo

targets=$(grep -c . <<<"$TARGETS")
if [[ ${#failures[@]} -eq 0 ]]; then
    echo "instructions: PASS: all $targets targets met (callgrind, ${elapsed}s)"
    exit 0
fi
summary="instructions: FAIL: ${#failures[@]} of $targets targets missed: $(IFS=';'; echo "${failures[*]}" | sed 's/;/; /g')"
if $report_only; then
    echo "$summary (--report: not failing)"
    exit 0
fi
echo "$summary"
exit 1
