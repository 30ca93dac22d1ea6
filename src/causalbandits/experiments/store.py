"""The results directory: one Parquet file per finished task plus ``manifest.json``.

Files are written to a temporary name and renamed, so a file that exists is complete: a
killed run leaves no half-written results. The manifest keeps the SHA-256 of every task
file, and each task file carries the run's fingerprint in its Parquet metadata, so a
corrupt file is detected (never read) and a lost manifest can be rebuilt from the files.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

MANIFEST = "manifest.json"
TASKS = "tasks"
#: Parquet metadata key holding the fingerprint of the run that wrote a task file.
FINGERPRINT_KEY = b"causalbandits.fingerprint"


class ManifestError(ValueError):
    """A manifest that cannot be read (truncated or not JSON)."""


def notice(message: str) -> None:
    """A one-line notice on standard error (e.g. a task that will be recomputed)."""
    print(f"causalbandits: {message}", file=sys.stderr)


def file_digest(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def task_path(out_dir: str | Path, task_id: str) -> Path:
    return Path(out_dir) / TASKS / f"{task_id}.parquet"


def _atomic(path: Path, write: Any) -> None:
    temporary = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    write(temporary)
    os.replace(temporary, path)


def write_task_frame(
    out_dir: str | Path, task_id: str, frame: pd.DataFrame, fingerprint: str = ""
) -> str:
    """Store one task's results atomically, tagged with the run's ``fingerprint``; return the
    file's SHA-256."""
    path = task_path(out_dir, task_id)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = {**(table.schema.metadata or {}), FINGERPRINT_KEY: fingerprint.encode()}
    _atomic(path, lambda p: pq.write_table(table.replace_schema_metadata(metadata), p))
    return file_digest(path)


def task_fingerprint(path: str | Path) -> str | None:
    """The fingerprint a task file carries, or ``None`` when it cannot be read."""
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException):
        return None
    value = metadata.get(FINGERPRINT_KEY)
    return None if value is None else value.decode()


def read_manifest(out_dir: str | Path) -> dict[str, Any] | None:
    """The manifest of a results directory, or ``None`` if there is none.

    Raises :class:`ManifestError` (naming the file) when it exists but cannot be read.
    """
    path = Path(out_dir) / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ManifestError(f"{path} cannot be read ({error})") from error
    if not isinstance(manifest, dict) or not isinstance(manifest.get("tasks"), list):
        raise ManifestError(f"{path} is not a causalbandits manifest")
    return manifest


def write_manifest(out_dir: str | Path, manifest: dict[str, Any]) -> None:
    text = json.dumps(manifest, indent=2)
    _atomic(Path(out_dir) / MANIFEST, lambda p: p.write_text(text, encoding="utf-8"))


def load_results(out_dir: str | Path) -> pd.DataFrame:
    """All finished tasks of a results directory as one table, in the manifest's task order.

    Rows are ordered by setting, algorithm (spec order), replicate and round. A task file
    whose SHA-256 differs from the manifest's is refused (a one-line error naming it).
    """
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise FileNotFoundError(f"{out_dir} has no {MANIFEST}: not a results directory")
    frames = []
    for task in manifest["tasks"]:
        path = task_path(out_dir, task["id"])
        if not path.exists():
            continue
        if task.get("sha256") != file_digest(path):
            raise ValueError(
                f"{path} does not match its checksum in the manifest (corrupt or replaced); "
                "run the experiment again into the same folder to recompute it"
            )
        frames.append(pd.read_parquet(path))
    if not frames:
        raise FileNotFoundError(f"{out_dir} holds no finished task yet")
    return pd.concat(frames, ignore_index=True)


#: The long tables a finished experiment may have saved, tried in order after its task files.
SAVED_TABLES = ("results.parquet", "results.csv.gz", "results.csv")


def saved_results(out_dir: str | Path) -> pd.DataFrame:
    """The long results table of a results directory: its task files when present (a run's
    own folder), else the long table an experiment saved (``docs/results`` keeps only that).
    A bandit spec's ``results.csv`` is a summary, not the long table, and is refused."""
    out_dir = Path(out_dir)
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise FileNotFoundError(f"{out_dir} has no {MANIFEST}: not a results directory")
    if (out_dir / TASKS).is_dir():
        return load_results(out_dir)
    if "spec" in manifest:
        raise FileNotFoundError(
            f"{out_dir} keeps only the summary of a bandit spec run (no {TASKS}/ folder); "
            "run the experiment again (same seed, same numbers) to re-render its report"
        )
    return saved_long_table(out_dir)


def saved_long_table(out_dir: str | Path) -> pd.DataFrame:
    """The first of :data:`SAVED_TABLES` in ``out_dir``."""
    for name in SAVED_TABLES:
        path = Path(out_dir) / name
        if path.exists():
            return pd.read_parquet(path) if name.endswith("parquet") else pd.read_csv(path)
    raise FileNotFoundError(f"{out_dir} holds neither task files nor a saved long table")
