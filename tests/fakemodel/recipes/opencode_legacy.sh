#!/usr/bin/env bash
# Records sessions of an OpenCode that still kept them as JSON files under `storage/`
# (1.1.x; 1.2 moved to SQLite) against the fake model server.
#   usage: tests/fakemodel/recipes/opencode_legacy.sh OUTDIR [SESSION...]
# OPENCODE names the old CLI (`npm install --prefix DIR opencode-ai@1.1.65`, then
# DIR/node_modules/opencode-linux-x64/bin/opencode).  Same setup as opencode.sh (fresh
# network namespace, throwaway HOME and XDG dirs, the `OPENCODE_DISABLE_*` env, a fake main
# and title provider); after each phase the whole `$XDG_DATA_HOME/opencode/storage` tree is
# copied as OpenCode left it (`storage-N/`, with a file listing), then `opencode export` runs.
set -u
. "$(dirname "$0")/common.sh"
RECIPE=$(realpath "$0")
if [ -z "${OC_NETNS:-}" ] && [ -z "${OC_NO_UNSHARE:-}" ]; then
    exec unshare -n env OC_NETNS=1 bash "$RECIPE" "$@"
fi
[ -n "${OC_NETNS:-}" ] && ip link set lo up
OPENCODE=${OPENCODE:-opencode}
TITLE_PORT=${TITLE_PORT:-$((PORT + 1))}
OUT=$(realpath -m "$1")
shift

export OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_SHARE=1 \
    OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_CLAUDE_CODE=1 \
    OPENCODE_DISABLE_EXTERNAL_SKILLS=1

setup() {
    NAME=$1
    export HOME=/tmp/oc-home-$NAME
    export XDG_DATA_HOME=$HOME/.local/share XDG_CONFIG_HOME=$HOME/.config \
        XDG_CACHE_HOME=$HOME/.cache XDG_STATE_HOME=$HOME/.local/state
    DATA=$XDG_DATA_HOME/opencode
    WORK=/tmp/oc-work-$NAME
    DEST=$OUT/$NAME
    rm -rf "$HOME" "$WORK" "$DEST"
    mkdir -p "$XDG_CONFIG_HOME/opencode" "$WORK" "$DEST"
    printf 'first line\nsecond line\n' >"$WORK/notes.txt"
    sed "s/\$PORT/$PORT/; s/\$TITLE_PORT/$TITLE_PORT/" >"$XDG_CONFIG_HOME/opencode/opencode.json" <<'JSON'
{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "fakemodel/fake-model",
  "small_model": "faketitle/fake-title",
  "provider": {
    "fakemodel": {"npm": "@ai-sdk/openai-compatible", "name": "fakemodel",
      "options": {"baseURL": "http://127.0.0.1:$PORT/v1", "apiKey": "dummy-key"},
      "models": {"fake-model": {"name": "fake-model", "tool_call": true, "reasoning": true}}},
    "faketitle": {"npm": "@ai-sdk/openai-compatible", "name": "faketitle",
      "options": {"baseURL": "http://127.0.0.1:$TITLE_PORT/v1", "apiKey": "dummy-key"},
      "models": {"fake-title": {"name": "fake-title"}}}
  }
}
JSON
    cd "$WORK" || exit 1
}

serve_both() {  # serve_both N SCENARIO
    PORT=$TITLE_PORT serve opencode-title.json "$DEST/raw-title-requests-$1.jsonl"
    TITLE_PID=$SERVER_PID
    serve "$2" "$DEST/raw-requests-$1.jsonl"
}

unserve_both() {
    unserve
    SERVER_PID=$TITLE_PID unserve
}

# The newest session file's id (storage/session/<projectID>/<ses_…>.json).
session_id() {
    "$PYTHON" - "$DATA/storage" <<'EOF'
import glob, json, os, sys
files = glob.glob(os.path.join(sys.argv[1], "session", "*", "ses_*.json"))
best = max(files, key=lambda f: json.load(open(f))["time"]["created"], default=None)
print(os.path.basename(best)[:-5] if best else "")
EOF
}

# snapshot N: the storage tree exactly as OpenCode left it, then `opencode export`.
snapshot() {
    local n=$1 sid
    (cd "$DATA" && find . -printf '%y %s %P\n' | sort -k3) >"$DEST/phase$n.files"
    rm -rf "$DEST/storage-$n"
    cp -a "$DATA/storage" "$DEST/storage-$n" 2>/dev/null
    sid=$(session_id)
    if [ -n "$sid" ]; then
        "$OPENCODE" export "$sid" >"$DEST/export-$n.json" 2>"$DEST/export-$n.stderr"
        echo "exit $?" >"$DEST/export-$n.exit"
        echo "$sid" >"$DEST/session-id"
    fi
}

phase() {
    local n=$1 scenario=$2
    shift 2
    serve_both "$n" "$scenario"
    timeout 180 "$OPENCODE" run --print-logs --log-level INFO "$@" \
        >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr" </dev/null
    echo "exit $?" >"$DEST/phase$n.exit"
    unserve_both
    snapshot "$n"
}

# killed_phase N SCENARIO REQUESTS DELAY SIGNAL ARGS...: as in opencode.sh.
killed_phase() {
    local n=$1 scenario=$2 requests=$3 delay=$4 sig=$5
    shift 5
    serve_both "$n" "$scenario"
    "$OPENCODE" run --print-logs --log-level INFO "$@" \
        >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr" </dev/null &
    local pid=$!
    wait_requests "$DEST/raw-requests-$n.jsonl" "$requests" 90
    sleep "$delay"
    kill -"$sig" "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    wait "$pid" 2>/dev/null
    echo "exit $? (SIG$sig sent ${delay}s after request $requests)" >"$DEST/phase$n.exit"
    unserve_both
    snapshot "$n"
}

resume_phase() {  # resume_phase N SCENARIO PROMPT...
    local n=$1 scenario=$2 sid
    shift 2
    sid=$(session_id)
    if [ -n "$sid" ]; then
        phase "$n" "$scenario" --session "$sid" "$@"
    else
        echo "no session was written: nothing to resume" >"$DEST/phase$n.exit"
    fi
}

collect() {
    local raw
    for raw in "$DEST"/raw-requests-*.jsonl "$DEST"/raw-title-requests-*.jsonl; do
        [ -f "$raw" ] || continue
        slim_log "$raw" "${raw/raw-/}"
        rm "$raw"
    done
    find "$DEST" -name '*.stderr' -size 0 -delete
    sed -i "s#$HOME#HOME#g" "$DEST"/phase*.stderr "$DEST"/phase*.stdout 2>/dev/null
}

record() {
    case $1 in
    legacy-tools)  # tool calls, then a resume with one more call
        setup legacy-tools
        phase 1 opencode-legacy-tools.json Run echo then read notes.txt
        resume_phase 2 opencode-tools.resume.json How many lines does notes.txt have
        collect ;;
    legacy-kill-tool)
        setup legacy-kill-tool
        killed_phase 1 opencode-kill-tool.json 1 3 KILL Run the slow command
        resume_phase 2 opencode-resume-ok.json Are you still there
        collect ;;
    legacy-kill-stream)
        setup legacy-kill-stream
        killed_phase 1 opencode-kill-stream.json 1 3 KILL Tell me something long
        resume_phase 2 opencode-resume-ok.json Are you still there
        collect ;;
    legacy-http500)
        setup legacy-http500
        phase 1 opencode-http500.json This request fails upstream
        resume_phase 2 opencode-resume-ok.json Try again
        collect ;;
    *) echo "unknown session $1" >&2; return 1 ;;
    esac
}

if [ $# -eq 0 ]; then
    set -- legacy-tools legacy-kill-tool legacy-kill-stream legacy-http500
fi
for s in "$@"; do
    record "$s"
done
