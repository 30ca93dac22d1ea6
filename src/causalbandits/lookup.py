"""Objects by name: ``"module:attribute"`` paths, the environments' short names and the
policy registry's, and plain JSON values. Light to import (the policies and environments
are imported when looked up), so the study commands start fast."""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

#: Short environment names -> dotted paths of factories ``(horizon=..., **params) -> env``
#: in the ``envs`` layer (imported when used, so that listing them costs nothing). A factory
#: with an ``instance_seeds`` parameter builds one random instance per replicate from them.
ENVIRONMENTS: dict[str, str] = {
    "robust-lcb": "causalbandits.envs.robust_lcb:make_environment",
    "csl-ucb": "causalbandits.envs.csl_ucb:make_environment",
    "mixed-sign": "causalbandits.envs.mixed_sign:mixed_sign_bandit",
}

#: A ``"package.module:attribute"`` path.
DOTTED = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def import_object(path: str) -> Any:
    """Import ``"package.module:attribute"``."""
    if not DOTTED.match(path):
        raise ValueError(f"expected a dotted path 'module:attribute', got {path!r}")
    module_name, attribute = path.split(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ImportError(f"cannot import module {module_name!r} of {path!r}: {error}") from error
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise ImportError(f"module {module_name!r} has no attribute {attribute!r}")
        obj = getattr(obj, part)
    return obj


def resolve_policy(policy: str) -> type:
    """The policy class of a registry short name or a ``"module:Class"`` path."""
    if ":" in policy:
        return import_object(policy)
    from causalbandits.policies import POLICIES

    return POLICIES[policy]


def resolve_environment(environment: str) -> Any:
    """The environment factory of a short name or a ``"module:function"`` path."""
    return import_object(ENVIRONMENTS.get(environment, environment))


def plain(value: Any) -> Any:
    """Numpy scalars and tuples -> plain Python, so YAML, JSON and fingerprints agree."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
