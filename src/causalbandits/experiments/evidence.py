"""Verdicts as strong as the evidence: one vocabulary for every paper's claims, and the paired
test that decides a comparison.

A claim is either a **comparison** (one method above or below another, decided by the paired
difference over replicates: :class:`PairedComparison`) or a **property** (a stated fact that
our results show or do not show: a ranking, a share of rounds, a curve that falls). The
verdicts:

- ``holds``: a comparison in the paper's direction beyond the project's threshold
  (:data:`PAIRED_SE` standard errors of the paired mean difference), or a property that holds;
- ``not significant``: a comparison within the threshold (the label says whether its mean
  points the paper's way, "same direction, not significant", or not);
- ``contradicted``: a comparison in the opposite direction beyond the threshold;
- ``not reproduced``: a property that fails on our results;
- ``n/a``: not checkable on these results (a quick run without the setting, fewer than two
  replicates).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd

#: Standard errors a paired difference must clear to count as a difference (the project's).
PAIRED_SE = 2.0


class Verdict(enum.Enum):
    """The five verdicts (the value is the label used in tables and the scoreboard)."""

    HOLDS = "holds"
    NOT_SIGNIFICANT = "not significant"
    CONTRADICTED = "contradicted"
    NOT_REPRODUCED = "not reproduced"
    NA = "n/a"

    @classmethod
    def of_property(cls, holds: bool | None) -> Verdict:
        """A property's verdict: ``holds``, ``not reproduced`` or (``None``) ``n/a``."""
        if holds is None:
            return cls.NA
        return cls.HOLDS if holds else cls.NOT_REPRODUCED


def paired_sign(mean: float, se: float, multiple: float = PAIRED_SE) -> int:
    """``+1`` or ``-1`` when ``mean`` lies more than ``multiple`` standard errors above or
    below zero, else ``0`` (a tie; also when ``se`` is NaN)."""
    if mean - multiple * se > 0:
        return 1
    return -1 if mean + multiple * se < 0 else 0


@dataclass(frozen=True)
class PairedComparison:
    """The paired difference ``first - second`` over replicates for a claim that ``first`` is
    above (``direction = +1``) or below (``-1``) ``second``.

    ``agreeing`` counts the replicates whose difference points the claim's way."""

    mean: float
    se: float
    agreeing: int
    replicates: int
    direction: int
    threshold: float = PAIRED_SE

    @classmethod
    def of(
        cls,
        differences: Sequence[float] | np.ndarray | pd.Series,
        direction: int = 1,
        threshold: float = PAIRED_SE,
    ) -> PairedComparison:
        """The comparison of the paired ``differences`` (NaNs, replicates one side lacks,
        are dropped)."""
        if direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {direction!r}")
        values = np.asarray(differences, dtype=float)
        values = values[~np.isnan(values)]
        n = int(values.size)
        mean = float(values.mean()) if n else float("nan")
        se = float(values.std(ddof=1) / math.sqrt(n)) if n >= 2 else float("nan")
        agreeing = int((direction * values > 0).sum())
        return cls(mean, se, agreeing, n, direction, float(threshold))

    @classmethod
    def between(
        cls, first: pd.Series, second: pd.Series, direction: int = 1, threshold: float = PAIRED_SE
    ) -> PairedComparison:
        """``first - second`` over the replicates (index) both have."""
        return cls.of((first - second).dropna(), direction, threshold)

    @classmethod
    def unpaired(cls, first: pd.Series, second: pd.Series) -> PairedComparison:
        """``first`` above ``second`` where their replicates are not shared: the difference
        of their means with the unpaired (Welch) standard error, judged by the paired
        threshold (``agreeing`` has no unpaired meaning: 0)."""
        first, second = first.dropna(), second.dropna()
        mean = float(first.mean() - second.mean())
        se = math.sqrt(first.var(ddof=1) / len(first) + second.var(ddof=1) / len(second))
        return cls(mean, se, 0, min(len(first), len(second)), direction=1)

    @property
    def sign(self) -> int:
        """:func:`paired_sign` of the mean difference."""
        return paired_sign(self.mean, self.se, self.threshold)

    @property
    def verdict(self) -> Verdict:
        if self.replicates < 2 or not math.isfinite(self.se):
            return Verdict.NA
        if self.sign == self.direction:
            return Verdict.HOLDS
        return Verdict.CONTRADICTED if self.sign == -self.direction else Verdict.NOT_SIGNIFICANT

    @property
    def same_direction(self) -> bool:
        """Whether the mean difference points the claim's way (whatever its size)."""
        return self.direction * self.mean > 0

    @property
    def label(self) -> str:
        """The verdict's label; a tie says which way its mean points."""
        if self.verdict is not Verdict.NOT_SIGNIFICANT:
            return self.verdict.value
        if self.mean == 0:
            return "no difference, not significant"
        side = "same" if self.same_direction else "opposite"
        return f"{side} direction, not significant"

    def test(self) -> str:
        """How the verdict was decided: the test, its threshold and the replicates agreeing."""
        way = "higher" if self.direction > 0 else "lower"
        replicates = "replicate" if self.replicates == 1 else "replicates"
        return (
            f"paired difference over {self.replicates} {replicates}, threshold "
            f"{self.threshold:g} se; {way} in {self.agreeing} of {self.replicates}"
        )

    def describe(self, digits: int = 3) -> str:
        """``difference m ± se`` with the ``digits`` given."""
        return f"difference {self.mean:,.{digits}f} ± {self.se:,.{digits}f}"


#: The order in which several comparisons that must all hold decide their claim.
_WEAKEST_FIRST = (Verdict.CONTRADICTED, Verdict.NOT_SIGNIFICANT, Verdict.NA, Verdict.HOLDS)

Key = TypeVar("Key", bound=Hashable)


def strength(comparison: PairedComparison) -> float:
    """How far the mean lies the claim's way, in standard errors (``+-inf`` for a nonzero
    mean with zero se, ``-inf`` when it cannot be decided)."""
    if comparison.replicates < 2 or not math.isfinite(comparison.se):
        return -math.inf
    signed = comparison.direction * comparison.mean
    if comparison.se > 0:
        return signed / comparison.se
    return math.copysign(math.inf, signed) if signed else 0.0


def weakest(comparisons: Mapping[Key, PairedComparison]) -> Key:
    """The key of the comparison that decides a claim needing all of ``comparisons``: a
    contradicted one first, then a tie, an undecidable one, and among equal verdicts the
    smallest :func:`strength` (the first among equals). The claim holds only if all hold and
    is contradicted if any is."""
    if not comparisons:
        raise ValueError("no comparison to choose from")
    return min(
        comparisons,
        key=lambda key: (
            _WEAKEST_FIRST.index(comparisons[key].verdict),
            strength(comparisons[key]),
        ),
    )


def by_replicate(
    rows: pd.DataFrame, column: str, key: str = "algorithm", index: str = "replicate"
) -> dict[Hashable, pd.Series]:
    """The paired samples of a comparison: ``column`` indexed by ``index`` (the replicate; its
    first row), per value of ``key`` in order of appearance."""
    return {
        label: group.drop_duplicates(index).set_index(index)[column]
        for label, group in rows.groupby(key, sort=False)
    }


def against_best_other(
    values: Mapping[Key, pd.Series], label: Key, direction: int = -1
) -> tuple[Key, PairedComparison]:
    """The claim "``label`` is the lowest" (``direction -1``; ``+1``: the highest) as one
    paired comparison against the other label of lowest (highest) mean; that label and the
    comparison (:func:`group_against_rest` with ``group = [label]``)."""
    others = [other for other in values if other != label]
    _, other, comparison = group_against_rest(values, [label], others, direction)
    return other, comparison


def replicate_table(
    rows: pd.DataFrame,
    column: str,
    by: Sequence[str] = (),
    key: str = "algorithm",
    index: str = "replicate",
) -> pd.DataFrame:
    """The paired samples as one table: ``column`` per (``by``, ``index``) (rows, e.g. per
    delay and replicate) and value of ``key`` (columns); ``.loc[group]`` pairs one group."""
    return rows.pivot_table(index=[*by, index], columns=key, values=column)


def group_against_rest(
    values: Mapping[Key, pd.Series], group: Sequence[Key], rest: Sequence[Key], direction: int
) -> tuple[Key, Key, PairedComparison]:
    """A ranking claim "``group`` ends lowest" (``direction -1``) or "highest" (``+1``) as one
    paired comparison over the replicates (``values``: per label, :func:`by_replicate`): the
    group's member least favourable to it (by mean: the highest for "lowest") against the
    rest's most favourable to the contrary (the lowest); the first among equal means. With
    ``group = [x]`` and ``rest`` the others: "``x`` is the lowest" against the best other."""

    def towards(label: Key) -> float:  # larger: more in the claim's direction
        return direction * float(values[label].mean())

    weakest_member = min(group, key=towards)
    strongest = max(rest, key=towards)
    comparison = PairedComparison.between(values[weakest_member], values[strongest], direction)
    return weakest_member, strongest, comparison
