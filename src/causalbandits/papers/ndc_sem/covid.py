"""NDC-SEM paper (Ghoorchian & Maghsudi, arXiv 2307.09093), Sec. V-B / App. VII-D: Covid-19 Italy.

Setup (spec §5.2): N = 21 regions, T = 80 days (31 Jul - 18 Oct 2020), s = 5, D = 3 days, one
change point at day 40 (cyclic shift by ``k``), NDC-SEM with ``gamma = 0.85``, ``xi = 0.1``
(Table I) against SEM-UCB. Both learn the graph of eq. 9 with cycles allowed on the full
``(y_tau, b_tau)`` of the training days received (``tau <= t - 3``, step 8) and tune ``lam``
online on the validation days received (step 7): :class:`~causalbandits.policies.
ndc_sem_validated.ValidatedNDCSEM` and ``ValidatedSEMUCB``. Rewards are divided by the global
max of ``y`` (step 9).

Outputs per seed: the regions chosen each day (Fig. 4), ``lam(t)`` and ``eps(t)`` (Fig. 3's
text), the predictions of the final graph on the validation days (Fig. 3) and the estimated
overall reward ``1^T (I - A_final)^{-1} diag(b_t) x_t`` of each day (Fig. 9).

Tuned exploration (``tuned_exploration``, an added row; Table I's pair stays the primary one):
the paper chose ``(gamma, xi)`` by its own grid search on its own reward scale (App. VII-D5).
:mod:`~causalbandits.papers.ndc_sem.covid_tuning` repeats that search per reward unit on
``tuning_seeds`` seeds under the root ``tuning_seed`` (disjoint from the evaluation seeds),
and the evaluation seeds then also run NDC-SEM with the chosen pair (``"NDC-SEM (tuned)"``).
On an evaluation seed both NDC-SEM variants run as two replicates of one policy that share
the reward sample, the policy seed and the graph path, so the Table I rows are exactly those
of a run without the tuned row.

Decisions (documented in the report as well)
--------------------------------------------
* Seeds: seed ``r`` draws its own instance (the shift ``k`` and the validation days,
  stream ``INSTANCE``), its own KDE sample of ``b`` (``KDE``; shared by both policies, common
  random numbers) and the policies' own randomness (``POLICY``: ``H`` and tie-breaks, the
  same for both policies). The paper's ``k`` is one random draw, so averaging over ``k``
  tests its claims for the procedure rather than for one unknown shift; ``shift=`` fixes it.
* ``lam`` grid: the decades 1e-5 ... 1e6, the range the paper searches for the synthetic
  runs (the Covid grid is not stated). On the normalised data every ``lam >= 1e3`` gives the
  empty graph. ``lasso_max_sweeps`` coordinate-descent sweeps per day, warm-started from the
  previous day's fit of the same ``lam`` (the fits of tiny ``lam`` converge slowly on these
  collinear series; on seed 0, 1000 sweeps give the same ``lam(t)`` and ``eps(t)`` to five
  digits as 100).
* Results table: ``record == "tuning"`` rows hold, per unit, tuning seed and pair, the
  cumulative estimated overall reward of days ``1..T`` (``reward``, the criterion) and from
  the change point on (``reward_from_change``); ``seed`` counts tuning seeds there.
* ``unit="cases"`` (a sensitivity run, not the spec's resolution): the same experiment on raw
  daily cases, with the ``lam`` grid multiplied by ``scale^2`` so that the graphs are exactly
  those of the normalised run; only the UCB indices see the different reward scale. Every
  number in the table is in normalised units (``lam / scale^2``, ``eps / scale``, rewards
  ``/ scale``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from causalbandits.data.italy_covid import ABBREVIATIONS, load_italy_covid, resolve_data_path
from causalbandits.envs.delay import FeedbackDelay
from causalbandits.envs.italy_covid import CovidInstance, ItalyCovidBandit, italy_covid_instance
from causalbandits.estimators.validated_lasso import (
    DECADE_GRID,
    check_lambda_grid,
    predict_overall,
    spectral_radius,
    validation_error,
)
from causalbandits.experiments.runner import config_fingerprint, run_header, run_tasks
from causalbandits.papers.ndc_sem.covid_tuning import (
    PAPER_GAMMA_GRID,
    PAPER_XI_GRID,
    TUNED,
    check_exploration_grid,
    choose_exploration,
    exploration_pairs,
    play,
    play_exploration_grid,
)
from causalbandits.policies.ndc_sem_validated import ValidatedSEMUCB

POLICIES = ("NDC-SEM", "SEM-UCB")
#: Root seed of the (gamma, xi) tuning seeds (disjoint from ``CovidExperiment.seed``).
TUNING_SEED = 7
UNITS = ("max", "cases")
QUICK_GRID: tuple[float, ...] = (1e-2, 1e-1, 1.0, 10.0, 100.0)

# Streams of a seed (last element of its spawn key).
INSTANCE_STREAM = 0
KDE_STREAM = 1
POLICY_STREAM = 2

#: Columns of the long table. ``record`` is ``"day"`` (one row per unit, seed, policy and
#: day), ``"prediction"`` (one row per unit, seed, validation day and region: the final
#: graph's prediction, Fig. 3) or ``"tuning"`` (one row per unit, tuning seed and pair).
COLUMNS = (
    "experiment",
    "record",
    "unit",
    "seed",
    "shift",
    "policy",
    "day",
    "date",
    "validation",
    "selected",
    "n_selected",
    "gamma",
    "xi",
    "lam",
    "eps",
    "n_validation",
    "eps_all",
    "eps_empty",
    "radius",
    "edges",
    "reward",
    "reward_from_change",
    "region",
    "y",
    "y_pred",
    "b",
)


@functools.lru_cache(maxsize=2)
def _bulletins(path: str) -> pd.DataFrame:
    return load_italy_covid(path)


@dataclass(frozen=True)
class Task:
    """Evaluation seeds ``start..stop-1`` in reward unit ``unit``; ``exploration`` is the
    tuned ``(gamma, xi)`` of the unit (``None``: Table I's pair only)."""

    unit: str
    chunk: int
    start: int
    stop: int
    exploration: tuple[float, float] | None = None

    @property
    def id(self) -> str:
        return f"{self.unit}-c{self.chunk:04d}"


@dataclass(frozen=True)
class TuningTask:
    """Tuning seeds ``start..stop-1`` in reward unit ``unit``: every pair of the grid."""

    unit: str
    chunk: int
    start: int
    stop: int

    @property
    def id(self) -> str:
        return f"tuning-{self.unit}-c{self.chunk:04d}"


@dataclass(frozen=True)
class CovidExperiment:
    """The Covid-19 experiment as a run-based paper experiment (``run``, ``plot``, ``report``).

    Parameters
    ----------
    seeds: Monte-Carlo (evaluation) seeds (the paper shows one draw).
    lambda_grid: ``lam`` values for the online tuning (normalised units).
    gamma, xi: NDC-SEM's discount and exploration constant (Table I, Covid).
    budget, delay, change_point: ``s``, ``D`` and the day of the cyclic shift.
    shift: a fixed ``k`` for every seed; ``None`` draws ``k`` per seed.
    units: reward units to run, from :data:`UNITS` (``"max"``: the spec's normalisation).
    lasso_max_sweeps: coordinate-descent sweeps per day and ``lam`` (warm-started).
    seed: root seed; chunk_size: seeds per task; featured_seed: the seed drawn in Fig. 3/4.
    tuned_exploration: also tune ``(gamma, xi)`` by the paper's grid search (App. VII-D5)
        per unit and run NDC-SEM with the chosen pair on the evaluation seeds (an added row).
    gamma_grid, xi_grid: the joint grid (default: the paper's 10 x 22 values).
    tuning_seeds: seeds of the grid search, under the root ``tuning_seed`` (must differ from
        ``seed``, so tuning and evaluation seeds are disjoint).
    data_path: the bulletins file (see :func:`resolve_data_path`); not part of the
        fingerprint.
    """

    seeds: int = 20
    lambda_grid: tuple[float, ...] = DECADE_GRID
    gamma: float = 0.85
    xi: float = 0.1
    budget: int = 5
    delay: int = 3
    change_point: int = 40
    shift: int | None = None
    units: tuple[str, ...] = UNITS
    lasso_max_sweeps: int = 100
    seed: int = 2307
    chunk_size: int = 5
    featured_seed: int = 0
    tuned_exploration: bool = True
    gamma_grid: tuple[float, ...] = PAPER_GAMMA_GRID
    xi_grid: tuple[float, ...] = PAPER_XI_GRID
    tuning_seeds: int = 20
    tuning_seed: int = TUNING_SEED
    data_path: str | None = None
    name: str = "ndc-sem-covid"
    description: str = (
        "NDC-SEM paper Sec. V-B (Figs. 3, 4, 9): Covid-19 Italy, NDC-SEM (Table I and tuned "
        "(gamma, xi)) vs SEM-UCB with online lambda tuning"
    )

    def __post_init__(self) -> None:
        grid = tuple(float(v) for v in check_lambda_grid(self.lambda_grid))
        object.__setattr__(self, "lambda_grid", grid)
        object.__setattr__(self, "units", tuple(self.units))
        gammas = check_exploration_grid(self.gamma_grid, "gamma", 1.0)
        object.__setattr__(self, "gamma_grid", gammas)
        object.__setattr__(self, "xi_grid", check_exploration_grid(self.xi_grid, "xi", None))
        if self.seeds < 1 or self.chunk_size < 1 or self.tuning_seeds < 1:
            raise ValueError(
                "seeds, chunk_size and tuning_seeds must be >= 1, got "
                f"{self.seeds}, {self.chunk_size}, {self.tuning_seeds}"
            )
        if self.tuning_seed == self.seed:
            raise ValueError(
                f"tuning_seed must differ from seed ({self.seed}): tuning and evaluation seeds "
                "must be disjoint"
            )
        if not 0 <= self.featured_seed < self.seeds:
            raise ValueError(f"featured_seed must lie in 0..{self.seeds - 1}")
        if not self.units or any(u not in UNITS for u in self.units):
            raise ValueError(f"units must be a non-empty subset of {UNITS}, got {self.units}")
        if self.delay < 0 or self.lasso_max_sweeps < 1:
            raise ValueError("delay must be >= 0 and lasso_max_sweeps >= 1")

    # ---------------------------------------------------------------- configuration

    def config(self) -> dict[str, Any]:
        """Everything that fixes the numbers (JSON-ready); the data path is left out."""
        out = dataclasses.asdict(self)
        for key in ("description", "data_path"):
            out.pop(key)
        for key in ("lambda_grid", "units", "gamma_grid", "xi_grid"):
            out[key] = list(out[key])
        return out

    def fingerprint(self) -> str:
        return config_fingerprint(self.config())

    def with_replicates(self, replicates: int) -> CovidExperiment:
        """The same experiment with ``replicates`` seeds (``reproduce --replicates``)."""
        featured = min(self.featured_seed, int(replicates) - 1)
        return dataclasses.replace(self, seeds=int(replicates), featured_seed=max(featured, 0))

    def tasks(self) -> list[Task]:
        """The evaluation tasks (without the tuned pair: :meth:`run` adds it)."""
        starts = range(0, self.seeds, self.chunk_size)
        return [
            Task(unit, c, s, min(s + self.chunk_size, self.seeds))
            for unit in self.units
            for c, s in enumerate(starts)
        ]

    def tuning_tasks(self) -> list[TuningTask]:
        """The grid-search tasks (none without ``tuned_exploration``)."""
        if not self.tuned_exploration:
            return []
        starts = range(0, self.tuning_seeds, self.chunk_size)
        return [
            TuningTask(unit, c, s, min(s + self.chunk_size, self.tuning_seeds))
            for unit in self.units
            for c, s in enumerate(starts)
        ]

    # ---------------------------------------------------------------- running

    def run_task(self, task: Task) -> pd.DataFrame:
        """The rows of one evaluation task (one BLAS thread)."""
        frame = _bulletins(str(resolve_data_path(self.data_path)))
        with threadpool_limits(limits=1):
            rows = [
                row
                for s in range(task.start, task.stop)
                for row in self.run_seed(frame, s, task.unit, task.exploration)
            ]
        return _frame(rows)

    def run_tuning_task(self, task: TuningTask) -> pd.DataFrame:
        """The rows of one tuning task (one BLAS thread)."""
        frame = _bulletins(str(resolve_data_path(self.data_path)))
        with threadpool_limits(limits=1):
            rows = [
                row
                for s in range(task.start, task.stop)
                for row in self.tuning_rows(frame, s, task.unit)
            ]
        return _frame(rows)

    def run(
        self,
        out_dir: str | Path,
        jobs: int = 1,
        backend: str = "loky",
        progress: bool = True,
    ) -> pd.DataFrame:
        """Run the unfinished tasks into ``out_dir`` (resumable); return the long table.

        With ``tuned_exploration`` the tuning tasks run first; the pair each unit's grid
        search picks is then handed to that unit's evaluation tasks.
        """
        path = resolve_data_path(self.data_path)
        tuning, tasks = self.tuning_tasks(), self.tasks()
        header = run_header(self.name, self.config())
        records = [
            {"id": t.id, "unit": t.unit, "seeds": [t.start, t.stop], "tuning": True} for t in tuning
        ] + [{"id": t.id, "unit": t.unit, "seeds": [t.start, t.stop]} for t in tasks]
        experiment = dataclasses.replace(self, data_path=str(path.resolve()))
        options = {"jobs": jobs, "backend": backend, "progress": progress}
        metadata = {"data_file": path.name}
        if tuning:
            done = run_tasks(
                out_dir,
                header,
                tuning,
                records,
                type(self).run_tuning_task,
                experiment,
                metadata=metadata,
                **options,
            )
            pairs = {unit: choose_exploration(done, unit) for unit in self.units}
            tasks = [dataclasses.replace(t, exploration=pairs[t.unit]) for t in tasks]
        return run_tasks(
            out_dir,
            header,
            tasks,
            records,
            type(self).run_task,
            experiment,
            metadata=metadata,
            **options,
        )

    def instance(self, frame: pd.DataFrame, seed: int, tuning: bool = False) -> CovidInstance:
        """Seed ``seed``'s pre-processed instance (its ``k`` and validation days); ``tuning``:
        the tuning seed ``seed`` (root ``tuning_seed``)."""
        rng = np.random.default_rng(self._key(seed, INSTANCE_STREAM, tuning))
        return italy_covid_instance(
            frame, rng=rng, change_point=self.change_point, shift=self.shift
        )

    def _key(self, seed: int, stream: int, tuning: bool = False) -> np.random.SeedSequence:
        root = self.tuning_seed if tuning else self.seed
        return np.random.SeedSequence(root, spawn_key=(int(seed), stream))

    def _environment(
        self, instance: CovidInstance, unit: str
    ) -> tuple[FeedbackDelay, np.ndarray, float]:
        """The delayed bandit in unit ``unit``, its ``lam`` grid and the unit's factor."""
        factor = instance.scale if unit == "cases" else 1.0
        env = FeedbackDelay(
            ItalyCovidBandit(_rescaled(instance, factor), budget=self.budget), delay=self.delay
        )
        return env, np.asarray(self.lambda_grid) * factor**2, factor

    def tuning_rows(self, frame: pd.DataFrame, seed: int, unit: str) -> list[dict[str, Any]]:
        """Every pair of the grid on tuning seed ``seed`` (App. VII-D5): the estimated
        cumulative overall reward of days ``1..T`` and from the change point on."""
        instance = self.instance(frame, seed, tuning=True)
        env, grid, factor = self._environment(instance, unit)
        gammas, xis = exploration_pairs(self.gamma_grid, self.xi_grid)
        actions, final = play_exploration_grid(
            env,
            self._key(seed, KDE_STREAM, tuning=True),
            self._key(seed, POLICY_STREAM, tuning=True),
            gammas,
            xis,
            lam_grid=grid,
            lasso_max_sweeps=self.lasso_max_sweeps,
        )
        rewards = env.estimated_overall_rewards(actions, final) / factor  # (T, P)
        base = {
            "experiment": self.name,
            "record": "tuning",
            "unit": unit,
            "seed": seed,
            "shift": instance.shift,
            "policy": POLICIES[0],
        }
        return [
            {
                **base,
                "gamma": float(g),
                "xi": float(x),
                "reward": float(total),
                "reward_from_change": float(after),
            }
            for g, x, total, after in zip(
                gammas,
                xis,
                rewards.sum(axis=0),
                rewards[self.change_point - 1 :].sum(axis=0),
                strict=True,
            )
        ]

    def run_seed(
        self,
        frame: pd.DataFrame,
        seed: int,
        unit: str = "max",
        exploration: tuple[float, float] | None = None,
    ) -> list[dict[str, Any]]:
        """NDC-SEM (Table I, and ``exploration`` = a tuned ``(gamma, xi)`` if given) and
        SEM-UCB on evaluation seed ``seed``; the rows of the long table.

        The NDC-SEM variants are replicates of one policy with one reward sample, policy seed
        and graph path (:func:`~causalbandits.papers.ndc_sem.covid_tuning.
        play_exploration_grid`): each makes exactly the decisions of a separate run.
        """
        instance = self.instance(frame, seed)
        env, grid, factor = self._environment(instance, unit)
        held_out = np.flatnonzero(instance.validation)
        y = env.instance.overall
        base = {"experiment": self.name, "unit": unit, "seed": seed, "shift": instance.shift}
        options = {"lam_grid": grid, "lasso_max_sweeps": self.lasso_max_sweeps}
        variants = [(POLICIES[0], self.gamma, self.xi)]
        if exploration is not None:
            variants.append((TUNED, *exploration))

        def observer(log: list[dict[str, Any]]) -> Callable[[Any], None]:
            return lambda policy: log.append(_graph_state(policy, env, held_out, factor))

        ndc_log: list[dict[str, Any]] = []
        actions, final = play_exploration_grid(
            env,
            self._key(seed, KDE_STREAM),
            self._key(seed, POLICY_STREAM),
            [gamma for _, gamma, _ in variants],
            [xi for _, _, xi in variants],
            observer(ndc_log),
            **options,
        )
        b = env.instantaneous[:, 0]  # (T, N), scaled; the same sample for every policy
        empty = float(np.abs(y[held_out] - b[held_out]).mean()) / factor
        rewards = env.estimated_overall_rewards(actions, final) / factor
        rows: list[dict[str, Any]] = []
        for r, (label, gamma, xi) in enumerate(variants):
            rows += self._day_rows(
                instance, base, label, gamma, xi, actions[:, r], rewards[:, r], ndc_log, empty
            )
        # the graph learner ignores the decisions: one copy of the final graph's predictions
        predicted = predict_overall(final, b[held_out])[0]
        for k, tau in enumerate(held_out):
            for i, region in enumerate(ABBREVIATIONS):
                rows.append(
                    {
                        **base,
                        "record": "prediction",
                        "policy": POLICIES[0],
                        "day": int(tau) + 1,
                        "date": str(instance.dates[tau]),
                        "validation": True,
                        "region": region,
                        "y": float(y[tau, i]) / factor,
                        "y_pred": float(predicted[k, i]) / factor,
                        "b": float(b[tau, i]) / factor,
                    }
                )
        env.reset([self._key(seed, KDE_STREAM)])
        policy = ValidatedSEMUCB(env.problem, **options)
        policy.reset([self._key(seed, POLICY_STREAM)])
        sem_log: list[dict[str, Any]] = []
        actions = play(env, policy, observer(sem_log))
        rewards = env.estimated_overall_rewards(actions, policy.lasso.fit()[0]) / factor
        rows += self._day_rows(
            instance, base, POLICIES[1], None, None, actions[:, 0], rewards[:, 0], sem_log, empty
        )
        return rows

    @staticmethod
    def _day_rows(
        instance: CovidInstance,
        base: dict[str, Any],
        label: str,
        gamma: float | None,
        xi: float | None,
        actions: np.ndarray,
        rewards: np.ndarray,
        log: list[dict[str, Any]],
        empty: float,
    ) -> list[dict[str, Any]]:
        """One ``record == "day"`` row per day of one policy: its choice, constants, reward
        and the graph learner's state after the day (``log``)."""
        return [
            {
                **base,
                "record": "day",
                "policy": label,
                "day": t + 1,
                "date": str(instance.dates[t]),
                "validation": bool(instance.validation[t]),
                "selected": ";".join(ABBREVIATIONS[i] for i in np.flatnonzero(x)),
                "n_selected": int(x.sum()),
                "gamma": gamma,
                "xi": xi,
                **state,
                "eps_empty": empty,
                "reward": float(reward),
            }
            for t, (x, reward, state) in enumerate(zip(actions, rewards, log, strict=True))
        ]

    # ---------------------------------------------------------------- outputs

    def plot(self, df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
        from causalbandits.papers.ndc_sem.covid_plots import plot_all

        return plot_all(df, Path(out_dir), self)

    def report(self, df: pd.DataFrame) -> str:
        from causalbandits.papers.ndc_sem.covid_report import build_report

        return build_report(df, self)


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows as a table with :data:`COLUMNS`; ``day`` stays an integer (nullable: tuning
    rows have none)."""
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype({"day": "Int64"})


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
    seeds over the paper's 220 pairs) vs SEM-UCB, 20 seeds.

    ``quick``: 2 seeds and 2 tuning seeds, the ``lam`` grid 1e-2 ... 1e2, 20 sweeps per day,
    normalised unit only (the full ``(gamma, xi)`` grid).
    """
    if quick:
        return CovidExperiment(
            seeds=2,
            tuning_seeds=2,
            lambda_grid=QUICK_GRID,
            units=("max",),
            lasso_max_sweeps=20,
            chunk_size=1,
            name="ndc-sem-covid-quick",
        )
    return CovidExperiment()


def selection_matrix(selected: Sequence[str]) -> np.ndarray:
    """``(days, N)`` booleans from the ``selected`` column (``"ABR;CAM;..."`` per day)."""
    index = {a: i for i, a in enumerate(ABBREVIATIONS)}
    out = np.zeros((len(selected), len(ABBREVIATIONS)), dtype=bool)
    for day, text in enumerate(selected):
        for name in filter(None, str(text).split(";")):
            out[day, index[name]] = True
    return out
