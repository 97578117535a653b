#!/usr/bin/env bash
# Instructions per operation for the key scenarios, counted by valgrind's callgrind: repeatable for
# the same binary and inputs whatever else the machine is doing (this VM has no hardware counters).
# Use it when a wall-clock ratio is close.
#
#   ./instructions.sh                 # the key scenarios (about 2 minutes)
#   ./instructions.sh publish_N=1_EventBus publish_N=1_OpenCombine   # chosen ones
#   ./instructions.sh --list          # every scenario name
#
# Only the measured region (`measured(_:_:)` in EventBusInstructions) is collected, after the
# scenario was built and warmed up; main-actor scenarios cannot be counted this way (their work runs
# on the main thread, outside the collected region).
set -euo pipefail
cd "$(dirname "$0")"

command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }

swift build -c release --product EventBusInstructions >/dev/null 2>&1 || swift build -c release --product EventBusInstructions
binary=$(swift build -c release --show-bin-path)/EventBusInstructions
# valgrind 3.19 cannot read the DWARF 5 Swift 6 writes; the symbol table is all it needs here.
stripped=$(mktemp)
trap 'rm -f "$stripped" "$stripped.out"' EXIT
objcopy --strip-debug "$binary" "$stripped"

if [[ "${1:-}" == "--list" ]]; then "$stripped" --list; exit 0; fi

if [[ $# -gt 0 ]]; then
    scenarios=("$@")
else
    scenarios=()
    for n in 0 1 10 100 1000; do
        for contender in floor closure-array EventBus EventBus-owner-bound NotificationCenter-userInfo NotificationCenter-nil OpenCombine; do
            scenarios+=("publish_N=${n}_$contender")
        done
    done
    scenarios+=(keyed_100-keys_EventBus keyed_100-keys_NotificationCenter-userInfo keyed_100-keys_OpenCombine)
    for population in 0 1k 10k 100k 1M; do scenarios+=("subscribe+dispose_existing=${population}_EventBus"); done
    for population in 0 1k 10k; do
        scenarios+=("subscribe+dispose_existing=${population}_NotificationCenter" "subscribe+dispose_existing=${population}_OpenCombine")
    done
    scenarios+=(owner-churn_EventBus owner-churn_NotificationCenter owner-churn_OpenCombine)
fi

# Operations per scenario: enough to amortise EventBus's periodic sweep (every max(256, population)
# operations), few enough for valgrind's ~50x slowdown.
operations_for() {
    case "$1" in
        *"existing=1M"*) echo 1100000 ;;
        *"existing=100k"*) echo 110000 ;;
        *"existing=10k"*) echo 20000 ;;
        *"N=1000_"*) echo 200 ;;
        *"N=100_"*) echo 2000 ;;
        *) echo 20000 ;;
    esac
}

printf '%-52s %14s\n' "scenario" "instr/op"
for scenario in "${scenarios[@]}"; do
    operations=$(operations_for "$scenario")
    collected=$(valgrind --tool=callgrind --callgrind-out-file="$stripped.out" --toggle-collect='*measured*' \
        "$stripped" "$scenario" "$operations" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    if [[ -z "$collected" ]]; then
        printf '%-52s %14s\n' "$scenario" "failed"
    else
        awk -v s="$scenario" -v c="$collected" -v o="$operations" 'BEGIN { printf "%-52s %14.1f\n", s, c / o }'
    fi
done
