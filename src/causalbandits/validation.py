"""Checks of numeric arguments, shared by every public constructor.

Each check raises one ``ValueError`` that names the parameter, states what was expected and
shows the value (``"beta must be >= 0 and finite, got nan"``), and returns the value as a
plain ``float`` or ``int``, so that a constructor can write ``self.beta = non_negative("beta",
beta)``. Every check but :func:`number` refuses NaN and infinities; booleans, strings and
``None`` are never numbers; a count is an integer (``2.0`` is accepted as 2, ``2.5`` is not).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def shown(value: object) -> str:
    """``value`` as a message shows it: numbers plainly (``nan``, not ``np.float64(nan)``)."""
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        return str(value)
    return repr(value)


def number(name: str, value: object) -> float:
    """``value`` as a ``float``, which may be NaN or infinite; ``ValueError`` unless ``value``
    is a real number (a bool, a string or ``None`` is not)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {shown(value)}")
    return float(value)


def finite(name: str, value: object) -> float:
    """``value`` as a ``float``; ``ValueError`` unless it is a finite number."""
    x = number(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {shown(value)}")
    return x


def non_negative(name: str, value: object) -> float:
    """``value`` as a ``float``; ``ValueError`` unless finite and ``>= 0``."""
    x = number(name, value)
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"{name} must be >= 0 and finite, got {shown(value)}")
    return x


def positive(name: str, value: object) -> float:
    """``value`` as a ``float``; ``ValueError`` unless finite and ``> 0``."""
    x = number(name, value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be > 0 and finite, got {shown(value)}")
    return x


def in_range(
    name: str,
    value: object,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a ``float``; ``ValueError`` unless it lies in the interval from ``low`` to
    ``high`` (closed unless ``low_open`` / ``high_open``)."""
    x = number(name, value)
    above = x > low if low_open else x >= low
    below = x < high if high_open else x <= high
    if not (above and below):
        interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {shown(value)}")
    return x


def count(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an ``int``; ``ValueError`` unless an integer ``>= minimum``."""
    expected = f"{name} must be an integer >= {minimum}, got {shown(value)}"
    try:
        x = number(name, value)
    except ValueError:
        raise ValueError(expected) from None
    if not (math.isfinite(x) and x.is_integer() and x >= minimum):
        raise ValueError(expected)
    return int(value) if isinstance(value, numbers.Integral) else int(x)


def horizon(value: object) -> int:
    """The horizon ``T`` as an ``int``; ``ValueError`` unless an integer ``>= 1`` (the one
    message of every environment)."""
    try:
        return count("horizon T", value)
    except ValueError:
        raise ValueError(f"horizon T must be a positive integer, got {shown(value)}") from None


def optional(
    check: Callable[..., T], name: str, value: object, *args: Any, **kwargs: Any
) -> T | None:
    """``None``, or ``check(name, value, *args, **kwargs)``."""
    return None if value is None else check(name, value, *args, **kwargs)


def each(check: Callable[..., T], name: str, values: Iterable[object], *args: Any) -> tuple[T, ...]:
    """``check(name[i], values[i], *args)`` of every element, as a tuple (an array of any shape
    element by element, in C order); ``ValueError`` unless ``values`` is a sequence."""
    if isinstance(values, np.ndarray):
        values = values.ravel().tolist()
    if isinstance(values, str | bytes | dict) or not isinstance(values, Iterable):
        raise ValueError(f"{name} must be a sequence of numbers, got {shown(values)}")
    return tuple(check(f"{name}[{i}]", v, *args) for i, v in enumerate(values))
