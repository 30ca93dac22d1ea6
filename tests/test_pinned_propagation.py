"""Propagation plans and plain/optimistic means on hand-checked cases: the action classes of
the Robust-LCB graph, an action set with more observational than interventional classes,
parent values of batched samples, and what ``beta`` and ``ellipsoid_inv`` switch on."""

from __future__ import annotations

import numpy as np

from causalbandits.envs import ActionSet
from causalbandits.envs.robust_lcb import make_environment
from causalbandits.estimators import PropagationPlan, propagate_means
from causalbandits.graphs import CausalDAG
from causalbandits.scm import GaussianNoise, LinearSEM

from .test_pinned_environment import W_STAR, W, hand_means
from .test_pinned_linsem import NU, small_environment


def true_columns(plan: PropagationPlan, dag: CausalDAG, weights: dict, star: dict) -> np.ndarray:
    theta = np.zeros((1, plan.nodes.size, 2, plan.width))
    for k, node in enumerate(plan.nodes):
        parents = dag.parents(node)
        theta[0, k, 0, : parents.size] = [weights[p, node] for p in parents]
        theta[0, k, 1, : parents.size] = [star[p, node] for p in parents]
    return theta


def test_robust_lcb_graph_has_2_2_2_16_action_classes():
    """The module docstring's count: each middle node depends on the action only through its
    own mode (2 classes), the reward node through all four non-root modes (16); the
    classes ignore the modes of roots and of nodes that are not ancestors."""
    env = make_environment(horizon=10, deviation_budget=0)
    plan = PropagationPlan.build(env.sem.dag, env.actions.masks)
    assert [modes.size for modes in plan.class_modes] == [2, 2, 2, 16]
    assert plan.observational_classes == (1, 1, 1, 8)
    for modes, split in zip(plan.class_modes, plan.observational_classes, strict=True):
        np.testing.assert_array_equal(modes[:split], 0)  # observational classes first
        np.testing.assert_array_equal(modes[split:], 1)
    # interventions on the root are no-ops and must not split classes
    every = ActionSet.all_subsets(13)
    plan = PropagationPlan.build(env.sem.dag, every.masks)
    assert [modes.size for modes in plan.class_modes] == [2, 2, 2, 16]


def test_more_observational_than_interventional_classes():
    """Chain 0 -> 1 -> 2 with the actions {}, {1}, {1, 2}: node 2 has two observational
    classes (node 1 observed or intervened) and one interventional class."""
    dag = CausalDAG.from_edges(3, [(0, 1), (1, 2)])
    masks = np.array([[0, 0, 0], [0, 1, 0], [0, 1, 1]], dtype=bool)
    plan = PropagationPlan.build(dag, masks)
    assert plan.observational_classes == (1, 2)
    weights, star = {(0, 1): 0.5, (1, 2): -2.0}, {(0, 1): 3.0, (1, 2): 0.25}
    nu = np.array([1.0, -1.0, 2.0])
    theta = true_columns(plan, dag, weights, star)
    # by hand: mu_1 = -1 + 0.5 = -0.5 (obs) or -1 + 3 = 2 (int); mu_2 = 2 + b_12 mu_1
    expected = [2 - 2.0 * -0.5, 2 - 2.0 * 2.0, 2 + 0.25 * 2.0]
    np.testing.assert_allclose(propagate_means(plan, nu, theta, 2)[0], expected, rtol=1e-12)
    w, w_star = np.zeros((3, 3)), np.zeros((3, 3))
    for (i, j), value in weights.items():
        w[i, j], w_star[i, j] = value, star[i, j]
    sem = LinearSEM(dag, w, w_star, GaussianNoise(nu, np.ones(3)))
    np.testing.assert_allclose(sem.mean_values(masks)[:, 2], expected, rtol=1e-12)


def test_parent_values_of_batched_samples_pad_with_zero():
    env = small_environment()
    plan = PropagationPlan.build(env.sem.dag, env.actions.masks)
    x = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4) + 1.0
    values = plan.parent_values(x)
    assert values.shape == (2, 3, plan.nodes.size, plan.width)
    for k, node in enumerate(plan.nodes):
        parents = env.sem.dag.parents(node)
        np.testing.assert_array_equal(values[..., k, : parents.size], x[..., parents])
        np.testing.assert_array_equal(values[..., k, parents.size :], 0.0)


def test_beta_zero_by_default_and_no_ellipsoid_mean_plain_means():
    """``beta`` defaults to 0 and the bonus needs both ``beta > 0`` and ellipsoids: either
    alone gives the plain means of the columns."""
    env = small_environment()
    plan = PropagationPlan.build(env.sem.dag, env.actions.masks)
    theta = true_columns(plan, env.sem.dag, W, W_STAR)
    plain = np.array([hand_means(mask)[2] for mask in env.actions.masks])
    ellipsoid_inv = np.broadcast_to(np.eye(plan.width), (1, plan.nodes.size, 2, 2, 2))
    np.testing.assert_allclose(propagate_means(plan, NU, theta, 2, ellipsoid_inv)[0], plain)
    np.testing.assert_allclose(propagate_means(plan, NU, theta, 2, None, beta=2.0)[0], plain)
    optimistic = propagate_means(plan, NU, theta, 2, ellipsoid_inv, beta=2.0)[0]
    assert np.all(optimistic > plain + 1.0)
