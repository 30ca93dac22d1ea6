#!/usr/bin/env bash
# Resume the unfinished powered EXCBO runs of this folder, one after another, with the code
# that computed their tasks (checked out once as ../../runner, beside the project). Each run
# resumes where it stopped; run this again after a stop. See README.md.
set -euo pipefail
COMMIT=0a18b34
RUNS=(excbo-covid excbo-rosenbrock)

here=$(cd "$(dirname "$0")" && pwd)
project=$(dirname "$here")
runner=$(dirname "$project")/runner
if [ ! -d "$runner" ]; then
    git -C "$project" worktree add --detach "$runner" "$COMMIT"
fi
if [ "$(git -C "$runner" rev-parse --short=7 HEAD)" != "$COMMIT" ]; then
    git -C "$runner" checkout -q --detach "$COMMIT" # the runs' code moved (README.md)
fi
if [ ! -x "$runner/.venv/bin/causalbandits" ]; then
    python3 -m venv "$runner/.venv"
    "$runner/.venv/bin/python" -m pip install -q -e "$runner[gp]"
fi
for name in "${RUNS[@]}"; do
    if [ -d "$project/docs/results/$name-r12" ] || [ -f "$here/$name-r12/results.csv" ]; then
        continue # landed, or finished and waiting to be landed (README.md)
    fi
    echo "$(date -u +%FT%TZ) $name"
    "$runner/.venv/bin/causalbandits" reproduce "$name" --replicates 12 --jobs 2 \
        --no-progress --out "$here/$name-r12"
done
