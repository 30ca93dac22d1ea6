"""Experiment specifications: what to run, validated, serialisable and fingerprinted.

A spec names an environment factory, a list of settings (environment parameter overrides,
e.g. a sweep over the deviation budget), the algorithms and the replication plan. Together
with its root seed it fixes every number of a run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from causalbandits.experiments.recorders import RECORDERS
from causalbandits.policies import POLICIES

#: Short environment names -> dotted paths of factories ``(horizon=..., **params) -> env``
#: in the ``envs`` layer (imported when used, so that listing them costs nothing). A factory
#: with an ``instance_seeds`` parameter builds one random instance per replicate from them.
ENVIRONMENTS: dict[str, str] = {
    "robust-lcb": "causalbandits.envs.robust_lcb:make_environment",
    "csl-ucb": "causalbandits.envs.csl_ucb:make_environment",
    "mixed-sign": "causalbandits.envs.mixed_sign:mixed_sign_bandit",
}

#: Columns of the results and summary tables; setting parameters may not reuse these names.
RESERVED_COLUMNS = (
    "experiment",
    "replicates",
    "setting",
    "algorithm",
    "replicate",
    "t",
    "cum_regret",
    "optimal_share",
)

_DOTTED = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def import_object(path: str) -> Any:
    """Import ``"package.module:attribute"``."""
    if not _DOTTED.match(path):
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
    return import_object(policy) if ":" in policy else POLICIES[policy]


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


def _by_setting(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"by", "values"}


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm of an experiment: a result ``label``, a ``policy`` and its ``params``.

    ``policy`` is a short name of ``causalbandits.policies.POLICIES`` or ``"module:Class"``;
    the policy is built as ``Class(env.problem, **params)``, or as
    ``Class.from_environment(env, **params)`` when the class defines ``from_environment``
    (a policy that is told the truth, e.g. the oracle). A parameter that depends on the
    setting is written ``{"by": <setting parameter>, "values": {<setting value>: <value>}}``
    (e.g. NDC-SEM's xi per delay); :meth:`params_for` resolves it.
    """

    label: str
    policy: str
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"an algorithm label must be a non-empty string, got {self.label!r}")
        if ":" in self.policy:
            if not _DOTTED.match(self.policy):
                raise ValueError(f"policy {self.policy!r} is not a 'module:Class' path")
        elif self.policy not in POLICIES:
            raise ValueError(
                f"unknown policy {self.policy!r} (algorithm {self.label!r}); "
                f"known: {', '.join(sorted(POLICIES))}, or a 'module:Class' path"
            )
        object.__setattr__(self, "params", plain(dict(self.params)))
        check_finite(self.params, f"algorithm {self.label!r} params")
        for name, value in self.params.items():
            if _by_setting(value) and not isinstance(value["values"], Mapping):
                raise ValueError(f"{self.label}: {name}.values must map setting values to values")

    def params_for(self, setting: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters in ``setting`` (setting-dependent ones resolved)."""
        out = {}
        for name, value in self.params.items():
            if _by_setting(value):
                key = setting.get(value["by"])
                values = {str(k): v for k, v in value["values"].items()}
                if str(key) not in values:
                    raise ValueError(
                        f"{self.label}: parameter {name!r} has no value for "
                        f"{value['by']} = {key!r}; known: {sorted(values)}"
                    )
                value = values[str(key)]
            out[name] = value
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "policy": self.policy, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AlgorithmSpec:
        _check_keys(cls, data, "algorithm")
        return cls(**data)


@dataclass(frozen=True)
class ExperimentSpec:
    """A full experiment: environment x settings x algorithms x replicates.

    Parameters
    ----------
    name:
        Name written to the ``experiment`` column.
    environment:
        Short name in ``ENVIRONMENTS`` or ``"module:function"``; called as
        ``factory(horizon=horizon, **env_params, **setting)``.
    env_params:
        Parameters shared by all settings.
    settings:
        One dict of scalar parameter overrides per setting (the sweep points).
    algorithms:
        The algorithms; labels must be distinct.
    horizon:
        Number of rounds ``T``.
    replicates:
        Independent runs per (setting, algorithm).
    seed:
        Root seed; every random stream is keyed by (setting, replicate, stream).
    chunk_size:
        Replicates per task. It fixes the task split, so results do not depend on workers.
    checkpoints:
        Number of evenly spaced rounds at which metrics are stored (round ``T`` always), or
        the increasing list of 1-based rounds.
    recorders:
        Names in :data:`~causalbandits.experiments.recorders.RECORDERS` recorded besides
        the cumulative regret and the optimal share.
    sweep:
        The setting parameter that the settings sweep (x axis of final-regret plots).
    description:
        One line for listings; not part of the fingerprint.
    """

    name: str
    environment: str
    env_params: dict[str, Any]
    settings: list[dict[str, Any]]
    algorithms: list[AlgorithmSpec]
    horizon: int
    replicates: int
    seed: int = 0
    chunk_size: int = 10
    checkpoints: int | list[int] = 200
    recorders: list[str] = field(default_factory=list)
    sweep: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        algorithms = [
            a if isinstance(a, AlgorithmSpec) else AlgorithmSpec.from_dict(a)
            for a in self.algorithms
        ]
        object.__setattr__(self, "algorithms", algorithms)
        object.__setattr__(self, "env_params", plain(dict(self.env_params)))
        object.__setattr__(self, "settings", [plain(dict(s)) for s in self.settings])
        object.__setattr__(self, "recorders", [str(r) for r in self.recorders])
        if isinstance(self.checkpoints, list | tuple):
            object.__setattr__(self, "checkpoints", [int(c) for c in self.checkpoints])
        self._validate()

    def _validate(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("the experiment name must be a non-empty string")
        if self.environment not in ENVIRONMENTS and not _DOTTED.match(self.environment):
            raise ValueError(
                f"unknown environment {self.environment!r}; known: "
                f"{', '.join(sorted(ENVIRONMENTS))}, or a 'module:function' path"
            )
        for key, value, low in (
            ("horizon T", self.horizon, 1),
            ("replicates", self.replicates, 1),
            ("chunk_size", self.chunk_size, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{key} must be an integer >= {low}, got {value!r}")
        self._validate_checkpoints()
        unknown = sorted(set(self.recorders) - set(RECORDERS))
        if unknown:
            raise ValueError(f"unknown recorders {unknown}; known: {sorted(RECORDERS)}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not self.algorithms:
            raise ValueError("an experiment needs at least one algorithm")
        labels = [a.label for a in self.algorithms]
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise ValueError(f"duplicate algorithm labels: {duplicates}")
        if not self.settings:
            raise ValueError("settings must hold at least one setting (use [{}] for none)")
        check_finite(self.env_params, "env_params")
        check_finite(self.settings, "settings")
        if "horizon" in self.env_params:
            raise ValueError("set the horizon with the spec's 'horizon', not in env_params")
        for index, setting in enumerate(self.settings):
            self._validate_setting(index, setting)

    def _validate_checkpoints(self) -> None:
        points = self.checkpoints
        if isinstance(points, list):
            if not points or points != sorted(set(points)) or points[0] < 1:
                raise ValueError(f"checkpoint rounds must increase strictly from 1, got {points}")
            if points[-1] > self.horizon:
                raise ValueError(f"checkpoint round {points[-1]} is past the horizon")
        elif isinstance(points, bool) or not isinstance(points, int) or points < 1:
            raise ValueError(f"checkpoints must be an integer >= 1 or a list, got {points!r}")

    def _validate_setting(self, index: int, setting: dict[str, Any]) -> None:
        clash = sorted(set(setting) & {*RESERVED_COLUMNS, "horizon"})
        if clash:
            raise ValueError(f"setting {index} uses reserved parameter names {clash}")
        for key, value in setting.items():
            if not isinstance(value, str | int | float | bool):
                raise ValueError(f"setting {index}: {key!r} must be a scalar, got {value!r}")
        if self.sweep is not None and self.sweep not in setting:
            raise ValueError(f"setting {index} lacks the swept parameter {self.sweep!r}")

    def to_dict(self) -> dict[str, Any]:
        """A plain-Python dict (YAML/JSON-ready) that ``from_dict`` turns back into the spec."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["algorithms"] = [a.to_dict() for a in self.algorithms]
        if not data["recorders"]:  # absent by default, so older fingerprints stay valid
            del data["recorders"]
        return plain(data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExperimentSpec:
        _check_keys(cls, data, "experiment spec")
        return cls(**data)

    def to_yaml(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(yaml.safe_dump(self.to_dict(), sort_keys=False), encoding="utf-8")
        return path

    @classmethod
    def from_yaml(cls, path: str | Path) -> ExperimentSpec:
        """Read and validate a YAML spec; every problem is a ``ValueError`` naming the file."""
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as error:
            raise ValueError(f"cannot read the spec {path}: {error.strerror or error}") from error
        except yaml.YAMLError as error:
            raise ValueError(f"{path} is not valid YAML: {error}") from error
        if not isinstance(data, Mapping):
            raise ValueError(f"{path}: expected a mapping at the top level")
        try:
            return cls.from_dict(data)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}: {error}") from error

    def replace(self, **changes: Any) -> ExperimentSpec:
        """A validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def fingerprint(self) -> str:
        """A stable hash of everything that determines the results (not the description)."""
        data = self.to_dict()
        del data["description"]
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _check_keys(cls: type, data: Mapping[str, Any], what: str) -> None:
    fields = dataclasses.fields(cls)
    unknown = sorted(set(data) - {f.name for f in fields})
    if unknown:
        raise ValueError(f"unknown {what} keys: {unknown}")
    required = [
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [name for name in required if name not in data]
    if missing:
        raise ValueError(f"{what} lacks the keys {missing}")


def check_finite(value: Any, where: str) -> None:
    """Reject NaN and infinite numbers anywhere in a (nested) parameter value."""
    if isinstance(value, float) and not np.isfinite(value):
        raise ValueError(f"{where} must be finite, got {value}")
    if isinstance(value, Mapping):
        for key, item in value.items():
            check_finite(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_finite(item, f"{where}[{index}]")
