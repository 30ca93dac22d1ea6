"""The COVID-19 pooled-testing problem (EXCBO Sec. 7.4, Figs 6-7; BOFN's simulator) as a
causal-BO bandit.

Each of three periods ``t = 0, 1, 2`` tests the whole population in pools of
``pool_size(x_t) = floor(199 x_t + 1)`` people (``x_t in [0, 1]``, so 1..200) by array
testing (:mod:`causalbandits.envs.pooled_testing`), quarantines the households found, and
lets the infection grow among the people left free. The network has 9 nodes
``(I_t, S_t, L_t)``, ``t = 0, 1, 2``, in that order: the infectious and susceptible shares
after the period and the period's loss, all on the x100 scale (node = ``100 * value + u``).
Period 0 nodes are roots (they start from ``I = 0.01, S = 0.99, R = 0``); period ``t`` nodes
have parents ``{I_{t-1}, S_{t-1}}``; every node of period ``t`` has the active input ``x_t``.

Per period (:func:`period_dynamics`; ``QFNR, QFPR, tests`` from the table at prevalence
``I``)::

    loss = 0.001 tests + 0.01 (QI + QS + QR) + new_inf
    QI, FI = I (1 - QFNR), I QFNR;  QS, FS = S QFPR, S (1 - QFPR);  QR, FR = R QFPR, R (1 - QFPR)
    new_inf = FI (2^(14 frac_sus / 3) - 1),  frac_sus = FS / (FS + FI + FR)
    I' = new_inf,  S' = S - new_inf,  R' = R + I

Choices where the paper and BOFN's description are silent:

- **Reward.** ``y = -(L_0 + L_1 + L_2)`` on the nodes (:class:`NegativeTotalLoss`): the loss
  nodes are already x100, so this is BOFN's ``-100 sum_t loss_t`` (plus the loss nodes'
  noise), not ``-100`` times the x100 nodes.
- **Noise.** The mixture of eq. 11 (or ``N(0, sigma^2)``) is added to every node on the x100
  scale. A mechanism reads its parents as ``I = clip(I_node / 100, 0, 1)``,
  ``S = clip(S_node / 100, 0, 1 - I)`` and ``R = 1 - I - S``, so noisy or overshooting values
  (see next item) give a valid state.
- **No cap on new infections.** The dynamics are BOFN's as described: nothing stops
  ``new_inf`` from exceeding ``S`` when few infections are caught (the growth factor over a
  14-day period with a 3-day doubling time is up to ``2^(14/3) = 25``), so the ``S`` node
  can be negative and the ``I`` node above 100; the next period reads them clipped as above,
  and the loss counts ``new_inf`` as computed.
- **Prevalence 0.** ``frac_sus`` is 0 when nobody is free (``FS + FI + FR = 0``).
- **Test properties.** :class:`~causalbandits.envs.pooled_testing.TestPropertiesTable`
  (interpolated in the prevalence; its error is in that module's docstring), built once per
  process at the requested fidelity.

``E[y | a]`` is a Monte Carlo estimate with common random numbers
(:class:`~causalbandits.envs.causal_bo.MonteCarloReward`). It depends on ``a`` only through
the array sides of the three pool sizes (``ceil(g / 2.4485)``, with ``g = 1`` individual
testing: 83 classes per period, :func:`pool_size_classes`), so it is piecewise constant, and
the optimal action is found over the ``83^3`` class triples (:func:`search_optimum`): the
noiseless network ranks all of them, the best 32 are estimated by Monte Carlo, and
coordinate ascent over the 83 classes of one period at a time continues from the best until
no single period's change improves the estimate. The optimal action plays the middle of each
chosen pool size's interval of ``x``. At the defaults (full fidelity, sigma = 0.2, 10 000
samples) the optimum is ``E[y] = -8.90 +- 0.01`` at pool sizes (1, 191, 177): individual
testing while the prevalence is 1%, then the largest arrays; the search takes about 3 s and
one ``E[y | a]`` about 6 ms.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from causalbandits.envs.bo_problems import make_noise, problem_horizon
from causalbandits.envs.causal_bo import FunctionNetworkBandit, MonteCarloReward, Objective
from causalbandits.envs.pooled_testing import (
    HOUSEHOLDS,
    MAX_GROUP_SIZE,
    REPLICATIONS,
    TestProperties,
    TestPropertiesTable,
    array_side,
    test_properties_table,
)
from causalbandits.graphs.dag import CausalDAG
from causalbandits.random import SubStream
from causalbandits.scm.function_network import FunctionNetwork, Mechanism
from causalbandits.scm.noise import NoiseModel
from causalbandits.validation import count

#: Initial infectious and susceptible shares (``R_0 = 0``).
INITIAL_INFECTED, INITIAL_SUSCEPTIBLE = 0.01, 0.99
#: Costs per test, per quarantined person and per new infection (shares of the population).
TEST_COST, QUARANTINE_COST, INFECTION_COST = 0.001, 0.01, 1.0
#: Doubling time of the infection and length of a period, in days.
DOUBLING_DAYS, PERIOD_DAYS = 3.0, 14.0
#: Periods, and the scale of the node values.
PERIODS, SCALE = 3, 100.0
NODE_NAMES = tuple(f"{v}{t}" for t in range(PERIODS) for v in "ISL")
#: Indices of ``L_0, L_1, L_2``.
LOSS_NODES = (2, 5, 8)


def pool_size(x: np.ndarray | float) -> np.ndarray:
    """``floor(199 x + 1)`` in ``1..200`` for actions ``x in [0, 1]`` (int64)."""
    g = np.floor((MAX_GROUP_SIZE - 1) * np.asarray(x, dtype=float) + 1.0)
    return np.clip(g, 1, MAX_GROUP_SIZE).astype(np.int64)


def pool_size_action(group_size: np.ndarray | int) -> np.ndarray:
    """The middle of the actions playing ``group_size`` (``x = 1`` for 200):
    ``pool_size(pool_size_action(g)) == g``."""
    g = np.asarray(group_size, dtype=float)
    return np.clip((g - 0.5) / (MAX_GROUP_SIZE - 1), 0.0, 1.0)


def pool_size_classes() -> np.ndarray:
    """The smallest pool size of each class of equal test properties (same array side;
    pool size 1 alone): ``1, 2, 3, 5, 8, ...``, 83 of them."""
    sides = array_side(np.arange(1, MAX_GROUP_SIZE + 1))
    _, first = np.unique(sides, return_index=True)
    return np.sort(first) + 1


class PeriodOutcome(NamedTuple):
    """State after a period and its loss (shares of the population)."""

    infected: np.ndarray
    susceptible: np.ndarray
    recovered: np.ndarray
    loss: np.ndarray


def period_dynamics(
    infected: np.ndarray,
    susceptible: np.ndarray,
    recovered: np.ndarray,
    properties: TestProperties,
) -> PeriodOutcome:
    """One period of testing, quarantine and growth (module docstring; BOFN's dynamics) with
    the pool size's test ``properties`` at the period's prevalence."""
    i, s, r = infected, susceptible, recovered
    qfnr, qfpr, tests_per_person = properties
    free_i, free_s, free_r = i * qfnr, s * (1.0 - qfpr), r * (1.0 - qfpr)
    quarantined = i * (1.0 - qfnr) + (s + r) * qfpr
    free = free_s + free_i + free_r
    frac_sus = np.divide(free_s, free, out=np.zeros(np.shape(free)), where=free > 0)
    growth = np.exp2(PERIOD_DAYS / DOUBLING_DAYS * frac_sus)
    new = free_i * (growth - 1.0)
    loss = TEST_COST * tests_per_person + QUARANTINE_COST * quarantined + INFECTION_COST * new
    return PeriodOutcome(new, s - new, r + i, loss)


def read_state(i_node: np.ndarray, s_node: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(I, S, R)`` from the x100 node values: ``I`` clipped to ``[0, 1]``, ``S`` to
    ``[0, 1 - I]``, ``R = 1 - I - S``."""
    i = np.clip(i_node / SCALE, 0.0, 1.0)
    s = np.clip(s_node / SCALE, 0.0, 1.0 - i)
    return i, s, 1.0 - i - s


@dataclass(frozen=True)
class NegativeTotalLoss(Objective):
    """``y = -sum_k x_k`` over the loss nodes (``L_0, L_1, L_2``: BOFN's ``-100 sum_t L_t``
    on the x100 nodes). Indexing and arithmetic only: numpy arrays and torch tensors."""

    loss_nodes: tuple[int, ...] = LOSS_NODES

    def nodes(self, n_nodes: int) -> tuple[int, ...]:
        if not self.loss_nodes or any(not -n_nodes <= k < n_nodes for k in self.loss_nodes):
            raise ValueError(f"loss nodes {self.loss_nodes} are not nodes of 0..{n_nodes - 1}")
        return tuple(sorted({k % n_nodes for k in self.loss_nodes}))

    def __call__(self, x: Any) -> Any:
        y = -x[..., self.loss_nodes[0]]
        for k in self.loss_nodes[1:]:
            y = y - x[..., k]
        return y


#: The :class:`PeriodOutcome` field of the nodes I, S, L of a period.
_OUTPUTS = (0, 1, 3)


def _mechanism(table: TestPropertiesTable, period: int, output: int) -> Mechanism:
    """Node ``output`` (0: I, 1: S, 2: L) of ``period``: the period's dynamics, x100, plus
    the node's noise."""

    def mechanism(parents: np.ndarray, actions: np.ndarray, noise: np.ndarray) -> np.ndarray:
        if period == 0:
            shape = noise.shape
            i = np.full(shape, INITIAL_INFECTED)
            s = np.full(shape, INITIAL_SUSCEPTIBLE)
            r = np.zeros(shape)
        else:
            i, s, r = read_state(parents[..., 0], parents[..., 1])
        properties = table(i, pool_size(actions[..., 0]))
        outcome = period_dynamics(i, s, r, properties)
        return SCALE * outcome[_OUTPUTS[output]] + noise

    return mechanism


def covid_network(table: TestPropertiesTable) -> FunctionNetwork:
    """The 9-node function network of the module docstring."""
    n = 3 * PERIODS
    edges = [
        (3 * (t - 1) + v, 3 * t + w) for t in range(1, PERIODS) for v in (0, 1) for w in range(3)
    ]
    dag = CausalDAG(CausalDAG.from_edges(n, edges).adjacency, list(NODE_NAMES))
    mechanisms = [_mechanism(table, t, v) for t in range(PERIODS) for v in range(3)]
    return FunctionNetwork(dag, mechanisms, [[t] for t in range(PERIODS) for _ in range(3)], 3)


def search_optimum(
    network: FunctionNetwork,
    objective: Objective,
    reward: MonteCarloReward,
    candidates: int = 32,
    max_sweeps: int = 10,
) -> np.ndarray:
    """The optimal action over the pool-size classes (module docstring): the best
    ``candidates`` of the noiseless network's ``83^3`` class triples, then coordinate ascent
    on ``reward``; returns the action ``(3,)``."""
    sizes = pool_size_classes()
    levels = pool_size_action(sizes)
    grid = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), axis=-1).reshape(-1, 3)
    zero = np.zeros(network.n_nodes)
    noiseless = np.concatenate(
        [objective(network.evaluate(block, zero)) for block in np.array_split(grid, 16)]
    )
    top = grid[np.argsort(noiseless)[-candidates:]]
    best = top[int(np.argmax(reward(top)))]
    value = float(reward(best))
    for _ in range(max_sweeps):
        improved = False
        for t in range(network.n_actions):
            trial = np.repeat(best[None], len(levels), axis=0)
            trial[:, t] = levels
            values = reward(trial)
            k = int(np.argmax(values))
            if values[k] > value:
                best, value, improved = trial[k], float(values[k]), True
        if not improved:
            break
    return best


def covid_pooled_testing(
    sigma: float = 0.2,
    noise: str | NoiseModel = "mixture",
    horizon: int | None = None,
    households: int = HOUSEHOLDS,
    replications: int = REPLICATIONS,
    mc_samples: int = 10_000,
    seed: int = 0,
    propagate_noise: bool = True,
    cache_dir: str | Path | None = None,
) -> FunctionNetworkBandit:
    """The COVID-19 pooled-testing bandit (Sec. 7.4; module docstring).

    ``sigma``, ``noise``: eq. 11's mixture (or ``"gaussian"``, or a noise model for 9 nodes)
    on the x100 scale (decisions: excbo 1); ``horizon``: ``50 + 2 (3 + 1) = 58`` by default;
    ``households``, ``replications``: the fidelity of the pooled-testing Monte Carlo
    (BOFN's 10 000 x 50; the unit tests use 1 000 x 10); ``mc_samples``: the common noise
    samples of ``E[y | a]``; ``seed``: the pooled-testing draws and (through a derived
    stream) the samples of ``E[y | a]``; ``cache_dir``: where to keep the test-properties
    table between processes (none by default).
    """
    horizon = problem_horizon(horizon, PERIODS)
    count("mc_samples", mc_samples, minimum=2)
    count("seed", seed, minimum=0)
    noise_model = make_noise(noise, 3 * PERIODS, sigma)
    table = test_properties_table(households, replications, seed, cache_dir=cache_dir)
    network = covid_network(table)
    objective = NegativeTotalLoss()
    samples_seed = np.random.SeedSequence(seed, spawn_key=(int(SubStream.MONTE_CARLO),))
    reward = MonteCarloReward(
        network, noise_model, objective, mc_samples, samples_seed, propagate_noise
    )
    optimal = search_optimum(network, objective, reward)
    return FunctionNetworkBandit(
        network,
        noise_model,
        horizon,
        reward,
        optimal,
        noise_std=sigma,
        objective=objective,
        propagate_noise=propagate_noise,
    )
