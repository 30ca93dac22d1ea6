"""The results directory: one Parquet file per finished task plus ``manifest.json``.

Files are written to a temporary name and renamed, so a file that exists is complete: a
killed run leaves no half-written results, and the task files are the ground truth of what
has finished.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

MANIFEST = "manifest.json"
TASKS = "tasks"


def task_path(out_dir: str | Path, task_id: str) -> Path:
    return Path(out_dir) / TASKS / f"{task_id}.parquet"


def _atomic(path: Path, write: Any) -> None:
    temporary = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    write(temporary)
    os.replace(temporary, path)


def write_task_frame(out_dir: str | Path, task_id: str, frame: pd.DataFrame) -> Path:
    """Store one task's results atomically."""
    path = task_path(out_dir, task_id)
    _atomic(path, lambda p: frame.to_parquet(p, index=False))
    return path


def read_manifest(out_dir: str | Path) -> dict[str, Any] | None:
    """The manifest of a results directory, or ``None`` if there is none."""
    path = Path(out_dir) / MANIFEST
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def write_manifest(out_dir: str | Path, manifest: dict[str, Any]) -> None:
    text = json.dumps(manifest, indent=2)
    _atomic(Path(out_dir) / MANIFEST, lambda p: p.write_text(text, encoding="utf-8"))


def load_results(out_dir: str | Path) -> pd.DataFrame:
    """All finished tasks of a results directory as one table, in the manifest's task order.

    Rows are ordered by setting, algorithm (spec order), replicate and round.
    """
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise FileNotFoundError(f"{out_dir} has no {MANIFEST}: not a results directory")
    paths = [task_path(out_dir, task["id"]) for task in manifest["tasks"]]
    frames = [pd.read_parquet(p) for p in paths if p.exists()]
    if not frames:
        raise FileNotFoundError(f"{out_dir} holds no finished task yet")
    return pd.concat(frames, ignore_index=True)
