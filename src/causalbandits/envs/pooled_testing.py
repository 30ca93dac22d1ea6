"""Array (matrix) pooled testing of households: the ``test_properties`` Monte Carlo of the
COVID-19 pooled-testing problem (EXCBO Sec. 7.4, following BOFN), vectorised in numpy, and its
interpolation table.

The model
---------
Where the paper and the description of BOFN's code are silent, the choices are ours.

- **Population.** ``households`` households per replication, sizes ``1..7`` drawn i.i.d. from
  the US distribution :data:`HOUSEHOLD_SIZE_PROBABILITIES` (mean
  :data:`MEAN_HOUSEHOLD_SIZE` ``= 2.4485``).
- **Infection.** Every person is a primary case with probability ``r``; in a household with at
  least one primary case every other member is infected with probability
  :data:`SECONDARY_ATTACK_RATE` (SAR ``= 0.3741``). The expected share of infected people is
  then ``f(r) = sum_k k (r + SAR(1 - r) - SAR(1 - r)^k) p_k / E[size]``, and ``r`` solves
  ``f(r) = prevalence`` (:func:`primary_case_probability`). ``f`` increases from ``f(0) = 0``
  to ``f(1) = 1``, so every prevalence in ``[0, 1]`` is reachable: 0 gives ``r = 0`` (nobody
  infected), 1 gives ``r = 1`` (everybody infected); in between ``r`` is found by Brent's
  method.
- **Arrays.** Households are laid out in their (random) order, row by row, in square arrays of
  side ``m = ceil(group_size / MEAN_HOUSEHOLD_SIZE)`` households (the distribution's mean, not
  the sample's, so ``m`` depends on the group size only); every row and every column of an
  array is one pool. The last array of a replication is filled row by row as far as the
  households go; its pools hold the households present (``n`` counts them) and a row or column
  without any household is not tested.
- **One swab per person.** An infected person's swab is successful with probability
  ``1 - SWAB_FNR = 0.7``, drawn once and used in both of their pools.
- **Pool result.** A pool holding ``k >= 1`` infected people with a successful swab and ``n``
  households tests positive with probability ``1 - 0.05^(k / n^0.076)`` (the dilution
  false-negative rate); a pool with ``k = 0`` tests positive with probability ``POOL_FPR =
  0.1``. Results of different pools are independent given ``k`` and ``n``.
- **Quarantine.** A household at the intersection of a positive row and a positive column is
  quarantined, all its members; nobody else is. (A 1 x 1 array, group size 2,
  tests its household twice, once as its row and once as its column, and quarantines it when
  both tests are positive.)
- **Group size 1 is individual testing.** Every person is tested alone (a pool of one
  person, ``n = 1``): one test per person; a detectable infection (successful swab) tests
  positive with probability ``1 - 0.05^(1/1) = 0.95``, anything else with probability 0.1;
  the household of anyone who tests positive is quarantined (the household is the unit of
  quarantine under every group size). Without this rule group size 1 would be a 1 x 1 array
  with two tests per household (``2 / 2.4485 = 0.82`` tests per person), as group size 2
  is.
- **Outputs** (:class:`TestProperties`), pooled over the replications (ratios of sums):
  ``qfnr`` = infected people not quarantined / infected people (0 when nobody is infected,
  e.g. at prevalence 0), ``qfpr`` = non-infected people quarantined / non-infected people (0
  when everybody is infected, prevalence 1), ``tests_per_person`` = pools tested / people.

Random numbers: independent streams (household sizes, primary cases, secondary infections,
swabs, individual tests, and the pool results of each array side ``m``) are derived from
``seed``. All prevalences and group sizes of one call share these draws (common random
numbers): a person is infected iff their ``threshold < r``, so the infected sets are nested
in the prevalence and the results change little between nearby prevalences.

Speed (one core, ``benchmarks/bench_pooled_testing.py``): one evaluation at 10 000
households x 50 replications takes about 40 ms with the population drawn, 10 ms once the
population of that seed is drawn (a further prevalence or group size; the last four
populations are kept), against about 2 s for a plain-loop version of the same model.

The table
---------
A causal-BO round evaluates thousands of prevalences; :class:`TestPropertiesTable` holds the
simulator's values on :data:`PREVALENCE_GRID` for every group size ``1..200`` (computed per
distinct array side, 83 of them, with common random numbers) and interpolates linearly in the
prevalence; the group-size axis is exact. At the grid points the table equals
:func:`test_properties` with the same arguments. Two end points are replaced by limits:
``qfnr`` at prevalence 0 by its value at the first positive grid point, and ``qfpr`` at
prevalence 1 by its value at the last grid point below 1 (the ratios are 0/0 there, and they
only ever multiply a share that is 0 at that end).

Measured against the direct simulation (same seed) between the grid points, at 10 000
households x 50 replications (``benchmarks/bench_pooled_testing.py``: the 76 mid-points and
76 random points, times every group size 1..200): absolute error median / 95% / max of
``qfnr`` 3e-5 / 0.004 / 0.09 (the largest at prevalence 5e-5, where the direct value rests on
73 infected people), of ``qfpr`` 5e-5 / 0.0013 / 0.011 (the largest near prevalence 0.985);
in the shares the dynamics use, ``p qfnr`` and ``(1 - p) qfpr``, at most 1.4e-4 and 0.005.
All ``qfnr`` errors and 99.95 % of the ``qfpr`` errors are within ``max(2 se, 0.001)``,
``se`` the simulator's own Monte Carlo standard error at that point; ``tests_per_person``
does not depend on the prevalence and is exact. At the unit tests' fidelity (1 000 x 10) the
errors are 5-10 times larger (``p qfnr`` at most 7e-4, ``(1 - p) qfpr`` 0.016). Building the
table takes about 25 s on one core at full fidelity and 1 s at the tests' (once per process,
or read from ``cache_dir``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq

from causalbandits.validation import count

#: US household-size distribution, sizes 1..7 (BOFN's ``test_properties``).
HOUSEHOLD_SIZE_PROBABILITIES = (0.2837, 0.3451, 0.1507, 0.1276, 0.0578, 0.0226, 0.0125)
#: ``E[size] = sum_k k p_k``.
MEAN_HOUSEHOLD_SIZE = float(np.dot(np.arange(1, 8), HOUSEHOLD_SIZE_PROBABILITIES))
#: Secondary attack rate: the infection probability of a household member of a primary case.
SECONDARY_ATTACK_RATE = 0.3741
#: Probability that an infected person's swab misses the infection.
SWAB_FNR = 0.3
#: Dilution false-negative rate ``DILUTION_BASE ** (k / n ** DILUTION_EXPONENT)``.
DILUTION_BASE, DILUTION_EXPONENT = 0.05, 0.076
#: Probability that a pool without a detectable infection tests positive.
POOL_FPR = 0.1
#: Full fidelity (BOFN) and the reduced fidelity of the unit tests.
HOUSEHOLDS, REPLICATIONS = 10_000, 50
TEST_HOUSEHOLDS, TEST_REPLICATIONS = 1_000, 10
#: Largest group size of the table (the COVID problem's pool sizes are ``1..200``).
MAX_GROUP_SIZE = 200


def _prevalence_grid() -> np.ndarray:
    """``0``, 13 points log-spaced on ``[1e-4, 1e-2]``, 14 on ``(0.01, 0.05]``, 19 on
    ``(0.05, 0.2]`` and 30 on ``(0.2, 1]``: dense where the curves bend (at low prevalence,
    where array testing changes fastest) and containing ``0.01``, the initial prevalence
    of the COVID problem, exactly. Of the grids tried against a 581-point reference
    simulation (41-81 points uniform in ``sqrt(p)``, piecewise uniform ones with 58-61
    points), this one had the smallest worst interpolation error of ``qfnr``."""
    parts = (
        [0.0],
        np.geomspace(1e-4, 1e-2, 13),
        np.linspace(0.01, 0.05, 15)[1:],
        np.linspace(0.05, 0.2, 20)[1:],
        np.linspace(0.2, 1.0, 31)[1:],
    )
    grid = np.concatenate([np.atleast_1d(p) for p in parts])
    grid[13] = 0.01  # exactly, whatever geomspace's rounding
    grid.setflags(write=False)
    return grid


#: The table's prevalences (77 points; :func:`_prevalence_grid`).
PREVALENCE_GRID = _prevalence_grid()

_SIZE_CDF = np.cumsum(HOUSEHOLD_SIZE_PROBABILITIES)
_SIZE_CDF[-1] = 1.0
_LOG_DILUTION = math.log(DILUTION_BASE)


class TestProperties(NamedTuple):
    """What a pooled test achieves: shares of infected people not quarantined (``qfnr``), of
    non-infected people quarantined (``qfpr``) and tests per person."""

    __test__ = False  # not a pytest test class

    qfnr: np.ndarray
    qfpr: np.ndarray
    tests_per_person: np.ndarray


class TestCounts(NamedTuple):
    """Per-replication counts behind :class:`TestProperties`, each ``(..., replications)``."""

    __test__ = False

    infected: np.ndarray
    missed: np.ndarray
    non_infected: np.ndarray
    false_quarantined: np.ndarray
    tests: np.ndarray
    people: np.ndarray

    def properties(self) -> TestProperties:
        """Ratios of sums over the replications (0/0 counts as 0; module docstring)."""
        total = [np.sum(c, axis=-1) for c in self]
        infected, missed, non_infected, false_q, tests, people = total
        return TestProperties(
            np.divide(missed, infected, out=np.zeros(missed.shape), where=infected > 0),
            np.divide(false_q, non_infected, out=np.zeros(false_q.shape), where=non_infected > 0),
            tests / people,
        )


def check_prevalence(prevalence: np.ndarray | float) -> np.ndarray:
    """``prevalence`` as a float array; ``ValueError`` unless finite and in ``[0, 1]``."""
    p = np.asarray(prevalence, dtype=float)
    if not np.all(np.isfinite(p)):
        raise ValueError("prevalence must be finite")
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"prevalence must lie in [0, 1], got values in [{p.min()}, {p.max()}]")
    return p


def check_group_size(group_size: np.ndarray | int) -> np.ndarray:
    """``group_size`` as an int64 array; ``ValueError`` unless finite integers ``>= 1``."""
    g = np.asarray(group_size)
    if g.dtype == bool or not np.issubdtype(g.dtype, np.number):
        raise ValueError(f"group sizes must be integers >= 1, got dtype {g.dtype}")
    if not np.all(np.isfinite(g)):
        raise ValueError("group sizes must be finite")
    if np.any(g != np.round(g)) or np.any(g < 1):
        raise ValueError(f"group sizes must be integers >= 1, got {g.ravel()[:5].tolist()}")
    return g.astype(np.int64)


def array_side(group_size: np.ndarray | int) -> np.ndarray:
    """``m = ceil(group_size / MEAN_HOUSEHOLD_SIZE)``, the side of an array in households
    (``0`` marks group size 1, individual testing)."""
    g = check_group_size(group_size)
    side = np.ceil(g / MEAN_HOUSEHOLD_SIZE).astype(np.int64)
    return np.where(g == 1, 0, side)


def expected_prevalence(r: np.ndarray | float) -> np.ndarray:
    """``f(r)``: the expected share of infected people when each person is a primary case
    with probability ``r`` (module docstring)."""
    r = np.asarray(r, dtype=float)[..., None]
    k = np.arange(1, 8)
    sar = SECONDARY_ATTACK_RATE
    share = r + sar * (1 - r) - sar * (1 - r) ** k
    return (k * share) @ np.asarray(HOUSEHOLD_SIZE_PROBABILITIES) / MEAN_HOUSEHOLD_SIZE


def primary_case_probability(prevalence: np.ndarray | float) -> np.ndarray:
    """``r`` with ``f(r) = prevalence`` (``f`` of :func:`expected_prevalence`, strictly
    increasing from 0 to 1): 0 at 0, 1 at 1, Brent's method in between (to 1e-15)."""
    p = check_prevalence(prevalence)
    flat = p.ravel()
    out = np.empty_like(flat)
    for i, value in enumerate(flat):
        if value <= 0.0 or value >= 1.0:
            out[i] = value
        else:
            out[i] = brentq(
                lambda r, v=value: float(expected_prevalence(r)) - v,
                0.0,
                1.0,
                xtol=1e-15,
                rtol=4 * np.finfo(float).eps,
            )
    return out.reshape(p.shape)


def _child(seed: np.random.SeedSequence, *key: int) -> np.random.Generator:
    return np.random.default_rng(
        np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, *key))
    )


class _Streams:
    """Stream ids of the population's random numbers (module docstring)."""

    SIZES, PRIMARY, SECONDARY, SWAB, INDIVIDUAL, POOLS = range(6)


@dataclass(frozen=True)
class _Population:
    """One draw of every replication's households, shared by all prevalences and group sizes.

    People are stored member by member: first member 0 of every household (``R * N``
    households, replication-major), then member 1 of the households in ``members[1]`` (those
    with more than one person), and so on, so that counting per household is a few slices.
    ``threshold``: a person is infected iff ``threshold < r`` (their own primary-case uniform,
    or, if a primary case in the household would infect them, the household's smallest one);
    ``swab``: the swab is successful; ``test``: the uniform of an individual test.
    """

    seed: np.random.SeedSequence
    sizes: np.ndarray  # (R, N) int8
    members: tuple[np.ndarray, ...]  # members[j]: households with more than j people
    threshold: np.ndarray  # (people,) float32
    swab: np.ndarray  # (people,) bool
    test: np.ndarray  # (people,) float32

    @classmethod
    def draw(cls, households: int, replications: int, seed: np.random.SeedSequence):
        u = _child(seed, _Streams.SIZES).random((replications, households))
        sizes = np.ones(u.shape, dtype=np.int8)
        for bound in _SIZE_CDF[:-1]:
            sizes += u >= bound
        flat = sizes.ravel()
        members = tuple(np.flatnonzero(flat > j) for j in range(7))
        n = int(flat.sum(dtype=np.int64))
        primary = _child(seed, _Streams.PRIMARY).random(n, dtype=np.float32)
        exposed = _child(seed, _Streams.SECONDARY).random(n, dtype=np.float32)
        exposed = exposed < SECONDARY_ATTACK_RATE
        swab = _child(seed, _Streams.SWAB).random(n, dtype=np.float32) >= SWAB_FNR
        test = _child(seed, _Streams.INDIVIDUAL).random(n, dtype=np.float32)
        first = primary[: flat.size].copy()  # the household's smallest primary uniform
        for block, households_j in zip(_blocks(members), members[1:], strict=True):
            first[households_j] = np.minimum(first[households_j], primary[block])
        threshold = np.where(exposed, _broadcast(first, members), primary)
        return cls(seed, sizes, members, threshold, swab, test)

    @property
    def replications(self) -> int:
        return self.sizes.shape[0]

    @property
    def people(self) -> np.ndarray:
        """People per replication, ``(R,)``."""
        return self.sizes.sum(axis=1, dtype=np.int64)

    def per_household(self, person: np.ndarray) -> np.ndarray:
        """How many people of each household ``(R, N)`` have ``person`` (a boolean per
        person) true."""
        out = person[: self.sizes.size].astype(np.int8)
        for block, households_j in zip(_blocks(self.members), self.members[1:], strict=True):
            out[households_j] += person[block]
        return out.reshape(self.sizes.shape)

    def household_counts(self, r: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per person ``infected``; per household ``(R, N)`` infected people and infected
        people with a successful swab."""
        infected = self.threshold < r
        return infected, self.per_household(infected), self.per_household(infected & self.swab)

    def individual(self, infected: np.ndarray, i_h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Group size 1: per replication, infected people missed and non-infected people
        quarantined (a household is quarantined when one of its members tests positive)."""
        positive = np.where(infected & self.swab, self.test >= DILUTION_BASE, self.test < POOL_FPR)
        quarantined = self.per_household(positive) > 0
        missed = np.where(quarantined, 0, i_h).sum(axis=1, dtype=np.int64)
        false_q = np.where(quarantined, self.sizes - i_h, 0).sum(axis=1, dtype=np.int64)
        return missed, false_q


def _blocks(members: tuple[np.ndarray, ...]):
    """The slices of members 1, 2, ... in the member-by-member order of :class:`_Population`."""
    offset = len(members[0])
    for households_j in members[1:]:
        yield slice(offset, offset + len(households_j))
        offset += len(households_j)


def _broadcast(values: np.ndarray, members: tuple[np.ndarray, ...]) -> np.ndarray:
    """A per-household value for every person (member-by-member order)."""
    return np.concatenate([values, *(values[households_j] for households_j in members[1:])])


@dataclass(frozen=True)
class _Layout:
    """The arrays of side ``m`` of a population: padded household sizes, pool sizes (in
    households), tests per replication, and the uniforms deciding each pool's result."""

    side: int
    sizes: np.ndarray  # (R, A, m, m) int8, 0 for padding
    row_n: np.ndarray  # (R, A, m)
    col_n: np.ndarray
    tests: np.ndarray  # (R,)
    row_u: np.ndarray  # (R, A, m) float32
    col_u: np.ndarray
    dilution_scale: tuple[np.ndarray, np.ndarray]  # log(0.05) / n^0.076 of rows, columns

    @classmethod
    def build(cls, population: _Population, side: int) -> _Layout:
        sizes = _pad(population.sizes, side)
        present = sizes > 0
        row_n = present.sum(axis=-1, dtype=np.int16)
        col_n = present.sum(axis=-2, dtype=np.int16)
        tests = (row_n > 0).sum(axis=(1, 2)) + (col_n > 0).sum(axis=(1, 2))
        u = _child(population.seed, _Streams.POOLS, side).random(
            (population.replications, 2, *row_n.shape[1:]), dtype=np.float32
        )

        def scale(n: np.ndarray) -> np.ndarray:
            return _LOG_DILUTION / np.maximum(n, 1) ** DILUTION_EXPONENT

        return cls(
            side,
            sizes,
            row_n,
            col_n,
            tests,
            u[:, 0],
            u[:, 1],
            (scale(row_n), scale(col_n)),
        )

    def positive(self, k: np.ndarray, n: np.ndarray, u: np.ndarray, scale: np.ndarray):
        """Pool results: ``k`` detectable infections among ``n`` households."""
        p = np.full(k.shape, POOL_FPR)
        hit = k > 0
        p[hit] = -np.expm1(k[hit] * scale[hit])
        return (u < p) & (n > 0)

    def quarantine(self, i_h: np.ndarray, k_h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per replication, infected people missed and non-infected people quarantined."""
        m = self.side
        i_pad, k_pad = _pad(i_h, m), _pad(k_h, m)
        rows = self.positive(k_pad.sum(axis=-1), self.row_n, self.row_u, self.dilution_scale[0])
        cols = self.positive(k_pad.sum(axis=-2), self.col_n, self.col_u, self.dilution_scale[1])
        quarantined = rows[..., :, None] & cols[..., None, :]
        caught = np.where(quarantined, i_pad, 0).sum(axis=(1, 2, 3), dtype=np.int64)
        people_q = np.where(quarantined, self.sizes, 0).sum(axis=(1, 2, 3), dtype=np.int64)
        infected = i_h.sum(axis=1, dtype=np.int64)
        return infected - caught, people_q - caught


def _pad(values: np.ndarray, side: int) -> np.ndarray:
    """``(R, N)`` household values as ``(R, A, m, m)`` arrays filled row by row, zeros after
    the last household."""
    reps, n = values.shape
    per_array = side * side
    arrays = -(-n // per_array)
    out = np.zeros((reps, arrays * per_array), dtype=values.dtype)
    out[:, :n] = values
    return out.reshape(reps, arrays, side, side)


@functools.lru_cache(maxsize=4)
def _population(households: int, replications: int, entropy: int, key: tuple[int, ...]):
    seed = np.random.SeedSequence(entropy, spawn_key=key)
    return _Population.draw(households, replications, seed)


def _seed_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or a SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def pooled_test_counts(
    prevalence: np.ndarray | float,
    group_size: np.ndarray | int,
    households: int = HOUSEHOLDS,
    replications: int = REPLICATIONS,
    seed: int | np.random.SeedSequence = 0,
) -> TestCounts:
    """The per-replication counts of the pooled-testing Monte Carlo (module docstring).

    ``prevalence`` and ``group_size`` broadcast together; every entry uses the same
    population draws (common random numbers). Each count has shape
    ``(*broadcast shape, replications)``.
    """
    households = count("households", households)
    replications = count("replications", replications)
    p, g = np.broadcast_arrays(check_prevalence(prevalence), check_group_size(group_size))
    sides = array_side(g)
    seq = _seed_sequence(seed)
    population = _population(households, replications, seq.entropy, tuple(seq.spawn_key))
    unique_p, p_index = np.unique(p, return_inverse=True)
    unique_m, m_index = np.unique(sides, return_inverse=True)
    r = primary_case_probability(unique_p)
    layouts = {m: _Layout.build(population, int(m)) for m in unique_m if m > 0}
    counts = np.empty((6, len(unique_p), len(unique_m), replications), dtype=np.int64)
    people = population.people
    counts[4, :, :] = np.array([people if m == 0 else layouts[m].tests for m in unique_m])
    counts[5] = people
    for i, r_value in enumerate(r):
        infected, i_h, k_h = population.household_counts(float(r_value))
        n_infected = i_h.sum(axis=1, dtype=np.int64)
        counts[0, i] = n_infected
        counts[2, i] = people - n_infected
        for j, m in enumerate(unique_m):
            if m == 0:
                counts[1, i, j], counts[3, i, j] = population.individual(infected, i_h)
            else:
                counts[1, i, j], counts[3, i, j] = layouts[m].quarantine(i_h, k_h)
    selected = counts[:, p_index.reshape(p.shape), m_index.reshape(p.shape)]
    return TestCounts(*selected)


def test_properties(
    prevalence: np.ndarray | float,
    group_size: np.ndarray | int,
    households: int = HOUSEHOLDS,
    replications: int = REPLICATIONS,
    seed: int | np.random.SeedSequence = 0,
) -> TestProperties:
    """``(qfnr, qfpr, tests_per_person)`` of array testing at ``prevalence`` with pools of
    ``group_size`` people (BOFN's ``test_properties``; module docstring), each of the
    broadcast shape of the two arguments, ratios of sums over ``replications``.

    Deterministic for a given ``seed``; all entries share the same population draws.
    ``ValueError`` for a prevalence outside ``[0, 1]``, a group size below 1 or not an
    integer, non-finite values, or fewer than one household or replication.
    """
    return pooled_test_counts(prevalence, group_size, households, replications, seed).properties()


test_properties.__test__ = False  # a library function, not a pytest test


class TestPropertiesTable:
    """:func:`test_properties` on ``grid x (group sizes 1..max_group_size)``, linearly
    interpolated in the prevalence (module docstring).

    ``values`` is ``(len(grid), max_group_size, 3)`` (``qfnr``, ``qfpr``, tests per person,
    with the two end-point limits of the module docstring).
    """

    __test__ = False

    def __init__(self, grid: np.ndarray, values: np.ndarray) -> None:
        grid = np.asarray(grid, dtype=float)
        values = np.asarray(values, dtype=float)
        if grid.ndim != 1 or len(grid) < 2 or grid[0] != 0 or grid[-1] != 1:
            raise ValueError("the prevalence grid must start at 0 and end at 1")
        if np.any(np.diff(grid) <= 0):
            raise ValueError("the prevalence grid must be increasing")
        if values.ndim != 3 or values.shape[0] != len(grid) or values.shape[2] != 3:
            raise ValueError(f"values must have shape ({len(grid)}, G, 3), got {values.shape}")
        self.grid, self.values = grid, values
        self.max_group_size = values.shape[1]
        self._flat = values.reshape(-1, 3)

    @classmethod
    def build(
        cls,
        households: int = HOUSEHOLDS,
        replications: int = REPLICATIONS,
        seed: int = 0,
        grid: np.ndarray = PREVALENCE_GRID,
        max_group_size: int = MAX_GROUP_SIZE,
    ) -> TestPropertiesTable:
        """Simulate every grid point and group size (sharing one population draw)."""
        grid = check_prevalence(grid)
        groups = np.arange(1, count("max_group_size", max_group_size) + 1)
        raw = np.stack(
            test_properties(grid[:, None], groups[None, :], households, replications, seed),
            axis=-1,
        )
        raw[0, :, 0] = raw[1, :, 0]  # qfnr at prevalence 0: its limit
        raw[-1, :, 1] = raw[-2, :, 1]  # qfpr at prevalence 1: its limit
        return cls(grid, raw)

    def __call__(
        self, prevalence: np.ndarray | float, group_size: np.ndarray | int
    ) -> TestProperties:
        """Interpolated ``(qfnr, qfpr, tests_per_person)`` of the broadcast shape.

        Inputs are trusted to be valid (finite prevalences in ``[0, 1]``, integer group sizes
        in ``1..max_group_size``); :meth:`checked` validates first.
        """
        p, g = np.broadcast_arrays(np.asarray(prevalence, dtype=float), group_size)
        p_flat = p.ravel()
        i = np.searchsorted(self.grid, p_flat, side="right") - 1
        np.clip(i, 0, len(self.grid) - 2, out=i)
        low = self.grid[i]
        w = ((p_flat - low) / (self.grid[i + 1] - low))[:, None]
        base = i * self.max_group_size + (g.ravel().astype(np.int64) - 1)
        a = self._flat[base]
        b = self._flat[base + self.max_group_size]
        out = a + w * (b - a)
        return TestProperties(*(out[:, j].reshape(p.shape) for j in range(3)))

    def checked(
        self, prevalence: np.ndarray | float, group_size: np.ndarray | int
    ) -> TestProperties:
        """:meth:`__call__` after validating the inputs (``ValueError``)."""
        p = check_prevalence(prevalence)
        g = check_group_size(group_size)
        if np.any(g > self.max_group_size):
            raise ValueError(f"the table covers group sizes 1..{self.max_group_size}")
        return self(p, g)

    # -- caching --------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        np.savez(Path(path), grid=self.grid, values=self.values)

    @classmethod
    def load(cls, path: str | Path) -> TestPropertiesTable:
        with np.load(Path(path)) as data:
            return cls(data["grid"], data["values"])


#: Bump when the model or the random-number layout changes (invalidates disk caches).
TABLE_VERSION = 1


@functools.lru_cache(maxsize=8)
def _cached_table(
    households: int, replications: int, seed: int, grid: tuple[float, ...], max_group_size: int
) -> TestPropertiesTable:
    return TestPropertiesTable.build(households, replications, seed, np.array(grid), max_group_size)


def test_properties_table(
    households: int = HOUSEHOLDS,
    replications: int = REPLICATIONS,
    seed: int = 0,
    grid: np.ndarray = PREVALENCE_GRID,
    max_group_size: int = MAX_GROUP_SIZE,
    cache_dir: str | Path | None = None,
) -> TestPropertiesTable:
    """The table of these settings, built once per process (kept in memory) and, with
    ``cache_dir``, stored there as ``pooled-testing-<hash>.npz`` and read back by later
    processes (the hash covers the settings and :data:`TABLE_VERSION`)."""
    households = count("households", households)
    replications = count("replications", replications)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"the table's seed must be a non-negative integer, got {seed!r}")
    grid = tuple(float(p) for p in np.asarray(grid, dtype=float).ravel())
    key = (households, replications, int(seed), grid, int(max_group_size))
    if cache_dir is None:
        return _cached_table(*key)
    digest = hashlib.sha256(json.dumps([TABLE_VERSION, *key]).encode()).hexdigest()[:16]
    path = Path(cache_dir) / f"pooled-testing-{digest}.npz"
    if path.exists():
        return TestPropertiesTable.load(path)
    table = _cached_table(*key)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp.npz")
    table.save(partial)
    partial.replace(path)
    return table


test_properties_table.__test__ = False
