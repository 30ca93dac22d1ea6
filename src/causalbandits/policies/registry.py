"""The one policy registry: every policy class of the library by a unique short name.

An entry is a class, or a ``"module:Class"`` path imported on first use: the torch-based
optimisers are listed without importing PyTorch, and a missing ``gp`` extra fails only when
one of them is built. :meth:`Registry.build` is the one way to build a policy for an
environment: ``Class.from_environment(env, **options)`` when the class defines it (a policy
told the truth, e.g. an oracle), else ``Class(env.problem, **options)``. A paper's legend
labels are a table of (registry name, options) in its package, never a chain of ``if``\\ s.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any


def construct(cls: type, env: Any, **options: Any) -> Any:
    """``cls.from_environment(env, **options)`` if ``cls`` has it, else ``cls(env.problem,
    **options)``: a fresh policy, not yet reset."""
    maker = getattr(cls, "from_environment", None)
    return maker(env, **options) if maker is not None else cls(env.problem, **options)


class Registry(Mapping[str, type]):
    """Policy classes by short name (a read-only mapping); ``"module:Class"`` entries are
    imported when first looked up."""

    def __init__(self, entries: Mapping[str, type | str]) -> None:
        self._entries: dict[str, type | str] = dict(entries)

    def __getitem__(self, name: str) -> type:
        entry = self._entries[name]
        if isinstance(entry, str):
            module, attribute = entry.split(":")
            entry = getattr(importlib.import_module(module), attribute)
            self._entries[name] = entry
        return entry

    def __contains__(self, name: object) -> bool:
        return name in self._entries  # without importing a lazy entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def build(self, name: str, env: Any, **options: Any) -> Any:
        """The policy ``name`` for ``env`` with ``options`` (:func:`construct`)."""
        if name not in self._entries:
            raise ValueError(f"unknown policy {name!r}; known: {', '.join(sorted(self))}")
        return construct(self[name], env, **options)
