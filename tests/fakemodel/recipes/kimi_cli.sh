#!/usr/bin/env bash
# Records Kimi CLI sessions against the fake model server.
#   usage: tests/fakemodel/recipes/kimi_cli.sh OUTDIR [SESSION...]
# KIMI names the CLI (default: kimi on PATH; install kimi-cli==1.51.0 in its own venv).
# Each session runs under HOME=/tmp/kimi-home-SESSION in /tmp/kimi-work-SESSION, in print mode
# (`kimi --print -p`, which auto-approves tools), and copies the session folder, kimi.json and
# the slimmed request log of each phase to OUTDIR/SESSION/.
set -u
. "$(dirname "$0")/common.sh"
KIMI=${KIMI:-kimi}
OUT=$(realpath -m "$1")
shift

setup() {
    NAME=$1
    export HOME=/tmp/kimi-home-$NAME
    WORK=/tmp/kimi-work-$NAME
    DEST=$OUT/$NAME
    rm -rf "$HOME" "$WORK" "$DEST"
    mkdir -p "$HOME/.kimi" "$WORK" "$DEST"
    printf 'first line\nsecond line\n' >"$WORK/notes.txt"
    cat >"$HOME/.kimi/config.toml" <<TOML
default_model = "fake"
telemetry = false

[providers.fakemodel]
type = "kimi"
base_url = "http://127.0.0.1:$PORT/v1"
api_key = "dummy-key"

[models.fake]
provider = "fakemodel"
model = "fake-model"
max_context_size = 128000
TOML
    cd "$WORK" || exit 1
}

# phase N SCENARIO ARGS...: one CLI run against one scenario, to completion (120 s cap).
phase() {
    local n=$1 scenario=$2
    shift 2
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    timeout 120 "$KIMI" --print "$@" >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr"
    echo "exit $?" >"$DEST/phase$n.exit"
    unserve
    note_lines "$n"
}

# note_lines N: how many lines of context.jsonl / wire.jsonl exist after phase N (the files are
# append-only, so phase N wrote the lines after phase N-1's counts).
note_lines() {
    local dir
    dir=$(dirname "$(ls -t "$HOME"/.kimi/sessions/*/*/context.jsonl | head -1)")
    echo "after phase $1: context.jsonl $(wc -l <"$dir/context.jsonl") lines, wire.jsonl $(wc -l <"$dir/wire.jsonl") lines" \
        >>"$DEST/phase$1.exit"
}

# killed_phase N SCENARIO REQUESTS DELAY ARGS...: SIGKILL the CLI DELAY s after the server saw
# REQUESTS requests (the server keeps hanging/serving until then).
killed_phase() {
    local n=$1 scenario=$2 requests=$3 delay=$4
    shift 4
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    "$KIMI" --print "$@" >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr" &
    local pid=$!
    wait_requests "$DEST/raw-requests-$n.jsonl" "$requests" 60
    sleep "$delay"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    echo "exit $? (SIGKILL sent ${delay}s after request $requests)" >"$DEST/phase$n.exit"
    unserve
    note_lines "$n"
}

# tui_phase N SCENARIO REQUESTS DELAY KEYS PROMPT: the interactive shell in tmux
# (`kimi -y -p PROMPT` runs PROMPT and exits when it ends); DELAY s after request REQUESTS
# send KEYS, wait 5 s, capture the screen, then SIGKILL the CLI if it still runs.
tui_phase() {
    local n=$1 scenario=$2 requests=$3 delay=$4 keys=$5 prompt=$6
    local sock=fakemodel-kimi-$NAME
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    tmux -L "$sock" new-session -d -x 160 -y 48 \
        "cd '$WORK' && HOME='$HOME' exec '$KIMI' -y -p '$prompt'"
    tmux -L "$sock" set-option -g remain-on-exit on >/dev/null
    local pid
    pid=$(tmux -L "$sock" list-panes -F '#{pane_pid}')
    wait_requests "$DEST/raw-requests-$n.jsonl" "$requests" 60
    sleep "$delay"
    tmux -L "$sock" send-keys "$keys"
    sleep 5
    tmux -L "$sock" capture-pane -p >"$DEST/phase$n.screen.txt"
    if kill -0 "$pid" 2>/dev/null && [ "$(tmux -L "$sock" list-panes -F '#{pane_dead}')" = 0 ]; then
        kill -9 "$pid"
        echo "interactive shell: keys $keys sent, then SIGKILL" >"$DEST/phase$n.exit"
    else
        echo "interactive shell: keys $keys sent; it exited by itself" >"$DEST/phase$n.exit"
    fi
    tmux -L "$sock" kill-server 2>/dev/null
    unserve
    note_lines "$n"
}

session_id() {
    basename "$(dirname "$(ls -t "$HOME"/.kimi/sessions/*/*/context.jsonl | head -1)")"
}

collect() {
    local dir
    dir=$(dirname "$(ls -t "$HOME"/.kimi/sessions/*/*/context.jsonl | head -1)")
    mkdir -p "$DEST/session"
    cp -r "$dir"/. "$DEST/session/"
    echo "${dir#"$HOME"/}" >"$DEST/session-path.txt"
    cp "$HOME/.kimi/kimi.json" "$DEST/kimi.json"
    for raw in "$DEST"/raw-requests-*.jsonl; do
        slim_log "$raw" "${raw/raw-requests/requests}"
        rm "$raw"
    done
}

record() {
    case $1 in
    clean)
        setup clean
        phase 1 kimi-clean.json -p "Say hello"
        collect ;;
    tools)  # multi-turn with tool calls, then a resume by id that calls another tool
        setup tools
        phase 1 kimi-tools.json -p "Run echo, then read notes.txt"
        phase 2 kimi-tools.resume.json -S "$(session_id)" -p "How many lines does notes.txt have?"
        collect ;;
    thinking)  # reasoning_content deltas before the text and the tool call, two steps
        setup thinking
        phase 1 kimi-thinking.json -p "List the files"
        collect ;;
    parallel)
        setup parallel
        phase 1 kimi-parallel.json -p "Run three tools in parallel"
        collect ;;
    kill-tool)  # SIGKILL while the Shell tool sleeps; then resume by id
        setup kill-tool
        killed_phase 1 kimi-kill-tool.json 1 3 -p "Run the slow command"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Are you still there?"
        collect ;;
    kill-tool-step2)  # SIGKILL while the second step's tool sleeps (the first step completed)
        setup kill-tool-step2
        killed_phase 1 kimi-kill-tool-step2.json 2 3 -p "Run two steps"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Are you still there?"
        collect ;;
    kill-parallel)  # SIGKILL after one of two parallel tools finished, the other still running
        setup kill-parallel
        killed_phase 1 kimi-kill-parallel.json 1 3 -p "Run a fast and a slow command"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Are you still there?"
        collect ;;
    kill-stream)  # SIGKILL while the reply is streaming (server hangs after 4 chunks)
        setup kill-stream
        killed_phase 1 kimi-kill-stream.json 1 2 -p "Tell me something long"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Are you still there?"
        collect ;;
    kill-stream-step2)  # SIGKILL while the second step's reply streams (the first step completed)
        setup kill-stream-step2
        killed_phase 1 kimi-kill-stream-step2.json 2 2 -p "Run one step, then answer"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Are you still there?"
        collect ;;
    http500)  # every request answered with HTTP 500
        setup http500
        phase 1 kimi-http500.json -p "This request fails upstream"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Try again"
        collect ;;
    drop)  # every streamed reply dropped (TCP reset) after 4 chunks of text
        setup drop
        phase 1 kimi-drop.json -p "The connection drops mid-reply"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Try again"
        collect ;;
    drop-tool)  # every streamed reply dropped while its tool call's arguments stream
        setup drop-tool
        phase 1 kimi-drop-tool.json -p "The connection drops mid tool call"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Try again"
        collect ;;
    tui-esc-tool)  # the interactive shell: Escape while the Shell tool sleeps; then resume by id
        setup tui-esc-tool
        tui_phase 1 kimi-kill-tool.json 1 3 Escape "Run the slow command"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Are you still there?"
        collect ;;
    tui-esc-stream)  # the interactive shell: Escape while the reply streams; then resume by id
        setup tui-esc-stream
        tui_phase 1 kimi-kill-stream.json 1 3 Escape "Tell me something long"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Are you still there?"
        collect ;;
    orphan-resume)  # hand-made damage: the tools session with one tool result line removed,
        # then resumed by id, to see what Kimi replays for an unanswered call (no CLI wrote this)
        setup orphan-resume
        phase 1 kimi-tools.json -p "Run echo, then read notes.txt"
        ctx=$(ls "$HOME"/.kimi/sessions/*/*/context.jsonl)
        cp "$ctx" "$DEST/context.before-damage.jsonl"
        grep -v '"tool_call_id":"ReadFile:1"' "$DEST/context.before-damage.jsonl" >"$ctx"
        cp "$ctx" "$DEST/context.damaged.jsonl"
        phase 2 kimi-orphan.resume.json -S "$(session_id)" -p "Go on"
        collect ;;
    fixed-resume)  # the orphan-resume damage repaired by `transcript-doctor fix --in-place`
        # (TD names the tool, default transcript-doctor on PATH), then resumed by id: what
        # Kimi replays for the synthetic tool message
        setup fixed-resume
        phase 1 kimi-tools.json -p "Run echo, then read notes.txt"
        ctx=$(ls "$HOME"/.kimi/sessions/*/*/context.jsonl)
        cp "$ctx" "$DEST/context.before-damage.jsonl"
        grep -v '"tool_call_id":"ReadFile:1"' "$DEST/context.before-damage.jsonl" >"$ctx"
        cp "$ctx" "$DEST/context.damaged.jsonl"
        "${TD:-transcript-doctor}" fix --in-place --report "$DEST/fix-report.json" "$ctx" >"$DEST/fix.stdout" 2>&1
        echo "exit $?" >>"$DEST/fix.stdout"
        cp "$ctx" "$DEST/context.fixed.jsonl"
        phase 2 kimi-fixed.resume.json -S "$(session_id)" -p "Go on"
        collect ;;
    bad-args)  # the model sends a Shell call with malformed JSON arguments (kimi-cli#2165's
        # shape: a missing quote) and a SetTodoList call with empty arguments, then answers;
        # then resumed by id: what Kimi stores and replays
        setup bad-args
        phase 1 kimi-bad-args.json -p "Run two tools"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Are you still there?"
        collect ;;
    bad-args-fixed)  # the same, repaired by `transcript-doctor fix --in-place --unsafe-fixes`
        # (TD names the tool) before the resume: what Kimi replays for the replaced arguments
        setup bad-args-fixed
        phase 1 kimi-bad-args.json -p "Run two tools"
        ctx=$(ls "$HOME"/.kimi/sessions/*/*/context.jsonl)
        cp "$ctx" "$DEST/context.damaged.jsonl"
        "${TD:-transcript-doctor}" fix --in-place --unsafe-fixes --report "$DEST/fix-report.json" "$ctx" >"$DEST/fix.stdout" 2>&1
        echo "exit $?" >>"$DEST/fix.stdout"
        cp "$ctx" "$DEST/context.fixed.jsonl"
        phase 2 kimi-resume-ok.json -S "$(session_id)" -p "Are you still there?"
        collect ;;
    clear)  # the tools session, then `/clear` (rotates context.jsonl to context_1.jsonl), then a prompt
        setup clear
        phase 1 kimi-tools.json -p "Run echo, then read notes.txt"
        phase 2 kimi-clean.json -S "$(session_id)" -p "/clear"
        phase 3 kimi-clean.json -S "$(session_id)" -p "Say hello"
        collect ;;
    compact)  # the tools session, then `/compact` (the model writes the summary), then a prompt
        setup compact
        phase 1 kimi-tools.json -p "Run echo, then read notes.txt"
        phase 2 kimi-compact.json -S "$(session_id)" -p "/compact"
        phase 3 kimi-clean.json -S "$(session_id)" -p "Say hello"
        collect ;;
    *) echo "unknown session $1" >&2; return 1 ;;
    esac
}

if [ $# -eq 0 ]; then
    set -- clean tools thinking parallel kill-tool kill-tool-step2 kill-parallel kill-stream kill-stream-step2 http500 drop drop-tool tui-esc-tool tui-esc-stream orphan-resume fixed-resume clear compact bad-args bad-args-fixed
fi
for s in "$@"; do
    record "$s"
done
