#!/usr/bin/env bash
# Records a damaged Kilo CLI session and checks that Kilo itself reads the database
# `transcript-doctor fix --in-place` repaired.
#   usage: tests/fakemodel/recipes/kilo_fix_verify.sh OUTDIR
# KILO names the CLI (`npm install --prefix DIR --ignore-scripts @kilocode/cli
# @kilocode/cli-linux-x64`; DIR/node_modules/@kilocode/cli-linux-x64/bin/kilo), TD the
# transcript-doctor command.  Same setup as fixtures/opencode/kilo-kill-tool (fresh network
# namespace, throwaway HOME and XDG dirs, KILO_DISABLE_* env, fake main and title providers
# in $XDG_CONFIG_HOME/kilo/kilo.json).  Phases:
#   1. `kilo run Run the slow command`, SIGKILL 4 s after the first chat request;
#   2. `kilo run --session <id> Are you still there` (the killed tool part is now mid-session);
#   then the database is copied (kilo-2.db, consolidated with VACUUM INTO, and dumped),
#   `fix --in-place --report`, a second fix, `kilo export <id>`, a resumed
#   `kilo run --session <id> Still there`, and lint again.
set -u
. "$(dirname "$0")/common.sh"
RECIPE=$(realpath "$0")
if [ -z "${OC_NETNS:-}" ] && [ -z "${OC_NO_UNSHARE:-}" ]; then
    exec unshare -n env OC_NETNS=1 bash "$RECIPE" "$@"
fi
[ -n "${OC_NETNS:-}" ] && ip link set lo up
KILO=${KILO:-kilo}
TD=${TD:-transcript-doctor}
TITLE_PORT=${TITLE_PORT:-$((PORT + 1))}
OUT=$(realpath -m "$1")
NAME=kilo-fix-verify
export HOME=/tmp/kilo-home-$NAME
export XDG_DATA_HOME=$HOME/.local/share XDG_CONFIG_HOME=$HOME/.config \
    XDG_CACHE_HOME=$HOME/.cache XDG_STATE_HOME=$HOME/.local/state
for v in AUTOUPDATE MODELS_FETCH SHARE LSP_DOWNLOAD DEFAULT_PLUGINS CLAUDE_CODE EXTERNAL_SKILLS \
    CODEBASE_INDEXING PRESENCE SESSION_INGEST; do
    export KILO_DISABLE_$v=1
done
DATA=$XDG_DATA_HOME/kilo
WORK=/tmp/kilo-work-$NAME
DEST=$OUT
rm -rf "$HOME" "$WORK" "$DEST"
mkdir -p "$XDG_CONFIG_HOME/kilo" "$WORK" "$DEST"
printf 'first line\nsecond line\n' >"$WORK/notes.txt"
sed "s/\$PORT/$PORT/; s/\$TITLE_PORT/$TITLE_PORT/" >"$XDG_CONFIG_HOME/kilo/kilo.json" <<'JSON'
{
  "$schema": "https://kilo.ai/config.json",
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
cp "$XDG_CONFIG_HOME/kilo/kilo.json" "$DEST/kilo.json"
cd "$WORK" || exit 1

serve_both() {  # serve_both TAG SCENARIO
    PORT=$TITLE_PORT serve opencode-title.json "$DEST/raw-title-requests-$1.jsonl"
    TITLE_PID=$SERVER_PID
    serve "$2" "$DEST/raw-requests-$1.jsonl"
}
unserve_both() {
    unserve
    SERVER_PID=$TITLE_PID unserve
}
sid() {
    "$PYTHON" -c "import sqlite3,sys; c=sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True); print(c.execute('select id from session order by time_created desc').fetchone()[0])" "$DATA/kilo.db"
}

# 1. killed during the tool
serve_both 1 opencode-kill-tool.json
"$KILO" run --print-logs --log-level INFO Run the slow command >"$DEST/phase1.stdout" 2>"$DEST/phase1.stderr" </dev/null &
P=$!
wait_requests "$DEST/raw-requests-1.jsonl" 1 90
sleep 4
kill -9 "$P"
wait "$P" 2>/dev/null
echo "exit $? (SIGKILL 4s after request 1)" >"$DEST/phase1.exit"
unserve_both
SID=$(sid)
echo "$SID" >"$DEST/session-id"

# 2. resumed: the running part is now followed by more messages
serve_both 2 opencode-resume-ok.json
timeout 180 "$KILO" run --print-logs --log-level INFO --session "$SID" Are you still there \
    >"$DEST/phase2.stdout" 2>"$DEST/phase2.stderr" </dev/null
echo "exit $?" >"$DEST/phase2.exit"
unserve_both
ls -l --time-style=+ "$DATA" | grep kilo.db >"$DEST/phase2.dbfiles"
"$PYTHON" - "$DATA/kilo.db" "$DEST/kilo-2.db" <<'EOF'
import os, shutil, sqlite3, sys, tempfile
src, dst = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    for name in os.listdir(os.path.dirname(src)):
        if name.startswith("kilo.db"):
            shutil.copy2(os.path.join(os.path.dirname(src), name), tmp)
    con = sqlite3.connect(os.path.join(tmp, "kilo.db"))
    con.execute("VACUUM INTO ?", (dst,))
    con.close()
EOF
"$PYTHON" "$(dirname "$RECIPE")/opencode_dump.py" "$DEST/kilo-2.db" >"$DEST/kilo-2.db.txt"

# 3. the repair, on the live database (WAL and all), then Kilo itself
(cd "$DATA" && "$TD" lint -o concise --no-progress kilo.db) >"$DEST/lint-before.txt" 2>&1
(cd "$DATA" && "$TD" fix --in-place --no-progress --report report.json kilo.db) >"$DEST/fix.stdout" 2>"$DEST/fix.stderr"
echo "fix exit $?" >"$DEST/result.txt"
sed "s#$DATA/##g; s#kilo.db.[0-9TZ-]*.td-backup#kilo.db.TIME.td-backup#g" "$DATA/report.json" >"$DEST/report.json"
sed -i "s#kilo.db.[0-9TZ-]*.td-backup#kilo.db.TIME.td-backup#g" "$DEST/fix.stdout"
(cd "$DATA" && "$TD" fix --in-place --no-progress --no-backup kilo.db) >"$DEST/fix-again.stdout" 2>&1
echo "second fix exit $? ($(cat "$DEST/fix-again.stdout"))" >>"$DEST/result.txt"
timeout 120 "$KILO" export "$SID" >"$DEST/export.json" 2>"$DEST/export.stderr"
echo "export exit $?" >>"$DEST/result.txt"
serve_both 3 opencode-resume-ok.json
timeout 180 "$KILO" run --session "$SID" Still there >"$DEST/run.stdout" 2>"$DEST/run.stderr" </dev/null
echo "run exit $?" >>"$DEST/result.txt"
unserve_both
(cd "$DATA" && "$TD" lint -o concise --no-progress kilo.db) >"$DEST/lint-after-resume.txt" 2>&1
echo "lint after resume exit $?" >>"$DEST/result.txt"
for raw in "$DEST"/raw-requests-*.jsonl "$DEST"/raw-title-requests-*.jsonl; do
    [ -f "$raw" ] || continue
    slim_log "$raw" "${raw/raw-/}"
    rm "$raw"
done
# What the resumed history sent the model (system prompt and tool schemas left out).
"$PYTHON" - "$DEST/requests-3.jsonl" >"$DEST/replayed.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    body = json.loads(line)["body"]
    sent = [m for m in body["messages"] if m.get("role") != "system"]
    print(json.dumps(sent, indent=1, ensure_ascii=False))
PY
rm -f "$DEST/fix-again.stdout"
find "$DEST" -name '*.stderr' -size 0 -delete
sed -i "s#$HOME#HOME#g" "$DEST"/*.stderr "$DEST"/*.stdout "$DEST"/*.txt 2>/dev/null
