"""What a persistent study is: the problem it optimises and the policy that proposes.

A study's problem is built by a factory of the library or of the user (a short name of
:data:`~causalbandits.lookup.ENVIRONMENTS` or a ``"module:function"`` path) called
as ``factory(**params)``; it returns what the learner is told (a problem such as
:class:`~causalbandits.envs.causal_bo.CausalBOProblem`) or an environment, whose ``problem``
is used. The policy is a registry name or a ``"module:Class"`` path built as
``Policy(problem, **options)``: a study runs against a real system, so policies that must be
told the true model (the oracles) are refused.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from causalbandits.lookup import plain, resolve_environment, resolve_policy


class StudyError(ValueError):
    """A request a study refuses (bad input, unknown evaluation, mismatched problem); the
    database is left untouched."""


@dataclass(frozen=True)
class StudySpec:
    """The problem factory and its ``params``, the policy and its ``options``, the root
    ``seed``, and ``expire_after``: seconds after which a pending evaluation stops counting
    as pending (``None``: never; a late tell is still recorded)."""

    problem: str
    policy: str
    params: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    expire_after: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise StudyError(f"seed must be an int >= 0, got {self.seed!r}")
        if self.expire_after is not None and not float(self.expire_after) > 0:
            raise StudyError(f"expire_after must be positive seconds, got {self.expire_after}")
        for name in ("params", "options"):
            if not isinstance(getattr(self, name), dict):
                raise StudyError(f"{name} must be a mapping, got {getattr(self, name)!r}")
        object.__setattr__(self, "params", plain(self.params))
        object.__setattr__(self, "options", plain(self.options))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StudySpec:
        unknown = set(data) - {f for f in cls.__dataclass_fields__}
        if unknown:
            raise StudyError(f"unknown study keys: {', '.join(sorted(unknown))}")
        return cls(**data)

    def fingerprint(self) -> str:
        """A hash of everything that decides the study's actions."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def make_problem(self) -> tuple[Any, Any]:
        """``(problem, environment or None)``: what the policy is told, and the environment
        when the factory made one."""
        made = resolve_environment(self.problem)(**self.params)
        environment = made if hasattr(made, "step") else None
        return (made.problem if environment is not None else made), environment

    def make_policy(self, problem: Any) -> Any:
        """The policy for ``problem``, not yet reset."""
        cls = resolve_policy(self.policy)
        if "truth" in getattr(cls, "NEEDS", frozenset()):
            raise StudyError(f"policy {self.policy!r} must be told the true model: no study can")
        return cls(problem, **self.options)
