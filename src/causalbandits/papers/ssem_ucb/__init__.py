"""SSEM-UCB (Bauschmann & Maghsudi, arXiv 2606.14650): the synthetic trials, the linear
sanity check and the German train delays; presets ``(quick: bool) -> Experiment`` by
catalogue name."""

from __future__ import annotations

from functools import partial

from causalbandits.papers.ssem_ucb import train_delays
from causalbandits.papers.ssem_ucb.trials import (
    finite_difference_preset,
    linear_long_preset,
    paper_constants_preset,
    preset,
    tuning,
)

EXPERIMENTS = {
    **{
        f"ssem-ucb-{trial}": partial(preset, trial)
        for trial in ("linear", "trial-1", "trial-2", "trial-3")
    },
    "ssem-ucb-linear-long": linear_long_preset,
    "ssem-ucb-trial-1-fd": finite_difference_preset,
    "ssem-ucb-trial-1-paper-constants": paper_constants_preset,
    "ssem-ucb-tuning": tuning,
    "ssem-ucb-train-delays": partial(train_delays.preset, "simulator"),
    "ssem-ucb-train-delays-replay": partial(train_delays.preset, "replay"),
}
