"""The Robust-LCB paper's environment (Section VI): hierarchical graph, Uniform[0, 2] noise."""

from __future__ import annotations

from causalbandits.envs.actions import ActionSet
from causalbandits.envs.deviations import DEVIATION_DESIGNS, check_budget, depth_groups
from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.graphs.families import hierarchical_tree
from causalbandits.scm.linear import LinearSEM, uniform_column_weights
from causalbandits.scm.noise import UniformNoise

ACTION_SETS = ("non-root", "non-root-no-reward", "all")


def robust_lcb_sem(branching: int = 3, depth: int = 2) -> LinearSEM:
    """Weights ``0.5/sqrt(|pa|)`` (observational) and ``1/sqrt(|pa|)`` (interventional)."""
    dag = hierarchical_tree(branching, depth)
    return LinearSEM(
        dag,
        uniform_column_weights(dag, 0.5),
        uniform_column_weights(dag, 1.0),
        UniformNoise.iid(dag.n_nodes, 0.0, 2.0),
    )


def make_environment(
    horizon: int = 40000,
    deviation_budget: float = 200.0,
    design: str = "negate",
    max_rounds: int | None = None,
    by_depth: bool = False,
    interleave: bool = False,
    placement: str = "start",
    action_set: str = "non-root",
    branching: int = 3,
    depth: int = 2,
) -> LinearSEMBandit:
    """The paper's bandit with a deviation budget ``C`` spent by ``design`` (by default
    decisions: robust-lcb A6)."""
    if design not in DEVIATION_DESIGNS:
        raise ValueError(
            f"unknown deviation design {design!r}; choose from {sorted(DEVIATION_DESIGNS)}"
        )
    sem = robust_lcb_sem(branching, depth)
    if action_set == "non-root":
        actions = ActionSet.non_root(sem.dag)
    elif action_set == "non-root-no-reward":
        actions = ActionSet.non_root(sem.dag, include_reward=False)
    elif action_set == "all":
        actions = ActionSet.all_subsets(sem.n_nodes)
    else:
        raise ValueError(f"unknown action set {action_set!r}; choose from {ACTION_SETS}")
    options = {}
    if design == "negate":
        groups = depth_groups(sem.dag) if by_depth else None
        options = {"max_rounds": max_rounds, "groups": groups, "interleave": interleave}
    schedule = DEVIATION_DESIGNS[design](
        sem, deviation_budget, horizon, placement=placement, **options
    )
    check_budget(schedule, sem, actions, deviation_budget)
    return LinearSEMBandit(
        sem, horizon, actions, deviations=schedule, deviation_budget=deviation_budget
    )
