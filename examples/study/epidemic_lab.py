"""A stand-in for a lab: one evaluation of the epidemic model (EXCBO Sec. 7.3) at an action.

Usage: ``python epidemic_lab.py ID '[a_1, ..., a_13]'`` prints the six observed node values
(infections per group and period) as JSON. The noise is seeded by the evaluation's id, as a
lab re-running evaluation ``ID`` would observe the same system: so an interrupted study and
an uninterrupted one see the same values for the same evaluation.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from causalbandits.envs.bo_problems import make_noise
from causalbandits.envs.epidemic import GROUPS, PERIODS, epidemic_network

SIGMA = 0.2


def observe(evaluation: int, action: list[float]) -> list[float]:
    """The node values of one run of the epidemic with process noise (mixture, sigma 0.2)."""
    noise = make_noise("mixture", PERIODS * GROUPS, SIGMA)
    draw = noise.sample(np.random.default_rng([2024, evaluation]), (1,))
    values = epidemic_network().evaluate(np.asarray(action, dtype=float)[None, :], draw)
    return values[0].tolist()


if __name__ == "__main__":
    print(json.dumps(observe(int(sys.argv[1]), json.loads(sys.argv[2]))))
