"""The results directory: one Parquet file per finished task plus ``manifest.json``.

Files are written to a temporary name and renamed, so a file that exists is complete: a
killed run leaves no half-written results. The manifest keeps the SHA-256 of every task
file. Each task file carries in its Parquet key-value metadata the run's fingerprint, the
digest of the code that computed it and the SHA-256 of its own content
(:func:`content_digest`), so any file can be verified without the manifest: a corrupt file is
detected (never read) and a lost manifest is rebuilt from the files that verify.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

MANIFEST = "manifest.json"
TASKS = "tasks"
#: Parquet metadata key holding the fingerprint of the run that wrote a task file.
FINGERPRINT_KEY = b"causalbandits.fingerprint"
#: Parquet metadata key holding the digest of the code that computed a task file.
CODE_KEY = b"causalbandits.code"
#: Parquet metadata key holding the SHA-256 of a task file's content (:func:`content_digest`).
CONTENT_KEY = b"causalbandits.content_sha256"


class ManifestError(ValueError):
    """A manifest that cannot be read (truncated or not JSON)."""


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
    try:
        write(temporary)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    os.replace(temporary, path)


def content_digest(table: pa.Table) -> str:
    """The SHA-256 of a table's content, whatever its file encoding: per column its name and
    null mask, then numbers and booleans as their type and bytes (nulls zeroed), any other
    column as the ``repr`` of its Python values (so that e.g. a dictionary of ``string``
    read back for one of ``large_string`` digests the same)."""
    digest = hashlib.sha256()
    for name, column in zip(table.column_names, table.columns, strict=True):
        digest.update(f"{name}\0".encode())
        digest.update(column.is_null().to_numpy(zero_copy_only=False).tobytes())
        kind = column.type
        if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
            filled = column.fill_null(pa.scalar(0).cast(kind))
            digest.update(f"{kind}\0".encode())
            digest.update(filled.to_numpy(zero_copy_only=False).tobytes())
        else:
            digest.update(repr(column.to_pylist()).encode())
    return digest.hexdigest()


def task_problem(path: str | Path) -> str | None:
    """Why the task file ``path`` fails its own content digest (unreadable, no digest, or a
    different content), or ``None`` when it verifies."""
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        return f"{path} cannot be read ({' '.join(str(error).split())})"
    stored = (table.schema.metadata or {}).get(CONTENT_KEY)
    if stored is None:
        return f"{path} carries no content digest (written by an older version)"
    if stored.decode() != content_digest(table):
        return f"{path} does not match its own content digest (corrupt)"
    return None


def write_task_frame(
    out_dir: str | Path, task_id: str, frame: pd.DataFrame, fingerprint: str = "", code: str = ""
) -> str:
    """Store one task's results atomically, tagged with the run's ``fingerprint``, the ``code``
    digest and the content digest, verified by reading it back; return the file's SHA-256."""
    path = task_path(out_dir, task_id)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = {
        **(table.schema.metadata or {}),
        FINGERPRINT_KEY: fingerprint.encode(),
        CODE_KEY: code.encode(),
        CONTENT_KEY: content_digest(table).encode(),
    }

    def write(temporary: Path) -> None:
        pq.write_table(table.replace_schema_metadata(metadata), temporary)
        problem = task_problem(temporary)
        if problem is not None:  # e.g. a column type that Parquet does not keep
            raise ValueError(f"task {task_id} does not read back as written: {problem}")

    _atomic(path, write)
    return file_digest(path)


def task_tag(path: str | Path, key: bytes) -> str | None:
    """The value of ``key`` (e.g. :data:`FINGERPRINT_KEY`) in a task file's metadata, or
    ``None`` when the key is absent or the file's footer cannot be read."""
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException):
        return None
    value = metadata.get(key)
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


def load_results(out_dir: str | Path, required: Iterable[str] | None = None) -> pd.DataFrame:
    """The finished tasks of a results directory as one table, in the manifest's task order.

    Rows are ordered by setting, algorithm (spec order), replicate and round. Every task of
    ``required`` (default: every task of the manifest) must have its file, else a one-line
    error counts the missing ones (figures of part of the tasks would mislead); other tasks
    are read when finished. A task file whose SHA-256 differs from the manifest's, or that
    cannot be read, is refused (a one-line error naming it).
    """
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise FileNotFoundError(f"{out_dir} has no {MANIFEST}: not a results directory")
    ids = [task["id"] for task in manifest["tasks"]]
    needed = set(ids if required is None else required)
    missing = [i for i in ids if i in needed and not task_path(out_dir, i).exists()]
    if missing:
        raise FileNotFoundError(
            f"{out_dir} lacks the files of {len(missing)} of its {len(needed)} tasks (deleted "
            "or not yet computed); run the same command again to complete them"
        )
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
        try:
            frames.append(pd.read_parquet(path))
        except (OSError, pa.ArrowException) as error:  # corrupt, yet checksummed so
            raise ValueError(
                f"{path} cannot be read ({error}); delete it and run the experiment again "
                "into the same folder to recompute it"
            ) from error
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
