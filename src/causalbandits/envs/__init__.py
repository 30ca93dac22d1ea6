"""Bandit environments over SCMs, with their regret oracles, and environment wrappers."""

from causalbandits.envs.actions import ActionSet, InvalidActionError
from causalbandits.envs.base import Environment, ReplicatedEnvironment
from causalbandits.envs.bo_problems import alpine2, dropwave, rosenbrock
from causalbandits.envs.causal_bo import (
    CausalBOProblem,
    FunctionNetworkBandit,
    MonteCarloReward,
    Objective,
    TargetNode,
)
from causalbandits.envs.covid_testing import covid_pooled_testing
from causalbandits.envs.delay import DelayedFeedback, FeedbackDelay
from causalbandits.envs.deviations import (
    DEVIATION_DESIGNS,
    DeviatedModel,
    DeviationSchedule,
    check_budget,
    deviation_budget,
    negated_interventions,
    node_deviation_totals,
    swapped_mechanisms,
)
from causalbandits.envs.epidemic import epidemic_calibration
from causalbandits.envs.linear_bandit import LinearSEMBandit, LinearSEMProblem
from causalbandits.envs.piecewise import ChangeRecord, PiecewiseStationaryBandit, change_mechanisms
from causalbandits.envs.random_systems import random_csl_bandit, random_soft_intervention_sem
from causalbandits.envs.semibandit import (
    Bernoulli,
    SemiBanditEnv,
    SemiBanditFeedback,
    SemiBanditProblem,
    SyntheticDesign,
    Uniform,
    adjacency_from_weights,
    ndc_synthetic_env,
)
from causalbandits.envs.semibandit_instances import SemiBanditInstances, synthetic_instances

__all__ = [
    "DEVIATION_DESIGNS",
    "ActionSet",
    "Bernoulli",
    "CausalBOProblem",
    "ChangeRecord",
    "DelayedFeedback",
    "DeviatedModel",
    "DeviationSchedule",
    "Environment",
    "FeedbackDelay",
    "FunctionNetworkBandit",
    "InvalidActionError",
    "LinearSEMBandit",
    "LinearSEMProblem",
    "MonteCarloReward",
    "Objective",
    "PiecewiseStationaryBandit",
    "ReplicatedEnvironment",
    "SemiBanditEnv",
    "SemiBanditInstances",
    "SemiBanditFeedback",
    "SemiBanditProblem",
    "SyntheticDesign",
    "TargetNode",
    "Uniform",
    "adjacency_from_weights",
    "alpine2",
    "change_mechanisms",
    "check_budget",
    "deviation_budget",
    "covid_pooled_testing",
    "dropwave",
    "epidemic_calibration",
    "ndc_synthetic_env",
    "synthetic_instances",
    "negated_interventions",
    "node_deviation_totals",
    "random_csl_bandit",
    "random_soft_intervention_sem",
    "rosenbrock",
    "swapped_mechanisms",
]
