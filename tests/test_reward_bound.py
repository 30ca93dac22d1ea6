import numpy as np
import pytest

from causalbandits.envs import ActionSet
from causalbandits.estimators.reward_bound import reward_bounds, weight_error_spectra
from causalbandits.estimators.subgraph import SubgraphData
from causalbandits.graphs import CausalDAG
from causalbandits.scm import GaussianNoise, LinearSEM


def upper_triangular(rng, n, scale=1.0):
    return np.triu(rng.uniform(-scale, scale, (n, n)), 1)


def test_error_identity_eq_110_holds_for_every_arm(rng):
    # Delta mu_a = (I - B_hat_a)^{-T} Delta B_a^T mu_a, with mu_a from the library's SEM.
    n = 5
    weights, star = upper_triangular(rng, n), upper_triangular(rng, n)
    nu = rng.uniform(0.5, 1.5, n)
    sem = LinearSEM(
        CausalDAG(np.triu(np.ones((n, n)), 1)), weights, star, GaussianNoise(nu, np.ones(n))
    )
    masks = ActionSet.all_subsets(n).masks
    mu = sem.mean_values(masks)
    # Dense estimates (cyclic, but with small cycle gains).
    weights_hat = weights + 0.1 * rng.standard_normal((n, n))
    star_hat = star + 0.1 * rng.standard_normal((n, n))
    zeros = np.zeros((n, 2))
    result = reward_bounds(weights_hat, star_hat, nu, masks, zeros, zeros)
    assert result.valid.all()
    np.testing.assert_array_equal(result.rewards, result.means[:, -1])
    for a, mask in enumerate(masks):
        true_a = np.where(mask[None, :], star, weights)
        hat_a = np.where(mask[None, :], star_hat, weights_hat)
        predicted = np.linalg.inv(np.eye(n) - hat_a).T @ (hat_a - true_a).T @ mu[a]
        np.testing.assert_allclose(result.means[a] - mu[a], predicted, rtol=1e-9, atol=1e-9)


def test_exact_estimates_reproduce_the_sem_means(rng):
    n = 4
    weights, star = upper_triangular(rng, n, 2.0), upper_triangular(rng, n, 2.0)
    nu = np.ones(n)
    sem = LinearSEM(
        CausalDAG(np.triu(np.ones((n, n)), 1)), weights, star, GaussianNoise(nu, np.ones(n))
    )
    masks = ActionSet.all_subsets(n).masks
    result = reward_bounds(weights, star, nu, masks, np.zeros((n, 2)), np.zeros((n, 2)))
    np.testing.assert_allclose(result.means, sem.mean_values(masks), rtol=1e-12)
    np.testing.assert_array_equal(result.bounds, 0.0)
    second = reward_bounds(
        weights, star, nu, masks, np.zeros((n, 2)), np.zeros((n, 2)), reward_node=1
    )
    np.testing.assert_array_equal(second.rewards, result.means[:, 1])


def test_bound_by_hand_on_two_nodes():
    # B_hat: 0 -> 1 with weight w; B_hat*: empty. Arm (0, 0):
    # mu_hat = (nu0, nu1 + w nu0), c_hat = column 1 of (I - B_hat)^{-1} = (w, 1).
    w, nu, delta = 1.5, np.array([1.0, 2.0]), 0.1
    weights = np.array([[0.0, w], [0.0, 0.0]])
    spectra = np.array([[0.0, 0.0], [0.04, 0.0]])  # only (node 1, mode 0) has a parent
    n_parents = np.array([[0, 0], [1, 0]])
    masks = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=bool)
    per_node = reward_bounds(weights, np.zeros((2, 2)), nu, masks, spectra, n_parents, delta)
    paper = reward_bounds(
        weights, np.zeros((2, 2)), nu, masks, spectra, n_parents, delta, form="paper"
    )
    mu, c = np.array([1.0, 2.0 + w]), np.array([w, 1.0])
    log = np.log(4 / delta)
    expected = np.linalg.norm(c) * np.linalg.norm(mu) * np.sqrt(4 * log * np.sqrt(3) * 0.04)
    assert per_node.bounds[0] == pytest.approx(expected, rel=1e-12)
    assert per_node.bounds[2] == pytest.approx(expected, rel=1e-12)  # a_0 changes nothing
    expected_paper = 2 * 8**0.25 * np.linalg.norm(c) * np.linalg.norm(mu) * np.sqrt(log * 0.04)
    assert paper.bounds[0] == pytest.approx(expected_paper, rel=1e-12)
    np.testing.assert_allclose(per_node.rewards, [2 + w, 2, 2 + w, 2])
    np.testing.assert_array_equal(per_node.bounds[[1, 3]], 0.0)  # node 1 intervened: no error


def test_per_node_form_with_p_equal_n_is_the_paper_form(rng):
    n = 4
    masks = ActionSet.all_subsets(n).masks
    args = (upper_triangular(rng, n), upper_triangular(rng, n), np.ones(n), masks)
    spectra = rng.uniform(0.01, 0.1, (n, 2))
    full = np.full((n, 2), n)
    paper = reward_bounds(*args, spectra, full, form="paper")
    per_node = reward_bounds(*args, spectra, full)
    np.testing.assert_allclose(per_node.bounds, paper.bounds, rtol=1e-12)
    assert np.all(paper.bounds > 0)
    fewer = reward_bounds(*args, spectra, np.full((n, 2), 1))
    assert np.all(fewer.bounds < per_node.bounds)


def test_mixed_mode_cycles():
    # B_hat: 0 -> 1 (weight 2); B_hat*: 1 -> 0 (weight g). Arm (1, 0) mixes both: a cycle
    # with gain 2 g. Gain 1 makes I - B_hat_a singular: invalid. Gain 0.5 is a convergent
    # cycle: valid, solved exactly.
    weights = np.array([[0.0, 2.0], [0.0, 0.0]])
    masks = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=bool)
    nu, spectra, n_parents = np.ones(2), np.full((2, 2), 0.1), np.ones((2, 2), dtype=int)
    singular = reward_bounds(
        weights, np.array([[0.0, 0.0], [0.5, 0.0]]), nu, masks, spectra, n_parents
    )
    np.testing.assert_array_equal(singular.valid, [True, False, True, True])
    assert singular.rewards[1] == -np.inf and singular.bounds[1] == 0.0
    assert np.isnan(singular.means[1]).all()
    assert np.all(np.isfinite(singular.rewards[[0, 2, 3]]))
    assert np.all(singular.rewards + 10.0 * singular.bounds < np.inf)  # no NaN in a UCB
    star = np.array([[0.0, 0.0], [0.25, 0.0]])
    convergent = reward_bounds(weights, star, nu, masks, spectra, n_parents)
    assert convergent.valid.all()
    mixed = np.array([[0.0, 2.0], [0.25, 0.0]])
    np.testing.assert_allclose(convergent.means[1], np.linalg.solve(np.eye(2) - mixed.T, nu))


# --- Theorem 1 by Monte Carlo -------------------------------------------------------------

N_NODES = 4
WEIGHTS = np.zeros((N_NODES, N_NODES))
WEIGHTS[[0, 0, 1, 1, 2], [1, 2, 2, 3, 3]] = [1.2, -0.8, 1.5, 0.7, 1.1]
STAR = np.zeros((N_NODES, N_NODES))
STAR[[0, 0, 1, 2], [1, 2, 3, 3]] = [-0.5, 0.6, -1.3, 0.9]
SIGMA = np.array([1.0, 0.5, 1.5, 0.8])
NU = np.ones(N_NODES)
MASKS = ActionSet.all_subsets(N_NODES).masks


def true_rewards():
    mixed = np.where(MASKS[:, None, :], STAR, WEIGHTS)
    system = np.swapaxes(np.eye(N_NODES) - mixed, -1, -2)
    return np.linalg.solve(system, NU[:, None])[:, -1, 0]


def fitted_bounds(rng, per_pair, dropped=None, noise_variance=None):
    """Fit OLS on the true parents (minus ``dropped``) from random-arm rounds."""
    rounds = 2 * per_pair
    masks = rng.integers(0, 2, (rounds, N_NODES)).astype(bool)
    mixed = np.where(masks[:, None, :], STAR, WEIGHTS)
    eps = NU + SIGMA * rng.standard_normal((rounds, N_NODES))
    x = np.linalg.solve(np.eye(N_NODES) - np.swapaxes(mixed, -1, -2), eps[..., None])[..., 0]
    data = SubgraphData(N_NODES, NU)
    data.extend(x, masks)
    graphs = [WEIGHTS != 0, STAR != 0]
    if dropped is not None:
        graphs[0] = graphs[0].copy()
        graphs[0][dropped] = False
    estimates = [np.zeros((N_NODES, N_NODES)), np.zeros((N_NODES, N_NODES))]
    for mode, graph in enumerate(graphs):
        for node in range(N_NODES):
            parents = np.flatnonzero(graph[:, node])
            estimates[mode][parents, node] = data.ols(node, mode, parents)
    spectra, n_parents = weight_error_spectra(data, *graphs, noise_variance=noise_variance)
    return reward_bounds(*estimates, NU, MASKS, spectra, n_parents, delta=0.05)


def violation_rates(seed, per_pair, replicates, **kwargs):
    rng = np.random.default_rng(seed)
    truth = true_rewards()
    hits = np.zeros(len(MASKS))
    bounds = []
    for _ in range(replicates):
        result = fitted_bounds(rng, per_pair, **kwargs)
        hits += np.abs(result.rewards - truth) >= result.bounds
        bounds.append(result.bounds)
    return hits / replicates, np.array(bounds)


@pytest.mark.parametrize("noise_variance", [None, SIGMA**2])
def test_theorem_1_coverage_with_true_parents(noise_variance):
    # P(|mu_hat_N - mu_N| >= U) <= delta for every arm; the bound is conservative (§6.6):
    # no violation expected at all. 16 arms x 150 replicates.
    rates, _ = violation_rates(11, 60, 150, noise_variance=noise_variance)
    assert rates.max() <= 0.05


def test_a_missing_parent_breaks_the_coverage():
    # The check can fail: with the true edge 1 -> 2 dropped (an FN, §3.4 assumption
    # violated) the bias does not shrink with n, while U does (Prop. 3).
    rates, _ = violation_rates(12, 3000, 40, dropped=(1, 2))
    assert rates.max() > 0.5


def test_bound_shrinks_like_one_over_root_n():
    _, small = violation_rates(13, 100, 30)
    _, large = violation_rates(13, 400, 30)
    ratio = large.mean(axis=0) / small.mean(axis=0)
    np.testing.assert_allclose(ratio, 0.5, atol=0.1)


def test_spectra_match_the_direct_covariance(rng):
    data = SubgraphData(3, 1.0)
    x = 1.0 + rng.standard_normal((200, 3)) @ rng.normal(size=(3, 3))
    data.extend(x, rng.integers(0, 2, (200, 3)))
    graph = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], dtype=bool)
    spectra, n_parents = weight_error_spectra(data, graph, graph.T)
    np.testing.assert_array_equal(n_parents, [[0, 2], [1, 1], [2, 0]])
    assert spectra[0, 0] == 0.0 and spectra[2, 1] == 0.0
    samples, z = data.samples(2, 0)
    design = samples[:, :2]
    residual = z - design @ np.linalg.lstsq(design, z, rcond=None)[0]
    sigma2 = residual @ residual / (len(z) - 2)
    expected = sigma2 / np.linalg.eigvalsh(design.T @ design)[0]
    assert spectra[2, 0] == pytest.approx(expected, rel=1e-9)
    known, _ = weight_error_spectra(data, graph, graph.T, noise_variance=np.full(3, 4.0))
    assert known[2, 0] == pytest.approx(4.0 / np.linalg.eigvalsh(design.T @ design)[0])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"weights": np.zeros((3, 3))}, "weights must have shape"),
        ({"intervention_weights": np.full((2, 2), np.nan)}, "non-finite"),
        ({"noise_mean": np.ones((2, 1))}, "noise_mean"),
        ({"masks": np.zeros((4, 3), dtype=bool)}, "masks must have shape"),
        ({"spectra": np.zeros((2, 1))}, "spectra must have shape"),
        ({"spectra": -np.ones((2, 2))}, "non-negative"),
        ({"n_parents": np.zeros(2)}, "n_parents must have shape"),
        ({"delta": 1.0}, "delta"),
        ({"form": "tight"}, "form"),
        ({"reward_node": 2}, "reward_node"),
    ],
)
def test_bad_inputs_are_rejected(change, message):
    args = {
        "weights": np.zeros((2, 2)),
        "intervention_weights": np.zeros((2, 2)),
        "noise_mean": np.ones(2),
        "masks": np.zeros((4, 2), dtype=bool),
        "spectra": np.zeros((2, 2)),
        "n_parents": np.zeros((2, 2)),
    }
    args.update(change)
    with pytest.raises(ValueError, match=message):
        reward_bounds(**args)


def test_spectra_inputs_are_checked():
    data = SubgraphData(2, 0.0)
    with pytest.raises(ValueError, match="adjacency matrices must have shape"):
        weight_error_spectra(data, np.zeros((3, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="noise_variance must have shape"):
        weight_error_spectra(data, np.zeros((2, 2)), np.zeros((2, 2)), np.ones(3))
