#!/usr/bin/env bash
# Records GitHub Copilot CLI sessions against the fake model server.
#   usage: tests/fakemodel/recipes/copilot_cli.sh OUTDIR [SESSION...]
# COPILOT names the CLI binary (default: copilot on PATH; `npm install --prefix DIR
# @github/copilot@1.0.102`, then DIR/node_modules/@github/copilot-linux-x64/copilot).
# COPILOT_PKG_CACHE_HOME (optional) keeps the CLI's self-extracted package between runs.
# The whole recipe re-runs itself inside a fresh network namespace (`unshare -n`, loopback
# only) so that nothing the CLI tries can leave 127.0.0.1; it refuses to run without one.
# Each session runs under HOME=/tmp/copilot-home-SESSION in /tmp/copilot-work-SESSION in
# prompt mode (`copilot -p … --allow-all-tools`) with a minimal environment (env -i), and
# copies ~/.copilot/session-state, the CLI's process logs and the slimmed request log of
# each phase to OUTDIR/SESSION/.
set -u
if [ -z "${COPILOT_RECIPE_NETNS:-}" ]; then
    export COPILOT_RECIPE_NETNS=1
    exec unshare -n bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi
. "$(dirname "$0")/common.sh"
COPILOT=${COPILOT:-$(command -v copilot)}
OUT=$(realpath -m "$1")
shift

# setup NAME [WORKNAME]: the work dir is /tmp/copilot-work-WORKNAME (default NAME).
setup() {
    NAME=$1
    CHOME=/tmp/copilot-home-$NAME
    WORK=/tmp/copilot-work-${2:-$NAME}
    DEST=$OUT/$NAME
    rm -rf "$CHOME" "$WORK" "$DEST"
    mkdir -p "$CHOME" "$WORK" "$DEST"
    printf 'first line\nsecond line\n' >"$WORK/notes.txt"
    cd "$WORK" || exit 1
}

# The CLI gets only what it needs: no proxy/CA/credential variables from the recording shell.
# run_copilot [timeout SECONDS | exec] ARGS...  (exec: the background job's pid is the CLI's)
run_copilot() {
    local limit=()
    [ "$1" = timeout ] && { limit=(timeout "$2"); shift 2; }
    [ "$1" = exec ] && { limit=(exec); shift; }
    "${limit[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$CHOME" TERM=dumb LANG=C.UTF-8 \
        ${COPILOT_PKG_CACHE_HOME:+COPILOT_PKG_CACHE_HOME=$COPILOT_PKG_CACHE_HOME} \
        COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false \
        COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$PORT/v1" COPILOT_PROVIDER_API_KEY=dummy-key \
        COPILOT_MODEL=fake-model \
        "$COPILOT" --allow-all-tools --disable-client-telemetry "$@"
}

events_file() {
    ls -t "$CHOME"/.copilot/session-state/*/events.jsonl 2>/dev/null | head -1
}

session_id() {
    local f
    f=$(events_file)
    [ -n "$f" ] && basename "$(dirname "$f")"
}

note_lines() {
    local f
    for f in "$CHOME"/.copilot/session-state/*/events.jsonl; do
        [ -f "$f" ] && echo "after phase $1: $(basename "$(dirname "$f")")/events.jsonl $(wc -l <"$f") lines" >>"$DEST/phase$1.exit"
    done
    return 0
}

phase() {
    local n=$1 scenario=$2
    shift 2
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    run_copilot timeout 180 "$@" >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr" </dev/null
    echo "exit $?" >"$DEST/phase$n.exit"
    unserve
    note_lines "$n"
}

killed_phase() {
    local n=$1 scenario=$2 requests=$3 delay=$4
    shift 4
    serve "$scenario" "$DEST/raw-requests-$n.jsonl"
    run_copilot exec "$@" >"$DEST/phase$n.stdout" 2>"$DEST/phase$n.stderr" </dev/null &
    local pid=$! children child
    wait_requests "$DEST/raw-requests-$n.jsonl" "$requests" 60
    sleep "$delay"
    # The CLI starts each shell tool in its own session; remember them to end them after the kill.
    children=$(pgrep -P "$pid")
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    echo "exit $? (SIGKILL sent ${delay}s after request $requests)" >"$DEST/phase$n.exit"
    for child in $children; do
        kill -9 -- "-$child" 2>/dev/null || kill -9 "$child" 2>/dev/null
    done
    local f
    f=$(events_file)
    [ -n "$f" ] && cp "$f" "$DEST/events.after-kill.jsonl"
    unserve
    note_lines "$n"
}

collect() {
    if [ -d "$CHOME/.copilot/session-state" ]; then
        cp -r "$CHOME/.copilot/session-state" "$DEST/session-state"
        rm -rf "$DEST/session-state/.session-operation-locks"
    fi
    if [ -d "$CHOME/.copilot/logs" ]; then
        mkdir -p "$DEST/logs"
        cp "$CHOME"/.copilot/logs/*.log "$DEST/logs/" 2>/dev/null
    fi
    for raw in "$DEST"/raw-requests-*.jsonl; do
        [ -f "$raw" ] || continue
        slim_log "$raw" "${raw/raw-requests/requests}"
        cut_system_prompts "${raw/raw-requests/requests}"
        rm "$raw"
    done
}

# cut_system_prompts LOG: replace each request's system prompt (20 KB, the same text as the
# session's system.message event) with its length and sha256, in place.
cut_system_prompts() {
    "$PYTHON" - "$1" <<'EOF2'
import hashlib, json, sys
path = sys.argv[1]
out = []
with open(path, encoding="utf-8") as src:
    for line in src:
        entry = json.loads(line)
        body = entry.get("body")
        for message in (body.get("messages") or []) if isinstance(body, dict) else []:
            content = message.get("content")
            if message.get("role") == "system" and isinstance(content, str):
                digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
                message["content"] = (f"fakemodel recipe: system prompt cut ({len(content)} chars,"
                                      f" sha256 {digest})")
        out.append(json.dumps(entry, ensure_ascii=False) + "\n")
with open(path, "w", encoding="utf-8") as dst:
    dst.writelines(out)
EOF2
}

# damaged_session NAME KIND: in /tmp/copilot-work-damaged, record the tools conversation, damage events.jsonl by hand
# (tests/fakemodel/recipes/copilot_damage.py KIND), keep both versions, then resume it.
damaged_session() {
    setup "$1" damaged
    phase 1 copilot-damaged.json -p "Run echo, then read notes.txt"
    local f
    f=$(events_file)
    cp "$f" "$DEST/events.before-damage.jsonl"
    "$PYTHON" "$FAKEMODEL_DIR/recipes/copilot_damage.py" "$2" "$f"
    cp "$f" "$DEST/events.damaged.jsonl"
    resume_phase 2 copilot-orphan.resume.json "Go on"
    collect
}

# fixed_session NAME KIND [FIX OPTION...]: as damaged_session, then repaired by `transcript-doctor
# fix --in-place [FIX OPTION...]` ($TRANSCRIPT_DOCTOR, default: on PATH) before the resume: does
# the CLI take the repair?
fixed_session() {
    setup "$1" damaged
    phase 1 copilot-damaged.json -p "Run echo, then read notes.txt"
    local f
    f=$(events_file)
    cp "$f" "$DEST/events.before-damage.jsonl"
    "$PYTHON" "$FAKEMODEL_DIR/recipes/copilot_damage.py" "$2" "$f"
    cp "$f" "$DEST/events.damaged.jsonl"
    "${TRANSCRIPT_DOCTOR:-transcript-doctor}" fix --in-place "${@:3}" "$f" >"$DEST/fix.stdout" 2>&1
    cp "$f" "$DEST/events.fixed.jsonl"
    resume_phase 2 copilot-orphan.resume.json "Go on"
    collect
}

# resume_phase N SCENARIO PROMPT: resume the newest session by id, if there is one.
resume_phase() {
    local id
    id=$(session_id)
    if [ -n "$id" ]; then
        phase "$1" "$2" --resume "$id" -p "$3"
    else
        echo "no events.jsonl was written: nothing to resume" >"$DEST/phase$1.exit"
    fi
}

record() {
    case $1 in
    clean)
        setup clean
        phase 1 copilot-clean.json -p "Say hello"
        collect ;;
    tools)
        setup tools
        phase 1 copilot-tools.json -p "Run echo, then read notes.txt"
        resume_phase 2 copilot-tools.resume.json "How many lines does notes.txt have?"
        collect ;;
    continue)  # the same as tools, resumed with --continue instead of --resume ID
        setup continue
        phase 1 copilot-clean.json -p "Say hello"
        phase 2 copilot-resume-ok.json --continue -p "Are you still there?"
        collect ;;
    thinking)
        setup thinking
        phase 1 copilot-thinking.json -p "List the files"
        collect ;;
    parallel)
        setup parallel
        phase 1 copilot-parallel.json -p "Run three tools in parallel"
        collect ;;
    kill-tool)
        setup kill-tool
        killed_phase 1 copilot-kill-tool.json 1 3 -p "Run the slow command"
        resume_phase 2 copilot-resume-ok.json "Are you still there?"
        collect ;;
    kill-tool-step2)
        setup kill-tool-step2
        killed_phase 1 copilot-kill-tool-step2.json 2 3 -p "Run two steps"
        resume_phase 2 copilot-resume-ok.json "Are you still there?"
        collect ;;
    kill-stream)
        setup kill-stream
        killed_phase 1 copilot-kill-stream.json 1 2 -p "Tell me something long"
        resume_phase 2 copilot-resume-ok.json "Are you still there?"
        collect ;;
    kill-stream-step2)
        setup kill-stream-step2
        killed_phase 1 copilot-kill-stream-step2.json 2 2 -p "Run one step, then answer"
        resume_phase 2 copilot-resume-ok.json "Are you still there?"
        collect ;;
    http500)
        setup http500
        phase 1 copilot-http500.json -p "This request fails upstream"
        resume_phase 2 copilot-resume-ok.json "Try again"
        collect ;;
    drop)
        setup drop
        phase 1 copilot-drop.json -p "The connection drops mid-reply"
        resume_phase 2 copilot-resume-ok.json "Try again"
        collect ;;
    drop-tool)
        setup drop-tool
        phase 1 copilot-drop-tool.json -p "The connection drops mid tool call"
        resume_phase 2 copilot-resume-ok.json "Try again"
        collect ;;
    subagent)
        setup subagent
        phase 1 copilot-subagent.json -p "Ask a sub-agent to count the lines of notes.txt"
        collect ;;
    subagent-parallel)
        setup subagent-parallel
        phase 1 copilot-subagent-parallel.json -p "Start two sub-agents in parallel"
        collect ;;
    kill-subagent)
        setup kill-subagent
        killed_phase 1 copilot-kill-subagent.json 2 3 -p "Ask a sub-agent to run a slow command"
        resume_phase 2 copilot-resume-ok.json "Are you still there?"
        collect ;;
    u2028)  # a tool output holding a raw U+2028 LINE SEPARATOR, then a resume
        setup u2028
        phase 1 copilot-u2028.json -p "Print a line separator"
        resume_phase 2 copilot-resume-ok.json "Are you still there?"
        collect ;;
    orphan-resume)  # hand-made damage: the view tool.execution_complete removed (its child
        # re-parented to the removed event's parent so the chain stays whole), then resumed
        damaged_session orphan-resume orphan ;;
    torn-resume)  # hand-made damage: the last line cut in the middle (a torn write)
        damaged_session torn-resume torn ;;
    nul-resume)  # hand-made damage: a run of NUL bytes after the last line
        damaged_session nul-resume nul ;;
    glued-resume)  # hand-made damage: a truncated event glued in front of the next one
        damaged_session glued-resume glued ;;
    rawnl-resume)  # hand-made damage: one event split over two lines by a raw newline
        damaged_session rawnl-resume rawnl ;;
    rawsep-resume)  # hand-made damage: a raw U+2028 inside a tool result string
        damaged_session rawsep-resume rawsep ;;
    rawpara-resume)  # hand-made damage: a raw U+2029 inside a tool result string
        damaged_session rawpara-resume rawpara ;;
    orphan-fixed-resume)  # the orphan-resume damage repaired by transcript-doctor, then resumed
        fixed_session orphan-fixed-resume orphan ;;
    rawnl-fixed-resume)  # the rawnl-resume damage rejoined by fix (TD001, safe), then resumed
        fixed_session rawnl-fixed-resume rawnl ;;
    displaced-resume)  # hand-made damage: a completion moved after the next assistant.message
        damaged_session displaced-resume displaced ;;
    displaced-fixed-resume)  # the displaced-resume damage moved back by fix (an unsafe repair)
        fixed_session displaced-fixed-resume displaced --unsafe-fixes ;;
    *) echo "unknown session $1" >&2; return 1 ;;
    esac
}

if [ $# -eq 0 ]; then
    set -- clean tools continue thinking parallel kill-tool kill-tool-step2 kill-stream \
        kill-stream-step2 http500 drop drop-tool subagent subagent-parallel kill-subagent u2028 \
        orphan-resume torn-resume nul-resume glued-resume rawnl-resume rawsep-resume \
        rawpara-resume orphan-fixed-resume displaced-resume displaced-fixed-resume rawnl-fixed-resume
fi
for s in "$@"; do
    record "$s"
done
