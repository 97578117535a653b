#!/usr/bin/env bash
# Compile checks: prove that the compiler rejects what the API means to reject.
#
#   .ci/compile-fail.sh [check-dir]     (default: CompileChecks/MainActorIsolation)
#
# Builds the EventBus and EventBusFoundation modules, then type-checks each file of the check
# directory together with its Shared.swift against them, in the Swift 6 language mode:
#   fail-*.swift  must NOT compile, and every error must match the directory's expected kind of
#                 error, one of them on the line marked `// expected-error` (or, in the isolation
#                 checks, `// expected-isolation-error`), so that a typo or a missing module cannot
#                 pass for the error we want;
#   pass-*.swift  must compile, with warnings as errors.
# The expected kind is the extended regex in the directory's `expected-errors.regex` if there is
# one, else actor-isolation errors (CompileChecks/MainActorIsolation). The fail-* files
# get the extra swiftc flags on the first line of the directory's `fail-flags`, if there is one
# (`-warnings-as-errors`, for checks that a call site gets a warning).
# Environment: SCRATCH_PATH (SwiftPM scratch path, default .build).
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-CompileChecks/MainActorIsolation}
scratch=${SCRATCH_PATH:-.build}

swift build --scratch-path "$scratch" --target EventBusFoundation > /dev/null
bin=$(swift build --scratch-path "$scratch" --show-bin-path)
flags=(-typecheck -swift-version 6 -parse-as-library -I "$bin/Modules" -I "$bin" -I Sources/_EventBusShims/include)

# What counts as the expected error: the directory's regex, else an isolation error (the wording
# of Swift 6.x diagnostics).
isolation='actor-isolated|isolated to|global actor|nonisolated context|actor isolation'
kind="actor-isolation"
if [ -f "$dir/expected-errors.regex" ]; then
  isolation=$(head -n 1 "$dir/expected-errors.regex")
  kind="expected"
fi

fail_flags=()
if [ -f "$dir/fail-flags" ]; then
  read -r -a fail_flags < "$dir/fail-flags"
fi

failures=0; failed_as_expected=0; compiled=0
shopt -s nullglob
for file in "$dir"/fail-*.swift; do
  marked=$(grep -nE '// expected-(isolation-)?error' "$file" | cut -d: -f1 | head -n 1)
  if [ -z "$marked" ]; then
    echo "FAIL $file: no line is marked // expected-error"; failures=$((failures + 1)); continue
  fi
  status=0
  out=$(swiftc "${flags[@]}" ${fail_flags[@]+"${fail_flags[@]}"} "$dir/Shared.swift" "$file" 2>&1) || status=$?
  # Primary diagnostics only: "path:line:col: error: message".
  errors=$(printf '%s\n' "$out" | grep -E '^[^ |].*:[0-9]+:[0-9]+: error: ' || true)
  if [ "$status" -eq 0 ]; then
    echo "FAIL $file compiled, but it must not"
    failures=$((failures + 1))
  elif [ -z "$errors" ] || printf '%s\n' "$errors" | grep -Eqv "$isolation"; then
    echo "FAIL $file failed to compile for another reason than the $kind error:"
    printf '%s\n' "${errors:-$out}" | sed 's/^/    /'
    failures=$((failures + 1))
  elif ! printf '%s\n' "$errors" | grep -Eq "$(basename "$file"):$marked:[0-9]+: error: "; then
    echo "FAIL $file: $kind errors, but none on the marked line $marked:"
    printf '%s\n' "$errors" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok   $file rejected: $(printf '%s\n' "$errors" | head -n 1 | sed 's/^.*: error: //')"
    failed_as_expected=$((failed_as_expected + 1))
  fi
done
for file in "$dir"/pass-*.swift; do
  if out=$(swiftc "${flags[@]}" -warnings-as-errors "$dir/Shared.swift" "$file" 2>&1); then
    echo "ok   $file compiled"
    compiled=$((compiled + 1))
  else
    echo "FAIL $file must compile:"; printf '%s\n' "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  fi
done

if [ "$failures" -ne 0 ]; then
  echo "compile checks: $failures failed"; exit 1
fi
if [ $((failed_as_expected + compiled)) -eq 0 ]; then
  echo "FAIL no compile checks found in $dir"; exit 1
fi
echo "compile checks ($dir): $failed_as_expected must-fail file(s) rejected with $kind errors at the marked lines, $compiled must-compile file(s) compiled (-warnings-as-errors)"
