"""CSL-UCB (Peng, Zhang, Mitra, IEEE TSP 2025): E1 (graphs), E2 (FN errors), E3, E4 (bandits)."""

from causalbandits.papers.csl_ucb.bandits import e3, e4
from causalbandits.papers.csl_ucb.fn_errors import e2
from causalbandits.papers.csl_ucb.graphs import e1, e1_observational

EXPERIMENTS = {
    "csl-ucb-e1": e1,
    "csl-ucb-e1-observational": e1_observational,
    "csl-ucb-e2": e2,
    "csl-ucb-e3": e3,
    "csl-ucb-e4": e4,
}
