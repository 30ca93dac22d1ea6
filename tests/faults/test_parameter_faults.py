"""Bad numbers and malformed specs are refused with one line naming what is wrong (issue 27,
items 4 and 11): every public constructor of the SSEM and BO families refuses a NaN, an
infinity, an out-of-range value or a non-integer count with a ``ValueError`` naming the
parameter, and every malformed YAML spec with one line naming the key and what was expected.
Objects are only constructed, never run."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import yaml

NAN, INF = math.nan, math.inf

# ---------------------------------------------------------------- small objects to build


def problem(upper_triangular: bool = True) -> SimpleNamespace:
    return SimpleNamespace(
        n_arms=5, super_arm_size=2, horizon=10, upper_triangular=upper_triangular
    )


@cache
def sem_and_arms() -> tuple[Any, Any]:
    from causalbandits.envs.base_arms import NormalArms
    from causalbandits.scm.basis import Dictionary
    from causalbandits.scm.separable import SeparableSEM

    weights = np.zeros((1, 3, 3, 1))
    weights[0, 0, 1, 0] = 0.5
    sem = SeparableSEM(weights, Dictionary.from_names(("linear",)))
    return sem, NormalArms.rescaled(np.full((1, 3), 0.5), np.full((1, 3), 0.2))


def separable_env(**options: Any) -> Any:
    from causalbandits.envs.separable_semibandit import SeparableBanditConfig, SeparableSemiBandit

    sem, arms = sem_and_arms()
    settings = {"super_arm_size": 2, "horizon": 10, "mc_samples": 50, **options}
    return SeparableSemiBandit(sem, arms, SeparableBanditConfig(**settings))


def taylor_oracle(**options: Any) -> Any:
    from causalbandits.policies.taylor_oracle import TaylorOracle

    return TaylorOracle.from_environment(separable_env(), **options)


def trial_design(**options: Any) -> Any:
    from causalbandits.envs.separable_instances import TrialDesign

    return TrialDesign(**options)


def ssem(family: str) -> Callable[..., Any]:
    def make(**options: Any) -> Any:
        from causalbandits.policies import POLICIES

        return POLICIES[family](problem(), **options)

    make.__qualname__ = family
    return make


def dictionary_lasso(**options: Any) -> Any:
    from causalbandits.estimators.dictionary_lasso import DictionaryLasso, DictionaryLassoOptions
    from causalbandits.scm.basis import Dictionary

    fit = DictionaryLassoOptions(**options)
    return DictionaryLasso(2, 3, Dictionary.from_names(("linear",)), options=fit)


def synthetic_trial(**options: Any) -> Any:
    from causalbandits.papers.ssem_ucb.trials import SyntheticTrial

    return SyntheticTrial(**options)


def train_delay_run(**options: Any) -> Any:
    from causalbandits.papers.ssem_ucb.train_delays import TrainDelayRun

    return TrainDelayRun(**options)


@cache
def bo_problem() -> Any:
    from causalbandits.envs.bo_problems import dropwave

    return dropwave(sigma=0.05, horizon=5).problem


def bo(name: str) -> Callable[..., Any]:
    def make(**options: Any) -> Any:
        pytest.importorskip("botorch")
        from causalbandits.policies import bo_baselines, excbo, nmcbo

        classes = {
            "EXCBO": excbo.EXCBO,
            "GPUCB": bo_baselines.GPUCB,
            "MCBO": bo_baselines.MCBO,
            "EICF": bo_baselines.EICF,
            "NMCBO": nmcbo.NMCBO,
        }
        return classes[name](bo_problem(), **options)

    make.__qualname__ = name
    return make


def acquisition_optimiser(**options: Any) -> Any:
    pytest.importorskip("botorch")
    from causalbandits.policies.causal_bo import AcquisitionOptimiser

    return AcquisitionOptimiser(**options)


def bo_environment(name: str) -> Callable[..., Any]:
    def make(**options: Any) -> Any:
        from causalbandits.envs import bo_problems, covid_testing, epidemic

        factories = {
            "dropwave": bo_problems.dropwave,
            "alpine2": bo_problems.alpine2,
            "rosenbrock": bo_problems.rosenbrock,
            "epidemic_calibration": epidemic.epidemic_calibration,
            "covid_pooled_testing": covid_testing.covid_pooled_testing,
        }
        return factories[name](**options)

    make.__qualname__ = name
    return make


def function_network_bandit(**options: Any) -> Any:
    from causalbandits.envs.bo_problems import dropwave
    from causalbandits.envs.causal_bo import FunctionNetworkBandit

    env = dropwave()
    kwargs = {"horizon": 5, "expected_reward": env.expected_reward, "noise_std": 0.05}
    return FunctionNetworkBandit(
        env.network, env.noise, optimal_action=env.optimal_action, **{**kwargs, **options}
    )


def monte_carlo_reward(**options: Any) -> Any:
    from causalbandits.envs.bo_problems import dropwave
    from causalbandits.envs.causal_bo import MonteCarloReward, TargetNode

    env = dropwave()
    return MonteCarloReward(env.network, env.noise, TargetNode(), **options)


def bo_comparison(**options: Any) -> Any:
    pytest.importorskip("botorch")
    from causalbandits.papers.excbo.comparison import BOComparison

    return BOComparison(**options)


#: (constructor, options, the name the message must contain); each is accepted, or refused
#: without naming the parameter, by the code before issue 27.
CASES: list[tuple[Callable[..., Any], dict[str, Any], str]] = [
    (separable_env, {"model_noise": NAN}, "model_noise"),
    (separable_env, {"model_noise": INF}, "model_noise"),
    (separable_env, {"model_noise": np.array([NAN])}, "model_noise"),
    (separable_env, {"observation_noise": NAN}, "observation_noise"),
    (separable_env, {"observation_noise": INF}, "observation_noise"),
    (separable_env, {"mc_samples": NAN}, "mc_samples"),
    (separable_env, {"horizon": NAN}, "horizon"),
    (separable_env, {"horizon": INF}, "horizon"),
    (separable_env, {"super_arm_size": NAN}, "super-arm size s"),
    (separable_env, {"optimal_tolerance": NAN}, "optimal_tolerance"),
    (separable_env, {"optimal_tolerance": -1.0}, "optimal_tolerance"),
    (taylor_oracle, {"degree": NAN}, "degree"),
    (trial_design, {"observation_noise": NAN}, "observation_noise"),
    (trial_design, {"model_noise_share": INF}, "model_noise_share"),
    (trial_design, {"n_arms": NAN}, "n_arms"),
    (trial_design, {"coefficient_range": (0.4, INF)}, "coefficient_range"),
    (trial_design, {"sd_range": (0.1, INF)}, "sd_range"),
    (trial_design, {"min_nonlinearity": -1.0}, "min_nonlinearity"),
    (trial_design, {"min_nonlinearity": NAN}, "min_nonlinearity"),
    (ssem("ssem-ucb-jo"), {"radius_scale": NAN}, "radius_scale"),
    (ssem("ssem-ucb-jo"), {"radius_scale": INF}, "radius_scale"),
    (ssem("ssem-ucb-jo"), {"bonus_scale": INF}, "bonus_scale"),
    (ssem("ssem-ucb-jo"), {"bonus_scale": NAN}, "bonus_scale"),
    (ssem("ssem-ucb-jo"), {"lam": -1.0}, "lam"),
    (ssem("ssem-ucb-jo"), {"lam": NAN}, "lam"),
    (ssem("ssem-ucb-jo"), {"lam": INF}, "lam"),
    (ssem("ssem-ucb-jo"), {"edge_threshold": -1.0}, "edge_threshold"),
    (ssem("ssem-ucb-jo"), {"edge_threshold": NAN}, "edge_threshold"),
    (ssem("ssem-ucb-jo"), {"target_density": 2.0}, "target_density"),
    (ssem("ssem-ucb-jo"), {"target_density": 0.0}, "target_density"),
    (ssem("ssem-ucb-jo"), {"target_density": NAN}, "target_density"),
    (ssem("ssem-ucb-jo"), {"refit_every": 2.5}, "refit_every"),
    (ssem("ssem-ucb-jo"), {"refit_every": NAN}, "refit_every"),
    (ssem("ssem-ucb-jo"), {"residual_factor": NAN}, "residual_factor"),
    (ssem("ssem-ucb-jo"), {"residual_factor": INF}, "residual_factor"),
    (ssem("ssem-ucb-jo"), {"signal_width": -1.0}, "signal_width"),
    (ssem("ssem-ucb-jo"), {"signal_width": NAN}, "signal_width"),
    (ssem("ssem-ucb-jo"), {"fd_step": NAN}, "fd_step"),
    (ssem("ssem-ucb-jo"), {"fd_step": INF}, "fd_step"),
    (ssem("ssem-ucb-jo"), {"fd_step": -1.0}, "fd_step"),
    (ssem("ssem-ucb-jo"), {"degree": NAN}, "degree"),
    (ssem("ssem-ucb-jo"), {"degree": INF}, "degree"),
    (ssem("ssem-ucb"), {"grid_size": NAN}, "grid_size"),
    (ssem("ssem-ucb"), {"lam": -1.0}, "lam"),
    (ssem("ssem-ucb-norm"), {"radius_scale": INF}, "radius_scale"),
    (ssem("ssem-ucb-norm"), {"bonus_scale": NAN}, "bonus_scale"),
    (ssem("ssem-ucb-q-search"), {"max_degree": NAN}, "max_degree"),
    (ssem("ssem-ucb-q-search"), {"remainder_points": 2.5}, "remainder_points"),
    (ssem("ssem-ucb-q-search"), {"remainder_arms": INF}, "remainder_arms"),
    (ssem("ssem-ucb-q-search"), {"remainder_seed": -1}, "remainder_seed"),
    (dictionary_lasso, {"lam": NAN}, "lam"),
    (dictionary_lasso, {"edge_threshold": NAN}, "edge_threshold"),
    (dictionary_lasso, {"target_density": 0.0}, "target_density"),
    (synthetic_trial, {"radius_scale": NAN}, "radius_scale"),
    (synthetic_trial, {"bonus_scale": INF}, "bonus_scale"),
    (synthetic_trial, {"radius_grid": (0.5, INF)}, "radius_grid"),
    (synthetic_trial, {"bonus_grid": (1.0, NAN)}, "bonus_grid"),
    (synthetic_trial, {"horizon": 2.5}, "horizon"),
    (synthetic_trial, {"mc_samples": NAN}, "mc_samples"),
    (synthetic_trial, {"mc_samples": 0}, "mc_samples"),
    (synthetic_trial, {"seed": -1}, "seed"),
    (synthetic_trial, {"replicates": NAN}, "replicates"),
    (synthetic_trial, {"chunk_size": 2.5}, "chunk_size"),
    (train_delay_run, {"radius_scale": INF}, "radius_scale"),
    (train_delay_run, {"bonus_scale": NAN}, "bonus_scale"),
    (train_delay_run, {"lam": NAN}, "lam"),
    (train_delay_run, {"edge_threshold": INF}, "edge_threshold"),
    (train_delay_run, {"horizon": 2.5}, "horizon"),
    (train_delay_run, {"mc_samples": 0}, "mc_samples"),
    (train_delay_run, {"super_arm_size": NAN}, "super_arm_size"),
    (train_delay_run, {"seed": -1}, "seed"),
    (bo("EXCBO"), {"n_init": 2.5}, "n_init"),
    (bo("EXCBO"), {"beta": INF}, "beta"),
    (bo("EXCBO"), {"samples": 2.5}, "samples"),
    (bo("EXCBO"), {"samples": NAN}, "samples"),
    (bo("GPUCB"), {"beta": INF}, "beta"),
    (bo("GPUCB"), {"n_init": NAN}, "n_init"),
    (bo("MCBO"), {"beta": INF}, "beta"),
    (bo("MCBO"), {"samples": 2.5}, "samples"),
    (bo("EICF"), {"n_init": 2.5}, "n_init"),
    (bo("NMCBO"), {"beta": INF}, "beta"),
    (bo("NMCBO"), {"reinits": NAN}, "reinits"),
    (bo("NMCBO"), {"max_steps": INF}, "max_steps"),
    (bo("NMCBO"), {"selection_samples": NAN}, "selection_samples"),
    (acquisition_optimiser, {"restarts": 2.5}, "restarts"),
    (acquisition_optimiser, {"raw_samples": INF}, "raw_samples"),
    (acquisition_optimiser, {"max_iterations": NAN}, "max_iterations"),
    (acquisition_optimiser, {"max_restarts": 2.5}, "max_restarts"),
    (bo_environment("dropwave"), {"horizon": NAN}, "horizon"),
    (bo_environment("dropwave"), {"quadrature_order": 2.5}, "quadrature_order"),
    (bo_environment("alpine2"), {"horizon": NAN}, "horizon"),
    (bo_environment("rosenbrock"), {"horizon": INF}, "horizon"),
    (bo_environment("epidemic_calibration"), {"mc_samples": 2.5}, "mc_samples"),
    (bo_environment("epidemic_calibration"), {"seed": -1}, "seed"),
    (
        bo_environment("covid_pooled_testing"),
        {"mc_samples": 2.5, "households": 10, "replications": 2},
        "mc_samples",
    ),
    (
        bo_environment("covid_pooled_testing"),
        {"horizon": NAN, "households": 10, "replications": 2},
        "horizon",
    ),
    (function_network_bandit, {"horizon": NAN}, "horizon"),
    (monte_carlo_reward, {"n_samples": NAN}, "n_samples"),
    (bo_comparison, {"sigmas": (NAN,)}, "sigmas"),
    (bo_comparison, {"sigmas": (INF,)}, "sigmas"),
    (bo_comparison, {"sigmas": (0.05, NAN)}, "sigmas"),
    (bo_comparison, {"betas": (INF,)}, "betas"),
    (bo_comparison, {"rounds": 2.5}, "rounds"),
    (bo_comparison, {"n_init": 2.5}, "n_init"),
    (bo_comparison, {"replicates": NAN}, "replicates"),
    (bo_comparison, {"chunk_size": INF}, "chunk_size"),
    (bo_comparison, {"seed": -1}, "seed"),
]


def case_id(case: tuple[Callable[..., Any], dict[str, Any], str]) -> str:
    make, options, _ = case
    name = make.__qualname__
    (key, value), *_ = options.items()
    return f"{name}-{key}={value!r}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_bad_numbers_are_refused_naming_the_parameter(
    case: tuple[Callable[..., Any], dict[str, Any], str],
) -> None:
    make, options, name = case
    with pytest.raises(ValueError) as caught:
        make(**options)
    message = str(caught.value)
    assert name in message and "\n" not in message, message


def test_the_shared_checks_name_the_parameter_and_convert() -> None:
    from causalbandits import validation as check

    assert check.count("n", 3.0) == 3 and type(check.count("n", np.int64(3))) is int
    assert check.non_negative("x", np.float64(0.0)) == 0.0
    assert check.in_range("p", 1.0, 0, 1, low_open=True) == 1.0
    assert check.optional(check.positive, "w", None) is None
    assert check.each(check.finite, "xs", np.array([[1.0, 2.0]])) == (1.0, 2.0)
    refused = [
        (check.finite, ("x", NAN), "x must be finite, got nan"),
        (check.non_negative, ("x", -1), "x must be >= 0 and finite, got -1"),
        (check.positive, ("x", INF), "x must be > 0 and finite, got inf"),
        (check.positive, ("x", "1"), "x must be a number, got '1'"),
        (check.positive, ("x", True), "x must be a number, got True"),
        (
            lambda: check.in_range("p", 0.0, 0, 1, low_open=True),
            (),
            "p must lie in (0, 1], got 0.0",
        ),
        (check.count, ("n", 2.5), "n must be an integer >= 1, got 2.5"),
        (check.count, ("n", NAN), "n must be an integer >= 1, got nan"),
        (check.count, ("n", True), "n must be an integer >= 1, got True"),
        (check.horizon, (INF,), "horizon T must be a positive integer, got inf"),
        (check.each, (check.finite, "xs", (1.0, NAN)), "xs[1] must be finite, got nan"),
        (check.each, (check.finite, "xs", 1.0), "xs must be a sequence of numbers, got 1.0"),
    ]
    for function, arguments, message in refused:
        with pytest.raises(ValueError) as caught:
            function(*arguments)
        assert str(caught.value) == message
    env = separable_env(model_noise=0.01, observation_noise=0.02)  # valid values unchanged
    assert env.model_noise.tolist() == [0.01] and env.observation_noise == 0.02
    policy = ssem("ssem-ucb-jo")(radius_scale=0.5, bonus_scale=0.0, target_density=1.0)
    options = policy.options
    assert (options.radius_scale, options.bonus_scale, options.degree) == (0.5, 0.0, 4)


# ---------------------------------------------------------------- malformed YAML specs

GOOD_SPEC: dict[str, Any] = {
    "name": "faults",
    "environment": "robust-lcb",
    "env_params": {},
    "settings": [{"deviation_budget": 2.0}],
    "algorithms": [
        {"label": "UCB", "policy": "ucb", "params": {}},
        {"label": "LinSEM", "policy": "linsem-ucb", "params": {"beta_scale": 0.5}},
    ],
    "horizon": 50,
    "replicates": 2,
    "checkpoints": 5,
}


def spec_with(path: tuple[Any, ...], value: Any = ..., delete: bool = False) -> dict[str, Any]:
    """:data:`GOOD_SPEC` with the key at ``path`` set to ``value`` (or deleted)."""
    data = copy.deepcopy(GOOD_SPEC)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return data


BETA = ("algorithms", 1, "params", "beta_scale")
#: name -> (YAML text or data, the key and the expectation the one line must name); every one
#: was refused without naming the key or what was expected (or accepted) before issue 27.
PROBES: dict[str, tuple[str | dict[str, Any], tuple[str, str]]] = {
    "empty file": ("", ("expected a mapping with the keys name, environment", "an empty file")),
    "comment only": ("# nothing\n", ("expected a mapping with the keys", "an empty file")),
    "top-level list": ("- a\n- b\n", ("expected a mapping with the keys", "got a list")),
    "YAML syntax error": ("name: [unclosed\nhorizon: 5\n", ("not valid YAML", "at line 2")),
    "unknown key": (spec_with(("colour",), "red"), ("['colour']", "expected keys: name")),
    "missing key": (spec_with(("horizon",), delete=True), ("['horizon']", "required: name")),
    "name not a string": (
        spec_with(("name",), 123),
        ("name must be a non-empty string", "got 123"),
    ),
    "environment unknown": (
        spec_with(("environment",), "no-such-env"),
        ("environment: unknown environment 'no-such-env'", "known: "),
    ),
    "environment not a string": (
        spec_with(("environment",), 42),
        ("environment must be a string", "got 42"),
    ),
    "env_params a list": (
        spec_with(("env_params",), ["design", "negate"]),
        ("env_params must be a mapping", "got a list"),
    ),
    "env_params unknown name": (
        spec_with(("env_params", "flavour"), 1),
        ("env_params.flavour", "expected one of: action_set"),
    ),
    "env_params horizon": (
        spec_with(("env_params", "horizon"), 3),
        ("env_params.horizon", "the spec's 'horizon'"),
    ),
    "settings a mapping": (
        spec_with(("settings",), {"deviation_budget": 2.0}),
        ("settings must be a list", "got a mapping"),
    ),
    "setting a number": (
        spec_with(("settings",), [2.0]),
        ("settings[0] must be a mapping", "got 2.0"),
    ),
    "setting value a string": (
        spec_with(("settings", 0, "deviation_budget"), "ten"),
        ("settings[0].deviation_budget must be a number", "got 'ten'"),
    ),
    "setting value a list": (
        spec_with(("settings", 0, "deviation_budget"), [1, 2]),
        ("settings[0].deviation_budget must be a scalar", "got a list"),
    ),
    "setting reserved name": (
        spec_with(("settings", 0, "t"), 3),
        ("settings[0] uses reserved parameter names", "['t']"),
    ),
    "setting without the sweep": (
        spec_with(("sweep",), "delta"),
        ("settings[0] lacks the swept parameter", "'delta'"),
    ),
    "sweep a list": (
        spec_with(("sweep",), ["deviation_budget"]),
        ("sweep must be the name of a setting parameter", "got a list"),
    ),
    "checkpoint not a number": (
        spec_with(("checkpoints",), ["a"]),
        ("checkpoints[0] must be an integer", "got 'a'"),
    ),
    "checkpoint past the horizon": (
        spec_with(("checkpoints",), [10, 9999]),
        ("checkpoints: checkpoint round 9999", "past the horizon 50"),
    ),
    "recorders a string": (
        spec_with(("recorders",), "regret"),
        ("recorders must be a list of recorder names", "got 'regret'"),
    ),
    "recorder unknown": (
        spec_with(("recorders",), ["nonsense"]),
        ("recorders: unknown recorders ['nonsense']", "known: "),
    ),
    "description a list": (
        spec_with(("description",), ["a", "b"]),
        ("description must be a string", "got a list"),
    ),
    "algorithms a mapping": (
        spec_with(("algorithms",), {"label": "UCB", "policy": "ucb"}),
        ("algorithms must be a list", "got a mapping"),
    ),
    "algorithm a string": (
        spec_with(("algorithms",), ["ucb"]),
        ("algorithms[0] must be a mapping", "got 'ucb'"),
    ),
    "algorithm without policy": (
        spec_with(("algorithms", 1, "policy"), delete=True),
        ("algorithms[1]: algorithm lacks the keys ['policy']", "required: label, policy"),
    ),
    "algorithm unknown key": (
        spec_with(("algorithms", 1, "param"), {}),
        ("algorithms[1]: unknown algorithm keys: ['param']", "expected keys: label"),
    ),
    "policy unknown": (
        spec_with(("algorithms", 1, "policy"), "no-such-policy"),
        ("algorithms[1].policy: unknown policy 'no-such-policy'", "known: "),
    ),
    "policy not a string": (
        spec_with(("algorithms", 1, "policy"), 7),
        ("algorithms[1].policy must be a string", "got 7"),
    ),
    "label empty": (
        spec_with(("algorithms", 1, "label"), ""),
        ("algorithms[1].label must be a non-empty string", "got ''"),
    ),
    "labels duplicated": (
        spec_with(("algorithms", 1, "label"), "UCB"),
        ("algorithms: duplicate algorithm labels: ['UCB']", "expected distinct labels"),
    ),
    "params a list": (
        spec_with(("algorithms", 1, "params"), [1, 2]),
        ("algorithms[1].params must be a mapping", "got a list"),
    ),
    "param unknown": (
        spec_with(("algorithms", 1, "params", "speed"), 2),
        ("algorithms[1].params.speed", "expected one of: ball, beta_scale"),
    ),
    "param a string": (
        spec_with(BETA, "high"),
        ("algorithms[1].params.beta_scale must be a number", "got 'high'"),
    ),
    "param infinite": (
        spec_with(BETA, INF),
        ("algorithms[1].params.beta_scale must be finite", "got inf"),
    ),
    "param nested NaN": (
        spec_with(BETA, {"a": [1, NAN]}),
        ("algorithms[1].params.beta_scale.a[1] must be finite", "got nan"),
    ),
    "param by setting without a mapping": (
        spec_with(BETA, {"by": "deviation_budget", "values": [1, 2]}),
        ("algorithms[1].params.beta_scale.values must be a mapping", "got a list"),
    ),
    "param by setting without a value": (
        spec_with(BETA, {"by": "deviation_budget", "values": {"9": 1.0}}),
        ("algorithms[1].params.beta_scale has no value for deviation_budget = 2.0", "['9']"),
    ),
}

#: Malformed specs whose one line named the key and the expectation already.
CLEAR_BEFORE = {
    "horizon a string": (spec_with(("horizon",), "long"), ("horizon T", "integer >= 1")),
    "horizon a list": (spec_with(("horizon",), [100]), ("horizon T", "integer >= 1")),
    "replicates zero": (spec_with(("replicates",), 0), ("replicates", "integer >= 1")),
    "seed negative": (spec_with(("seed",), -1), ("seed", "non-negative integer")),
    "chunk_size a string": (spec_with(("chunk_size",), "ten"), ("chunk_size", "integer >= 1")),
    "checkpoints a string": (spec_with(("checkpoints",), "many"), ("checkpoints", "integer")),
    "env_params NaN": (spec_with(("env_params", "design"), NAN), ("env_params.design", "finite")),
}


def spec_error(content: str | dict[str, Any], tmp_path: Path) -> str:
    """The message of loading ``content`` as a YAML spec (fails the test if it loads)."""
    from causalbandits.experiments.spec import ExperimentSpec

    path = tmp_path / "spec.yaml"
    path.write_text(content if isinstance(content, str) else yaml.safe_dump(content), "utf-8")
    with pytest.raises(ValueError) as caught:
        ExperimentSpec.from_yaml(path)
    return str(caught.value)


@pytest.mark.parametrize("probe", PROBES)
def test_spec_errors_name_the_key_and_what_was_expected(probe: str, tmp_path: Path) -> None:
    content, (key, expected) = PROBES[probe]
    message = spec_error(content, tmp_path)
    assert "\n" not in message and message.startswith(str(tmp_path)), message
    assert key in message and expected in message, message


def test_every_spec_probe_gives_one_line(tmp_path: Path) -> None:
    from causalbandits.experiments.spec import ExperimentSpec

    for probe, (content, (key, expected)) in {**PROBES, **CLEAR_BEFORE}.items():
        message = spec_error(content, tmp_path)
        assert "\n" not in message and key in message and expected in message, (probe, message)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(GOOD_SPEC), "utf-8")
    assert ExperimentSpec.from_yaml(path) == ExperimentSpec.from_dict(GOOD_SPEC)
