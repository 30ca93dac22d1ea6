"""Run policies on every compatible family of a suite, beside the built-in policies.

For each family and policy (the family's built-ins, then the entrants): the declared
compatibility (:func:`~causalbandits.bench.capabilities.incompatibility`); a probe run of
one replicate on the first instance, which catches a policy that fails to build or play and
projects its cost on the family (the probe stops as soon as the projection exceeds the
family's budget); then the run itself, one spec per (family, policy) into
``out/<family>/<policy>`` through the runner (resume, workers, determinism: a policy's
finished results are reused when another policy joins), each task stopped when it passes
its share of the budget (a learner whose cost grows after the probe). Every (family,
policy) ends with an :class:`Outcome`; none is dropped.
"""

from __future__ import annotations

import json
import math
import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from causalbandits.bench.ask_tell import AskTell, is_ask_tell
from causalbandits.bench.capabilities import incompatibility
from causalbandits.bench.families import FAMILIES, SUITES, Family
from causalbandits.experiments.bandit_grid import BanditRun
from causalbandits.experiments.metrics import final
from causalbandits.experiments.protocol import SpecExperiment
from causalbandits.experiments.recorders import Recorder
from causalbandits.experiments.simulate import simulate
from causalbandits.experiments.spec import AlgorithmSpec, resolve_policy

#: The outcome of a (family, policy): it ran, or why not.
STATUSES = ("ran", "incompatible", "error", "too slow")


class BudgetExceeded(RuntimeError):
    """A task ran past its share of its family's budget: ``(message, CPU seconds per
    replicate and round so far)``."""

    def __str__(self) -> str:
        return str(self.args[0])


class Deadline(Recorder):
    """Stops a run (:class:`BudgetExceeded`) once its CPU time passes ``seconds`` (the
    task's share of the family's budget) or, ``per_round``, ``seconds`` per round played
    (the probe's pace: the family's budget over its replicate-rounds); checked after every
    round."""

    def __init__(self, seconds: float, per_round: bool = False) -> None:
        self.seconds, self.per_round = seconds, per_round

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        self._start, self._replicates = time.process_time(), replicates

    def after_update(self, t: int, actions: np.ndarray) -> None:
        spent = time.process_time() - self._start
        allowed = self.seconds * t if self.per_round else self.seconds
        if spent > allowed:
            message = (
                f"{spent:,.1f} CPU-s by round {t} of a task, over its share "
                f"{allowed:,.3g} of the budget"
            )
            raise BudgetExceeded(message, spent / (t * self._replicates))


@dataclass(frozen=True)
class BenchExperiment(SpecExperiment):
    """A family's spec for one policy, whose tasks stop at ``task_budget`` CPU seconds."""

    task_budget: float = math.inf

    UNFINGERPRINTED: ClassVar[tuple[str, ...]] = ("description", "task_budget")

    def make_recorders(self, run: BanditRun) -> list[Recorder]:
        return [*super().make_recorders(run), Deadline(self.task_budget)]


@dataclass(frozen=True)
class Outcome:
    """What happened to one policy on one family; ``cost``: CPU seconds per replicate and
    round (the probe's for a policy not run, the run's tasks' otherwise)."""

    family: str
    policy: str
    status: str
    reason: str = ""
    cost: float = float("nan")


def slug(label: str) -> str:
    """A folder name for a policy label (``"module:Class"`` -> ``module_Class``)."""
    return re.sub(r"[^\w.-]+", "_", label)


def entry(label: str) -> AlgorithmSpec:
    """The spec entry of a policy label: a registry name or ``"module:attribute"``, an
    ask/tell optimiser wrapped by :class:`~causalbandits.bench.ask_tell.AskTell`."""
    if ":" in label and is_ask_tell(resolve_policy(label)):
        return AlgorithmSpec(label, f"{AskTell.__module__}:AskTell", {"optimiser": label})
    return AlgorithmSpec(label, label)


def probe_rounds(horizon: int) -> int:
    """Rounds of the probe run: a tenth of ``T``, at least 50 (at most ``T``): enough to
    see the periodic steps of a learner (CSL-UCB relearns every 20 rounds)."""
    return min(horizon, max(50, horizon // 10))


def probe(family: Family, suite: str, policy: str) -> tuple[str, str, float]:
    """``(status, reason, cost)`` of one replicate of ``policy`` on the family's first
    instance for :func:`probe_rounds` rounds: ``"error"`` if it fails to build or play,
    ``"too slow"`` if its projected cost on the family (cost per round x T x instances x
    replicates) exceeds the budget, else ``"ran"`` (to be run)."""
    size = family.sizes[suite]
    units = size.horizon * size.instances * size.replicates
    spec = family.spec(suite, entry(policy)).replace(replicates=1)
    rounds = probe_rounds(size.horizon)
    try:
        with threadpool_limits(limits=1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = SpecExperiment(spec).setup(0, policy, [0])
            start = time.process_time()
            simulate(run.env, run.policy, np.array([rounds]), [Deadline(size.budget / units, True)])
    except BudgetExceeded as error:
        cost = error.args[1]
        return "too slow", f"{cost * units:,.0f} CPU-s projected > budget {size.budget:,.0f}", cost
    except Exception as error:  # noqa: BLE001 - a user's policy may fail in any way
        return "error", f"{type(error).__name__}: {error}", float("nan")
    return "ran", "", (time.process_time() - start) / rounds


def run_cost(out_dir: Path) -> float:
    """CPU-comparable seconds per replicate and round of a finished run: its tasks' seconds
    over their replicate-rounds (from the manifest)."""
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    spec = manifest["spec"]
    seconds = sum(task.get("seconds") or 0.0 for task in manifest["tasks"])
    units = spec["horizon"] * spec["replicates"] * len(spec["settings"])
    return seconds / units


@dataclass(frozen=True)
class BenchResults:
    """The long table (one row per family, instance, replicate and policy that ran: the
    regret at ``T`` and the random baseline's on the same instance and noise) and every
    (family, policy)'s :class:`Outcome`."""

    results: pd.DataFrame
    outcomes: pd.DataFrame
    suite: str


def family_results(family: Family, label: str, df: pd.DataFrame) -> pd.DataFrame:
    """The final regrets of one run as rows of the long table."""
    last = final(df)
    return pd.DataFrame(
        {
            "family": family.name,
            "instance": last["setting"].to_numpy(),
            "replicate": last["replicate"].to_numpy(),
            "policy": label,
            "regret": last["cum_regret"].to_numpy(dtype=float),
        }
    )


def run_family(
    family: Family, suite: str, labels: Sequence[str], out: Path, **options: object
) -> tuple[list[pd.DataFrame], list[Outcome]]:
    """Every policy of ``labels`` on ``family`` (module docstring)."""
    frames, outcomes = [], []
    for label in labels:
        try:
            reason = incompatibility(resolve_policy(label), family.kind, family.offers)
        except (ImportError, ValueError) as error:
            outcomes.append(Outcome(family.name, label, "error", str(error)))
            continue
        if reason is not None:
            outcomes.append(Outcome(family.name, label, "incompatible", reason))
            continue
        status, why, cost = probe(family, suite, label)
        if status != "ran":
            outcomes.append(Outcome(family.name, label, status, why, cost))
            continue
        directory = out / family.name / slug(label)
        spec = family.spec(suite, entry(label))
        share = spec.chunk_size / (spec.replicates * len(spec.settings))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                experiment = BenchExperiment(spec, task_budget=family.sizes[suite].budget * share)
                df = experiment.run(directory, **options)
        except BudgetExceeded as error:
            message, cost = error.args
            outcomes.append(Outcome(family.name, label, "too slow", message, cost))
            continue
        except Exception as error:  # noqa: BLE001 - reported, never dropped
            outcomes.append(
                Outcome(family.name, label, "error", f"{type(error).__name__}: {error}")
            )
            continue
        frames.append(family_results(family, label, df))
        outcomes.append(Outcome(family.name, label, "ran", "", run_cost(directory)))
    return frames, outcomes


def with_random_baseline(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` with ``random_regret``: the family's random baseline's regret on the same
    instance and replicate (NaN where the baseline did not run)."""
    keys = ["family", "instance", "replicate"]
    baseline = results["family"].map(lambda name: FAMILIES[name].random)
    random = results.loc[results["policy"] == baseline, [*keys, "regret"]]
    return results.merge(random.rename(columns={"regret": "random_regret"}), on=keys, how="left")


def run_bench(
    policies: Sequence[str],
    suite: str = "standard",
    out: str | Path = "bench-results",
    families: Sequence[str] | None = None,
    **options: object,
) -> BenchResults:
    """Run ``policies`` (registry names or ``"module:attribute"``; none: the built-ins
    only) on every compatible family of ``suite`` beside the built-ins; ``options`` go to
    the runner (``jobs``, ``backend``, ``progress``)."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; choose from {SUITES}")
    names = list(FAMILIES) if families is None else list(families)
    unknown = sorted(set(names) - set(FAMILIES))
    if unknown:
        raise ValueError(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    frames, outcomes = [], []
    for name in names:
        family = FAMILIES[name]
        labels = [*family.builtins, *(p for p in policies if p not in family.builtins)]
        got, what = run_family(family, suite, labels, Path(out), **options)
        frames += got
        outcomes += what
    results = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(results):
        results = with_random_baseline(results)
    table = pd.DataFrame([asdict(o) for o in outcomes])
    return BenchResults(results, table, suite)
