"""The progress curve of a study: every told objective and the best so far."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def plot_progress(study: Any, path: Path) -> Path:
    """Draw ``study``'s told objectives by evaluation and the running best into ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    told = study.objectives()
    figure, axes = plt.subplots(figsize=(6, 3.5))
    if len(told):
        axes.plot(told[:, 0], told[:, 1], ".", color="0.6", label="told objective")
        axes.step(told[:, 0], np.maximum.accumulate(told[:, 1]), where="post", label="best so far")
        axes.legend()
    axes.set_xlabel("evaluation")
    axes.set_ylabel("objective")
    axes.set_title(f"study {study.name}: {study.spec.policy}")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
