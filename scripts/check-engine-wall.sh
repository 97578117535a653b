#!/usr/bin/env bash
# The engine's wall (DESIGN §9, issue 40): `Sources/EventBus/Internal/Engine/` is the only place
# for unsafe code and frame shaping. Everywhere else in `Sources/` and in the integrations'
# `Integrations/*/Sources/` (which have no engine of their own) the code is plain safe Swift.
#
# Fails (exit 1), listing file:line, on any of these outside the engine:
#   Unmanaged, _withUnsafeGuaranteedRef, @exclusivity(unchecked), unsafelyUnwrapped,
#   unsafe pointers (Unsafe…Pointer, withUnsafe…, withUnsafeTemporaryAllocation, .pointee,
#   assumingMemoryBound, bindMemory, OpaquePointer), unsafeBitCast, unsafeDowncast,
#   unowned(unsafe), and @inline(never) (frame shaping);
# and on `@unchecked Sendable` or `nonisolated(unsafe)` without a `//` comment giving the reason
# (the lock or invariant) on the same line, the line before, or, when the line opens a body, the
# line after (the first line of the type's body, where this codebase writes it).
#
# Comments are not code: a line that is only a comment is skipped, and the rest of a line after
# ` //` is ignored (doc examples may show `@unchecked Sendable`).
#
#   scripts/check-engine-wall.sh
set -uo pipefail
cd "$(dirname "$0")/.."

engine=Sources/EventBus/Internal/Engine/
constructs='Unmanaged|_withUnsafeGuaranteedRef|@exclusivity\(unchecked\)|unsafelyUnwrapped|Unsafe[A-Za-z]*Pointer|withUnsafe[A-Za-z]*|\.pointee([^A-Za-z0-9_]|$)|assumingMemoryBound|bindMemory|OpaquePointer|unsafeBitCast|unsafeDowncast|unowned\(unsafe\)|@inline\(never\)'
unchecked='@unchecked Sendable|nonisolated\(unsafe\)'

files=()
while IFS= read -r -d '' file; do files+=("$file"); done < <(
    find Sources Integrations/*/Sources -name '*.swift' -print0 2>/dev/null | sort -z)
[[ ${#files[@]} -gt 0 ]] || { echo "engine wall: FAIL: no Swift files found under Sources/"; exit 1; }

inside=0
outside=0
findings=()
for file in "${files[@]}"; do
    if [[ $file == "$engine"* ]]; then inside=$((inside + 1)); continue; fi
    outside=$((outside + 1))
    # awk prints "line: construct" for each finding of the file.
    while IFS= read -r finding; do findings+=("$file:$finding"); done < <(
        CONSTRUCTS=$constructs UNCHECKED=$unchecked awk '
            function code(text) {
                if (text ~ /^[ \t]*\/\//) return ""
                sub(/[ \t]\/\/.*$/, "", text)
                return text
            }
            function reasoned(text) { return text ~ /^[ \t]*\/\/[^\/]/ }
            { lines[NR] = $0 }
            END {
                constructs = ENVIRON["CONSTRUCTS"]
                unchecked = ENVIRON["UNCHECKED"]
                for (n = 1; n <= NR; n++) {
                    text = code(lines[n])
                    if (text == "") continue
                    rest = text
                    while (match(rest, constructs)) {
                        construct = substr(rest, RSTART, RLENGTH)
                        if (construct ~ /^\.pointee/) construct = ".pointee"
                        print n ": " construct
                        rest = substr(rest, RSTART + RLENGTH)
                    }
                    if (match(text, unchecked)) {
                        construct = substr(text, RSTART, RLENGTH)
                        same = lines[n] ~ /[ \t]\/\/[^\/]/
                        opens = text ~ /\{[ \t]*$/
                        if (!same && !reasoned(lines[n - 1]) && !(opens && reasoned(lines[n + 1]))) {
                            print n ": " construct " without a comment giving its reason"
                        }
                    }
                }
            }' "$file")
done

if ((${#findings[@]} > 0)); then
    printf '  %s\n' "${findings[@]}"
    echo "engine wall: FAIL: ${#findings[@]} unsafe constructs outside Internal/Engine (move them into $engine or make the code safe; give @unchecked Sendable and nonisolated(unsafe) a one-line reason)"
    exit 1
fi
echo "engine wall: 0 unsafe constructs outside Internal/Engine ($outside files checked; $inside inside)"
