#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server: installs PostgreSQL from Debian's packages
# if it is missing (as root), initdb's a temporary directory as an unprivileged user, starts the
# server on 127.0.0.1 on a free port, runs the command with EVENTBUS_POSTGRES_URL (and
# EVENTBUS_POSTGRES_RESTART, EVENTBUS_POSTGRES_KILL and EVENTBUS_POSTGRES_START: commands that
# restart the server, kill -9 it, start it after a kill) in its environment, and stops the
# server and removes the directory however the command ends.
#
#   Integrations/EventBusPostgres/scripts/with-postgres.sh            # the bridge's tests (default)
#   Integrations/EventBusPostgres/scripts/with-postgres.sh swift run --package-path Integrations/EventBusPostgres ClusterDemo
#
# The default builds the package (tests included) with warnings as errors, type-checks every Swift
# block of its README and EventBusRemote's (scripts/check-readme-blocks.sh), runs `swift test`, fails
# if any test failed or skipped, runs the ClusterDemo example and a smoke run of the benchmark, and
# ends with one line:
# "postgres bridge: N tests passed ...". .ci/run calls it so.
set -euo pipefail
pkg=$(cd "$(dirname "$0")/.." && pwd)

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
bin=$(find_bin || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "PostgreSQL is not installed: apt-get install -y postgresql (as root)"; exit 1; }
    echo "installing PostgreSQL from Debian's packages..."
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    bin=$(find_bin)
fi

# PostgreSQL refuses to run as root: as root, run it as the package's `postgres` user (or nobody).
as_user=()
if [ "$(id -u)" -eq 0 ]; then
    user=postgres
    id "$user" >/dev/null 2>&1 || user=nobody
    as_user=(runuser -u "$user" --)
fi

dir=$(mktemp -d /tmp/eventbus-postgres.XXXXXX)
chmod 755 "$dir"
[ "${#as_user[@]}" -eq 0 ] || chown "$user" "$dir"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pg_ctl=("${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log")

stop() {
    "${pg_ctl[@]}" stop -m fast -w >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap stop EXIT

"${as_user[@]}" "$bin/initdb" -D "$dir/data" -U eventbus --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log"; exit 1; }
options="-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off"
"${pg_ctl[@]}" -o "$options" -w start >/dev/null || { cat "$dir/server.log"; exit 1; }

# Commands for the fault tests: restart the server, kill it (kill -9 of the postmaster and of every
# backend, as a crash would), start it again.
# Each closes the descriptors it inherited first: a (re)started server would hold them open, and
# Foundation's Process (the test's) reports the end of a child only once they are all closed.
script() {
    echo '#!/usr/bin/env bash'
    echo 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done'
    echo "$1"
}
script "exec $(printf '%q ' "${pg_ctl[@]}" -o "$options" -m fast -w restart)" >"$dir/restart.sh"
script "exec $(printf '%q ' "${pg_ctl[@]}" -o "$options" -w start)" >"$dir/start.sh"
script "pid=\$(head -n 1 $dir/data/postmaster.pid) || exit 1
children=\$(ps -o pid= --ppid \"\$pid\")
kill -9 \"\$pid\" \$children
while kill -0 \"\$pid\" 2>/dev/null; do sleep 0.05; done" >"$dir/kill.sh"
chmod 755 "$dir/restart.sh" "$dir/start.sh" "$dir/kill.sh"

export EVENTBUS_POSTGRES_URL="postgres://eventbus@127.0.0.1:$port/postgres"
export EVENTBUS_POSTGRES_RESTART="$dir/restart.sh"
export EVENTBUS_POSTGRES_KILL="$dir/kill.sh"
export EVENTBUS_POSTGRES_START="$dir/start.sh"
echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($dir)"

if [ "$#" -gt 0 ]; then
    "$@"
    exit
fi

log="$dir/test.log"
start=$SECONDS
swift build --package-path "$pkg" --build-tests -Xswiftc -warnings-as-errors >"$log.build" 2>&1 \
    || { tail -n 40 "$log.build"; echo "postgres bridge: BUILD FAILED"; exit 1; }
# The README's quick starts are Sources/QuickStart/main.swift, ScheduledEvents.swift,
# RollingUpgrade.swift, ConsumerGroups.swift, Operations.swift and ExactlyOnce.swift, built just above:
# they must be quoted verbatim.
python3 - "$pkg" <<'PY' || { echo "postgres bridge: FAILED (README quick start)"; exit 1; }
import re, sys
pkg = sys.argv[1]
readme = open(f"{pkg}/README.md").read()
match = re.search(r"## Quick start\n\n```swift\n(.*?)```", readme, re.S)
if not match or match.group(1) != open(f"{pkg}/Sources/QuickStart/main.swift").read():
    sys.exit("README.md's quick start differs from Sources/QuickStart/main.swift")
for heading, source in [("scheduled events", "ScheduledEvents"), ("rolling upgrades", "RollingUpgrade"),
                        ("consumer groups", "ConsumerGroups"), ("operations", "Operations"),
                        ("effects exactly once", "ExactlyOnce")]:
    match = re.search(r"### Quick start: " + heading + r"\n\n```swift\n(.*?)```", readme, re.S)
    if not match or match.group(1) != open(f"{pkg}/Sources/QuickStart/{source}.swift").read():
        sys.exit(f"README.md's {heading} quick start differs from Sources/QuickStart/{source}.swift")
PY
# Every Swift block of this README and EventBusRemote's type-checks against the build just made.
bin_path=$(swift build --package-path "$pkg" --show-bin-path)
"$pkg/scripts/check-readme-blocks.sh" "$bin_path" >"$log.blocks" 2>&1 \
    || { cat "$log.blocks"; echo "postgres bridge: FAILED (README blocks)"; exit 1; }
blocks=$(tail -n 1 "$log.blocks" | sed -E 's/^README blocks: ([0-9]+) Swift blocks.*/\1/')
status=0
timeout -k 5 "${EVENTBUS_POSTGRES_TEST_TIMEOUT:-600}" swift test --package-path "$pkg" --skip-build >"$log" 2>&1 || status=$?
# A skipped test or suite reads: (Test|Suite) "name" skipped[: "reason"]
skip_line='(Test|Suite) .*" skipped(\.|: )'
grep -E "✘|$skip_line|Test run|^bridge:" "$log" || true
summary=$(grep -Eo 'Test run with [0-9]+ tests? in [0-9]+ suites? (passed|failed)[^.]*' "$log" | tail -n 1 || true)
if [ "$status" -ne 0 ] || [ -z "$summary" ] || grep -Eq "$skip_line" "$log"; then
    tail -n 60 "$log"
    echo "postgres bridge: FAILED (exit $status; a test that skipped counts as a failure)"
    exit 1
fi
# The example app (two instances in one run), on the same server: it must finish with "Done.".
timeout -k 5 120 "$bin_path/ClusterDemo" >"$dir/demo.log" 2>&1 || { cat "$dir/demo.log"; echo "postgres bridge: ClusterDemo FAILED"; exit 1; }
grep -q '^Done.$' "$dir/demo.log" || { cat "$dir/demo.log"; echo "postgres bridge: ClusterDemo did not finish"; exit 1; }
# A smoke run of the benchmark (both modes, 200 events each, debug build): it must end with no issue.
BENCH_EVENTS=200 timeout -k 5 120 "$bin_path/EventBusPostgresBenchmark" >"$dir/bench.log" 2>&1 \
    && grep -q '^issues reported: 0$' "$dir/bench.log" \
    || { cat "$dir/bench.log"; echo "postgres bridge: EventBusPostgresBenchmark smoke run FAILED"; exit 1; }
tests=$(sed -E 's/Test run with ([0-9]+) tests?.*/\1/' <<<"$summary")
figures=$(grep -E '^bridge:' "$log" | sed -E 's/^bridge: //' | paste -sd ';' - || true)
echo "postgres bridge: $tests tests passed against PostgreSQL on 127.0.0.1:$port, none skipped; ${figures:-no figures}; README quick starts built and quoted verbatim, $blocks Swift blocks of the Postgres and Remote READMEs type-checked; ClusterDemo printed $(wc -l <"$dir/demo.log") lines and finished; benchmark smoke run clean; $((SECONDS - start)) s"
