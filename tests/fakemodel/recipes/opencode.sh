#!/usr/bin/env bash
# Records OpenCode sessions against the fake model server.
#   usage: tests/fakemodel/recipes/opencode.sh OUTDIR [SESSION...]
# OPENCODE names the CLI (default: opencode on PATH; `npm install --prefix DIR opencode-ai`).
# Everything runs inside a fresh network namespace (`unshare -n`, loopback only, needs root or
# user namespaces) so nothing can reach the network: OpenCode would otherwise try models.dev,
# npm and its update server.  Set OC_NO_UNSHARE=1 to skip that (the env vars below still turn
# those calls off).
# Each session runs under HOME=/tmp/oc-home-SESSION (XDG dirs inside it) in /tmp/oc-work-SESSION
# with `opencode run`; a resume is `opencode run --session <id>`.  Title generation goes to a
# second server on TITLE_PORT (the `small_model` provider) so it never eats a scripted reply.
# After each phase the database files are copied as OpenCode left them (before anything else
# opens them), then `opencode export <id>` is run; at the end each copy is consolidated into
# one file with SQLite's `VACUUM INTO` and dumped as text.
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
    cat >"$XDG_CONFIG_HOME/opencode/opencode.json" <<JSON
{
  "\$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "fakemodel/fake-model",
  "small_model": "faketitle/fake-title",
  "provider": {
    "fakemodel": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "fakemodel",
      "options": {"baseURL": "http://127.0.0.1:$PORT/v1", "apiKey": "dummy-key"},
      "models": {"fake-model": {"name": "fake-model", "tool_call": true, "reasoning": true}}
    },
    "faketitle": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "faketitle",
      "options": {"baseURL": "http://127.0.0.1:$TITLE_PORT/v1", "apiKey": "dummy-key"},
      "models": {"fake-title": {"name": "fake-title"}}
    }
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

session_id() {
    "$PYTHON" - "$DATA/opencode.db" <<'EOF'
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
row = con.execute("select id from session order by time_created desc limit 1").fetchone()
print(row[0] if row else "")
EOF
}

# snapshot N: the database files exactly as OpenCode left them, then `opencode export`.
snapshot() {
    local n=$1 sid
    ls -l --time-style=+ "$DATA" | grep opencode.db >"$DEST/phase$n.dbfiles"
    mkdir -p "$DEST/.raw-$n"
    cp -p "$DATA"/opencode.db* "$DEST/.raw-$n/" 2>/dev/null
    sid=$(session_id)
    if [ -n "$sid" ]; then
        "$OPENCODE" export "$sid" >"$DEST/export-$n.json" 2>"$DEST/export-$n.stderr"
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

# killed_phase N SCENARIO REQUESTS DELAY SIGNAL ARGS...: send SIGNAL DELAY s after REQUESTS
# chat requests reached the main server.
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

# tui_abort_phase N SCENARIO PROMPT: the interactive TUI under tmux; type PROMPT, and 5 s after
# the first chat request press Escape twice (the TUI's "esc interrupt"), then quit.  Screens
# are captured before, during and after.
tui_abort_phase() {
    local n=$1 scenario=$2 prompt=$3 tm="tmux -L oc-$NAME"
    serve_both "$n" "$scenario"
    $tm new-session -d -s oc -x 160 -y 45 \
        "$OPENCODE --print-logs --log-level INFO 2>$DEST/phase$n.stderr"
    sleep 25
    $tm capture-pane -p -t oc >"$DEST/screen-0.txt"
    $tm send-keys -t oc "$prompt"
    sleep 1
    $tm send-keys -t oc Enter
    wait_requests "$DEST/raw-requests-$n.jsonl" 1 90
    sleep 5
    $tm capture-pane -p -t oc >"$DEST/screen-1.txt"
    $tm send-keys -t oc Escape
    sleep 0.5
    $tm send-keys -t oc Escape
    sleep 5
    $tm capture-pane -p -t oc >"$DEST/screen-2.txt"
    $tm send-keys -t oc C-c
    sleep 3
    $tm kill-server 2>/dev/null
    sleep 2
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
    local raw n
    for raw in "$DEST"/.raw-*; do
        n=${raw##*-}
        "$PYTHON" - "$raw" "$DEST/opencode-$n.db" <<'EOF'
import os, shutil, sqlite3, sys, tempfile
src, dst = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    for name in os.listdir(src):
        shutil.copy2(os.path.join(src, name), tmp)
    con = sqlite3.connect(os.path.join(tmp, "opencode.db"))
    if os.path.exists(dst):
        os.remove(dst)
    con.execute("VACUUM INTO ?", (dst,))
    con.close()
EOF
        "$PYTHON" "$(dirname "$RECIPE")/opencode_dump.py" "$DEST/opencode-$n.db" >"$DEST/opencode-$n.db.txt"
        if [ -n "${KEEP_RAW:-}" ]; then
            rm -rf "$DEST/raw-phase$n"
            mv "$raw" "$DEST/raw-phase$n"
        else
            rm -rf "$raw"
        fi
    done
    for raw in "$DEST"/raw-requests-*.jsonl "$DEST"/raw-title-requests-*.jsonl; do
        [ -f "$raw" ] || continue
        slim_log "$raw" "${raw/raw-/}"
        rm "$raw"
    done
    find "$DEST" -name '*.stderr' -size 0 -delete
}

record() {
    case $1 in
    clean)
        setup clean
        phase 1 opencode-clean.json Say hello
        collect ;;
    tools)
        setup tools
        phase 1 opencode-tools.json Run echo then read notes.txt
        resume_phase 2 opencode-tools.resume.json How many lines does notes.txt have
        collect ;;
    continue)  # resume with --continue instead of --session
        setup continue
        phase 1 opencode-clean.json Say hello
        phase 2 opencode-resume-ok.json --continue Are you still there
        collect ;;
    thinking)
        setup thinking
        phase 1 opencode-thinking.json List the files
        collect ;;
    parallel)
        setup parallel
        phase 1 opencode-parallel.json Run three tools in parallel
        collect ;;
    kill-tool)
        setup kill-tool
        killed_phase 1 opencode-kill-tool.json 1 3 KILL Run the slow command
        resume_phase 2 opencode-resume-ok.json Are you still there
        collect ;;
    kill-tool-step2)
        setup kill-tool-step2
        killed_phase 1 opencode-kill-tool-step2.json 2 3 KILL Run two steps
        resume_phase 2 opencode-resume-ok.json Are you still there
        collect ;;
    int-tool)  # SIGINT (Ctrl-C) during the tool: does cleanup write "Tool execution aborted"?
        setup int-tool
        killed_phase 1 opencode-kill-tool.json 1 3 INT Run the slow command
        resume_phase 2 opencode-resume-ok.json Are you still there
        collect ;;
    term-tool)
        setup term-tool
        killed_phase 1 opencode-kill-tool.json 1 3 TERM Run the slow command
        resume_phase 2 opencode-resume-ok.json Are you still there
        collect ;;
    tui-abort-tool)  # Escape in the TUI while the tool runs
        setup tui-abort-tool
        tui_abort_phase 1 opencode-kill-tool.json "Run the slow command"
        resume_phase 2 opencode-resume-ok.json Are you still there
        collect ;;
    tui-abort-stream)  # Escape in the TUI while the reply streams
        setup tui-abort-stream
        tui_abort_phase 1 opencode-kill-stream.json "Tell me something long"
        resume_phase 2 opencode-resume-ok.json Are you still there
        collect ;;
    kill-stream)
        setup kill-stream
        killed_phase 1 opencode-kill-stream.json 1 3 KILL Tell me something long
        resume_phase 2 opencode-resume-ok.json Are you still there
        collect ;;
    http500)
        setup http500
        phase 1 opencode-http500.json This request fails upstream
        resume_phase 2 opencode-resume-ok.json Try again
        collect ;;
    drop)
        setup drop
        phase 1 opencode-drop.json The connection drops mid reply
        resume_phase 2 opencode-resume-ok.json Try again
        collect ;;
    drop-tool)
        setup drop-tool
        phase 1 opencode-drop-tool.json The connection drops mid tool call
        resume_phase 2 opencode-resume-ok.json Try again
        collect ;;
    *) echo "unknown session $1" >&2; return 1 ;;
    esac
}

if [ $# -eq 0 ]; then
    set -- clean tools continue thinking parallel kill-tool kill-tool-step2 int-tool term-tool \
        tui-abort-tool tui-abort-stream kill-stream http500 drop drop-tool
fi
for s in "$@"; do
    record "$s"
done
