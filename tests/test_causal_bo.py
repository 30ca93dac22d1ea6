"""Causal-BO policies: the ask/tell contract, bad input, determinism, EXCBO's optimism and
surrogate, and the comparison grid (same numbers with 1 or 2 workers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from causalbandits.envs.bo_problems import dropwave
from causalbandits.estimators.gp_network import NetworkAcquisition
from causalbandits.experiments.recorders import CumulativeRegret, OptimisationTrace
from causalbandits.experiments.simulate import simulate
from causalbandits.papers.excbo.comparison import BOComparison, dropwave_diagnosis
from causalbandits.policies.bo_baselines import EICF, GPUCB, MCBO
from causalbandits.policies.causal_bo import AcquisitionOptimiser
from causalbandits.policies.excbo import EXCBO

CHEAP = AcquisitionOptimiser(restarts=2, raw_samples=20, max_iterations=15)


def played(policy, env, rounds: int):
    """Drive ``policy`` for ``rounds`` rounds of ``env`` by ask/tell."""
    for _ in range(rounds):
        action = policy.suggest()
        policy.observe(action, env.step(action[None])[0])
    return policy


def test_initial_design_is_shared_by_methods_with_the_same_seed() -> None:
    env = dropwave(sigma=0.05, horizon=10)
    designs = []
    for cls in (EXCBO, GPUCB, EICF, MCBO):
        policy = cls(env.problem, optimiser=CHEAP)
        policy.reset(7)
        designs.append(policy.design)
        assert policy.n_init == 6  # 2(|A| + 1)
        assert np.array_equal(policy.suggest(), policy.design[0])
    for design in designs[1:]:
        assert np.array_equal(design, designs[0])
    assert designs[0].min() >= 0 and designs[0].max() <= 1


@pytest.mark.parametrize("cls", [EXCBO, GPUCB, EICF, MCBO])
def test_suggestions_are_valid_and_deterministic(cls) -> None:
    env = dropwave(sigma=0.05, horizon=12)
    suggestions = []
    for _ in range(2):
        env.reset(3)
        policy = cls(env.problem, n_init=5, optimiser=CHEAP)
        policy.reset(11)
        played(policy, env, 6)
        suggestions.append(policy.actions[-1])
    assert suggestions[0].shape == (2,)
    assert np.all((suggestions[0] >= 0) & (suggestions[0] <= 1))
    assert np.array_equal(suggestions[0], suggestions[1])


def test_bad_input_is_refused() -> None:
    problem = dropwave(sigma=0.05, horizon=5).problem
    policy = GPUCB(problem)
    with pytest.raises(ValueError, match="shape"):
        policy.observe(np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        policy.observe(np.array([0.5, 1.5]), np.zeros(2))
    with pytest.raises(ValueError, match="finite"):
        policy.observe(np.array([0.5, 0.5]), np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="node_values"):
        policy.observe(np.array([0.5, 0.5]), np.zeros(3))
    with pytest.raises(ValueError, match="n_init"):
        EXCBO(problem, n_init=0)
    with pytest.raises(ValueError, match="beta"):
        MCBO(problem, beta=-1.0)
    with pytest.raises(ValueError, match="variant"):
        EXCBO(problem, variant="thompson")
    with pytest.raises(ValueError, match=">= 1"):
        AcquisitionOptimiser(restarts=0)
    with pytest.raises(ValueError, match=">= 1"):
        AcquisitionOptimiser(max_raw_samples=0)
    with pytest.raises(ValueError, match="encoder_std"):
        EXCBO(problem, encoder_std="bootstrap")
    with pytest.raises(ValueError, match="components"):
        EXCBO(problem, components=0)


def _env():
    env = dropwave(sigma=0.05, horizon=20)
    env.reset(0)
    return env


def trained_excbo(**options) -> EXCBO:
    env = _env()
    policy = EXCBO(env.problem, n_init=12, samples=32, optimiser=CHEAP, **options)
    policy.reset(5)
    return played(policy, env, 12)


def test_restarts_grow_with_the_dimension_up_to_their_caps() -> None:
    optimiser = AcquisitionOptimiser()
    assert optimiser.starts(1) == (10, 100)
    assert optimiser.starts(2) == (20, 200)
    assert optimiser.starts(12) == (20, 512)  # Alpine2's EXCBO: 6 actions + 6 etas
    assert AcquisitionOptimiser(raw_samples=1).starts(3) == (20, 20)  # raw >= restarts


def test_excbo_acquisition_is_deterministic_under_fixed_base_samples() -> None:
    policy = trained_excbo()
    points = torch.rand(9, 1, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    values = []
    for _ in range(2):
        network, exogenous = policy.surrogate(seed=123)
        assert exogenous.shape == (32, 2)
        acquisition = NetworkAcquisition(
            network, policy.problem.objective, 2, policy.beta, exogenous=exogenous
        )
        with torch.no_grad():
            values.append(acquisition(points))
    torch.testing.assert_close(values[0], values[1], rtol=0, atol=0)
    _, other = policy.surrogate(seed=124)
    assert not torch.equal(other, exogenous)


def test_hallucinated_optimum_is_at_least_the_best_non_hallucinated_value() -> None:
    """Optimism of option B (decisions: excbo 7): alpha(a_t, eta_t) >= max_a alpha(a, eta = 0),
    eta = 0 being feasible, and eta_d = +1."""
    policy = trained_excbo()
    network, exogenous = policy.surrogate(seed=9)
    acquisition = NetworkAcquisition(
        network, policy.problem.objective, 2, policy.beta, exogenous=exogenous
    )
    decision = policy.maximise(acquisition, 4, seed=9)
    grid = torch.linspace(0, 1, 21, dtype=torch.float64)
    actions = torch.cartesian_prod(grid, grid)
    neutral = torch.full((actions.shape[0], 2), 0.5, dtype=torch.float64)  # eta = 0
    with torch.no_grad():
        best_plain = acquisition(torch.cat([actions, neutral], dim=-1).unsqueeze(1)).max()
        found = acquisition(decision.reshape(1, 1, 4))
    assert float(found) >= float(best_plain) - 1e-9
    assert float(decision[-1]) > 0.99  # eta at the target node is +1


@pytest.mark.parametrize("variant", ["mean", "sample"])
def test_excbo_variants_a_and_c_run(variant: str) -> None:
    policy = trained_excbo(variant=variant)
    action = policy.suggest()
    assert action.shape == (2,) and np.all((action >= 0) & (action <= 1))


def test_optimisation_trace_records_the_oracle_and_the_observations() -> None:
    env = dropwave(sigma=0.05, horizon=9)
    env.reset(4)
    policy = GPUCB(env.problem, n_init=6, optimiser=CHEAP)
    policy.reset(2)
    trace = OptimisationTrace()
    result = simulate(env, policy, np.arange(1, 10), [CumulativeRegret(), trace])
    expected = env.expected_reward(policy.actions)
    np.testing.assert_allclose(result["expected_reward"][:, 0], expected)
    np.testing.assert_allclose(result["best_expected"][:, 0], np.maximum.accumulate(expected))
    np.testing.assert_allclose(result["observed"][:, 0], policy.values[:, -1])
    np.testing.assert_allclose(result["a1"][:, 0], policy.actions[:, 1])
    np.testing.assert_allclose(result["x0"][:, 0], policy.values[:, 0])
    np.testing.assert_allclose(result["cum_regret"][:, 0], np.cumsum(env.optimum - expected))
    assert np.all(result["seconds"] >= 0)


def test_comparison_grid_gives_the_same_numbers_with_one_or_two_workers(tmp_path: Path) -> None:
    grid = BOComparison(
        problem="dropwave",
        sigmas=(0.05,),
        methods=("UCB", "MCBO"),
        rounds=2,
        n_init=4,
        replicates=2,
        method_params={"UCB": {"optimiser": CHEAP}, "MCBO": {"optimiser": CHEAP, "samples": 8}},
    )
    one = grid.run(tmp_path / "one", progress=False)
    two = grid.run(tmp_path / "two", jobs=2, progress=False)
    columns = [c for c in one.columns if c != "seconds"]
    key = ["algorithm", "replicate", "t"]
    one, two = (f.sort_values(key).reset_index(drop=True)[columns] for f in (one, two))
    assert len(one) == 2 * 2 * 6
    assert one.equals(two)
    # the two methods met the same design and noise
    design = one[one["round"] <= 0].pivot_table(index=["replicate", "t"], columns="algorithm")
    assert np.array_equal(design[("a0", "UCB")], design[("a0", "MCBO")])
    assert "EXCBO" not in one["algorithm"].unique()


def test_comparison_refuses_bad_configurations() -> None:
    with pytest.raises(ValueError, match="problem"):
        BOComparison(problem="branin")
    with pytest.raises(ValueError, match="methods"):
        BOComparison(methods=("EXCBO", "TuRBO"))
    with pytest.raises(ValueError, match="sigmas"):
        BOComparison(sigmas=(-0.1,))
    with pytest.raises(ValueError, match="beta axis"):
        BOComparison(methods=("EICF",), betas=(1.0,))
    with pytest.raises(ValueError, match="n_init"):
        BOComparison(n_init=0)
    grid = BOComparison(methods=("EXCBO",), betas=(0.5, 2.0), sigmas=(0.05, 0.2))
    assert [grid.seed_setting(s) for s in range(len(grid.points()))] == [0, 0, 1, 1]


def test_dropwave_diagnosis_counts_the_seeds_that_play_at_the_centre() -> None:
    """Seed 0 ends at the centre (a = 0.5), seed 1 in a corner; only seed 0's design has a
    point near the peak (r < 2.5)."""
    rows = []
    for seed, late_action, design_action in ((0, 0.5, 0.6), (1, 1.0, 1.0)):
        for rnd in range(-2, 21):
            a = design_action if rnd <= 0 else late_action
            reward = 0.5 if a == 0.5 else 0.1
            rows.append(
                {"sigma": 0.05, "method": "EXCBO", "replicate": seed, "round": rnd,
                 "a0": a, "a1": a, "expected_reward": reward}
            )  # fmt: skip
    table = dropwave_diagnosis(pd.DataFrame(rows))
    row = next(line for line in table.splitlines() if line.startswith("| 0.05 | EXCBO"))
    assert row == "| 0.05 | EXCBO | 1/2 | 0.500 | 0.100 | 1/2 |"
