#!/usr/bin/env bash
# A lab's loop over a persistent study: ask, evaluate, tell, until EVALUATIONS are told.
# Safe to kill at any point and to start again: on start it first re-runs the evaluations
# that were out when it stopped (the study lists them as pending), then goes on asking.
#
#   STORAGE=sqlite:///epidemic.db EVALUATIONS=40 examples/study/run_study.sh
#
# Settings (environment variables): STORAGE (database URL), STUDY (name), EVALUATIONS,
# POLICY, OPTIONS (JSON), SEED, CB (the causalbandits command), PYTHON.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CB="${CB:-causalbandits}"
PYTHON="${PYTHON:-python3}"
STUDY="${STUDY:-epidemic}"
STORAGE="${STORAGE:-sqlite:///epidemic.db}"
EVALUATIONS="${EVALUATIONS:-40}"
POLICY="${POLICY:-excbo}"
OPTIONS="${OPTIONS:-{\}}"
SEED="${SEED:-0}"
field() { "$PYTHON" -c "import json, sys; print(json.dumps(json.load(sys.stdin)[sys.argv[1]]))" "$1"; }

"$CB" study create "$STUDY" --storage "$STORAGE" --load-if-exists --seed "$SEED" \
  --problem causalbandits.envs.epidemic:calibration_problem --policy "$POLICY" \
  --options "$OPTIONS" > /dev/null

# Evaluations that were out when the loop last stopped: run them again and tell them.
for id in $("$CB" study show "$STUDY" --storage "$STORAGE" --json | field pending_ids | tr -d '[],'); do
  action=$("$CB" study export "$STUDY" --storage "$STORAGE" | "$PYTHON" -c \
    "import json, sys; print(json.dumps(json.load(sys.stdin)[$id]['action']))")
  "$CB" study tell "$STUDY" "$id" "$("$PYTHON" "$here/epidemic_lab.py" "$id" "$action")" \
    --storage "$STORAGE" > /dev/null
done

while [ "$("$CB" study show "$STUDY" --storage "$STORAGE" --json | field complete)" -lt "$EVALUATIONS" ]; do
  asked=$("$CB" study ask "$STUDY" --storage "$STORAGE")
  id=$(echo "$asked" | field id)
  action=$(echo "$asked" | field action)
  "$CB" study tell "$STUDY" "$id" "$("$PYTHON" "$here/epidemic_lab.py" "$id" "$action")" \
    --storage "$STORAGE" > /dev/null
  echo "told evaluation $id"
done
"$CB" study show "$STUDY" --storage "$STORAGE"
