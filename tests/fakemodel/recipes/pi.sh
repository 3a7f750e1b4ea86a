#!/usr/bin/env bash
# Records Pi coding agent sessions against the fake model server.
#   usage: tests/fakemodel/recipes/pi.sh OUTDIR [SESSION...]
# PI names the CLI (default: pi on PATH; `npm install --prefix DIR @mariozechner/pi-coding-agent`).
# Each session runs under HOME=/tmp/pi-home-SESSION in /tmp/pi-work-SESSION in print mode
# (`pi --offline -p`), and copies ~/.pi/agent/sessions and the slimmed request log of each
# phase to OUTDIR/SESSION/.
set -u
. "$(dirname "$0")/common.sh"
PI=${PI:-pi}
OUT=$(realpath -m "$1")
shift

setup() {
    NAME=$1
    export HOME=/tmp/pi-home-$NAME
    WORK=/tmp/pi-work-$NAME
    DEST=$OUT/$NAME
    rm -rf "$HOME" "$WORK" "$DEST"
    mkdir -p "$HOME/.pi/agent" "$WORK" "$DEST"
    printf 'first line\nsecond line\n' >"$WORK/notes.txt"
    cat >"$HOME/.pi/agent/models.json" <<JSON
{
  "providers": {
    "fakemodel": {
      "baseUrl": "http://127.0.0.1:$PORT/v1",
      "api": "openai-completions",
      "apiKey": "dummy-key",
      "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
      "models": [{"id": "fake-model"}]
    }
  }
}
JSON
    cd "$WORK" || exit 1
}

run_pi() {
    "$PI" --offline --provider fakemodel --model fake-model -p "$@"
}

note_lines() {
    local f
    for f in "$HOME"/.pi/agent/sessions/*/*.jsonl; do
        [ -f "$f" ] && echo "after phase $1: $(basename "$f") $(wc -l <"$f") lines" >>"$DEST/phase$1.exit"
    done
    return 0
}

phase() {
    local n=$1 scenario=$2
    shift 2
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    timeout 120 "$PI" --offline --provider fakemodel --model fake-model -p "$@" \
        >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr" </dev/null
    echo "exit $?" >"$DEST/phase$n.exit"
    unserve
    note_lines "$n"
}

killed_phase() {
    local n=$1 scenario=$2 requests=$3 delay=$4
    shift 4
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    "$PI" --offline --provider fakemodel --model fake-model -p "$@" \
        >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr" </dev/null &
    local pid=$!
    wait_requests "$DEST/raw-requests-$n.jsonl" "$requests" 60
    sleep "$delay"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    echo "exit $? (SIGKILL sent ${delay}s after request $requests)" >"$DEST/phase$n.exit"
    unserve
    note_lines "$n"
}

session_file() {
    ls -t "$HOME"/.pi/agent/sessions/*/*.jsonl 2>/dev/null | head -1
}

collect() {
    if [ -d "$HOME/.pi/agent/sessions" ]; then
        cp -r "$HOME/.pi/agent/sessions" "$DEST/sessions"
    fi
    for raw in "$DEST"/raw-requests-*.jsonl; do
        slim_log "$raw" "${raw/raw-requests/requests}"
        rm "$raw"
    done
}

# resume_phase N SCENARIO PROMPT: resume the newest session file by path, if there is one.
resume_phase() {
    local f
    f=$(session_file)
    if [ -n "$f" ]; then
        phase "$1" "$2" --session "$f" "$3"
    else
        echo "no session file was written: nothing to resume" >"$DEST/phase$1.exit"
    fi
}

record() {
    case $1 in
    clean)
        setup clean
        phase 1 pi-clean.json "Say hello"
        collect ;;
    tools)
        setup tools
        phase 1 pi-tools.json "Run echo, then read notes.txt"
        resume_phase 2 pi-tools.resume.json "How many lines does notes.txt have?"
        collect ;;
    thinking)
        setup thinking
        phase 1 pi-thinking.json "List the files"
        collect ;;
    parallel)
        setup parallel
        phase 1 pi-parallel.json "Run three tools in parallel"
        collect ;;
    kill-tool)
        setup kill-tool
        killed_phase 1 pi-kill-tool.json 1 3 "Run the slow command"
        resume_phase 2 pi-resume-ok.json "Are you still there?"
        collect ;;
    kill-tool-step2)
        setup kill-tool-step2
        killed_phase 1 pi-kill-tool-step2.json 2 3 "Run two steps"
        resume_phase 2 pi-resume-ok.json "Are you still there?"
        collect ;;
    kill-stream)
        setup kill-stream
        killed_phase 1 pi-kill-stream.json 1 2 "Tell me something long"
        resume_phase 2 pi-resume-ok.json "Are you still there?"
        collect ;;
    kill-stream-step2)
        setup kill-stream-step2
        killed_phase 1 pi-kill-stream-step2.json 2 2 "Run one step, then answer"
        resume_phase 2 pi-resume-ok.json "Are you still there?"
        collect ;;
    http500)
        setup http500
        phase 1 pi-http500.json "This request fails upstream"
        resume_phase 2 pi-resume-ok.json "Try again"
        collect ;;
    drop)
        setup drop
        phase 1 pi-drop.json "The connection drops mid-reply"
        resume_phase 2 pi-resume-ok.json "Try again"
        collect ;;
    drop-tool)
        setup drop-tool
        phase 1 pi-drop-tool.json "The connection drops mid tool call"
        resume_phase 2 pi-resume-ok.json "Try again"
        collect ;;
    orphan-resume)  # hand-made damage: the read result entry removed (its child re-parented
        # to the call's entry so the chain stays whole), then resumed
        setup orphan-resume
        phase 1 pi-tools.json "Run echo, then read notes.txt"
        local f
        f=$(session_file)
        cp "$f" "$DEST/session.before-damage.jsonl"
        "$PYTHON" - "$f" <<'EOF2'
import json, sys
path = sys.argv[1]
lines = open(path, encoding="utf-8").read().split("\n")
out, dropped = [], None
for line in lines:
    if not line:
        out.append(line)
        continue
    entry = json.loads(line)
    message = entry.get("message") or {}
    if message.get("role") == "toolResult" and message.get("toolCallId") == "call_read_1":
        dropped = entry
        continue
    if dropped is not None and entry.get("parentId") == dropped["id"]:
        entry["parentId"] = dropped["parentId"]
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    out.append(line)
open(path, "w", encoding="utf-8").write("\n".join(out))
EOF2
        cp "$f" "$DEST/session.damaged.jsonl"
        phase 2 pi-orphan.resume.json --session "$f" "Go on"
        collect ;;
    fixed-resume)  # the kill-tool session (TD301 after its resume) repaired by
        # `transcript-doctor fix --in-place` (TD names the tool, default transcript-doctor on
        # PATH), then resumed again: does Pi load the repaired tree, and what does it send?
        setup fixed-resume
        killed_phase 1 pi-kill-tool.json 1 3 "Run the slow command"
        resume_phase 2 pi-resume-ok.json "Are you still there?"
        local g
        g=$(session_file)
        cp "$g" "$DEST/session.damaged.jsonl"
        "${TD:-transcript-doctor}" fix --in-place --report "$DEST/fix-report.json" "$g" >"$DEST/fix.stdout" 2>&1
        echo "exit $?" >>"$DEST/fix.stdout"
        cp "$g" "$DEST/session.fixed.jsonl"
        resume_phase 3 pi-resume-ok.json "And now?"
        collect ;;
    *) echo "unknown session $1" >&2; return 1 ;;
    esac
}

if [ $# -eq 0 ]; then
    set -- clean tools thinking parallel kill-tool kill-tool-step2 kill-stream kill-stream-step2 \
        http500 drop drop-tool orphan-resume fixed-resume
fi
for s in "$@"; do
    record "$s"
done
