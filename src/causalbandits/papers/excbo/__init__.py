"""EXCBO (Ren & Qian, arXiv 2402.02277): causal Bayesian optimisation with exogenous
distribution learning; the exogenous-recovery study (spec §8.1)."""

from causalbandits.papers.excbo.recovery import recovery

EXPERIMENTS = {
    "excbo-recovery": recovery,
}
