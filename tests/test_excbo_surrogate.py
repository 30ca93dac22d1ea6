"""Fig. 13's surrogate (EXCBO's Y encoder on Dropwave) and its claim checks, on data whose
answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd

from causalbandits.envs.bo_problems import dropwave_response
from causalbandits.papers.excbo.comparison import BOComparison
from causalbandits.papers.excbo.surrogate import NEAR_OPTIMUM, surrogate, surrogate_claims


def seed_rows(rng, replicate: int, design: np.ndarray, rounds: np.ndarray) -> pd.DataFrame:
    x = np.concatenate([design, rounds])
    y = dropwave_response(x) + 0.05 * rng.standard_normal(x.size)
    index = np.arange(x.size) - design.size + 1  # design rounds <= 0
    return pd.DataFrame({"replicate": replicate, "round": index, "x0": x, "x1": y})


def test_surrogate_is_sure_where_the_data_are_dense(rng) -> None:
    x = np.concatenate([rng.uniform(0, 1, 40), rng.uniform(1, 8, 8)])
    y = dropwave_response(x) + 0.05 * rng.standard_normal(x.size)
    grid = np.linspace(0, 8, 81)
    _, std = surrogate(x, y, grid)
    assert std[grid <= 1].mean() < std[grid > 4].mean()


def test_claims_hold_when_the_rounds_concentrate_near_zero_and_fail_otherwise(rng) -> None:
    experiment = BOComparison(problem="dropwave", figure="fig13", methods=("EXCBO",))
    near = pd.concat(
        seed_rows(rng, r, rng.uniform(0, 8, 20), rng.uniform(0, NEAR_OPTIMUM, 20)) for r in range(3)
    )
    far = pd.concat(
        seed_rows(rng, r, rng.uniform(0, 8, 20), rng.uniform(5, 8, 20)) for r in range(3)
    )
    assert [claim.holds for claim in surrogate_claims(near, None, experiment)] == [True, True]
    assert not surrogate_claims(far, None, experiment)[0].holds
