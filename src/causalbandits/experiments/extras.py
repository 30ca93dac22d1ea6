"""Presets that need an optional extra (e.g. PyTorch and BoTorch, the ``gp`` extra).

A paper whose experiments need packages a plain install lacks lists them in the catalogue on
every install, through :func:`needs_extra`: the preset imports its module only when called,
after checking that the extra's packages are installed, and fails otherwise with
:class:`MissingExtraError`, one line naming the install command. ``causalbandits list``
then works everywhere and shows that line in place of the description.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence
from typing import Any


class MissingExtraError(ValueError):
    """An experiment needs an optional extra that is not installed."""


def needs_extra(
    extra: str, packages: Sequence[str], target: str, *args: Any
) -> Callable[[bool], Any]:
    """The preset ``target`` (``"module:function"``, called as ``function(*args, quick)``),
    imported when called, after checking that the ``packages`` of the extra ``extra`` are
    installed (:class:`MissingExtraError` naming ``pip install -e '.[extra]'`` otherwise)."""
    module, function = target.split(":")

    def preset(quick: bool = False) -> Any:
        missing = [name for name in packages if importlib.util.find_spec(name) is None]
        if missing:
            raise MissingExtraError(
                f"this experiment needs {', '.join(missing)}: "
                f"pip install -e '.[{extra}]' (or 'causalbandits[{extra}]')"
            )
        return getattr(importlib.import_module(module), function)(*args, quick)

    return preset
