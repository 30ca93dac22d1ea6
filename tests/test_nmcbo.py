"""NMCBO (MCBO's noisy variant): batched re-initialisations equal looped ones, the networks'
ranges, the per-element stopping rule against BoTorch's, training, determinism and the
ask/tell contract on Dropwave."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest
import torch
from botorch.optim.stopping import ExpMAStoppingCriterion
from scipy import stats

from causalbandits.envs.bo_problems import alpine2, dropwave
from causalbandits.envs.causal_bo import CausalBOProblem
from causalbandits.envs.epidemic import SquaredErrorToTarget
from causalbandits.estimators.gp_network import NodeSpec, node_inputs
from causalbandits.papers.excbo.comparison import METHODS, BOComparison
from causalbandits.policies import POLICIES
from causalbandits.policies.nmcbo import (
    LOW,
    NMCBO,
    ExpMAStopping,
    HallucinationNets,
    NMCBOOptions,
    NoisyHallucination,
    concat,
    take,
)

SMALL = {"reinits": 6, "max_steps": 40, "batch_size": 8, "selection_samples": 64}


def played(policy, env, rounds: int):
    """Drive ``policy`` for ``rounds`` rounds of ``env`` by ask/tell."""
    for _ in range(rounds):
        action = policy.suggest()
        policy.observe(action, env.step(action[None])[0])
    return policy


@pytest.fixture(scope="module")
def fitted() -> NMCBO:
    """NMCBO after a design of 10 random actions on Dropwave (sigma 0.05); its hallucination
    (the node GPs fitted to that data, deterministic) is fitted once for all the tests."""
    env = dropwave(sigma=0.05, horizon=10)
    env.reset(0)
    policy = NMCBO(env.problem, n_init=10, **SMALL)
    policy.reset(3)
    played(policy, env, 10)
    hallucination = policy.hallucination()
    policy.hallucination = lambda: hallucination
    return policy


def start(policy: NMCBO, count: int, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    params = policy.nets.initial(count, generator)
    steps, batch = policy.options.max_steps, policy.options.batch_size
    noise = policy.hallucination().noise(steps * batch, generator)
    return params, noise.reshape(steps, batch, policy.n_nodes)


@pytest.mark.parametrize("stopping", ["expma", "fixed"])
def test_batched_reinitialisations_equal_looped_ones(fitted: NMCBO, stopping: str) -> None:
    hallucination = fitted.hallucination()
    params, noise = start(fitted, 7)
    # max_points 40: chunks of 5 re-initialisations, so chunking is exercised as well
    batched, steps = hallucination.train(params, noise, 0.01, stopping, max_points=40)
    looped = [hallucination.train(take(params, [r]), noise, 0.01, stopping) for r in range(7)]
    for name, value in batched.items():
        alone = torch.cat([trained[name] for trained, _ in looped])
        torch.testing.assert_close(value, alone, rtol=0, atol=1e-10)
        assert not torch.equal(value, params[name])  # training moved every weight
    assert torch.equal(steps, torch.cat([s for _, s in looped]))
    if stopping == "expma":
        assert steps.min() >= 11 and len(steps.unique()) > 1  # stopped one by one
    else:
        assert torch.all(steps == fitted.options.max_steps)
    selection = hallucination.noise(50, torch.Generator().manual_seed(1))
    scores = hallucination.score(batched, selection, max_points=100)
    alone = torch.cat([hallucination.score(t, selection) for t, _ in looped])
    torch.testing.assert_close(scores, alone, rtol=0, atol=1e-10)


def test_stopping_rule_equals_botorch_per_element() -> None:
    generator = torch.Generator().manual_seed(0)
    rows, length = 8, 60
    trend = torch.linspace(-0.02, 0.02, rows).unsqueeze(-1) * torch.arange(length)
    noisy = 1.0 + trend + 0.01 * torch.randn(rows, length, generator=generator)
    # Smooth climbs at a level of 20 whose relative change falls through rel_tol at
    # different iterations: the stop then depends on the change's size, not only its sign.
    rates = torch.linspace(0.1, 0.4, rows).unsqueeze(-1)
    climbs = 20.0 * (2.0 - torch.exp(-rates * torch.arange(length)))
    series = torch.cat([noisy, climbs, -climbs]).to(torch.float64)
    rows = len(series)
    for minimize in (False, True):
        expected = []
        for row in series:
            criterion = ExpMAStoppingCriterion(maxiter=50, minimize=minimize)
            expected.append(next(k + 1 for k in range(length) if criterion(row[k : k + 1])))
        rule = ExpMAStopping(rows, maxiter=50, minimize=minimize)
        running, stopped = torch.arange(rows), torch.zeros(rows, dtype=torch.long)
        for k in range(length):
            done = rule(running, series[running, k])
            stopped[running[done]] = k + 1
            running = running[~done]
            if not len(running):
                break
        assert stopped.tolist() == expected
        assert len(set(expected)) > 2 and max(expected) <= 50


def test_eta_lies_in_the_unit_interval_and_is_one_at_the_target(fitted: NMCBO) -> None:
    assert fitted.nets.learned == (True, False)  # Dropwave's target Y keeps eta = +1
    params, noise = start(fitted, 5)
    wild = {name: 50.0 * value for name, value in params.items()}  # saturating weights
    inputs = torch.rand(5, 30, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    for weights in (params, wild):
        eta = fitted.nets.eta(weights, 0, 3.0 * inputs - 1.0)
        assert eta.shape == (5, 30) and eta.min() >= -1 and eta.max() <= 1
        assert torch.equal(fitted.nets.eta(weights, 1, inputs[..., :1]), torch.ones(5, 30))
        actions = fitted.nets.actions(weights)
        assert actions.shape == (5, 2) and actions.min() >= 0 and actions.max() <= 1
    assert fitted.nets.eta(params, 0, inputs).std() > 0  # eta depends on the input
    # the root is mu + beta eta(a) sigma + u at the action, the target node mu + beta sigma + u
    # at its (hallucinated) parent
    hallucination = fitted.hallucination()
    network, draws, beta = hallucination.network, noise[0], fitted.options.beta
    with torch.no_grad():
        values = hallucination.values(params, draws)
        actions = fitted.nets.actions(params).unsqueeze(1).expand(5, len(draws), 2)
        mean, std = network.marginals[0](actions)
        root = mean + beta * fitted.nets.eta(params, 0, actions) * std + draws[:, 0]
        w = node_inputs(network.specs[1], actions, values[..., :1], network.scalers[1])
        mean, std = network.marginals[1](w)
    torch.testing.assert_close(values[..., 0], root)
    torch.testing.assert_close(values[..., 1], mean + beta * std + draws[:, 1])


def test_a_composite_objective_learns_every_eta() -> None:
    problem = CausalBOProblem(
        parents=((), (0,)),
        active_inputs=((0,), ()),
        n_actions=1,
        objective=SquaredErrorToTarget((0.0, 0.0)),
        noise_std=0.1,
    )
    policy = NMCBO(problem)
    assert policy.nets.learned == (True, True)
    assert policy.nets.input_dims == (1, 1)


def test_training_increases_the_hallucinated_objective(fitted: NMCBO) -> None:
    hallucination = fitted.hallucination()
    params, noise = start(fitted, 16)
    trained, _ = hallucination.train(params, noise, lr=1e-3, stopping="fixed")
    selection = hallucination.noise(500, torch.Generator().manual_seed(5))
    before = hallucination.score(params, selection)
    after = hallucination.score(trained, selection)
    assert float((after - before).mean()) > 0
    assert int((after > before).sum()) >= 12


def test_proposals_are_valid_deterministic_and_warm_started() -> None:
    actions = []
    for seed in (11, 11, 12):
        env = dropwave(sigma=0.05, horizon=8)
        env.reset(4)
        policy = NMCBO(env.problem, n_init=5, **SMALL)
        policy.reset(seed)
        played(policy, env, 8)
        actions.append(policy.actions[5:])
        assert len(policy.chosen) == 3  # one chosen set per proposal: the next warm starts
        assert all(chosen["action"].shape == (1, 2) for chosen in policy.chosen)
    assert np.all((actions[0] >= 0) & (actions[0] <= 1))
    assert np.array_equal(actions[0], actions[1])
    assert not np.array_equal(actions[0], actions[2])
    policy.reset(0)
    assert policy.chosen == []


def test_a_proposal_draws_starts_noise_and_selection_in_turn_from_one_seeded_stream(
    fitted: NMCBO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``propose(seed)``: one generator seeded with ``seed`` gives, in this order, the random
    initialisations, the SGD noise and the selection draws (three independent parts of one
    stream); the warm starts join first and the best by the selection estimate is played."""
    policy = copy.deepcopy(fitted)
    policy.options = replace(policy.options, reinits=3, max_steps=10, selection_samples=16)
    options, hallucination = policy.options, policy.hallucination()  # fitted once
    generator = torch.Generator().manual_seed(5)
    initial = policy.nets.initial(options.reinits, generator)
    noise = hallucination.noise(options.max_steps * options.batch_size, generator)
    selection = hallucination.noise(options.selection_samples, generator)
    steps = noise.reshape(options.max_steps, options.batch_size, policy.n_nodes)
    start = concat([*policy.chosen, initial])
    trained, _ = hallucination.train(start, steps, options.lr, options.stopping)
    best = take(trained, [int(torch.argmax(hallucination.score(trained, selection)))])
    scored = []
    score = NoisyHallucination.score

    def spy(self, params, noise, max_points=2**14):
        scored.append(noise)
        return score(self, params, noise, max_points)

    monkeypatch.setattr(NoisyHallucination, "score", spy)
    np.testing.assert_array_equal(policy.propose(5), policy.nets.actions(best)[0].numpy())
    assert torch.equal(scored[-1], selection)  # the selection estimate's own draws


def test_initialisations_follow_the_documented_laws_and_their_seed() -> None:
    """Actions and baselines: ``sigmoid`` of them uniform on ``[LOW, 1 - LOW]`` (the
    package's); linear layers: PyTorch's ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``; the same
    seed, the same draws. A fixed node (here the first) has no network, the others all."""
    specs = [NodeSpec((0,), ()), NodeSpec((1,), (0,)), NodeSpec((), (1,))]
    nets = HallucinationNets.for_specs(specs, 2, fixed=(0,))
    assert nets.input_dims == (1, 2, 1)  # actions plus parents, at least 1
    draws = nets.initial(20_000, torch.Generator().manual_seed(0))
    assert {k for k in draws if k.startswith("baseline")} == {"baseline.1", "baseline.2"}
    for name in ("action", "baseline.1", "baseline.2"):
        u = torch.sigmoid(draws[name]).flatten().numpy()
        assert LOW <= u.min() < 1.5 * LOW and 1 - 1.5 * LOW < u.max() <= 1 - LOW
        assert stats.kstest(u, stats.uniform(LOW, 1 - 2 * LOW).cdf).pvalue > 1e-3
    for name, fan_in in (("fc1.weight.1", 2), ("fc1.bias.1", 2), ("fc2.weight.2", 4)):
        w, bound = draws[name].flatten().numpy(), fan_in**-0.5
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
        assert stats.kstest(w, stats.uniform(-bound, 2 * bound).cdf).pvalue > 1e-3
    again = nets.initial(20_000, torch.Generator().manual_seed(0))
    assert all(torch.equal(draws[k], again[k]) for k in draws)


def test_every_node_network_takes_its_gp_inputs_on_alpine2() -> None:
    """Alpine2's nodes have an action and a parent each: networks of input dimension 2 (the
    first node 1), and a proposal runs through them."""
    env = alpine2(sigma=0.05, horizon=9)
    env.reset(0)
    policy = NMCBO(env.problem, n_init=8, **SMALL)
    assert policy.nets.input_dims == (1, 2, 2, 2, 2, 2)
    policy.reset(1)
    played(policy, env, 9)
    assert np.all((policy.actions[-1] >= 0) & (policy.actions[-1] <= 1))


def test_options_come_as_an_object_with_changes_on_top() -> None:
    problem = dropwave(sigma=0.05, horizon=5).problem
    options = NMCBOOptions(reinits=7, lr=0.01)
    assert NMCBO(problem, options).options.reinits == 7
    changed = NMCBO(problem, options, reinits=3).options
    assert (changed.reinits, changed.lr, changed.batch_size) == (3, 0.01, 32)


def test_training_refuses_an_unknown_stopping_rule() -> None:
    """The check comes first: no network, nets or objective is needed to reach it."""
    unfitted = NoisyHallucination(network=None, nets=None, objective=None, beta=1.0)
    params, noise = {"action": torch.zeros(2, 2)}, torch.zeros(3, 2, 2)
    with pytest.raises(ValueError, match=r"^stopping must be one of \('expma', 'fixed'\)"):
        unfitted.train(params, noise, stopping="never")


def test_warm_starts_join_the_random_initialisations(fitted: NMCBO) -> None:
    params, _ = start(fitted, 3)
    both = concat([take(params, [2]), take(params, [0, 1])])
    assert torch.equal(both["action"], params["action"][[2, 0, 1]])


def test_batch_size_follows_the_reference_runner() -> None:
    assert NMCBO(dropwave(sigma=0.05, horizon=5).problem).options.batch_size == 32
    assert NMCBO(dropwave(sigma=0.0005, horizon=5).problem).options.batch_size == 2


def test_bad_input_is_refused() -> None:
    problem = dropwave(sigma=0.05, horizon=5).problem
    for options, match in [
        ({"beta": -1.0}, "beta"),
        ({"reinits": 0}, "reinits"),
        ({"reinits": 2.5}, "reinits"),
        ({"max_steps": 0}, "max_steps"),
        ({"batch_size": 0}, "batch_size"),
        ({"selection_samples": 0}, "selection_samples"),
        ({"max_points": 0}, "max_points"),
        ({"lr": 0.0}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"stopping": "never"}, "stopping"),
        ({"n_init": 0}, "n_init"),
    ]:
        with pytest.raises(ValueError, match=f"^{match} must be"):
            NMCBO(problem, **options)


def test_nmcbo_is_a_comparison_method() -> None:
    assert POLICIES[METHODS["NMCBO"]] is NMCBO
    grid = BOComparison(methods=("NMCBO", "GP-MCBO", "GP-UCB"))
    assert grid.task_cost({"method": "NMCBO"}) >= grid.task_cost({"method": "GP-MCBO"})
