"""The benchmark's problem families and its two suites.

A family is a set of instances (the settings of one spec) of one action kind, the knowledge
it tells a policy (:mod:`~causalbandits.bench.capabilities`), the built-in policies at the
library's defaults, the random-play baseline that normalises regret, and its sizes per
suite (horizon, instances, replicates) with a time budget per policy. Every policy of a
family meets the same instances and noise: the seeds depend on the family's root seed,
the setting and the replicate only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from causalbandits.bench.capabilities import ACTION_KINDS, KNOWLEDGE
from causalbandits.experiments.spec import AlgorithmSpec, ExperimentSpec
from causalbandits.graphs.zoo import NAMES

SUITES = ("quick", "standard")
BENCH = "causalbandits.bench.environments"


@dataclass(frozen=True)
class Size:
    """A family's size in one suite: ``T``, the first ``instances`` settings, replicates
    per instance, and the CPU seconds a policy may take on the whole family (checked by the
    probe's projection and by each task's share during the run; above it the policy is
    marked too slow)."""

    horizon: int
    instances: int
    replicates: int
    budget: float


@dataclass(frozen=True)
class Family:
    """A problem family of the benchmark (module docstring)."""

    name: str
    description: str
    kind: str
    environment: str
    settings: tuple[dict[str, Any], ...]
    builtins: tuple[str, ...]
    random: str
    sizes: dict[str, Size]
    offers: frozenset[str] = frozenset()
    env_params: dict[str, Any] = field(default_factory=dict)
    #: Whether the mechanisms stay fixed (no deviations, drift or changes).
    stationary: bool = True
    #: Replicates per task: 1 for policies that carry no replicate axis (optimisers).
    chunk_size: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ACTION_KINDS:
            raise ValueError(f"family {self.name}: unknown action kind {self.kind!r}")
        unknown = sorted(set(self.offers) - set(KNOWLEDGE))
        if unknown:
            raise ValueError(f"family {self.name}: unknown knowledge {unknown}")
        if self.random not in self.builtins:
            raise ValueError(f"family {self.name}: the random baseline must be a built-in")
        for suite, size in self.sizes.items():
            if suite not in SUITES or not 1 <= size.instances <= len(self.settings):
                raise ValueError(f"family {self.name}: bad size {suite}: {size}")

    def spec(self, suite: str, algorithm: AlgorithmSpec) -> ExperimentSpec:
        """The spec of one policy on this family at the ``suite``'s size (one spec per
        policy: the seeds do not depend on the policy, so all meet the same noise, and a
        finished policy's results are reused when another joins)."""
        size = self.sizes[suite]
        return ExperimentSpec(
            name=self.name,
            environment=self.environment,
            env_params=self.env_params,
            settings=list(self.settings[: size.instances]),
            algorithms=[algorithm],
            horizon=size.horizon,
            replicates=size.replicates,
            seed=self.seed,
            chunk_size=min(self.chunk_size, size.replicates),
            checkpoints=min(20, size.horizon),
            description=self.description,
        )


def sizes(quick: tuple[int, int, int], standard: tuple[int, int, int], budget: float) -> dict:
    """``{"quick": ..., "standard": ...}`` from ``(horizon, instances, replicates)`` each;
    ``budget``: the standard suite's seconds per policy (the quick suite's: a twentieth)."""
    return {
        "quick": Size(*quick, budget=budget / 20),
        "standard": Size(*standard, budget=budget),
    }


LINEAR_SEM = ("linsem-ts", "linsem-ucb", "robust-lcb", "csl-ucb", "golem-mab", "ucb", "random")
SEMI_BANDIT = ("ndc-sem", "sem-ucb", "cucb", "cts", "ftrl", "random-super-arm")


def linear_sem_family(name: str, description: str, environment: str, **options: Any) -> Family:
    """A family of soft-intervention bandits on linear SEMs: told the graph, the linear-SEM
    learners and UCB1 built in (``options``: the other fields of :class:`Family`)."""
    options = {"builtins": LINEAR_SEM, **options}
    return Family(
        name=name,
        description=description,
        kind="interventions",
        offers=frozenset({"graph"}),
        environment=environment,
        random="random",
        **options,
    )


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        linear_sem_family(
            name="robust-lcb-tree",
            description="Robust-LCB's hierarchical tree (13 nodes), deviation budgets C",
            environment="robust-lcb",
            settings=tuple({"deviation_budget": c} for c in (0.0, 50.0, 200.0)),
            stationary=False,
            sizes=sizes((500, 2, 2), (2000, 3, 5), budget=300),
        ),
        linear_sem_family(
            name="csl-random-systems",
            description="CSL-UCB's random systems (N = 10, N(1, 1) weights, 1,024 arms)",
            environment=f"{BENCH}:csl_random_system",
            settings=tuple({"instance": i} for i in range(4)),
            sizes=sizes((200, 2, 2), (1500, 4, 5), budget=300),
        ),
        linear_sem_family(
            name="csl-mechanism-changes",
            description="CSL-UCB's random systems, mechanisms changing at 1/3 and 2/3 of T",
            environment=f"{BENCH}:csl_random_system",
            env_params={"changes": 2},
            settings=tuple({"instance": i} for i in range(4)),
            builtins=(*LINEAR_SEM[:-1], "golem-mab-cd", "random"),
            stationary=False,
            sizes=sizes((300, 2, 2), (1500, 4, 5), budget=300),
        ),
        linear_sem_family(
            name="mixed-sign-networks",
            description="random 50-node networks, a third of the weights negative, 32 arms",
            environment="mixed-sign",
            settings=tuple({"instance": i} for i in range(4)),
            sizes=sizes((500, 2, 2), (2000, 4, 5), budget=300),
        ),
        linear_sem_family(
            name="real-structures",
            description="asia, sachs, child, insurance and alarm (8-37 nodes), mixed-sign weights",
            environment="causalbandits.envs.real_structures:real_structure_bandit",
            settings=tuple({"name": name} for name in NAMES),
            sizes=sizes((500, 3, 2), (2000, 5, 5), budget=300),
        ),
        Family(
            name="ndc-sem-delayed",
            description="NDC-SEM's drifting semi-bandits (10 arms, super arms of 4), delay D",
            kind="delayed-super-arms",
            environment=f"{BENCH}:delayed_semibandit",
            settings=tuple({"instance": i, "delay": d} for d in (50, 200) for i in range(2)),
            builtins=SEMI_BANDIT,
            random="random-super-arm",
            stationary=False,
            sizes=sizes((1000, 2, 2), (5000, 4, 5), budget=300),
        ),
        Family(
            name="ssem-ucb-trials",
            description="SSEM-UCB's trials 1-3 (separable nonlinear SEMs, super arms of 6)",
            kind="separable-super-arms",
            environment=f"{BENCH}:separable_trial",
            env_params={"mc_samples": 2000},
            settings=tuple({"trial": t, "instance": i} for i in range(2) for t in (1, 2, 3)),
            builtins=("ssem-ucb", "sgb", "mets", "igp-ucb", *SEMI_BANDIT),
            random="random-super-arm",
            sizes=sizes((100, 2, 2), (500, 3, 3), budget=900),
        ),
        Family(
            name="causal-bo-functions",
            description="EXCBO's Dropwave and Alpine2 function networks, sigma = 0.1",
            kind="continuous",
            environment=f"{BENCH}:function_network",
            settings=({"function": "dropwave"}, {"function": "alpine2"}),
            builtins=("excbo", "gp-ucb", "eicf", "mcbo", "nmcbo", "random-search"),
            random="random-search",
            chunk_size=1,
            sizes=sizes((8, 2, 2), (30, 2, 4), budget=900),
        ),
    )
}
