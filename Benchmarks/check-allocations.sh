#!/usr/bin/env bash
# The allocation gate: runs EventBus's own scenarios and checks their malloc counts against the
# thresholds committed for this toolchain (Thresholds/<swift major.minor>/). Allocation counts are
# deterministic; wall-clock time is measured by `swift package benchmark` but never gated.
#
#   ./check-allocations.sh            # check (CI); prints a one-line summary
#   ./check-allocations.sh --update   # rewrite the thresholds from a run (review the diff!)
#
# Targets the thresholds encode (per 1,000 operations): synchronous publish 0 at every N;
# subscribe+dispose 1,000 (1 per pair: the node) at every population, keyed too; an event chain's post (depth
# 1, 5, 20) and request (depth 5) 0. Exit status: 0 pass, 1 fail.
set -uo pipefail
cd "$(dirname "$0")"

# EventBus's scenarios with deterministic allocations (the enqueued and two-thread ones also count
# allocations made by Dispatch itself, so they are measured but not gated). The main-actor rows
# allow 5 per 1,000 publishes: the one DispatchQueue.main.sync that puts each measured iteration
# on the main actor; EventBus's main-actor delivery itself allocates nothing.
gated='(publish_N=[0-9]+_EventBus(-owner-bound|-main-actor)?|keyed_100-keys_EventBus|subscribe\+dispose_(keyed_)?existing=[0-9]+[kM]?_EventBus|owner-churn_EventBus|chain_depth=[0-9]+_EventNode|request_depth=5_EventNode)'

toolchain=$(swift --version 2>&1 | sed -n 's/.*Swift version \([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)
thresholds="Thresholds/${toolchain:-unknown}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [[ "${1:-}" == "--update" ]]; then
    swift package --allow-writing-to-package-directory benchmark thresholds update \
        --path "$thresholds" --filter "$gated" --metric mallocCountTotal --no-progress
    exit $?
fi

if [[ ! -d "$thresholds" ]]; then
    echo "benchmarks: FAIL: no allocation thresholds for Swift ${toolchain:-?} (create them with Benchmarks/check-allocations.sh --update)"
    exit 1
fi

count=$(ls "$thresholds"/*.p90.json 2>/dev/null | wc -l)
swift package benchmark thresholds check --path "$thresholds" --filter "$gated" \
    --metric mallocCountTotal --no-progress >"$log" 2>&1
status=$?
case $status in
    0) echo "benchmarks: PASS: $count EventBus scenarios allocate exactly their committed thresholds (Swift $toolchain; wall clock not gated)" ;;
    4) echo "benchmarks: PASS: $count EventBus scenarios, some allocate less than their thresholds (Swift $toolchain): lower them with --update" ;;
    *)
        grep -avE '^\[[0-9]+/[0-9]+\]|^(Building|Build |Compiling|Write|Linking)' "$log" | tail -n 40
        echo "benchmarks: FAIL: allocation thresholds exceeded or the run failed (status $status, Swift $toolchain)"
        exit 1
        ;;
esac
