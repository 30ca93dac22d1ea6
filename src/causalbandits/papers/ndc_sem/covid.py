"""NDC-SEM paper (Ghoorchian & Maghsudi, arXiv 2307.09093), Sec. V-B / App. VII-D: Covid-19 Italy.

Setup (Sec. V-B, App. VII-D): N = 21 regions, T = 80 days (31 Jul - 18 Oct 2020), s = 5,
D = 3 days, one change point at day 40 (cyclic shift by ``k``), NDC-SEM with
``gamma = 0.85``, ``xi = 0.1``
(Table I) against SEM-UCB. Both learn the graph of eq. 9 with cycles allowed on the full
``(y_tau, b_tau)`` of the training days received (``tau <= t - 3``, step 8) and tune ``lam``
online on the validation days received (step 7): NDC-SEM and SEM-UCB with the option
:class:`~causalbandits.policies.ndc_sem_validated.LambdaValidation`. Rewards are divided by
the global max of ``y`` (step 9). Outputs per replicate: the regions chosen each day (Fig. 4),
``lam(t)`` and ``eps(t)`` (Fig. 3's text), the final graph's predictions on the validation days
(Fig. 3) and the estimated overall reward ``1^T (I - A_final)^{-1} diag(b_t) x_t`` of each day
(Fig. 9).

Tuned exploration (an added row; Table I's pair stays the primary one): the paper chose
``(gamma, xi)`` by a joint grid search (App. VII-D5, the 10 x 22 values below, verbatim) on its
own, unstated reward scale, keeping the pair with the highest estimated cumulative overall
reward (final ``A_hat``, days ``1..T`` as in Fig. 9). The tuning stage repeats it per reward
unit on ``tuning_replicates`` replicates under the root seed ``tuning_seed`` (disjoint from the
evaluation root ``seed``), criterion the mean over those replicates, ties to the first pair in
grid order (``gamma``, then ``xi``); the evaluation replicates then also run NDC-SEM with the
chosen pair. With
``graph_input="b"`` the graph learner ignores the decisions, so all pairs run as replicates of
one policy with one reward sample, one policy seed and one shared graph learner: replicate
``p`` makes exactly the decisions of a separate run with pair ``p``, and Table I's rows are
those of a run without the tuned row.

Decisions
---------
* Seeds: the library's one layout (:func:`~causalbandits.random.replicate_seeds`) with no
  seed axis (``SEED_AXES = ()``: both units see the same draws). Replicate ``r`` draws its
  own instance (the shift ``k`` and the validation days, ``Stream.INSTANCE``), its own KDE
  sample of ``b`` (``Stream.SAMPLE``; shared by all policies) and each policy's own
  randomness (:func:`~causalbandits.random.policy_stream` of its label). Averaging over ``k``
  tests the claims for the procedure rather than for one unknown shift; ``shift=`` fixes it.
* ``lam`` grid: the decades 1e-5 ... 1e6 (the synthetic runs' range; the Covid grid is not
  stated); ``lasso_max_sweeps`` warm-started coordinate-descent sweeps per day and ``lam``.
* ``unit="cases"`` (a sensitivity run): raw daily cases, the ``lam`` grid times ``scale^2`` so
  the graphs are those of the normalised run; only the UCB indices see the other scale. Every
  number in the table is in normalised units.
* Results table: ``record`` is ``"day"`` (unit, replicate, policy, day), ``"prediction"``
  (unit, replicate, validation day, region) or ``"tuning"`` (unit, tuning replicate, pair: the
  cumulative reward of days ``1..T`` and from the change point on).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.data.italy_covid import ABBREVIATIONS, load_italy_covid, resolve_data_path
from causalbandits.envs.delay import FeedbackDelay
from causalbandits.envs.italy_covid import (
    CovidInstance,
    CovidPreprocessing,
    ItalyCovidBandit,
    italy_covid_instance,
)
from causalbandits.estimators.validated_lasso import (
    DECADE_GRID,
    check_lambda_grid,
    check_positive_grid,
    predict_overall,
    spectral_radius,
    validation_error,
)
from causalbandits.experiments.bandit_grid import BanditGrid, BanditRun
from causalbandits.experiments.recorders import ActionLog, Recorder, Trace
from causalbandits.papers.ndc_sem.covid_plots import plot_all
from causalbandits.papers.ndc_sem.covid_report import (
    POLICIES,
    TUNED,
    build_report,
    choose_exploration,
)
from causalbandits.policies import POLICIES as REGISTRY
from causalbandits.policies.ndc_sem_validated import LambdaValidation
from causalbandits.random import Stream, policy_stream
from causalbandits.validation import count

UNITS = ("max", "cases")
#: The report's labels -> entries of the one registry (lam tuned online on validation days).
POLICY_ENTRIES = {POLICIES[0]: "ndc-sem", POLICIES[1]: "sem-ucb"}
QUICK_GRID: tuple[float, ...] = (1e-2, 1e-1, 1.0, 10.0, 100.0)
#: App. VII-D5: the discount factors and exploration constants searched (verbatim: no 3e-2,
#: no 3e-1).
PAPER_GAMMA_GRID: tuple[float, ...] = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99)
PAPER_XI_GRID: tuple[float, ...] = (
    *(float(f"{m}e{e}") for e in range(-8, -2) for m in (1, 3, 7)),
    *(1e-2, 7e-2, 1e-1, 7e-1),
)

#: Columns of the long table (see the module docstring for ``record``).
COLUMNS = (
    *("experiment", "record", "unit", "replicate", "shift", "policy", "day", "date", "validation"),
    *("selected", "n_selected", "gamma", "xi", "lam", "eps", "n_validation", "eps_all"),
    *("eps_empty", "radius", "edges", "reward", "reward_from_change", "region", "y", "y_pred"),
    "b",
)


@functools.lru_cache(maxsize=2)
def _bulletins(path: str) -> pd.DataFrame:
    return load_italy_covid(path)


def exploration_pairs(
    gamma_grid: tuple[float, ...], xi_grid: tuple[float, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """All ``(gamma, xi)`` of the joint grid, ``gamma``-major (the tie-break order)."""
    mesh = np.meshgrid(gamma_grid, xi_grid, indexing="ij")
    return mesh[0].reshape(-1), mesh[1].reshape(-1)


@dataclass(frozen=True, kw_only=True)
class CovidExperiment(BanditGrid):
    """The Covid-19 experiment: a grid over reward units of chunks of replicates, after a
    tuning stage (the same grid with ``tuning=True`` and root ``tuning_seed``) when
    ``tuned_exploration``.

    Parameters
    ----------
    replicates: evaluation replicates under the root ``seed`` (the paper shows one draw);
        ``tuning_replicates`` under the root ``tuning_seed`` (must differ from ``seed``) for
        the ``(gamma, xi)`` search.
    lambda_grid: ``lam`` values for the online tuning (normalised units).
    gamma, xi: NDC-SEM's discount and exploration constant (Table I, Covid).
    super_arm_size, delay, change_point: ``s``, ``D`` and the day of the cyclic shift.
    shift: a fixed ``k`` for every replicate; ``None`` draws ``k`` per replicate.
    units: reward units to run, from :data:`UNITS` (``"max"``: decisions: ndc-sem 23).
    featured_replicate: the replicate drawn in Figs. 3 and 4.
    gamma_grid, xi_grid: the joint tuning grid (default: the paper's 10 x 22 values).
    data_path: the bulletins file (:func:`resolve_data_path`); the path is not fingerprinted,
        the file's SHA-256 is.
    tuning: this grid is the tuning stage; tuned: the chosen pair per unit (set from the
        tuning stage by :meth:`given`).
    """

    replicates: int = 20
    lambda_grid: tuple[float, ...] = DECADE_GRID
    gamma: float = 0.85
    xi: float = 0.1
    super_arm_size: int = 5
    delay: int = 3
    change_point: int = 40
    shift: int | None = None
    units: tuple[str, ...] = UNITS
    lasso_max_sweeps: int = 100
    seed: int = 2307
    chunk_size: int = 5
    featured_replicate: int = 0
    tuned_exploration: bool = True
    gamma_grid: tuple[float, ...] = PAPER_GAMMA_GRID
    xi_grid: tuple[float, ...] = PAPER_XI_GRID
    tuning_replicates: int = 20
    tuning_seed: int = 7
    name: str = "ndc-sem-covid"
    description: str = (
        "NDC-SEM paper Sec. V-B (Figs. 3, 4, 9): Covid-19 Italy, NDC-SEM (Table I and tuned "
        "(gamma, xi)) vs SEM-UCB with online lambda tuning"
    )
    tuning: bool = False
    tuned: tuple[tuple[float, float], ...] = ()

    #: No axis changes the seeds: both units see the same instances, samples and draws.
    SEED_AXES = ()
    #: One replicate at a time: each draws its own instance (shift, validation days).
    PER_REPLICATE = True
    UNFINGERPRINTED = ("description", "tuning", "tuned")
    DATA = staticmethod(resolve_data_path)
    FIGURES = staticmethod(plot_all)
    REPORT = staticmethod(build_report)

    def check(self) -> None:
        grid = tuple(float(v) for v in check_lambda_grid(self.lambda_grid))
        object.__setattr__(self, "lambda_grid", grid)
        for name, upper in (("gamma_grid", 1.0), ("xi_grid", None)):
            values = check_positive_grid(getattr(self, name), name.removesuffix("_grid"), upper)
            object.__setattr__(self, name, tuple(float(v) for v in values))
        count("tuning_replicates", self.tuning_replicates)
        count("tuning_seed", self.tuning_seed, minimum=0)
        if self.tuning_seed == self.seed and not self.tuning:
            raise ValueError(f"tuning_seed must differ from seed ({self.seed}): disjoint seeds")
        if not 0 <= self.featured_replicate < self.replicates:
            raise ValueError(f"featured_replicate must lie in 0..{self.replicates - 1}")
        self.distinct("units", UNITS)
        if self.delay < 0 or self.lasso_max_sweeps < 1:
            raise ValueError("delay must be >= 0 and lasso_max_sweeps >= 1")

    # ---------------------------------------------------------------- the grid

    @property
    def replicate_count(self) -> int:
        return self.tuning_replicates if self.tuning else self.replicates

    @property
    def task_prefix(self) -> str:
        return "tuning-" if self.tuning else ""

    def axes(self) -> dict[str, tuple[str, ...]]:
        return {"unit": self.units}

    def prerequisite(self) -> CovidExperiment | None:
        """The ``(gamma, xi)`` search (App. VII-D5) when ``tuned_exploration``, under the root
        ``tuning_seed`` (disjoint from the evaluation replicates)."""
        wanted = self.tuned_exploration and not self.tuning
        return dataclasses.replace(self, tuning=True, seed=self.tuning_seed) if wanted else None

    def given(self, results: pd.DataFrame) -> CovidExperiment:
        return dataclasses.replace(
            self, tuned=tuple(choose_exploration(results, unit) for unit in self.units)
        )

    def load_data(self) -> None:
        """Read and check the bulletins before any output exists (bad data leave nothing)."""
        _bulletins(str(self.data_location()))

    def data_files(self) -> dict[str, Path]:
        """The bulletins file (its SHA-256 joins the fingerprint)."""
        return {"bulletins": self.data_location()}

    # ---------------------------------------------------------------- the hooks

    def point_algorithms(self, point: Mapping[str, Any]) -> list[str]:
        """Tuning: NDC-SEM over every pair; evaluation: NDC-SEM (Table I's and the unit's
        tuned pair) then SEM-UCB, on the same replicate (its instance and sample)."""
        return [POLICIES[0]] if self.tuning else list(POLICIES)

    def pairs(self, run: BanditRun) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``(gamma, xi)`` of the NDC-SEM copies of ``run`` (replicate ``p`` plays pair
        ``p``; see the module docstring), ``None`` for SEM-UCB."""
        if run.algorithm != POLICIES[0]:
            return None
        if self.tuning:
            return exploration_pairs(self.gamma_grid, self.xi_grid)
        variants = run.context["variants"]
        return tuple(np.array(v) for v in zip(*((g, x) for _, g, x in variants), strict=True))

    def copies(self, run: BanditRun) -> list[int]:
        """The replicate once per policy copy (one reward sample and policy seed for all)."""
        pairs = self.pairs(run)
        return list(run.replicates) * (1 if pairs is None else len(pairs[0]))

    def make_environment(self, run: BanditRun) -> FeedbackDelay:
        """The delayed bandit of the replicate's instance in unit ``units[setting]``; the
        context keeps the instance, the ``lam`` grid, the unit's factor and the variants."""
        (replicate,) = run.replicates
        frame = _bulletins(str(self.data_location()))
        instance = self.instance(frame, run.setting, replicate)
        factor = instance.scale if run.point["unit"] == "cases" else 1.0
        variants = [(POLICIES[0], self.gamma, self.xi)]
        if self.tuned:
            variants.append((TUNED, *self.tuned[run.setting]))
        run.context |= {"instance": instance, "factor": factor, "variants": variants}
        run.context["lam_grid"] = np.asarray(self.lambda_grid) * factor**2
        return FeedbackDelay(
            ItalyCovidBandit(_rescaled(instance, factor), super_arm_size=self.super_arm_size),
            delay=self.delay,
        )

    def noise_seeds(self, run: BanditRun) -> Any:
        return self.seeds(run.setting, self.copies(run), Stream.SAMPLE)

    def make_policy(self, run: BanditRun) -> Any:
        """NDC-SEM with the pairs as replicates (one shared graph learner), or SEM-UCB; both
        tune ``lam`` online (:class:`~causalbandits.policies.ndc_sem_validated.
        LambdaValidation`) on the full reward vectors (``graph_input="b"``)."""
        pairs = self.pairs(run)
        validation = LambdaValidation(
            lam_grid=run.context["lam_grid"],
            lasso_max_sweeps=self.lasso_max_sweeps,
            shared_graph=pairs is not None,
        )
        options: dict[str, Any] = {"validation": validation, "graph_input": "b"}
        if pairs is not None:
            options |= {"gamma": pairs[0], "xi": pairs[1]}
        return REGISTRY.build(POLICY_ENTRIES[run.algorithm], run.env, **options)

    def policy_seeds(self, run: BanditRun) -> Any:
        return self.seeds(run.setting, self.copies(run), policy_stream(run.algorithm))

    def recorded_rounds(self, run: BanditRun) -> list[int]:
        return [run.env.horizon]  # the recorders keep every day

    def make_recorders(self, run: BanditRun) -> list[Recorder]:
        """The super arms of every day; in evaluation the graph learner's state after each
        day's update (Fig. 3's text)."""
        if self.tuning:
            return [ActionLog()]
        held_out = np.flatnonzero(run.context["instance"].validation)
        factor = run.context["factor"]

        def graph(t: int, env: FeedbackDelay, policy: Any, x: np.ndarray) -> dict[str, Any]:
            return _graph_state(policy, env, held_out, factor)

        return [ActionLog(), Trace(graph, when="update")]

    def table(self, run: BanditRun) -> pd.DataFrame:
        rows = self.tuning_rows(run) if self.tuning else self.evaluation_rows(run)
        return pd.DataFrame(rows, columns=list(COLUMNS))

    def finish(self, frame: pd.DataFrame, point: Mapping[str, Any]) -> pd.DataFrame:
        # One policy's rows may leave a column all None (object): as one table of all rows.
        return frame.infer_objects().astype({"day": "Int64"})

    # ---------------------------------------------------------------- one replicate

    def instance(self, frame: pd.DataFrame, setting: int, replicate: int) -> CovidInstance:
        """Replicate ``replicate``'s pre-processed instance (its ``k`` and validation days)."""
        rng = self.generator(setting, replicate, Stream.INSTANCE)
        preprocessing = CovidPreprocessing(change_point=self.change_point)
        return italy_covid_instance(frame, rng, preprocessing, self.shift)

    def days(self, run: BanditRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The super arms ``(T, R, N)`` of a finished run, the final ``A_hat`` and the
        estimated overall reward of each day ``(T, R)`` in the unit of the rows."""
        actions, final = run.recorders[0].stacked(), run.policy.lasso.fit()[0]
        rewards = run.env.estimated_overall_rewards(actions, final) / run.context["factor"]
        return actions, final, rewards

    def tuning_rows(self, run: BanditRun) -> list[dict[str, Any]]:
        """Every pair of the grid on tuning replicate ``replicate`` (App. VII-D5): the
        estimated cumulative overall reward of days ``1..T`` and from the change point on."""
        (replicate,), instance = run.replicates, run.context["instance"]
        gammas, xis = exploration_pairs(self.gamma_grid, self.xi_grid)
        rewards = self.days(run)[2]  # (T, P)
        base = {"experiment": self.name, "record": "tuning", "unit": run.point["unit"]}
        base |= {"replicate": replicate}
        base |= {"shift": instance.shift, "policy": POLICIES[0]}
        totals = zip(rewards.sum(axis=0), rewards[self.change_point - 1 :].sum(axis=0), strict=True)
        return [
            {**base, "gamma": float(g), "xi": float(x), "reward": float(total)}
            | {"reward_from_change": float(after)}
            for g, x, (total, after) in zip(gammas, xis, totals, strict=True)
        ]

    def evaluation_rows(self, run: BanditRun) -> list[dict[str, Any]]:
        """The days of NDC-SEM (Table I's pair, and the unit's tuned pair if any; replicates
        of one policy, see the module docstring) with the final graph's predictions, or of
        SEM-UCB, on evaluation replicate ``replicate``."""
        (replicate,), instance = run.replicates, run.context["instance"]
        factor, env = run.context["factor"], run.env
        held_out = np.flatnonzero(instance.validation)
        y = env.instance.overall
        base = {"experiment": self.name, "unit": run.point["unit"], "replicate": replicate}
        base |= {"shift": instance.shift}
        actions, final, rewards = self.days(run)
        states = run.recorders[1].rows
        b = env.instantaneous[:, 0]  # (T, N), scaled; the same sample for every policy
        empty = float(np.abs(y[held_out] - b[held_out]).mean()) / factor
        if run.algorithm != POLICIES[0]:
            constants = base | {"policy": POLICIES[1], "gamma": None, "xi": None}
            constants |= {"eps_empty": empty}
            return _day_rows(instance, constants, actions[:, 0], rewards[:, 0], states)
        rows: list[dict[str, Any]] = []
        for r, (label, gamma, xi) in enumerate(run.context["variants"]):
            constants = base | {"policy": label, "gamma": gamma, "xi": xi, "eps_empty": empty}
            rows += _day_rows(instance, constants, actions[:, r], rewards[:, r], states)
        # the graph learner ignores the decisions: one copy of the final graph's predictions
        predicted = predict_overall(final, b[held_out])[0]
        return rows + [
            {**base, "record": "prediction", "policy": POLICIES[0], "day": int(tau) + 1}
            | {"date": str(instance.dates[tau]), "validation": True, "region": region}
            | {"y": float(y[tau, i]) / factor, "y_pred": float(predicted[k, i]) / factor}
            | {"b": float(b[tau, i]) / factor}
            for k, tau in enumerate(held_out)
            for i, region in enumerate(ABBREVIATIONS)
        ]


def _day_rows(
    instance: CovidInstance,
    constants: dict[str, Any],
    actions: np.ndarray,
    rewards: np.ndarray,
    states: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """One ``record == "day"`` row per day of one policy: the row's ``constants`` (the run's,
    the policy's label, ``gamma`` and ``xi``), its choice, reward and the graph learner's
    state after the day (``states``)."""
    return [
        {**constants, "record": "day", "day": t + 1, "date": str(instance.dates[t])}
        | {"validation": bool(instance.validation[t]), "n_selected": int(x.sum())}
        | {"selected": ";".join(ABBREVIATIONS[i] for i in np.flatnonzero(x))}
        | {**state, "reward": float(reward)}
        for t, (x, reward, state) in enumerate(zip(actions, rewards, states, strict=True))
    ]


def _graph_state(
    policy: Any, env: FeedbackDelay, held_out: np.ndarray, factor: float
) -> dict[str, Any]:
    """The graph learner's state after a day (Fig. 3's text): ``lam(t)``, ``eps(t)``,
    ``K(t)``, the error of ``A_hat(t)`` on all validation days, its spectral radius and edges
    (replicate 0; normalised units)."""
    learner = policy.lasso
    a_hat = learner.fit()[0]
    y, b = env.instance.overall[held_out], env.instantaneous[held_out, 0]
    eps_all, _ = validation_error(a_hat, y, b, np.ones(held_out.size))
    return {
        "lam": float(learner.lam[0]) / factor**2,
        "eps": float(learner.epsilon[0]) / factor,
        "n_validation": int(learner.n_validation[0]),
        "eps_all": float(eps_all) / factor,
        "radius": float(spectral_radius(a_hat)),
        "edges": int((a_hat > 1e-10).sum()),
    }


def _rescaled(instance: CovidInstance, factor: float) -> CovidInstance:
    """``instance`` with every value multiplied by ``factor`` (``factor = scale``: raw cases)."""
    if factor == 1.0:
        return instance
    return dataclasses.replace(
        instance,
        overall=instance.overall * factor,
        kde_data=instance.kde_data * factor,
        bandwidths=instance.bandwidths * factor,
        means=instance.means * factor,
        scale=instance.scale / factor,
    )


def covid(quick: bool = False) -> CovidExperiment:
    """Sec. V-B: 21 regions, 80 days, s = 5, D = 3, NDC-SEM (Table I and tuned on 20 tuning
    replicates over the paper's 220 pairs) vs SEM-UCB, 20 replicates.

    ``quick``: 2 replicates and 2 tuning replicates, the ``lam`` grid 1e-2 ... 1e2, 20 sweeps
    per day, normalised unit only (the full ``(gamma, xi)`` grid).
    """
    if quick:
        return CovidExperiment(
            replicates=2,
            tuning_replicates=2,
            lambda_grid=QUICK_GRID,
            units=("max",),
            lasso_max_sweeps=20,
            chunk_size=1,
            name="ndc-sem-covid-quick",
        )
    return CovidExperiment()
