#!/usr/bin/env bash
# Records Mistral Vibe sessions against the fake model server.
#   usage: tests/fakemodel/recipes/mistral_vibe.sh OUTDIR [SESSION...]
# VIBE names the CLI (default: vibe on PATH; install mistral-vibe==2.18.4 in its own venv).
# Each session runs under HOME=/tmp/vibe-home-SESSION in /tmp/vibe-work-SESSION.  Programmatic
# mode (`vibe -p --auto-approve`) does not stream; the sessions named tui-* run the interactive
# UI under tmux, which streams.  Copies every session folder under ~/.vibe/logs/session and the
# slimmed request log of each phase to OUTDIR/SESSION/.
set -u
. "$(dirname "$0")/common.sh"
VIBE=${VIBE:-vibe}
OUT=$(realpath -m "$1")
shift

setup() {
    NAME=$1
    export HOME=/tmp/vibe-home-$NAME
    export FAKEMODEL_API_KEY=dummy-key
    WORK=/tmp/vibe-work-$NAME
    DEST=$OUT/$NAME
    rm -rf "$HOME" "$WORK" "$DEST"
    mkdir -p "$HOME/.vibe" "$WORK" "$DEST"
    printf 'first line\nsecond line\n' >"$WORK/notes.txt"
    # api_retry_max_elapsed_time is cut from 300 s so that the failure sessions end quickly.
    cat >"$HOME/.vibe/config.toml" <<TOML
active_model = "fake"
enable_telemetry = false
enable_update_checks = false
enable_notifications = false
include_commit_signature = false
api_retry_max_elapsed_time = 20.0

[experiments]
enable = false

[[providers]]
name = "fakemodel"
api_base = "http://127.0.0.1:$PORT/v1"
api_key_env_var = "FAKEMODEL_API_KEY"
api_style = "openai"
backend = "generic"

[[models]]
name = "fake-model"
provider = "fakemodel"
alias = "fake"
TOML
    cd "$WORK" || exit 1
}

# phase N SCENARIO ARGS...: one programmatic run to completion (180 s cap).
phase() {
    local n=$1 scenario=$2
    shift 2
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    timeout 180 "$VIBE" --trust --auto-approve "$@" >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr"
    echo "exit $?" >"$DEST/phase$n.exit"
    unserve
}

# killed_phase N SCENARIO REQUESTS DELAY ARGS...: SIGKILL the programmatic run DELAY s after
# the server saw REQUESTS requests.
killed_phase() {
    local n=$1 scenario=$2 requests=$3 delay=$4
    shift 4
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    "$VIBE" --trust --auto-approve "$@" >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr" &
    local pid=$!
    wait_requests "$DEST/raw-requests-$n.jsonl" "$requests" 60
    sleep "$delay"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    echo "exit $? (SIGKILL sent ${delay}s after request $requests)" >"$DEST/phase$n.exit"
    unserve
}

# tui_phase N SCENARIO REQUESTS DELAY KEYS PROMPT [OPTIONS]: the interactive UI in tmux with
# PROMPT as its initial prompt (and OPTIONS, e.g. "--resume ID", before it); DELAY s after
# request REQUESTS, send KEYS (tmux send-keys names, or "-" for none), wait 3 s, capture the
# screen, then SIGKILL the CLI.
tui_phase() {
    local n=$1 scenario=$2 requests=$3 delay=$4 keys=$5 prompt=$6 options=${7:-}
    local sock=fakemodel-vibe-$NAME
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    tmux -L "$sock" new-session -d -x 160 -y 48 \
        "cd '$WORK' && HOME='$HOME' FAKEMODEL_API_KEY=dummy-key exec '$VIBE' --trust $options '$prompt'"
    local pid
    pid=$(tmux -L "$sock" list-panes -F '#{pane_pid}')
    wait_requests "$DEST/raw-requests-$n.jsonl" "$requests" 60
    sleep "$delay"
    if [ "$keys" != "-" ]; then
        tmux -L "$sock" send-keys $keys
        sleep 3
    fi
    if [ -n "${FOLLOWUP:-}" ]; then  # a second prompt typed into the UI, answered before the kill
        tmux -L "$sock" send-keys -l "$FOLLOWUP"
        tmux -L "$sock" send-keys Enter
        wait_requests "$DEST/raw-requests-$n.jsonl" $((requests + 1)) 60
        sleep 3
    fi
    tmux -L "$sock" capture-pane -p >"$DEST/phase$n.screen.txt"
    kill -9 "$pid"
    echo "SIGKILL sent to the interactive UI ($([ "$keys" = "-" ] && echo "no keys sent" || echo "after keys: $keys"))" \
        >"$DEST/phase$n.exit"
    tmux -L "$sock" kill-server 2>/dev/null
    unserve
}

session_id() {
    "$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["session_id"])' \
        "$(ls -td "$HOME"/.vibe/logs/session/*/ | head -1)meta.json"
}

collect() {
    local dir
    for dir in "$HOME"/.vibe/logs/session/*/; do
        [ -d "$dir" ] || continue
        mkdir -p "$DEST/sessions/$(basename "$dir")"
        cp -r "$dir". "$DEST/sessions/$(basename "$dir")/"
    done
    for raw in "$DEST"/raw-requests-*.jsonl; do
        slim_log "$raw" "${raw/raw-requests/requests}"
        rm "$raw"
    done
}

# damage_orphan: the orphan-resume damage (the read result line removed, meta.json
# total_messages lowered to match); sets SESSION_DIR and SESSION_ID.
damage_orphan() {
    SESSION_DIR=$(ls -td "$HOME"/.vibe/logs/session/*/ | head -1)
    SESSION_ID=$(session_id)
    cp "$SESSION_DIR/messages.jsonl" "$DEST/messages.before-damage.jsonl"
    grep -v '"tool_call_id": "R7tWc2NfA"' "$DEST/messages.before-damage.jsonl" >"$SESSION_DIR/messages.jsonl"
    "$PYTHON" - "$SESSION_DIR/meta.json" <<'EOF2'
import json, sys
meta = json.load(open(sys.argv[1], encoding="utf-8"))
meta["total_messages"] -= 1
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(meta, f, indent=2, ensure_ascii=False)
EOF2
    cp "$SESSION_DIR/messages.jsonl" "$DEST/messages.damaged.jsonl"
    cp "$SESSION_DIR/meta.json" "$DEST/meta.damaged.json"
}

# A fix killed right after its first rename (the companion meta.json), before the second.
KILL_AFTER_FIRST_RENAME='
import os, signal, sys
from transcript_doctor import cli, writer
def hook(point, target):
    if point == "after-rename":
        os.kill(os.getpid(), signal.SIGKILL)
writer.HOOK = hook
sys.exit(cli.run(sys.argv[1:]))
'

record() {
    case $1 in
    clean)
        setup clean
        phase 1 vibe-clean.json -p "Say hello"
        collect ;;
    tools)  # multi-turn with tool calls, then --resume ID in programmatic mode
        setup tools
        phase 1 vibe-tools.json -p "Run echo, then read notes.txt"
        phase 2 vibe-tools.resume.json --resume "$(session_id)" -p "How many lines does notes.txt have?"
        collect ;;
    thinking)  # reasoning_content before the text and the tool call, two steps
        setup thinking
        phase 1 vibe-thinking.json -p "List the files"
        collect ;;
    parallel)
        setup parallel
        phase 1 vibe-parallel.json -p "Run three tools in parallel"
        collect ;;
    kill-tool)  # SIGKILL while the bash tool sleeps (nothing is saved before the first turn ends)
        setup kill-tool
        killed_phase 1 vibe-kill-tool.json 1 3 -p "Run the slow command"
        collect ;;
    kill-tool-step2)  # SIGKILL while the second step's tool sleeps; then --resume
        setup kill-tool-step2
        killed_phase 1 vibe-kill-tool-step2.json 2 3 -p "Run two steps"
        phase 2 vibe-resume-ok.json --resume "$(session_id)" -p "Are you still there?"
        collect ;;
    http500)
        setup http500
        phase 1 vibe-http500.json -p "This request fails upstream"
        phase 2 vibe-resume-ok.json --resume "$(session_id)" -p "Try again"
        collect ;;
    drop)  # programmatic mode does not stream: the connection is reset before any response
        setup drop
        phase 1 vibe-drop.json -p "The connection drops"
        phase 2 vibe-resume-ok.json --resume "$(session_id)" -p "Try again"
        collect ;;
    tui-clean)  # the streaming UI: one turn with a tool, then SIGKILL while idle
        setup tui-clean
        tui_phase 1 vibe-tools.json 3 3 - "Run echo, then read notes.txt"
        collect ;;
    tui-kill-stream)  # SIGKILL while the reply streams (server hangs after 4 chunks)
        setup tui-kill-stream
        tui_phase 1 vibe-kill-stream.json 1 2 - "Tell me something long"
        collect ;;
    tui-kill-stream-step2)  # SIGKILL while the second step's reply streams; then --resume
        setup tui-kill-stream-step2
        tui_phase 1 vibe-kill-stream-step2.json 2 2 - "Run one step, then answer"
        phase 2 vibe-resume-ok.json --resume "$(session_id)" -p "Are you still there?"
        collect ;;
    tui-drop)  # streamed replies all reset after 4 chunks
        setup tui-drop
        tui_phase 1 vibe-drop-stream.json 1 25 - "The connection drops mid-reply"
        collect ;;
    tui-esc-tool)  # Escape while the UI asks to approve the slow bash command (not allowlisted)
        setup tui-esc-tool
        tui_phase 1 vibe-kill-tool.json 1 3 Escape "Run the slow command"
        collect ;;
    tui-esc-stream)  # Escape while the reply streams (server hangs after 4 chunks)
        setup tui-esc-stream
        tui_phase 1 vibe-kill-stream.json 1 3 Escape "Tell me something long"
        collect ;;
    tui-esc-stream-then-prompt)  # Escape while the reply streams, then a second prompt
        setup tui-esc-stream-then-prompt
        FOLLOWUP="Are you still there?" tui_phase 1 vibe-esc-stream-then-prompt.json 1 3 Escape "Tell me something long"
        collect ;;
    tui-esc-running-tool)  # Escape while the auto-approved bash tool runs
        setup tui-esc-running-tool
        tui_phase 1 vibe-kill-tool.json 1 3 Escape "Run the slow command" --auto-approve
        collect ;;
    orphan-resume)  # hand-made damage: the tools session with the read result line removed (and
        # meta.json total_messages lowered to match), then resumed twice: programmatic --resume
        # (writes a new folder) and the interactive UI --resume (appends to the same folder)
        setup orphan-resume
        phase 1 vibe-tools.json -p "Run echo, then read notes.txt"
        local dir sid
        dir=$(ls -td "$HOME"/.vibe/logs/session/*/ | head -1)
        sid=$(session_id)
        cp "$dir/messages.jsonl" "$DEST/messages.before-damage.jsonl"
        grep -v '"tool_call_id": "R7tWc2NfA"' "$DEST/messages.before-damage.jsonl" >"$dir/messages.jsonl"
        "$PYTHON" - "$dir/meta.json" <<'EOF2'
import json, sys
meta = json.load(open(sys.argv[1], encoding="utf-8"))
meta["total_messages"] -= 1
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(meta, f, indent=2, ensure_ascii=False)
EOF2
        cp "$dir/messages.jsonl" "$DEST/messages.damaged.jsonl"
        phase 2 vibe-orphan.resume.json --resume "$sid" -p "Go on"
        tui_phase 3 vibe-orphan.resume.json 1 4 - "Go on again" "--resume $sid"
        collect ;;
    fixed-resume)  # the orphan-resume damage repaired by `transcript-doctor fix --in-place` (TD
        # names the tool, default transcript-doctor on PATH), which inserts the result and
        # raises meta.json total_messages with it; then the interactive UI resumes the same folder
        setup fixed-resume
        phase 1 vibe-tools.json -p "Run echo, then read notes.txt"
        damage_orphan
        "${TD:-transcript-doctor}" fix --in-place --report "$DEST/fix-report.json" "$SESSION_DIR/messages.jsonl" \
            >"$DEST/fix.stdout" 2>&1
        echo "exit $?" >>"$DEST/fix.stdout"
        cp "$SESSION_DIR/messages.jsonl" "$DEST/messages.fixed.jsonl"
        cp "$SESSION_DIR/meta.json" "$DEST/meta.fixed.json"
        tui_phase 2 vibe-fixed.resume.json 1 4 - "Go on again" "--resume $SESSION_ID"
        collect ;;
    halfway-resume)  # the same damage; the fix is SIGKILLed between its two renames (meta.json
        # replaced, messages.jsonl not: writer.HOOK, TD_PYTHON names a Python that imports
        # transcript_doctor); the UI resumes that state; then fix runs again; then a second resume
        setup halfway-resume
        phase 1 vibe-tools.json -p "Run echo, then read notes.txt"
        damage_orphan
        "${TD_PYTHON:-python3}" -c "$KILL_AFTER_FIRST_RENAME" fix --in-place "$SESSION_DIR/messages.jsonl" \
            >"$DEST/fix1.stdout" 2>&1
        echo "exit $? (SIGKILL right after the first rename)" >>"$DEST/fix1.stdout"
        cp "$SESSION_DIR/messages.jsonl" "$DEST/messages.halfway.jsonl"
        cp "$SESSION_DIR/meta.json" "$DEST/meta.halfway.json"
        ls -a "$SESSION_DIR" >"$DEST/halfway.ls"
        tui_phase 2 vibe-fixed.resume.json 1 4 - "Go on again" "--resume $SESSION_ID"
        cp "$SESSION_DIR/messages.jsonl" "$DEST/messages.resumed.jsonl"
        cp "$SESSION_DIR/meta.json" "$DEST/meta.resumed.json"
        "${TD:-transcript-doctor}" fix --in-place --report "$DEST/fix-report.json" "$SESSION_DIR/messages.jsonl" \
            >"$DEST/fix2.stdout" 2>&1
        echo "exit $?" >>"$DEST/fix2.stdout"
        cp "$SESSION_DIR/messages.jsonl" "$DEST/messages.fixed.jsonl"
        cp "$SESSION_DIR/meta.json" "$DEST/meta.fixed.json"
        tui_phase 3 vibe-fixed.resume2.json 1 4 - "And once more" "--resume $SESSION_ID"
        collect ;;
    dup-fixed-resume)  # hand-made damage: the first prompt's line written twice (same message_id,
        # as the count-based append writes it) with total_messages raised to match; fix removes
        # the copy (TD403) and lowers the count; then the interactive UI resumes the same folder
        setup dup-fixed-resume
        phase 1 vibe-tools.json -p "Run echo, then read notes.txt"
        SESSION_DIR=$(ls -td "$HOME"/.vibe/logs/session/*/ | head -1)
        SESSION_ID=$(session_id)
        cp "$SESSION_DIR/messages.jsonl" "$DEST/messages.before-damage.jsonl"
        "$PYTHON" - "$SESSION_DIR" <<'EOF2'
import json, sys
folder = sys.argv[1]
with open(folder + "/messages.jsonl", "rb") as f:
    lines = f.read().split(b"\n")
with open(folder + "/messages.jsonl", "wb") as f:
    f.write(b"\n".join([lines[0], *lines]))
meta = json.load(open(folder + "/meta.json", encoding="utf-8"))
meta["total_messages"] += 1
with open(folder + "/meta.json", "w", encoding="utf-8") as f:
    json.dump(meta, f, indent=2, ensure_ascii=False)
EOF2
        cp "$SESSION_DIR/messages.jsonl" "$DEST/messages.damaged.jsonl"
        cp "$SESSION_DIR/meta.json" "$DEST/meta.damaged.json"
        "${TD:-transcript-doctor}" fix --in-place --report "$DEST/fix-report.json" "$SESSION_DIR/messages.jsonl" \
            >"$DEST/fix.stdout" 2>&1
        echo "exit $?" >>"$DEST/fix.stdout"
        cp "$SESSION_DIR/messages.jsonl" "$DEST/messages.fixed.jsonl"
        cp "$SESSION_DIR/meta.json" "$DEST/meta.fixed.json"
        tui_phase 2 vibe-fixed.resume.json 1 4 - "Go on again" "--resume $SESSION_ID"
        collect ;;
    *) echo "unknown session $1" >&2; return 1 ;;
    esac
}

if [ $# -eq 0 ]; then
    set -- clean tools thinking parallel kill-tool kill-tool-step2 http500 drop tui-clean tui-kill-stream tui-kill-stream-step2 tui-drop tui-esc-tool tui-esc-running-tool tui-esc-stream tui-esc-stream-then-prompt orphan-resume fixed-resume halfway-resume dup-fixed-resume
fi
for s in "$@"; do
    record "$s"
done
