#!/usr/bin/env bash
# Does an old OpenCode (1.1.x, the `storage/` folder) still read a folder
# `transcript-doctor fix --in-place` repaired?
#   usage: tests/fakemodel/recipes/opencode_legacy_fix_verify.sh OUTDIR CASE...
#   (CASE: legacy-kill-tool/2 = fixtures/opencode-legacy/legacy-kill-tool/storage-2)
# For each CASE: copy the folder into a throwaway data dir as `storage`, `fix --in-place
# --report`, a second fix, `opencode export` the session, then resume it with `opencode run
# --session` against the fake model and keep what the resumed history sent.  Runs in a
# fresh network namespace like opencode.sh (OC_NO_UNSHARE=1 skips that).  OPENCODE names
# the old CLI, TD the transcript-doctor command.
set -u
. "$(dirname "$0")/common.sh"
RECIPE=$(realpath "$0")
if [ -z "${OC_NETNS:-}" ] && [ -z "${OC_NO_UNSHARE:-}" ]; then
    exec unshare -n env OC_NETNS=1 bash "$RECIPE" "$@"
fi
[ -n "${OC_NETNS:-}" ] && ip link set lo up
OPENCODE=${OPENCODE:-opencode}
TD=${TD:-transcript-doctor}
TITLE_PORT=${TITLE_PORT:-$((PORT + 1))}
FIXTURES=$(cd "$(dirname "$0")/../../../fixtures/opencode-legacy" && pwd)
OUT=$(realpath -m "$1")
shift
export OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_SHARE=1 \
    OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_CLAUDE_CODE=1 \
    OPENCODE_DISABLE_EXTERNAL_SKILLS=1
for CASE in "$@"; do
    SESSION=${CASE%/*}
    N=${CASE#*/}
    NAME=verify-$SESSION-$N
    export HOME=/tmp/oc-home-$NAME
    export XDG_DATA_HOME=$HOME/.local/share XDG_CONFIG_HOME=$HOME/.config \
        XDG_CACHE_HOME=$HOME/.cache XDG_STATE_HOME=$HOME/.local/state
    DATA=$XDG_DATA_HOME/opencode
    DEST=$OUT/$SESSION-$N
    rm -rf "$HOME" "$DEST"
    mkdir -p "$XDG_CONFIG_HOME/opencode" "$DATA" "$DEST"
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
    cp -a "$FIXTURES/$SESSION/storage-$N" "$DATA/storage"
    SID=$(cat "$FIXTURES/$SESSION/session-id")
    (cd "$DATA" && "$TD" lint -o concise --no-progress storage) >"$DEST/lint-before.txt" 2>&1
    (cd "$DATA" && "$TD" fix --in-place --no-progress --report report.json storage) >"$DEST/fix.stdout" 2>"$DEST/fix.stderr"
    echo "fix exit $?" >"$DEST/result.txt"
    sed "s#$DATA/##g" "$DATA/report.json" >"$DEST/report.json"
    cp "$DATA/report.diff" "$DEST/report.diff"
    (cd "$DATA" && "$TD" fix --in-place --no-progress --no-backup storage) >"$DEST/fix-again.stdout" 2>&1
    echo "second fix exit $? ($(cat "$DEST/fix-again.stdout"))" >>"$DEST/result.txt"
    # 1.1.x finds a session under its project (the work dir's git root commit, or
    # "global"): run it from the session's own directory, as the recording did.
    WORK=$(python3 -c 'import glob,json,sys; print(json.load(open(glob.glob(sys.argv[1])[0]))["directory"])' "$DATA/storage/session/*/$SID.json")
    mkdir -p "$WORK"
    (cd "$WORK" && "$OPENCODE" export "$SID") >"$DEST/export.json" 2>"$DEST/export.stderr"
    echo "export exit $?" >>"$DEST/result.txt"
    PORT=$TITLE_PORT serve opencode-title.json "$DEST/title-requests.jsonl"
    TITLE_PID=$SERVER_PID
    serve opencode-resume-ok.json "$DEST/requests.jsonl"
    (cd "$WORK" && timeout 180 "$OPENCODE" run --session "$SID" Still there) >"$DEST/run.stdout" 2>"$DEST/run.stderr"
    echo "run exit $?" >>"$DEST/result.txt"
    unserve
    SERVER_PID=$TITLE_PID unserve
    (cd "$DATA" && "$TD" lint -o concise --no-progress storage) >"$DEST/lint-after-resume.txt" 2>&1
    echo "lint after resume exit $?" >>"$DEST/result.txt"
    # What the resumed history sent the model (system prompt and tool schemas left out).
    python3 - "$DEST/requests.jsonl" >"$DEST/replayed.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    body = json.loads(line)["body"]
    sent = [m for m in body["messages"] if m.get("role") != "system"]
    print(json.dumps(sent, indent=1, ensure_ascii=False))
PY
    rm -f "$DEST/title-requests.jsonl" "$DEST/requests.jsonl" "$DEST/fix-again.stdout"
    sed -i "s#/tmp/oc-home-$NAME#HOME#g" "$DEST"/run.* "$DEST"/*.txt 2>/dev/null
done
