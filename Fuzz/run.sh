#!/usr/bin/env bash
# Builds the EventBus libFuzzer target and runs it for N seconds (default 60) on the committed corpus.
#   Fuzz/run.sh [seconds]        e.g. Fuzz/run.sh 600
# The corpus in Fuzz/corpus is read-only input: new interesting inputs go to a temporary directory,
# so a run never dirties the tree. A failing input is written to Fuzz/crash-* and the script exits 1.
set -euo pipefail
seconds="${1:-60}"
here="$(cd "$(dirname "$0")" && pwd)"
scratch="${EVENTBUS_FUZZ_SCRATCH:-$here/.build-rel-fuzz}"
# `--sanitize=fuzzer` makes SwiftPM link libFuzzer's main; the sanitizers themselves are given in one
# `-sanitize=` list, because swiftc keeps only the last `-sanitize=` flag and SwiftPM's order of
# `--sanitize=fuzzer --sanitize=address` varies between runs (dropping coverage or ASan).
flags=(-c release --package-path "$here" --scratch-path "$scratch" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address)
swift build "${flags[@]}" --product EventBusFuzz >&2
binary="$(swift build "${flags[@]}" --show-bin-path)/EventBusFuzz"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
    "$binary" "$work" "$here/corpus" -max_total_time="$seconds" -max_len=512 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$here/crash-" 2>"$work/log" || status=$?
runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$work/log" | grep -Eo '[0-9]+$' || echo "?")
coverage=$(grep -Eo 'cov: [0-9]+' "$work/log" | tail -1 | grep -Eo '[0-9]+' || echo "?")
counters=$(grep -Eo '\(([0-9]+) inline 8-bit counters' "$work/log" | grep -Eo '[0-9]+' | head -1 || echo 0)
if [ "${counters:-0}" -lt 1000 ]; then
    echo "fuzz: FAILED: the target is not instrumented for coverage ($counters counters)"
    exit 1
fi
if [ "$status" -ne 0 ]; then
    grep -v -E '^#[0-9]+.*(NEW|REDUCE|pulse)' "$work/log" | head -80 >&2
    echo "fuzz: FAILED after $runs runs in ≤${seconds}s (exit $status); input saved as $here/crash-*"
    exit 1
fi
echo "fuzz: ${seconds}s, $runs programs run, coverage $coverage edges, corpus $(ls "$here/corpus" | wc -l) seeds, 0 mismatches"
