#!/usr/bin/env bash
# Runs the example (the Observability article's swift-otel server) for a few seconds against a
# stand-in OpenTelemetry collector on 127.0.0.1:4318, then checks what reached the collector over
# OTLP/HTTP: the request's, the publish and the process spans on /v1/traces, the bus's counters on
# /v1/metrics, the handler's log line on /v1/logs. The stand-in (Python's http.server) answers 200 to
# every POST and keeps each body; OTLP's protobuf keeps strings as UTF-8, so a name is found as bytes.
#
#   scripts/run-against-collector.sh [seconds]   (from Integrations/ObservabilityExample, after a build)
#
# Prints one summary line; exits 1 if anything expected did not arrive.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-6}
bin=$(swift build --show-bin-path)/ObservabilityExample
[ -x "$bin" ] || { echo "collector run: no $bin (build the package first)"; exit 1; }
received=$(mktemp -d)
trap 'kill "$collector" 2>/dev/null || true; rm -rf "$received"' EXIT

python3 - "$received" <<'PY' &
import gzip, http.server, pathlib, sys

received = pathlib.Path(sys.argv[1])

class Collector(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        with open(received / self.path.strip("/").replace("/", "_"), "ab") as kept:
            kept.write(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", 4318), Collector).serve_forever()
PY
collector=$!
for _ in $(seq 50); do
    python3 -c 'import socket; socket.create_connection(("127.0.0.1", 4318), 0.2)' 2>/dev/null && break
    kill -0 "$collector" 2>/dev/null || { echo "collector run: the stand-in collector did not start (port 4318 taken?)"; exit 1; }
    sleep 0.1
done

# SIGINT after `seconds`: the example's ServiceGroup shuts down gracefully, and OTel exports what
# it still holds.
status=0
timeout -s INT -k 10 "$seconds" "$bin" >"$received/stdout" 2>&1 || status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 124 ] || { cat "$received/stdout"; echo "collector run: the example exited $status"; exit 1; }

missing=()
expect() {  # expect FILE TEXT: TEXT reached the collector in the bodies posted to FILE
    grep -qaF -- "$2" "$received/$1" 2>/dev/null || missing+=("$2 on /${1//_//}")
}
expect v1_traces "POST /orders"
expect v1_traces "publish ObservabilityExample.OrderPlaced"
expect v1_traces "process ObservabilityExample.OrderPlaced"
expect v1_traces "messaging.destination.name"
expect v1_metrics "eventbus.dispatches"
expect v1_metrics "eventbus.deliveries"
expect v1_metrics "eventbus.enqueued_in_flight"
expect v1_logs "charged order 1"
if [ "${#missing[@]}" -gt 0 ]; then
    ls -l "$received"; cat "$received/stdout"
    printf 'collector run: missing %s\n' "${missing[@]}"
    exit 1
fi
sizes=$(cd "$received" && for f in v1_traces v1_metrics v1_logs; do printf '/%s %s B, ' "${f//_//}" "$(wc -c <"$f")"; done)
echo "collector run: ${seconds} s against a stand-in collector on 127.0.0.1:4318 received ${sizes%, }; spans POST /orders, publish and process ObservabilityExample.OrderPlaced, the bus's counters and gauge, the handler's log line"
