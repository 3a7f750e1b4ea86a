# Shared helpers for the recording recipes (sourced, not run).  Each recipe starts the fake
# model server per phase, runs the vendor CLI under a throwaway HOME, and copies what the CLI
# persisted plus the request log into an output folder.
FAKEMODEL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
PORT=${PORT:-18300}

# serve SCENARIO LOGFILE: start the server on $PORT with tests/fakemodel/scenarios/SCENARIO.
serve() {
    "$PYTHON" "$FAKEMODEL_DIR/server.py" --script "$FAKEMODEL_DIR/scenarios/$1" --log "$2" --port "$PORT" \
        >/dev/null 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "fakemodel did not start" >&2
    return 1
}

unserve() {
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    return 0
}

# wait_requests LOGFILE N [TIMEOUT]: wait until the server has logged N requests.
wait_requests() {
    local waited=0
    while [ "$(cat "$1" 2>/dev/null | wc -l)" -lt "$2" ]; do
        sleep 0.2
        waited=$((waited + 1))
        [ "$waited" -gt $((${3:-60} * 5)) ] && { echo "timed out waiting for $2 requests" >&2; return 1; }
    done
}

# slim_log IN OUT: the request log with each body's tool schemas reduced to their names (the
# schemas are the same in every request and are not part of the transcript format).
slim_log() {
    "$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
with open(sys.argv[1], encoding="utf-8") as src, open(sys.argv[2], "w", encoding="utf-8") as dst:
    for line in src:
        entry = json.loads(line)
        body = entry.get("body")
        if isinstance(body, dict) and isinstance(body.get("tools"), list):
            body["tools"] = [t.get("function", {}).get("name", t.get("name")) for t in body["tools"]]
            body["tools_note"] = "fakemodel recipe: tool schemas reduced to names"
        entry.pop("time", None)
        dst.write(json.dumps(entry, ensure_ascii=False) + "\n")
EOF
}
