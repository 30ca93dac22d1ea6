"""Reusable statistics: weighted ridge, optimistic SEM propagation, KSG mutual information,
sub-graph least squares, CSL graph learning, reward bounds, change detectors, GOLEM/DAGMA,
non-negative lasso, discounted delay-aware arm statistics, the top-s oracle."""

from causalbandits.estimators.change_detection import (
    GaussianGLR,
    WindowedGLR,
    gaussian_window_glr,
    glr_statistics,
    sem_window_glr,
)
from causalbandits.estimators.csl import (
    CSLResult,
    is_acyclic,
    learn_both_modes,
    learn_graph,
    learn_subgraphs,
)
from causalbandits.estimators.discounted import DiscountedArmStatistics
from causalbandits.estimators.lasso import SEMLasso, SEMStatistics, lasso_support, nonnegative_lasso
from causalbandits.estimators.mutual_information import (
    ksg_mutual_information,
    ksg_mutual_information_columns,
)
from causalbandits.estimators.propagation import (
    PropagationPlan,
    block_coordinate_ascent,
    propagate_means,
)
from causalbandits.estimators.reward_bound import RewardBounds, reward_bounds, weight_error_spectra
from causalbandits.estimators.ridge import WeightedRidge
from causalbandits.estimators.structure_learning import dagma_linear, golem_ev, graph_metrics
from causalbandits.estimators.subgraph import SubgraphData
from causalbandits.estimators.topk import top_s_mask, total_effects

__all__ = [
    "CSLResult",
    "DiscountedArmStatistics",
    "GaussianGLR",
    "PropagationPlan",
    "RewardBounds",
    "SEMLasso",
    "SEMStatistics",
    "SubgraphData",
    "WeightedRidge",
    "WindowedGLR",
    "block_coordinate_ascent",
    "dagma_linear",
    "gaussian_window_glr",
    "glr_statistics",
    "golem_ev",
    "graph_metrics",
    "is_acyclic",
    "lasso_support",
    "ksg_mutual_information",
    "ksg_mutual_information_columns",
    "learn_both_modes",
    "learn_graph",
    "learn_subgraphs",
    "nonnegative_lasso",
    "propagate_means",
    "reward_bounds",
    "sem_window_glr",
    "top_s_mask",
    "total_effects",
    "weight_error_spectra",
]
