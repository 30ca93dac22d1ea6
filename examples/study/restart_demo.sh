#!/usr/bin/env bash
# The worked example of persistent studies: the epidemic calibration driven by run_study.sh
# twice, once uninterrupted and once killed (SIGKILL, at whatever it was doing) after
# KILL_AFTER evaluations were told and started again; both must end with the same best action.
#
#   examples/study/restart_demo.sh OUT_DIR
#
# Settings (environment variables): EVALUATIONS, KILL_AFTER, POLICY, OPTIONS, SEED, CB, PYTHON.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:?usage: restart_demo.sh OUT_DIR}" && cd "$1" && pwd)"
export CB="${CB:-causalbandits}" PYTHON="${PYTHON:-python3}"
export EVALUATIONS="${EVALUATIONS:-40}"
KILL_AFTER="${KILL_AFTER:-$((EVALUATIONS / 2))}"
rm -f "$out"/uninterrupted.db* "$out"/restarted.db*
told() { "$CB" study show epidemic --storage "$1" --json \
  | "$PYTHON" -c "import json, sys; print(json.load(sys.stdin)['complete'])"; }

echo "== uninterrupted run"
STORAGE="sqlite:///$out/uninterrupted.db" "$here/run_study.sh" > "$out/uninterrupted.log"
tail -n 3 "$out/uninterrupted.log"

echo "== run killed after $KILL_AFTER told evaluations"
restarted="sqlite:///$out/restarted.db"
STORAGE="$restarted" setsid "$here/run_study.sh" > "$out/restarted.log" 2>&1 &
loop=$!
until [ -f "$out/restarted.db" ] && [ "$(told "$restarted" 2>/dev/null || echo 0)" -ge "$KILL_AFTER" ]; do
  kill -0 "$loop" 2>/dev/null || { echo "the loop ended before it was killed"; exit 1; }
  sleep 0.5
done
kill -KILL -- "-$loop"
wait "$loop" 2>/dev/null || true
"$CB" study show epidemic --storage "$restarted"
echo "== started again"
STORAGE="$restarted" "$here/run_study.sh" >> "$out/restarted.log"
tail -n 3 "$out/restarted.log"

"$CB" study show epidemic --storage "sqlite:///$out/uninterrupted.db" --plot "$out/uninterrupted.png" --json > "$out/uninterrupted.json"
"$CB" study show epidemic --storage "$restarted" --plot "$out/restarted.png" --json > "$out/restarted.json"
"$PYTHON" - "$out" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
a, b = (json.loads((out / f"{n}.json").read_text()) for n in ("uninterrupted", "restarted"))
same = a["best"] == b["best"]
print(f"best: uninterrupted evaluation {a['best']['id']} ({a['best']['objective']:.6g}), "
      f"restarted evaluation {b['best']['id']} ({b['best']['objective']:.6g})")
print("same best action:", "yes" if same else "NO")
sys.exit(0 if same else 1)
PY
