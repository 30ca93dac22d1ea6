"""The synthetic causal-BO problems of the EXCBO paper: Dropwave, Alpine2 and Rosenbrock
(EXCBO App. C.1/C.3, Sec. 7.2, App. C.2), each with its exact expected reward and optimum.

The noise is the two-component Gaussian mixture of paper eq. 11 (``noise="mixture"``) or
``N(0, sigma^2)`` (``"gaussian"``, the paper's Figs 12-14), with ``sigma`` a standard
deviation and the mixture's other parameters as in (decisions: excbo 1), on every node; any
:data:`~causalbandits.scm.noise.NoiseModel` of the right size may be passed instead.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize_scalar

from causalbandits.envs.causal_bo import FunctionNetworkBandit
from causalbandits.graphs.dag import CausalDAG
from causalbandits.scm.function_network import FunctionNetwork, Mechanism
from causalbandits.scm.noise import GaussianNoise, MixtureNoise, NoiseModel
from causalbandits.validation import count, positive
from causalbandits.validation import horizon as check_horizon

#: BO rounds after the initial design (50, BOFN's default; decisions: excbo 17).
BO_ROUNDS = 50
#: Dropwave's constants ``c_1``, ``c_2`` (App. C.3).
DROPWAVE_C1, DROPWAVE_C2 = 10.24, 5.12


def default_horizon(n_actions: int, rounds: int = BO_ROUNDS) -> int:
    """``rounds`` plus MCBO's initial design ``2(|A| + 1)`` (Sec. 7.1; decisions: excbo 9,
    17)."""
    return int(rounds) + 2 * (int(n_actions) + 1)


def problem_horizon(horizon: int | None, n_actions: int) -> int:
    """``horizon`` checked (an integer ``>= 1``), or :func:`default_horizon` when ``None``."""
    return default_horizon(n_actions) if horizon is None else check_horizon(horizon)


def make_noise(noise: str | NoiseModel, n_nodes: int, sigma: float) -> NoiseModel:
    """``"mixture"`` (paper eq. 11; decisions: excbo 1), ``"gaussian"``
    (``N(0, sigma^2)``) or a noise model for ``n_nodes`` nodes, returned as is."""
    positive("sigma", sigma)
    if noise == "mixture":
        return MixtureNoise.eq11(n_nodes, sigma)
    if noise == "gaussian":
        return GaussianNoise.iid(n_nodes, 0.0, sigma)
    if isinstance(noise, str):
        raise ValueError(f"noise must be 'mixture', 'gaussian' or a noise model, got {noise!r}")
    if noise.n_nodes != n_nodes:
        raise ValueError(f"the problem has {n_nodes} nodes, the noise model {noise.n_nodes}")
    return noise


def maximise_1d(
    f: Callable[[np.ndarray], np.ndarray], low: float, high: float, points: int = 4097
) -> tuple[float, float]:
    """``(argmax, max)`` of a vectorised ``f`` on ``[low, high]``: the best of a grid,
    refined by bounded Brent search between its grid neighbours (kept only if better)."""
    grid = np.linspace(low, high, points)
    values = f(grid)
    k = int(np.argmax(values))
    bounds = (grid[max(k - 1, 0)], grid[min(k + 1, points - 1)])
    refined = minimize_scalar(
        lambda x: -float(f(np.asarray(x))),
        bounds=bounds,
        method="bounded",
        options={"xatol": 1e-12},
    )
    if -refined.fun > values[k]:
        return float(refined.x), float(-refined.fun)
    return float(grid[k]), float(values[k])


def _zero_mean(noise: NoiseModel, problem: str) -> None:
    """The closed forms of Alpine2 and Rosenbrock (decisions: excbo 3) need zero-mean noise."""
    if np.any(np.abs(noise.mean) > 1e-12 * np.maximum(1.0, np.sqrt(noise.variance))):
        raise ValueError(f"{problem}'s exact expected reward needs zero-mean noise")


def _chain(n_nodes: int) -> CausalDAG:
    names = [f"X{i}" for i in range(n_nodes - 1)] + ["Y"]
    adjacency = np.eye(n_nodes, k=1, dtype=bool)
    return CausalDAG(adjacency, names)


def dropwave_radius(a: np.ndarray) -> np.ndarray:
    """``r(a) = sqrt(sum_j (c_1 a_j - c_2)^2)``, Dropwave's ``X`` without noise."""
    return np.sqrt(((DROPWAVE_C1 * a - DROPWAVE_C2) ** 2).sum(axis=-1))


def dropwave_response(x: np.ndarray) -> np.ndarray:
    """``phi(x) = (1 + cos 12 x) / (2 + x^2 / 2)``, Dropwave's ``Y`` without noise."""
    return (1.0 + np.cos(12.0 * x)) / (2.0 + 0.5 * x**2)


def dropwave(
    sigma: float = 0.05,
    noise: str | NoiseModel = "mixture",
    propagate_noise: bool = True,
    horizon: int | None = None,
    quadrature_order: int = 64,
) -> FunctionNetworkBandit:
    """Dropwave (paper App. C.1/C.3; decisions: excbo 2): ``a_0, a_1 -> X -> Y`` with
    ``X = r(a) + eps_X`` and ``Y = phi(X) + eps_Y`` (:func:`dropwave_radius`,
    :func:`dropwave_response`).

    ``propagate_noise=True`` (the paper) feeds the noisy ``X`` to ``Y``, so
    ``E[Y | a] = E phi(r(a) + eps_X) + E eps_Y``, computed by a Gauss-Hermite rule per
    mixture component (``quadrature_order`` nodes each); ``False`` (MCBO's code) gives
    ``phi(r(a)) + E eps_Y`` exactly. ``E[Y | a]`` depends on ``a`` through ``r`` only, so the
    optimum maximises ``r -> E phi(r + eps_X)`` over ``[0, c_2 sqrt 2]`` by a 1-D search and
    the optimal action is the point on the diagonal ``a_0 = a_1 >= 1/2`` with that radius.
    """
    horizon = problem_horizon(horizon, 2)
    noise_model = make_noise(noise, 2, sigma)
    if not isinstance(noise_model, GaussianNoise | MixtureNoise):
        raise ValueError("Dropwave's quadrature needs Gaussian or mixture noise")
    nodes, weights = noise_model.quadrature(count("quadrature_order", quadrature_order))
    y_mean = float(noise_model.mean[1])

    def expected_given_radius(r: np.ndarray) -> np.ndarray:
        if not propagate_noise:
            return dropwave_response(r) + y_mean
        return dropwave_response(r[..., None] + nodes[0]) @ weights[0] + y_mean

    mechanisms: list[Mechanism] = [
        lambda z, a, u: dropwave_radius(a) + u,
        lambda z, a, u: dropwave_response(z[..., 0]) + u,
    ]
    network = FunctionNetwork(CausalDAG(np.eye(2, k=1), ["X", "Y"]), mechanisms, [[0, 1], []], 2)
    radius, _ = maximise_1d(expected_given_radius, 0.0, DROPWAVE_C2 * np.sqrt(2.0))
    optimal = np.full(2, 0.5 + radius / (DROPWAVE_C1 * np.sqrt(2.0)))
    return FunctionNetworkBandit(
        network,
        noise_model,
        horizon,
        lambda a: expected_given_radius(dropwave_radius(a)),
        optimal,
        noise_std=sigma,
        propagate_noise=propagate_noise,
    )


def noiseless_chain_bandit(
    network: FunctionNetwork,
    noise: NoiseModel,
    horizon: int | None,
    optimal_action: np.ndarray,
    sigma: float,
) -> FunctionNetworkBandit:
    """The bandit of a chain whose nodes are linear in their parent with additive zero-mean
    noise (Alpine2, Rosenbrock): ``E[y | a]`` is the noiseless network's last node."""
    zero = np.zeros(network.n_nodes)
    return FunctionNetworkBandit(
        network,
        noise,
        problem_horizon(horizon, network.n_actions),
        lambda a: network.evaluate(a, zero)[..., -1],
        optimal_action,
        noise_std=sigma,
    )


def alpine2_factor(x: np.ndarray) -> np.ndarray:
    """``h(x) = sqrt(x) sin(x)`` on ``[0, 10]``, Alpine2's per-node factor."""
    return np.sqrt(x) * np.sin(x)


def alpine2(
    sigma: float = 0.1, noise: str | NoiseModel = "mixture", horizon: int | None = None
) -> FunctionNetworkBandit:
    """Alpine2 (Sec. 7.2; the MCBO package's sign convention, decisions: excbo 3): the chain
    ``X_0 -> ... -> X_5 = Y`` with ``X_0 = -h(10 a_0) + U_0`` and
    ``X_i = h(10 a_i) X_{i-1} + U_i`` (:func:`alpine2_factor`).

    Every node is linear in its parent with independent zero-mean noise, so
    ``E[Y | a] = -h(10 a_0) prod_{i>=1} h(10 a_i)``, the noiseless function. With
    ``h_min < 0 < h_max`` the extremes of ``h`` and ``|h_min| < h_max``, a positive product
    has an even number of negative factors among ``-h_0, h_1..h_5``, and its largest value is
    ``|h_min| h_max^5`` (one factor ``|h_min|``, five ``h_max``), attained at
    ``a_0 = argmin h / 10`` and ``a_{1..5} = argmax h / 10`` (about 381.15 at 0.4816 and
    0.7917); the 1-D extremes are found numerically (:func:`maximise_1d`).
    """
    noise_model = make_noise(noise, 6, sigma)
    _zero_mean(noise_model, "Alpine2")
    mechanisms: list[Mechanism] = [lambda z, a, u: -alpine2_factor(10.0 * a[..., 0]) + u]
    mechanisms += [lambda z, a, u: alpine2_factor(10.0 * a[..., 0]) * z[..., 0] + u] * 5
    network = FunctionNetwork(_chain(6), mechanisms, [[i] for i in range(6)], 6)
    x_max, _ = maximise_1d(alpine2_factor, 0.0, 10.0)
    x_min, _ = maximise_1d(lambda x: -alpine2_factor(x), 0.0, 10.0)
    optimal = np.array([x_min / 10.0] + [x_max / 10.0] * 5)
    return noiseless_chain_bandit(network, noise_model, horizon, optimal, sigma)


def rosenbrock_term(x: np.ndarray, x_next: np.ndarray) -> np.ndarray:
    """``-100 (x_next - x^2)^2 - (1 - x)^2``, one Rosenbrock summand (negated)."""
    return -100.0 * (x_next - x**2) ** 2 - (1.0 - x) ** 2


def rosenbrock(
    sigma: float = 0.1, noise: str | NoiseModel = "mixture", horizon: int | None = None
) -> FunctionNetworkBandit:
    """Rosenbrock (App. C.2; the MCBO package's definition, decisions: excbo 3): 5 actions,
    ``x_j = 4 (a_j - 1/2)``, the chain ``X_0 -> X_1 -> X_2 -> Y`` with
    ``X_i = t(x_i, x_{i+1}) + X_{i-1} + U_i`` (:func:`rosenbrock_term`; no parent for
    ``X_0``); node ``i`` uses actions ``{i, i+1}``.

    ``E[Y | a] = sum_i t(x_i, x_{i+1})``, the noiseless function (linear chain, zero-mean
    noise). Every summand is ``<= 0`` with equality iff ``x_i = x_{i+1} = 1``: the optimum is
    0 at ``a_j = 3/4``.
    """
    noise_model = make_noise(noise, 4, sigma)
    _zero_mean(noise_model, "Rosenbrock")

    def term(a: np.ndarray) -> np.ndarray:
        x = 4.0 * (a - 0.5)
        return rosenbrock_term(x[..., 0], x[..., 1])

    mechanisms: list[Mechanism] = [lambda z, a, u: term(a) + u]
    mechanisms += [lambda z, a, u: term(a) + z[..., 0] + u] * 3
    network = FunctionNetwork(_chain(4), mechanisms, [[i, i + 1] for i in range(4)], 5)
    return noiseless_chain_bandit(network, noise_model, horizon, np.full(5, 0.75), sigma)
