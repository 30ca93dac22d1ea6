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
* ``unit="cases"`` (a sensitivity run, not the spec's resolution): the same experiment on raw
  daily cases, with the ``lam`` grid multiplied by ``scale^2`` so that the graphs are exactly
  those of the normalised run; only the UCB indices see the different reward scale. Every
  number in the table is in normalised units (``lam / scale^2``, ``eps / scale``, rewards
  ``/ scale``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from causalbandits.data.italy_covid import (
    ABBREVIATIONS,
    CovidInstance,
    ItalyCovidBandit,
    italy_covid_instance,
    load_italy_covid,
)
from causalbandits.envs.delay import FeedbackDelay
from causalbandits.estimators.validated_lasso import (
    DECADE_GRID,
    check_lambda_grid,
    predict_overall,
    spectral_radius,
    validation_error,
)
from causalbandits.experiments.runner import run_tasks
from causalbandits.policies.ndc_sem_validated import ValidatedNDCSEM, ValidatedSEMUCB

#: Environment variable naming the bulletins file (``dpc-covid19-ita-regioni.csv[.gz]``).
DATA_ENV = "CAUSALBANDITS_ITALY_COVID"
#: Default location, relative to the working directory (the project root).
DEFAULT_DATA = Path("..") / "shared" / "data" / "italy_covid" / "dpc-covid19-ita-regioni.csv.gz"

POLICIES = ("NDC-SEM", "SEM-UCB")
UNITS = ("max", "cases")
QUICK_GRID: tuple[float, ...] = (1e-2, 1e-1, 1.0, 10.0, 100.0)

# Streams of a seed (last element of its spawn key).
INSTANCE_STREAM = 0
KDE_STREAM = 1
POLICY_STREAM = 2

#: Columns of the long table. ``record`` is ``"day"`` (one row per unit, seed, policy and
#: day) or ``"prediction"`` (one row per unit, seed, validation day and region: the final
#: graph's prediction, Fig. 3).
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
    "lam",
    "eps",
    "n_validation",
    "eps_all",
    "eps_empty",
    "radius",
    "edges",
    "reward",
    "region",
    "y",
    "y_pred",
    "b",
)


def resolve_data_path(path: str | Path | None = None) -> Path:
    """The bulletins file: ``path``, else ``$CAUSALBANDITS_ITALY_COVID``, else
    :data:`DEFAULT_DATA` (relative to the working directory); raise if it does not exist."""
    candidate = Path(path or os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not candidate.is_file():
        raise FileNotFoundError(
            f"the Italian Covid-19 bulletins are not at {candidate.resolve()}; pass data_path=, "
            f"set {DATA_ENV}, or fetch them with causalbandits.data.italy_covid."
            "download_italy_covid(cache_dir) (pcm-dpc/COVID-19, CC BY 4.0)"
        )
    return candidate


@functools.lru_cache(maxsize=2)
def _bulletins(path: str) -> pd.DataFrame:
    return load_italy_covid(path)


@dataclass(frozen=True)
class Task:
    """Seeds ``start..stop-1`` in reward unit ``unit``."""

    unit: str
    chunk: int
    start: int
    stop: int

    @property
    def id(self) -> str:
        return f"{self.unit}-c{self.chunk:04d}"


@dataclass(frozen=True)
class CovidExperiment:
    """The Covid-19 experiment as a run-based paper experiment (``run``, ``plot``, ``report``).

    Parameters
    ----------
    seeds: Monte-Carlo seeds (the paper shows one draw).
    lambda_grid: ``lam`` values for the online tuning (normalised units).
    gamma, xi: NDC-SEM's discount and exploration constant (Table I, Covid).
    budget, delay, change_point: ``s``, ``D`` and the day of the cyclic shift.
    shift: a fixed ``k`` for every seed; ``None`` draws ``k`` per seed.
    units: reward units to run, from :data:`UNITS` (``"max"``: the spec's normalisation).
    lasso_max_sweeps: coordinate-descent sweeps per day and ``lam`` (warm-started).
    seed: root seed; chunk_size: seeds per task; featured_seed: the seed drawn in Fig. 3/4.
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
    data_path: str | None = None
    name: str = "ndc-sem-covid"
    description: str = (
        "NDC-SEM paper Sec. V-B (Figs. 3, 4, 9): Covid-19 Italy, NDC-SEM vs SEM-UCB with "
        "online lambda tuning"
    )

    def __post_init__(self) -> None:
        grid = tuple(float(v) for v in check_lambda_grid(self.lambda_grid))
        object.__setattr__(self, "lambda_grid", grid)
        object.__setattr__(self, "units", tuple(self.units))
        if self.seeds < 1 or self.chunk_size < 1:
            raise ValueError(
                f"seeds and chunk_size must be >= 1, got {self.seeds}, {self.chunk_size}"
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
        out["lambda_grid"] = list(self.lambda_grid)
        out["units"] = list(self.units)
        return out

    def fingerprint(self) -> str:
        text = json.dumps(self.config(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def with_replicates(self, replicates: int) -> CovidExperiment:
        """The same experiment with ``replicates`` seeds (``reproduce --replicates``)."""
        featured = min(self.featured_seed, int(replicates) - 1)
        return dataclasses.replace(self, seeds=int(replicates), featured_seed=max(featured, 0))

    def tasks(self) -> list[Task]:
        starts = range(0, self.seeds, self.chunk_size)
        return [
            Task(unit, c, s, min(s + self.chunk_size, self.seeds))
            for unit in self.units
            for c, s in enumerate(starts)
        ]

    # ---------------------------------------------------------------- running

    def run_task(self, task: Task) -> pd.DataFrame:
        """The rows of one task (one BLAS thread)."""
        frame = _bulletins(str(resolve_data_path(self.data_path)))
        with threadpool_limits(limits=1):
            rows = [
                row
                for s in range(task.start, task.stop)
                for row in self.run_seed(frame, s, task.unit)
            ]
        return pd.DataFrame(rows, columns=list(COLUMNS))

    def run(
        self,
        out_dir: str | Path,
        jobs: int = 1,
        backend: str = "loky",
        progress: bool = True,
    ) -> pd.DataFrame:
        """Run the unfinished tasks into ``out_dir`` (resumable); return the long table."""
        path = resolve_data_path(self.data_path)
        tasks = self.tasks()
        header = {
            "experiment": self.name,
            "kind": "run",
            "fingerprint": self.fingerprint(),
            "config": self.config(),
        }
        records = [{"id": t.id, "unit": t.unit, "seeds": [t.start, t.stop]} for t in tasks]
        experiment = dataclasses.replace(self, data_path=str(path.resolve()))
        return run_tasks(
            out_dir,
            header,
            tasks,
            records,
            type(self).run_task,
            experiment,
            jobs,
            backend,
            progress,
            metadata={"data_file": path.name},
        )

    def instance(self, frame: pd.DataFrame, seed: int) -> CovidInstance:
        """Seed ``seed``'s pre-processed instance (its ``k`` and validation days)."""
        rng = np.random.default_rng(self._key(seed, INSTANCE_STREAM))
        return italy_covid_instance(
            frame, rng=rng, change_point=self.change_point, shift=self.shift
        )

    def _key(self, seed: int, stream: int) -> np.random.SeedSequence:
        return np.random.SeedSequence(self.seed, spawn_key=(int(seed), stream))

    def run_seed(self, frame: pd.DataFrame, seed: int, unit: str = "max") -> list[dict[str, Any]]:
        """Both policies on seed ``seed``; the rows of the long table."""
        instance = self.instance(frame, seed)
        factor = instance.scale if unit == "cases" else 1.0
        scaled = _rescaled(instance, factor)
        env = FeedbackDelay(ItalyCovidBandit(scaled, budget=self.budget), delay=self.delay)
        grid = np.asarray(self.lambda_grid) * factor**2
        held_out = np.flatnonzero(instance.validation)
        base = {"experiment": self.name, "unit": unit, "seed": seed, "shift": instance.shift}
        rows: list[dict[str, Any]] = []
        for label in POLICIES:
            env.reset([self._key(seed, KDE_STREAM)])
            if label == "NDC-SEM":
                policy = ValidatedNDCSEM(
                    env.problem,
                    gamma=self.gamma,
                    xi=self.xi,
                    lam_grid=grid,
                    lasso_max_sweeps=self.lasso_max_sweeps,
                )
            else:
                policy = ValidatedSEMUCB(
                    env.problem, lam_grid=grid, lasso_max_sweeps=self.lasso_max_sweeps
                )
            policy.reset([self._key(seed, POLICY_STREAM)])
            b = env.instantaneous[:, 0]  # (T, N), scaled
            y = scaled.overall
            empty = float(np.abs(y[held_out] - b[held_out]).mean())
            actions = np.zeros((instance.horizon, instance.n_arms), dtype=bool)
            days: list[dict[str, Any]] = []
            for t in range(instance.horizon):
                x = policy.select()
                policy.update(x, env.step(x))
                actions[t] = x[0]
                learner = policy.lasso
                a_hat = learner.fit()[0]
                eps_all = validation_error(a_hat, y[held_out], b[held_out], np.ones(held_out.size))[
                    0
                ]
                days.append(
                    {
                        **base,
                        "record": "day",
                        "policy": label,
                        "day": t + 1,
                        "date": str(instance.dates[t]),
                        "validation": bool(instance.validation[t]),
                        "selected": ";".join(ABBREVIATIONS[i] for i in np.flatnonzero(x[0])),
                        "n_selected": int(x[0].sum()),
                        "lam": float(learner.lam[0]) / factor**2,
                        "eps": float(learner.epsilon[0]) / factor,
                        "n_validation": int(learner.n_validation[0]),
                        "eps_all": float(eps_all) / factor,
                        "eps_empty": empty / factor,
                        "radius": float(spectral_radius(a_hat)),
                        "edges": int((a_hat > 1e-10).sum()),
                    }
                )
            final = policy.lasso.fit()[0]
            rewards = env.estimated_overall_rewards(actions[:, None], final)[:, 0] / factor
            for day, reward in zip(days, rewards, strict=True):
                day["reward"] = float(reward)
            rows.extend(days)
            if label == POLICIES[0]:  # the graph learner ignores the decisions: one copy
                predicted = predict_overall(final, b[held_out])[0]
                for k, tau in enumerate(held_out):
                    for i, region in enumerate(ABBREVIATIONS):
                        rows.append(
                            {
                                **base,
                                "record": "prediction",
                                "policy": label,
                                "day": int(tau) + 1,
                                "date": str(instance.dates[tau]),
                                "validation": True,
                                "region": region,
                                "y": float(y[tau, i]) / factor,
                                "y_pred": float(predicted[k, i]) / factor,
                                "b": float(b[tau, i]) / factor,
                            }
                        )
        return rows

    # ---------------------------------------------------------------- outputs

    def plot(self, df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
        from causalbandits.papers.ndc_sem_covid_report import plot_all

        return plot_all(df, Path(out_dir), self)

    def report(self, df: pd.DataFrame) -> str:
        from causalbandits.papers.ndc_sem_covid_report import build_report

        return build_report(df, self)


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
    """Sec. V-B: 21 regions, 80 days, s = 5, D = 3, NDC-SEM vs SEM-UCB, 20 seeds.

    ``quick``: 2 seeds, the ``lam`` grid 1e-2 ... 1e2, 20 sweeps per day, normalised unit only.
    """
    if quick:
        return CovidExperiment(
            seeds=2,
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
