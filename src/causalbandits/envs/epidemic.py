"""Epidemic-model calibration (EXCBO Sec. 7.3, Figs 4-5; the setup of BOFN, Astudillo &
Frazier 2021): find the contact and resolution rates that reproduce an observed history.

Two groups ``i in {1, 2}`` and three periods; the infectious fraction evolves as

    I_{i,t+1} = I_{i,t} (1 - gamma) + (1 - I_{i,t}) sum_j beta_{i,j,t} I_{j,t}

from ``I_0 = (0.01, 0.01)``. The action is the 13-vector ``a in [0, 1]^13`` of the 12 contact
rates ``beta[t][i][j]`` (row-major: index ``4 t + 2 i + j``) and ``gamma`` (index 12). The six
nodes are the states after each period on the x100 scale (node ``2 t + i``); a node's parents
are the two nodes of the previous period and its actions the period's four ``beta`` and
``gamma``. Every node carries the noise (paper eq. 11 by default); a node reads its parents'
values divided by 100 and clipped to ``[0, 1]`` (an infectious fraction; decisions: excbo 20).
The reward is ``-sum_k (x_k - target_k)^2`` (BOFN's sum of squared errors; the paper's mean
differs by the factor 6) against the noiseless history of the ground-truth rates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize

from causalbandits.envs.bo_problems import make_noise, problem_horizon
from causalbandits.envs.causal_bo import (
    CausalBOProblem,
    FunctionNetworkBandit,
    MonteCarloReward,
    Objective,
    told_problem,
)
from causalbandits.graphs.dag import CausalDAG
from causalbandits.scm.function_network import FunctionNetwork, Mechanism
from causalbandits.scm.noise import NoiseModel
from causalbandits.validation import count

GROUPS, PERIODS = 2, 3
#: The ground-truth contact rates ``beta[t][i][j]`` and resolution rate (BOFN's).
TRUE_CONTACTS = np.array(
    [[[0.30, 0.05], [0.10, 0.7]], [[0.60, 0.05], [0.10, 0.8]], [[0.20, 0.05], [0.10, 0.2]]]
)
TRUE_RESOLUTION = 0.5
INITIAL_INFECTED = (0.01, 0.01)
#: Node values are infectious fractions times this.
SCALE = 100.0
N_ACTIONS = PERIODS * GROUPS * GROUPS + 1


def true_action() -> np.ndarray:
    """The ground-truth rates as an action: ``beta`` row-major, then ``gamma``, ``(13,)``."""
    return np.append(TRUE_CONTACTS.ravel(), TRUE_RESOLUTION)


def epidemic_step(infected: np.ndarray, contacts: np.ndarray, resolution: Any) -> np.ndarray:
    """One period of the dynamics: ``infected (..., 2)``, ``contacts (..., 2, 2)`` (rows:
    susceptible group ``i``, columns: infectious group ``j``), ``resolution (...)``."""
    infected = np.asarray(infected, dtype=float)
    force = np.einsum("...ij,...j->...i", contacts, infected)
    return infected * (1.0 - np.asarray(resolution)[..., None]) + (1.0 - infected) * force


def history(actions: np.ndarray, initial: Sequence[float] = INITIAL_INFECTED) -> np.ndarray:
    """The noiseless infectious fractions after each period, ``(..., 3, 2)``, of
    ``actions (..., 13)``."""
    a = np.asarray(actions, dtype=float)
    if a.shape[-1:] != (N_ACTIONS,):
        raise ValueError(f"actions must have shape (..., {N_ACTIONS}), got {a.shape}")
    contacts = a[..., :-1].reshape(*a.shape[:-1], PERIODS, GROUPS, GROUPS)
    state = np.broadcast_to(np.asarray(initial, dtype=float), (*a.shape[:-1], GROUPS))
    periods = []
    for t in range(PERIODS):
        state = epidemic_step(state, contacts[..., t, :, :], a[..., -1])
        periods.append(state)
    return np.stack(periods, axis=-2)


def target_history() -> np.ndarray:
    """The ground truth's history on the x100 scale, node order ``(6,)``: (0.8465, 1.2920),
    (0.99090, 1.74980), (0.77829, 1.31609) to the spec's digits."""
    return SCALE * history(true_action()).ravel()


@dataclass(frozen=True)
class SquaredErrorToTarget(Objective):
    """``y = -sum_k (x_k - target_k)^2`` over the six nodes (numpy or torch ``x``)."""

    target: tuple[float, ...]

    def nodes(self, n_nodes: int) -> tuple[int, ...]:
        if n_nodes != len(self.target):
            raise ValueError(f"a target of {len(self.target)} values for {n_nodes} nodes")
        return tuple(range(n_nodes))

    def __call__(self, x: Any) -> Any:
        return -sum((x[..., k] - value) ** 2 for k, value in enumerate(self.target))


def _mechanism(group: int, first_period: bool) -> Mechanism:
    """Node ``(t, group)``: actions ``(beta[t] row-major (4), gamma)``; parents the two
    nodes of period ``t - 1`` (x100 scale), none in the first period."""

    def mechanism(z: np.ndarray, a: np.ndarray, u: np.ndarray) -> np.ndarray:
        if first_period:
            previous = np.broadcast_to(np.asarray(INITIAL_INFECTED), (*a.shape[:-1], GROUPS))
        else:
            previous = np.clip(z / SCALE, 0.0, 1.0)
        contacts = a[..., 2 * group : 2 * group + 2]
        own = previous[..., group]
        force = (contacts * previous).sum(axis=-1)
        return SCALE * (own * (1.0 - a[..., 4]) + (1.0 - own) * force) + u

    return mechanism


def epidemic_network() -> FunctionNetwork:
    """The six-node function network (module docstring)."""
    n = PERIODS * GROUPS
    adjacency = np.zeros((n, n), dtype=bool)
    for t in range(1, PERIODS):
        adjacency[2 * (t - 1) : 2 * t, 2 * t : 2 * t + 2] = True
    names = [f"I{i + 1},{t + 1}" for t in range(PERIODS) for i in range(GROUPS)]
    mechanisms = [_mechanism(i, t == 0) for t in range(PERIODS) for i in range(GROUPS)]
    inputs = [[*range(4 * t, 4 * t + 4), N_ACTIONS - 1] for t in range(PERIODS) for _ in "ab"]
    return FunctionNetwork(CausalDAG(adjacency, names), mechanisms, inputs, N_ACTIONS)


def _check_target(target: Sequence[float] | None) -> tuple[float, ...]:
    values = target_history() if target is None else np.asarray(target, dtype=float)
    if values.shape != (PERIODS * GROUPS,):
        raise ValueError(
            f"the target history needs {PERIODS * GROUPS} values (2 groups x 3 periods, "
            f"x100 scale), got shape {values.shape}"
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("the target history must be finite")
    return tuple(float(v) for v in values)


def epidemic_calibration(
    sigma: float = 0.2,
    noise: str | NoiseModel = "mixture",
    propagate_noise: bool = True,
    horizon: int | None = None,
    target: Sequence[float] | None = None,
    mc_samples: int = 10_000,
    seed: int = 0,
) -> FunctionNetworkBandit:
    """The calibration problem at noise level ``sigma`` (module docstring).

    ``propagate_noise=False`` makes the noise an observation noise that the next period
    does not see; then the ground truth is the exact optimum (``E[y | a] = -sum Var(u) -
    ||E x - target||^2``). With the default process noise the clipping and the noise's
    propagation move the optimum slightly: it is the better of the ground truth and an
    L-BFGS-B search started there, both judged by the same Monte Carlo estimate of
    ``E[y | a]`` (``mc_samples`` common noise draws from ``seed``).
    """
    values = _check_target(target)
    horizon = problem_horizon(horizon, N_ACTIONS)
    count("mc_samples", mc_samples, minimum=2)
    count("seed", seed, minimum=0)
    noise_model = make_noise(noise, PERIODS * GROUPS, sigma)
    network = epidemic_network()
    objective = SquaredErrorToTarget(values)
    reward = MonteCarloReward(
        network, noise_model, objective, mc_samples, seed, propagate_noise=propagate_noise
    )
    key = (float(sigma), noise, bool(propagate_noise), values, int(mc_samples), int(seed))
    if not isinstance(noise, str):
        optimal = _search_optimum(reward, propagate_noise)
    elif (optimal := _OPTIMA.get(key)) is None:
        optimal = _OPTIMA[key] = _search_optimum(reward, propagate_noise)
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


def calibration_problem(
    sigma: float = 0.2, noise: str | NoiseModel = "mixture", target: Sequence[float] | None = None
) -> CausalBOProblem:
    """What a learner is told about the calibration problem (the network, the 13 rates'
    inputs, the objective, the noise level), without the environment's optimum search: the
    problem of a persistent study calibrating a real epidemic."""
    return told_problem(
        epidemic_network(),
        make_noise(noise, PERIODS * GROUPS, sigma),
        SquaredErrorToTarget(_check_target(target)),
        sigma,
    )


#: Optima found by :func:`_search_optimum`, per problem definition (the runner builds one
#: environment per replicate).
_OPTIMA: dict[tuple[Any, ...], np.ndarray] = {}


def _search_optimum(reward: MonteCarloReward, propagate: bool) -> np.ndarray:
    """The ground truth, or a better point of an L-BFGS-B search started there (only with
    process noise; observation noise leaves the ground truth optimal)."""
    start = true_action()
    if not propagate:
        return start
    result = minimize(
        lambda a: -float(reward(a)), start, method="L-BFGS-B", bounds=[(0.0, 1.0)] * N_ACTIONS
    )
    return result.x if -result.fun > float(reward(start)) else start
