"""Univariate basis functions of dictionary SEMs, with closed-form derivatives of any order.

The SSEM-UCB paper's synthetic edges (App. -G1) are scaled elementary functions: linear
``v``, periodic ``sin(2 pi v)``, quadratic ``v^2``, cubic ``v^3``, ``tanh v`` and the
zero-true shifted tanh ``tanh(v - c) + tanh(c)`` of the train-delay model. Every function
returns its derivatives ``f^(n)(v)``, ``n = 0..order``, in one call: the Taylor arithmetic
of :mod:`causalbandits.estimators.jets` composes them exactly (no finite differences).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from math import pi

import numpy as np
from numpy.polynomial import polynomial as P


class BasisFunction(ABC):
    """A univariate analytic function with its derivatives; ``name`` labels it."""

    name: str

    @abstractmethod
    def derivatives(self, values: np.ndarray, order: int) -> np.ndarray:
        """``f^(n)(values)`` for ``n = 0..order``, shape ``(order + 1, *values.shape)``."""

    def __call__(self, values: np.ndarray) -> np.ndarray:
        return self.derivatives(np.asarray(values, dtype=float), 0)[0]

    @property
    def zero_true(self) -> bool:
        """Whether ``f(0) = 0`` (the paper's zero-true assumption, Sec. II)."""
        return bool(abs(float(self(np.zeros(1))[0])) < 1e-12)


@dataclass(frozen=True)
class Power(BasisFunction):
    """``v^degree`` (``degree`` 1: linear, 2: quadratic, 3: cubic)."""

    degree: int

    def __post_init__(self) -> None:
        if int(self.degree) != self.degree or self.degree < 1:
            raise ValueError(f"a power basis needs an integer degree >= 1, got {self.degree}")

    @property
    def name(self) -> str:  # type: ignore[override]
        return {1: "linear", 2: "quadratic", 3: "cubic"}.get(self.degree, f"power{self.degree}")

    def derivatives(self, values: np.ndarray, order: int) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        out = np.zeros((order + 1, *values.shape))
        factor = 1.0
        for n in range(min(order, self.degree) + 1):
            out[n] = factor * values ** (self.degree - n)
            factor *= self.degree - n
        return out


@dataclass(frozen=True)
class Sine(BasisFunction):
    """``sin(frequency v)``; the paper's periodic edge is ``frequency = 2 pi``."""

    frequency: float = 2 * pi
    name: str = "sin"

    def derivatives(self, values: np.ndarray, order: int) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        phase = self.frequency * values
        sin, cos = np.sin(phase), np.cos(phase)
        cycle = (sin, cos, -sin, -cos)  # the n-th derivative of sin is sin(x + n pi / 2)
        return np.stack([self.frequency**n * cycle[n % 4] for n in range(order + 1)])


@cache
def _tanh_polynomials(order: int) -> tuple[np.ndarray, ...]:
    """Coefficients of ``p_n`` with ``tanh^(n)(v) = p_n(tanh v)``: ``p_0 = t``,
    ``p_{n+1} = p_n' (1 - t^2)``."""
    polys = [np.array([0.0, 1.0])]
    for _ in range(order):
        polys.append(P.polymul(P.polyder(polys[-1]), [1.0, 0.0, -1.0]))
    return tuple(polys)


@dataclass(frozen=True)
class ShiftedTanh(BasisFunction):
    """``tanh(v - shift) + tanh(shift)``: zero-true for every shift (plain ``tanh`` at 0)."""

    shift: float = 0.0

    @property
    def name(self) -> str:  # type: ignore[override]
        return "tanh" if self.shift == 0 else f"tanh(v-{self.shift:g})"

    def derivatives(self, values: np.ndarray, order: int) -> np.ndarray:
        t = np.tanh(np.asarray(values, dtype=float) - self.shift)
        out = np.stack([P.polyval(t, p) for p in _tanh_polynomials(order)])
        out[0] += np.tanh(self.shift)
        return out


LINEAR = Power(1)
QUADRATIC = Power(2)
CUBIC = Power(3)
SINE = Sine()
TANH = ShiftedTanh()

#: The named bases of the paper's experiments (the names ``Dictionary.from_names`` takes).
NAMED_BASES: dict[str, BasisFunction] = {
    "linear": LINEAR,
    "quadratic": QUADRATIC,
    "cubic": CUBIC,
    "sin": SINE,
    "tanh": TANH,
}


@dataclass(frozen=True)
class Dictionary:
    """The ``K`` basis functions of a dictionary SEM: ``F(y)[i] = sum_{j,k} W[i,j,k]
    phi_k(y[j])``; all zero-true unless ``zero_true=False``."""

    functions: tuple[BasisFunction, ...]
    zero_true: bool = True

    def __post_init__(self) -> None:
        functions = tuple(self.functions)
        if not functions:
            raise ValueError("a dictionary needs at least one basis function")
        object.__setattr__(self, "functions", functions)
        if self.zero_true:
            bad = [f.name for f in functions if not f.zero_true]
            if bad:
                raise ValueError(
                    f"basis function(s) {bad} are not zero-true (f(0) != 0), which the "
                    "separable SEM requires (F(0) = 0); shift them, or pass zero_true=False"
                )

    @classmethod
    def from_names(cls, names: Sequence[str] | str) -> Dictionary:
        """A dictionary of :data:`NAMED_BASES` (e.g. ``("linear", "sin")``)."""
        names = [names] if isinstance(names, str) else list(names)
        unknown = [n for n in names if n not in NAMED_BASES]
        if unknown:
            raise ValueError(f"unknown basis {unknown}; known: {sorted(NAMED_BASES)}")
        return cls(tuple(NAMED_BASES[n] for n in names))

    @property
    def size(self) -> int:
        """``K``."""
        return len(self.functions)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.functions)

    def derivatives(self, values: np.ndarray, order: int) -> np.ndarray:
        """``phi_k^(n)(values)``, shape ``(K, order + 1, *values.shape)``."""
        return np.stack([f.derivatives(values, order) for f in self.functions])

    def evaluate(self, values: np.ndarray) -> np.ndarray:
        """``phi_k(values)`` with the basis last: shape ``(*values.shape, K)``."""
        values = np.asarray(values, dtype=float)
        return np.stack([f.derivatives(values, 0)[0] for f in self.functions], axis=-1)


@dataclass(frozen=True)
class ScaledTanh(BasisFunction):
    """``tanh(rate (v - shift)) + tanh(rate shift)``: the zero-true shifted tanh of the
    train-delay edges, ``a (tanh(c (v - d)) - tanh(-c d))`` with ``c = rate``, ``d = shift``
    (composed from :class:`ShiftedTanh`: ``g(rate v)`` with
    ``g(u) = tanh(u - rate shift) + tanh(rate shift)``)."""

    rate: float
    shift: float

    def __post_init__(self) -> None:
        if not (np.isfinite(self.rate) and self.rate > 0 and np.isfinite(self.shift)):
            raise ValueError(f"need a finite rate > 0 and shift, got {self.rate}, {self.shift}")

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"tanh({self.rate:.4g}(v-{self.shift:.4g}))"

    def derivatives(self, values: np.ndarray, order: int) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        inner = ShiftedTanh(self.rate * self.shift).derivatives(self.rate * values, order)
        powers = self.rate ** np.arange(order + 1, dtype=float)
        return inner * powers.reshape(-1, *([1] * values.ndim))
