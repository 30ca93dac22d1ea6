"""EXCBO paper Fig. 13: EXCBO's surrogate of Dropwave's ``X -> Y`` mechanism before and after
30 BO rounds (Gaussian noise, sigma = 0.1, 30 initial samples; App. C.3).

The surrogate is EXCBO's encoder GP of node ``Y`` (input: ``X`` min-max scaled over the data,
learned noise; ``policies/excbo.py`` step 1), refitted on a seed's data at round 0 (the design)
and at the last round. The paper's statements: at the start the samples spread over the range
of ``X``; after 30 rounds they concentrate near the optimum ``X = 0`` and the surrogate's
standard deviation shrinks where the data are dense.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure

from causalbandits.envs.bo_problems import dropwave_response
from causalbandits.estimators.gp import DTYPE, node_gp
from causalbandits.estimators.gp_network import MinMaxScaler
from causalbandits.experiments.evidence import PairedComparison
from causalbandits.experiments.report import Claim, pm, standard_error

if TYPE_CHECKING:
    from causalbandits.papers.excbo.comparison import BOComparison

#: ``X`` counts as near the optimum below this (``phi`` is at least 0.2 there, as for the
#: Dropwave diagnosis's peak radius at 2.5; its first trough is at ``X = 0.26``).
NEAR_OPTIMUM = 1.0
#: The surrogate is drawn on this grid of ``X``.
GRID = np.linspace(0.0, 8.0, 161)


def surrogate(x: np.ndarray, y: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The posterior mean and standard deviation on ``grid`` of EXCBO's ``Y`` encoder fitted
    on ``(x, y)``: a GP on ``minmax(x)`` with learned noise."""
    inputs = torch.tensor(x, dtype=DTYPE).unsqueeze(-1)
    scaler = MinMaxScaler.fit(inputs)
    model = node_gp(scaler(inputs), torch.tensor(y, dtype=DTYPE))
    with torch.no_grad():
        posterior = model.posterior(scaler(torch.as_tensor(grid, dtype=DTYPE).unsqueeze(-1)))
        return posterior.mean.squeeze(-1).numpy(), posterior.variance.sqrt().squeeze(-1).numpy()


def surrogate_claims(df: pd.DataFrame, late: pd.DataFrame, experiment: BOComparison) -> list[Claim]:
    """Fig. 13: the queried ``X`` concentrate near 0 (per seed, the share of the BO rounds'
    ``X`` near 0 against the design's, paired over seeds), and the surrogate's std shrinks
    where they were queried (per seed, its mean at the BO rounds' ``X`` refitted at the last
    round over the design's fit; the ratio against 1 over seeds)."""
    last = int(df["round"].max())
    near = (df["x0"] < NEAR_OPTIMUM).groupby([df["replicate"], df["round"] > 0]).mean()
    near = near.unstack()
    shrink = {}
    for replicate, rows in df.groupby("replicate"):
        queried = rows.loc[rows["round"] > 0, "x0"].to_numpy()
        fits = [rows[rows["round"] <= stop] for stop in (0, last)]  # the design; all rounds
        design, final = (
            surrogate(f["x0"].to_numpy(), f["x1"].to_numpy(), queried)[1] for f in fits
        )
        shrink[replicate] = final.mean() / design.mean()
    ratio = pd.Series(shrink)
    concentrate = PairedComparison.between(near[True], near[False])
    shrinks = PairedComparison.of(ratio - 1, direction=-1)
    return [
        Claim.compare(
            f"after {last} rounds the samples concentrate near the optimum X = 0",
            concentrate,
            ours=f"share with X < {NEAR_OPTIMUM:g}: design {near[False].mean():.0%}, BO rounds "
            f"{near[True].mean():.0%}; {concentrate.describe(2)}",
        ),
        Claim.compare(
            "the surrogate's std shrinks where the data are dense",
            shrinks,
            ours=f"mean std at the X of the BO rounds' queries, round {last} / round 0: "
            f"{pm(ratio.mean(), standard_error(ratio), digits=2)} (the ratio - 1 tested)",
        ),
    ]


def plot_surrogate(df: pd.DataFrame, path: Path, sigma: float) -> Path:
    """The paper's three panels for the first seed: the surrogate (mean ± 2 std) with the
    data at round 0 and at the last round, and raw samples ``Y = phi(X) + eps``."""
    replicate = int(df["replicate"].min())
    last = int(df["round"].max())
    figure = Figure(figsize=(13, 3.8))  # no pyplot: the user's backend stays as it is
    axes = figure.subplots(1, 3, sharey=True)
    for axis, stop in zip(axes[:2], (0, last), strict=True):
        rows = df[(df["replicate"] == replicate) & (df["round"] <= stop)]
        mean, std = surrogate(rows["x0"].to_numpy(), rows["x1"].to_numpy(), GRID)
        axis.plot(GRID, mean, color="tab:blue", label="surrogate mean")
        axis.fill_between(GRID, mean - 2 * std, mean + 2 * std, color="tab:blue", alpha=0.2)
        axis.scatter(rows["x0"], rows["x1"], s=12, color="tab:red", label="observations")
        axis.set(title=f"t = {stop}, |D| = {len(rows)}", xlabel="X")
    rng = np.random.default_rng(0)
    x = rng.uniform(GRID[0], GRID[-1], 400)
    axes[2].scatter(x, dropwave_response(x) + sigma * rng.standard_normal(400), s=6, color="grey")
    axes[2].plot(GRID, dropwave_response(GRID), color="black", label="phi(X)")
    axes[2].set(title=f"Y = phi(X) + eps, sigma = {sigma:g}", xlabel="X")
    axes[0].set_ylabel("Y")
    axes[0].legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    return path
