"""Experiment specifications: what to run, validated, serialisable and fingerprinted.

A spec names an environment factory, a list of settings (environment parameter overrides,
e.g. a sweep over the deviation budget), the algorithms and the replication plan. Together
with its root seed it fixes every number of a run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from causalbandits.experiments.recorders import RECORDERS
from causalbandits.lookup import (
    DOTTED,
    ENVIRONMENTS,
    plain,
    resolve_environment,
    resolve_policy,
)
from causalbandits.policies import POLICIES
from causalbandits.validation import count

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

#: What the spec's keys expect, for error messages.
ALGORITHM_LIST = "a list of algorithms, each a mapping with the keys label, policy, params"
PARAMETERS = "a mapping of parameter names to values"
SETTING_LIST = "a list of settings, each a mapping of parameter names to values"
RECORDER_LIST = f"a list of recorder names ({', '.join(sorted(RECORDERS))})"
ENVIRONMENT = "a string: a short name or a 'module:function' path"
POLICY = "a string: a short name or a 'module:Class' path"
SWEEP = "the name of a setting parameter (a string)"


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
        valid = isinstance(self.label, str) and self.label
        check_algorithm(
            self.label,
            self.policy,
            self.params,
            f"algorithm {self.label!r}" if valid else "algorithm",
        )
        object.__setattr__(self, "params", plain(dict(self.params)))

    def params_for(self, setting: Mapping[str, Any], where: str | None = None) -> dict[str, Any]:
        """The parameters in ``setting`` (setting-dependent ones resolved); an error names the
        parameter under ``where`` (default: the label)."""
        where = f"algorithm {self.label!r}" if where is None else where
        out = {}
        for name, value in self.params.items():
            if _by_setting(value):
                key = setting.get(value["by"])
                values = {str(k): v for k, v in value["values"].items()}
                if str(key) not in values:
                    raise ValueError(
                        f"{where}.params.{name} has no value for "
                        f"{value['by']} = {key!r}; known: {sorted(values)}"
                    )
                value = values[str(key)]
            out[name] = value
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "policy": self.policy, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "algorithm") -> AlgorithmSpec:
        """The algorithm of a mapping; errors name the keys under ``where`` (e.g.
        ``algorithms[1]``)."""
        expect(
            isinstance(data, Mapping), where, "a mapping with the keys label, policy, params", data
        )
        _check_keys(cls, data, "algorithm", where)
        check_algorithm(data["label"], data["policy"], data.get("params", {}), where)
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
        expect(
            isinstance(self.algorithms, list | tuple), "algorithms", ALGORITHM_LIST, self.algorithms
        )
        algorithms = [
            a if isinstance(a, AlgorithmSpec) else AlgorithmSpec.from_dict(a, f"algorithms[{i}]")
            for i, a in enumerate(self.algorithms)
        ]
        object.__setattr__(self, "algorithms", algorithms)
        expect(isinstance(self.env_params, Mapping), "env_params", PARAMETERS, self.env_params)
        object.__setattr__(self, "env_params", plain(dict(self.env_params)))
        expect(isinstance(self.settings, list | tuple), "settings", SETTING_LIST, self.settings)
        for index, setting in enumerate(self.settings):
            expect(isinstance(setting, Mapping), f"settings[{index}]", PARAMETERS, setting)
        object.__setattr__(self, "settings", [plain(dict(s)) for s in self.settings])
        expect(isinstance(self.recorders, list | tuple), "recorders", RECORDER_LIST, self.recorders)
        object.__setattr__(self, "recorders", [str(r) for r in self.recorders])
        if isinstance(self.checkpoints, list | tuple):
            rounds = [count(f"checkpoints[{i}]", c) for i, c in enumerate(self.checkpoints)]
            object.__setattr__(self, "checkpoints", rounds)
        self._validate()

    def _validate(self) -> None:
        expect(isinstance(self.name, str) and self.name, "name", "a non-empty string", self.name)
        expect(isinstance(self.environment, str), "environment", ENVIRONMENT, self.environment)
        if self.environment not in ENVIRONMENTS and not DOTTED.match(self.environment):
            raise ValueError(
                f"environment: unknown environment {self.environment!r}; known: "
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
            raise ValueError(f"recorders: unknown recorders {unknown}; known: {sorted(RECORDERS)}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        expect(self.sweep is None or isinstance(self.sweep, str), "sweep", SWEEP, self.sweep)
        expect(isinstance(self.description, str), "description", "a string", self.description)
        if not self.algorithms:
            raise ValueError(
                f"algorithms: an experiment needs at least one algorithm; expected {ALGORITHM_LIST}"
            )
        labels = [a.label for a in self.algorithms]
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise ValueError(
                f"algorithms: duplicate algorithm labels: {duplicates}; expected distinct labels"
            )
        if not self.settings:
            raise ValueError("settings must hold at least one setting (use [{}] for none)")
        check_finite(self.env_params, "env_params")
        check_finite(self.settings, "settings")
        if "horizon" in self.env_params:
            raise ValueError(
                "env_params.horizon: set the horizon with the spec's 'horizon', not in env_params"
            )
        for index, setting in enumerate(self.settings):
            self._validate_setting(index, setting)
        for index, algorithm in enumerate(self.algorithms):
            for setting in self.settings:
                algorithm.params_for(setting, f"algorithms[{index}]")

    def _validate_checkpoints(self) -> None:
        points = self.checkpoints
        if isinstance(points, list):
            if not points or points != sorted(set(points)) or points[0] < 1:
                raise ValueError(
                    f"checkpoints: checkpoint rounds must increase strictly from 1, got {points}"
                )
            if points[-1] > self.horizon:
                raise ValueError(
                    f"checkpoints: checkpoint round {points[-1]} is past the horizon {self.horizon}"
                )
        elif isinstance(points, bool) or not isinstance(points, int) or points < 1:
            raise ValueError(
                f"checkpoints must be an integer >= 1 or a list of rounds, got {points!r}"
            )

    def _validate_setting(self, index: int, setting: dict[str, Any]) -> None:
        clash = sorted(set(setting) & {*RESERVED_COLUMNS, "horizon"})
        if clash:
            raise ValueError(f"settings[{index}] uses reserved parameter names {clash}")
        for key, value in setting.items():
            expect(
                isinstance(value, str | int | float | bool),
                f"settings[{index}].{key}",
                "a scalar (a number, string or boolean)",
                value,
            )
        if self.sweep is not None and self.sweep not in setting:
            raise ValueError(f"settings[{index}] lacks the swept parameter {self.sweep!r}")

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
        """Read and validate a YAML spec, its parameters included (:func:`check_parameters`);
        every problem is a one-line ``ValueError`` naming the file and the key."""
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as error:
            raise ValueError(f"cannot read the spec {path}: {error.strerror or error}") from error
        except yaml.YAMLError as error:
            raise ValueError(f"{path} is not valid YAML: {_yaml_problem(error)}") from error
        if not isinstance(data, Mapping):
            found = "an empty file" if data is None else _shown(data)
            keys = ", ".join(f.name for f in dataclasses.fields(cls))
            raise ValueError(f"{path}: expected a mapping with the keys {keys}; got {found}")
        try:
            spec = cls.from_dict(data)
            check_parameters(spec)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}: {error}") from error
        return spec

    def replace(self, **changes: Any) -> ExperimentSpec:
        """A validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def fingerprint(self) -> str:
        """A stable hash of everything that determines the results (not the description)."""
        data = self.to_dict()
        del data["description"]
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _check_keys(cls: type, data: Mapping[str, Any], what: str, where: str = "") -> None:
    """Raise unless ``data`` has only the fields of ``cls`` and all its required ones."""
    fields = dataclasses.fields(cls)
    prefix = f"{where}: " if where else ""
    known = ", ".join(f.name for f in fields)
    unknown = sorted(map(str, set(data) - {f.name for f in fields}))
    if unknown:
        raise ValueError(f"{prefix}unknown {what} keys: {unknown}; expected keys: {known}")
    required = [
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [name for name in required if name not in data]
    if missing:
        raise ValueError(
            f"{prefix}{what} lacks the keys {missing} (required: {', '.join(required)})"
        )


def expect(condition: object, path: str, expected: str, value: Any) -> None:
    """Raise ``"<path> must be <expected>, got <value>"`` unless ``condition``."""
    if not condition:
        raise ValueError(f"{path} must be {expected}, got {_shown(value)}")


def _shown(value: Any, limit: int = 60) -> str:
    """A short repr of ``value`` for an error message, with its kind for containers."""
    kind = {dict: "a mapping ", list: "a list ", tuple: "a list "}.get(type(value), "")
    text = repr(value)
    return kind + (text if len(text) <= limit else text[: limit - 3] + "...")


def check_algorithm(label: Any, policy: Any, params: Any, where: str) -> None:
    """Validate an algorithm's fields; errors name the key under ``where``."""
    expect(isinstance(label, str) and label, f"{where}.label", "a non-empty string", label)
    expect(isinstance(policy, str), f"{where}.policy", POLICY, policy)
    if ":" in policy:
        if not DOTTED.match(policy):
            raise ValueError(f"{where}.policy: {policy!r} is not a 'module:Class' path")
    elif policy not in POLICIES:
        raise ValueError(
            f"{where}.policy: unknown policy {policy!r} (algorithm {label!r}); "
            f"known: {', '.join(sorted(POLICIES))}, or a 'module:Class' path"
        )
    expect(isinstance(params, Mapping), f"{where}.params", PARAMETERS, params)
    check_finite(plain(dict(params)), f"{where}.params")
    for name, value in params.items():
        if _by_setting(value):
            expect(isinstance(value["by"], str), f"{where}.params.{name}.by", SWEEP, value["by"])
            expect(
                isinstance(value["values"], Mapping),
                f"{where}.params.{name}.values",
                "a mapping of setting values to parameter values",
                value["values"],
            )


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


def _yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML error in one line: the problem and where it is."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return (
        problem if mark is None else f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    )


#: Annotations whose values are checked by type: the kinds each accepts and their words.
SIMPLE_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "int": ((int,), "an integer"),
    "float": ((int, float), "a number"),
    "bool": ((bool,), "true or false"),
    "str": ((str,), "a string"),
    "None": ((type(None),), "null"),
}


def keyword_parameters(chain: list[Any], skip: int) -> dict[str, inspect.Parameter] | None:
    """The keyword parameters of ``chain[0]``, following its ``**kwargs`` into ``chain[1:]``
    (the first ``skip`` parameters of each are passed positionally); ``None`` when some
    ``**kwargs`` stays open (any name is accepted)."""
    out: dict[str, inspect.Parameter] = {}
    for target in chain:
        parameters = list(inspect.signature(target).parameters.values())
        names = [p for p in parameters if p.name != "self"][skip:]
        for parameter in names:
            if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
                out.setdefault(parameter.name, parameter)
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            return out
    return None


def _policy_parameters(policy: str) -> dict[str, inspect.Parameter] | None:
    """The keyword parameters of a policy as the runner builds it (``from_environment`` when
    the class has one, else the constructor), ``**options`` followed up the class tree."""
    cls = resolve_policy(policy)
    inits = [k.__init__ for k in cls.__mro__ if "__init__" in vars(k) and k is not object]
    maker = getattr(cls, "from_environment", None)
    return keyword_parameters(([maker] if maker is not None else []) + inits, 1)


def _check_value(path: str, value: Any, parameter: inspect.Parameter, owner: str) -> None:
    """Raise unless ``value`` has a kind that the parameter's annotation accepts (checked
    only for annotations made of ``int``, ``float``, ``bool``, ``str`` and ``None``)."""
    annotation = parameter.annotation
    if not isinstance(annotation, str):
        annotation = getattr(annotation, "__name__", "")
    tokens = [token.strip() for token in annotation.split("|")]
    if not annotation or not all(token in SIMPLE_KINDS for token in tokens):
        return
    accepted = tuple(kind for token in tokens for kind in SIMPLE_KINDS[token][0])
    if isinstance(value, bool) and bool not in accepted or not isinstance(value, accepted):
        expected = " or ".join(SIMPLE_KINDS[token][1] for token in tokens)
        raise ValueError(
            f"{path} must be {expected} ({owner} declares {parameter.name}: {annotation}), "
            f"got {_shown(value)}"
        )


def _check_names(
    given: Mapping[str, Any],
    where: str,
    parameters: dict[str, inspect.Parameter] | None,
    owner: str,
) -> None:
    """Raise unless every key of ``given`` is one of ``parameters`` with a value of the right
    kind (``None``: any name, unchecked)."""
    if parameters is None:
        return
    for name, value in given.items():
        if name not in parameters:
            raise ValueError(
                f"{where}.{name}: unexpected keyword argument {name!r} of {owner}; "
                f"expected one of: {', '.join(sorted(parameters))}"
            )
        values = value["values"].values() if _by_setting(value) else [value]
        for item in values:
            _check_value(f"{where}.{name}", item, parameters[name], owner)


def check_parameters(spec: ExperimentSpec) -> None:
    """Check the names and simple types of the environment's and the policies' parameters
    against their signatures, naming the key (``settings[0].deviation_budget``,
    ``algorithms[1].params.beta``). Targets that cannot be imported are left to the runner,
    which reports the import error."""
    try:
        factory = resolve_environment(spec.environment)
    except ImportError:
        factory = None
    if factory is not None:
        environment = keyword_parameters([factory], 0)
        if environment is not None:
            environment.pop("instance_seeds", None)
        owner = f"the environment {spec.environment!r}"
        _check_names(spec.env_params, "env_params", environment, owner)
        for index, setting in enumerate(spec.settings):
            _check_names(setting, f"settings[{index}]", environment, owner)
    for index, algorithm in enumerate(spec.algorithms):
        try:
            parameters = _policy_parameters(algorithm.policy)
        except ImportError:
            continue
        owner = f"the policy {algorithm.policy!r}"
        _check_names(algorithm.params, f"algorithms[{index}].params", parameters, owner)
