"""Mixture noise (EXCBO eq. 11) and function networks with continuous actions (EXCBO eqs. 4-5
and 7; decisions: excbo 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from causalbandits.graphs import CausalDAG
from causalbandits.scm import FunctionNetwork, GaussianNoise, MixtureNoise

# ---------------------------------------------------------------- mixture noise (eq. 11)


def test_eq11_defaults_are_the_spec_resolution() -> None:
    """The defaults of eq. 11's parameters (decisions: excbo 1)."""
    sigma = 0.2
    noise = MixtureNoise.eq11(3, sigma)
    np.testing.assert_array_equal(noise.weights, np.full((3, 2), 0.5))
    np.testing.assert_allclose(noise.loc, np.tile([-0.4, 0.4], (3, 1)))
    np.testing.assert_allclose(noise.scale, np.full((3, 2), sigma))
    np.testing.assert_allclose(noise.mean, 0.0, atol=1e-15)
    # w (c sigma)^2 + w mu^2 summed: sigma^2 + 4 sigma^2.
    np.testing.assert_allclose(noise.variance, 5 * sigma**2)


@pytest.mark.parametrize(
    "noise",
    [
        MixtureNoise.eq11(2, 0.1),
        MixtureNoise.eq11(2, 0.3, weights=(0.2, 0.8), means=(-1.0, 0.5), scales=(0.5, 2.0)),
        MixtureNoise(
            np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]]),
            np.array([[-3.0, 0.0, 2.0], [1.0, 1.5, -1.0]]),
            np.array([[0.5, 1.0, 0.2], [0.1, 0.3, 2.0]]),
        ),
    ],
)
def test_mixture_mean_and_variance_match_samples(noise: MixtureNoise) -> None:
    n = 200_000
    draws = noise.sample(np.random.default_rng(1), (n,))
    assert draws.shape == (n, noise.n_nodes)
    mean_se = np.sqrt(noise.variance / n)
    assert np.all(np.abs(draws.mean(axis=0) - noise.mean) <= 4 * mean_se)
    centred = (draws - noise.mean) ** 2
    var_se = centred.std(axis=0, ddof=1) / np.sqrt(n)
    assert np.all(np.abs(centred.mean(axis=0) - noise.variance) <= 4 * var_se)


def test_mixture_picks_components_with_their_weights() -> None:
    noise = MixtureNoise.eq11(1, 0.01, weights=(0.3, 0.7), means=(-1.0, 1.0))
    draws = noise.sample(np.random.default_rng(2), (50_000,))
    share = (draws > 0).mean()
    assert abs(share - 0.7) <= 4 * math.sqrt(0.7 * 0.3 / 50_000)
    one_sided = MixtureNoise.eq11(1, 0.01, weights=(0.0, 1.0), means=(-1.0, 1.0))
    assert np.all(one_sided.sample(np.random.default_rng(3), (1000,)) > 0)


def test_mixture_samples_have_a_batch_shape_and_are_reproducible() -> None:
    noise = MixtureNoise.eq11(4, 0.1)
    a = noise.sample(np.random.default_rng(7), (3, 5))
    b = noise.sample(np.random.default_rng(7), (3, 5))
    assert a.shape == (3, 5, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, noise.sample(np.random.default_rng(8), (3, 5)))


def test_mixture_pdf_is_the_weighted_normal_density() -> None:
    noise = MixtureNoise.eq11(2, 0.3, weights=(0.2, 0.8), means=(-1.0, 0.5), scales=(0.5, 2.0))
    u = np.array([[0.3, -0.7]])

    def normal(x: float, m: float, s: float) -> float:
        return math.exp(-0.5 * ((x - m) / s) ** 2) / (s * math.sqrt(2 * math.pi))

    expected = [0.2 * normal(x, -1.0, 0.15) + 0.8 * normal(x, 0.5, 0.6) for x in u[0]]
    np.testing.assert_allclose(noise.pdf(u)[0], expected, rtol=1e-12)
    total, _ = quad(lambda x: noise.pdf(np.array([x, x]))[0], -10, 10, points=[-1.0, 0.5])
    assert total == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize(
    "noise", [MixtureNoise.eq11(2, 0.2, weights=(0.3, 0.7)), GaussianNoise.iid(2, 0.1, 0.4)]
)
def test_quadrature_integrates_moments_exactly(noise) -> None:
    nodes, weights = noise.quadrature(8)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-13)
    np.testing.assert_allclose((weights * nodes).sum(axis=1), noise.mean, atol=1e-13)
    second = (weights * (nodes - noise.mean[:, None]) ** 2).sum(axis=1)
    np.testing.assert_allclose(second, noise.variance, rtol=1e-12)


def test_mixture_box_covers_every_component() -> None:
    noise = MixtureNoise.eq11(1, 0.1)
    low, high = noise.box
    np.testing.assert_allclose([low[0], high[0]], [-0.6, 0.6])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sigma": -0.1}, "sigma"),
        ({"sigma": math.nan}, "sigma"),
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": 0.1, "weights": (0.5, 0.6)}, "sum to 1"),
        ({"sigma": 0.1, "weights": (1.2, -0.2)}, "non-negative"),
        ({"sigma": 0.1, "weights": (0.5, math.nan)}, "finite"),
        ({"sigma": 0.1, "weights": (1 / 3,) * 3}, "one of each"),
        ({"sigma": 0.1, "means": (0.0,)}, "one of each"),
        ({"sigma": 0.1, "scales": (1.0, 0.0)}, "positive"),
        ({"sigma": 0.1, "means": (0.0, math.inf)}, "finite"),
    ],
)
def test_bad_mixtures_are_rejected(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        MixtureNoise.eq11(2, **kwargs)


def test_mixture_weights_within_tolerance_are_accepted() -> None:
    MixtureNoise.eq11(1, 0.1, weights=(0.5, 0.5 + 1e-10))
    with pytest.raises(ValueError, match="shape"):
        MixtureNoise(np.array([0.5, 0.5]), np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="shape"):
        MixtureNoise(np.array([1.0]), np.zeros(2), np.ones(2))


# ------------------------------------------------------------------- function networks


def diamond() -> FunctionNetwork:
    """``0 -> 1, 0 -> 2, {1, 2} -> 3``; action 1 feeds nodes 0 and 2, node 1 has none."""
    dag = CausalDAG.from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)])
    mechanisms = [
        lambda z, a, u: a[..., 0] * a[..., 1] + u,
        lambda z, a, u: np.sin(3 * z[..., 0]) + u,
        lambda z, a, u: z[..., 0] ** 2 - a[..., 0] + u,
        lambda z, a, u: z[..., 0] * z[..., 1] + np.exp(a[..., 0]) + u,
    ]
    return FunctionNetwork(dag, mechanisms, [[0, 1], [], [1], [2]], 3)


def by_hand(a: np.ndarray, u: np.ndarray, propagate: bool = True) -> np.ndarray:
    """The diamond's composition written out."""
    x0c = a[0] * a[1]
    x0 = x0c + u[0]
    z0 = x0 if propagate else x0c
    x1c, x2c = np.sin(3 * x0c), x0c**2 - a[1]
    x1, x2 = np.sin(3 * z0) + u[1], z0**2 - a[1] + u[2]
    z1, z2 = (x1, x2) if propagate else (x1c, x2c)
    return np.array([x0, x1, x2, z1 * z2 + np.exp(a[2]) + u[3]])


def test_zero_noise_evaluation_is_the_composition(rng) -> None:
    net = diamond()
    assert net.parents == ((), (0,), (0,), (1, 2))
    assert net.n_nodes == 4 and net.n_actions == 3
    for a in rng.random((5, 3)):
        np.testing.assert_allclose(net.evaluate(a, np.zeros(4)), by_hand(a, np.zeros(4)))


@pytest.mark.parametrize("propagate", [True, False])
def test_noisy_evaluation_is_the_composition(rng, propagate: bool) -> None:
    net = diamond()
    for a, u in zip(rng.random((5, 3)), rng.normal(size=(5, 4)), strict=True):
        got = net.evaluate(a, u, propagate_noise=propagate)
        np.testing.assert_allclose(got, by_hand(a, u, propagate), rtol=1e-12)


def test_propagation_changes_descendants_only(rng) -> None:
    net = diamond()
    a, u = rng.random(3), rng.normal(size=4)
    on, off = net.evaluate(a, u), net.evaluate(a, u, propagate_noise=False)
    assert on[0] == off[0]
    assert np.all(on[1:] != off[1:])
    clean = net.evaluate(a, np.zeros(4))
    # Without propagation each node is its noiseless value plus its own noise here, because
    # every mechanism is additive in u.
    np.testing.assert_allclose(off, clean + u, rtol=1e-12)
    # Noise on the last node alone does not depend on propagation.
    last = np.array([0.0, 0.0, 0.0, 0.7])
    np.testing.assert_allclose(net.evaluate(a, last), net.evaluate(a, last, False))


@pytest.mark.parametrize("propagate", [True, False])
def test_evaluation_broadcasts_actions_against_noise(rng, propagate: bool) -> None:
    net = diamond()
    actions, noise = rng.random((6, 1, 3)), rng.normal(size=(7, 4))
    batch = net.evaluate(actions, noise, propagate)
    assert batch.shape == (6, 7, 4)
    for i in range(6):
        for s in range(7):
            expected = by_hand(actions[i, 0], noise[s], propagate)
            np.testing.assert_allclose(batch[i, s], expected, rtol=1e-12)


def test_actions_within_the_tolerance_are_clipped() -> None:
    net = diamond()
    a = net.check_actions(np.array([1 + 1e-13, -1e-13, 0.5]))
    np.testing.assert_array_equal(a, [1.0, 0.0, 0.5])


@pytest.mark.parametrize(
    ("actions", "match"),
    [
        (np.array([0.5, 1.01, 0.2]), r"\[0, 1\]"),
        (np.array([-0.1, 0.5, 0.2]), r"\[0, 1\]"),
        (np.array([0.5, 0.5]), "shape"),
        (np.array(0.5), "shape"),
        (np.array([0.5, math.nan, 0.2]), "finite"),
        (np.array([0.5, math.inf, 0.2]), "finite"),
    ],
)
def test_bad_actions_are_rejected(actions: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        diamond().evaluate(actions, np.zeros(4))


def test_bad_noise_is_rejected() -> None:
    with pytest.raises(ValueError, match="shape"):
        diamond().evaluate(np.full(3, 0.5), np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        diamond().evaluate(np.full(3, 0.5), np.array([0.0, math.nan, 0.0, 0.0]))


@pytest.mark.parametrize(
    ("active", "n_actions", "match"),
    [
        ([[0, 3], [], [1], [2]], 3, "active inputs of node 0"),
        ([[0, 1], [], [-1], [2]], 3, "active inputs of node 2"),
        ([[0, 0], [], [1], [2]], 3, "distinct"),
        ([[0, 1], [], [1]], 3, "one mechanism and one active-input list per node"),
        ([[0, 1], [], [1], [2]], 0, "n_actions"),
    ],
)
def test_active_inputs_must_match_the_graph(active, n_actions: int, match: str) -> None:
    net = diamond()
    with pytest.raises(ValueError, match=match):
        FunctionNetwork(net.dag, net.mechanisms, active, n_actions)


def test_one_mechanism_per_node_is_required() -> None:
    net = diamond()
    with pytest.raises(ValueError, match="4 nodes, got 3 mechanisms"):
        FunctionNetwork(net.dag, net.mechanisms[:3], net.active_inputs, 3)
