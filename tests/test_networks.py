"""A user's own network as a bandit, the mixed-sign generator and the bound m on ||X||."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from causalbandits.envs.actions import ActionSet
from causalbandits.envs.mixed_sign import mixed_sign_bandit, random_mixed_sign_network
from causalbandits.envs.networks import gaussian_noise, network_bandit
from causalbandits.graphs.dag import CausalDAG
from causalbandits.scm.linear import LinearSEM
from causalbandits.scm.noise import GaussianNoise, UniformNoise


def chain() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_edge("smoking", "tar", weight=0.5, intervention_weight=-1.0)
    graph.add_edge("tar", "cancer", weight=2.0)
    graph.add_edge("cancer", "cough", weight=1.0)
    return graph


NOISE_MEAN = {"smoking": 1.0, "tar": 0.5, "cancer": -1.0, "cough": 0.0}
NOISE_VARIANCE = {"smoking": 4.0, "tar": 1.0, "cancer": 0.25, "cough": 1.0}
OPTIONS = dict(reward="cancer", intervenable=["tar"], horizon=10, noise_mean=NOISE_MEAN)


def test_a_weighted_digraph_becomes_a_soft_intervention_bandit():
    env = network_bandit(chain(), **OPTIONS, noise_variance=NOISE_VARIANCE)
    assert env.problem.dag.names == ["smoking", "tar", "cancer", "cough"]
    assert env.actions.labels == ["{}", "{tar}"]
    # E[cancer] = -1 + 2 E[tar], E[tar] = 0.5 + w * 1 with w = 0.5 (observed), -1 (intervened)
    np.testing.assert_allclose(env.expected_rewards, [-1 + 2 * 1.0, -1 + 2 * -0.5])
    np.testing.assert_allclose(env.sem.noise.scale, [2.0, 1.0, 0.5, 1.0])  # sqrt(variance)
    std = {v: np.sqrt(x) for v, x in NOISE_VARIANCE.items()}
    std = network_bandit(chain(), **OPTIONS, noise_std=std)
    np.testing.assert_allclose(std.sem.noise.scale, env.sem.noise.scale)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reward": "lung"}, "not in the graph"),
        ({"intervenable": ["cough"]}, "no intervenable node is the reward node"),
        ({"intervenable": ["cancer"]}, "has no 'intervention_weight'"),
        ({"intervenable": []}, "at least one node"),
        ({"noise_std": {v: 1.0 for v in NOISE_MEAN}}, "exactly one of std= or variance="),
        ({"noise_variance": None}, "exactly one of std= or variance="),
        ({"noise_mean": {"smoking": 1.0}}, "noise_mean is missing"),
        ({"noise_variance": {**NOISE_VARIANCE, "tar": 0.0}}, "finite and positive"),
    ],
)
def test_bad_networks_are_refused_with_a_reason(change, message):
    options = {**OPTIONS, "noise_variance": NOISE_VARIANCE}
    with pytest.raises(ValueError, match=message):
        network_bandit(chain(), **{**options, **change})
    cyclic = chain()
    cyclic.add_edge("cough", "smoking", weight=1.0)
    with pytest.raises(ValueError, match="cycle"):
        network_bandit(cyclic, **options)
    with pytest.raises(ValueError, match="exactly one"):
        gaussian_noise(np.zeros(2))


def test_the_mixed_sign_networks_have_the_promised_shape():
    shares = []
    for instance in range(6):
        graph, noise, intervenable, reward = random_mixed_sign_network(
            50, np.random.default_rng(instance)
        )
        assert graph.out_degree(reward) == 0 and len(graph) == 50
        assert set(intervenable) <= nx.ancestors(graph, reward) and len(intervenable) == 5
        weights = [w for *_, w in graph.edges(data="weight")]
        shares.append(np.mean(np.array(weights) < 0))
        assert all(abs(noise[v]["mean"]) <= 2 and 0.5 <= noise[v]["std"] <= 1.5 for v in graph)
    assert 0.25 <= np.mean(shares) <= 0.42
    env = mixed_sign_bandit(100, instance=3)
    again = mixed_sign_bandit(100, instance=3)
    assert env.n_actions == 32
    np.testing.assert_array_equal(env.expected_rewards, again.expected_rewards)


def test_the_norm_bound_covers_every_box_vertex_and_beats_the_operator_bound():
    rng = np.random.default_rng(0)
    adjacency = np.triu(rng.random((6, 6)) < 0.6, k=1)
    signs = np.where(rng.random((6, 6)) < 0.4, -1.0, 1.0)
    weights = adjacency * signs * rng.uniform(0.5, 1.5, (6, 6))
    star = adjacency * signs[::-1] * rng.uniform(0.5, 1.5, (6, 6))
    noise = UniformNoise(rng.uniform(-2, 0, 6), rng.uniform(0.5, 2, 6))
    sem = LinearSEM(CausalDAG(adjacency), weights, star, noise)
    masks = ActionSet.all_subsets(6).masks
    vertices = np.array(list(itertools.product(*zip(noise.low, noise.high, strict=True))))
    worst = np.linalg.norm(
        np.einsum("aij,vj->avi", sem.transfer_matrices(masks), vertices), axis=-1
    )
    bound = sem.x_norm_bound(masks)
    transfer = sem.transfer_matrices(masks)
    operator = np.linalg.norm(transfer, ord=2, axis=(-2, -1)).max() * np.linalg.norm(
        np.maximum(np.abs(noise.low), np.abs(noise.high))
    )
    assert worst.max() <= bound + 1e-9 < operator


def test_the_gaussian_norm_bound_fails_less_often_than_its_probability():
    env = mixed_sign_bandit(100, instance=1)
    sem, masks = env.sem, env.actions.masks
    bound = sem.x_norm_bound(masks, failure_probability=0.01)
    rng = np.random.default_rng(0)
    transfer = sem.transfer_matrices(masks)
    x = np.einsum("aij,saj->sai", transfer, sem.noise.sample(rng, (600, masks.shape[0])))
    norms = np.linalg.norm(x, axis=-1)
    assert np.mean(norms > bound) <= 0.01
    assert bound <= 2.5 * norms.max()  # and not absurdly loose
    assert isinstance(sem.noise, GaussianNoise)
    with pytest.raises(ValueError, match="failure_probability"):
        sem.x_norm_bound(masks, failure_probability=0.0)
