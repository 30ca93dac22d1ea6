"""The library's one-line notices on standard error, shared by the data loaders and the
experiment runner (which sit on different layers)."""

from __future__ import annotations

import sys


def notice(message: str) -> None:
    """A one-line notice on standard error (a task recomputed, missing values left out)."""
    print(f"causalbandits: {message}", file=sys.stderr)
