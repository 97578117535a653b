#!/usr/bin/env bash
# Lints every Swift directory against the committed .swift-format, with --strict so that warnings
# fail too. Fix findings with `swift format format -i -r <dir>` and review the diff.
# Usage: scripts/check-format.sh [dir...]   (default: every Swift directory of the repository)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
  dirs=("$@")
else
  dirs=()
  for dir in Sources Tests Snippets CompileChecks Benchmarks/Benchmarks Fuzz scripts \
    Integrations/EventBusRemote/Sources Integrations/EventBusRemote/Tests \
    Integrations/EventBusPostgres/Sources Integrations/EventBusPostgres/Tests \
    Integrations/EventBusLogging/Sources Integrations/EventBusLogging/Tests \
    Integrations/EventBusTracing/Sources Integrations/EventBusTracing/Tests \
    Integrations/EventBusMetrics/Sources Integrations/EventBusMetrics/Tests \
    Integrations/ObservabilityExample/Sources Integrations/ObservabilityExample/Tests; do
    [ -d "$dir" ] && dirs+=("$dir")
  done
fi

files=$(find "${dirs[@]}" -name '*.swift' -not -path '*/.build*' | wc -l | tr -d ' ')
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
swift format lint --strict --recursive --parallel "${dirs[@]}" >"$out" 2>&1 || status=$?

# A finding reads "path:line:column: error|warning: [Rule] message".
findings=$(grep -cE '^[^ ]+:[0-9]+:[0-9]+: (error|warning):' "$out" || true)
if [ "$status" -ne 0 ] || [ "$findings" -ne 0 ]; then
  cat "$out"
  echo
  echo "findings per directory:"
  for dir in "${dirs[@]}"; do
    printf '  %-24s %s\n' "$dir" "$(grep -cE "^$dir/[^ ]*:[0-9]+:[0-9]+: (error|warning):" "$out" || true)"
  done
  echo "format: FAIL, $findings findings from swift format lint --strict (exit $status); fix with: swift format format -i -r ${dirs[*]}"
  exit 1
fi
echo "format: swift format lint --strict found nothing in $files files (${dirs[*]}) against .swift-format"
