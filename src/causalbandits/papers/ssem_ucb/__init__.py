"""SSEM-UCB (Bauschmann & Maghsudi, arXiv 2606.14650): the synthetic trials and the linear
sanity check; presets ``(quick: bool) -> Experiment`` by catalogue name."""

from __future__ import annotations

from functools import partial

from causalbandits.papers.ssem_ucb.trials import preset, tuning

EXPERIMENTS = {
    **{
        f"ssem-ucb-{trial}": partial(preset, trial)
        for trial in ("linear", "trial-1", "trial-2", "trial-3")
    },
    "ssem-ucb-tuning": tuning,
}
