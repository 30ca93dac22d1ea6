"""Robust-LCB (Yan, Mukherjee, Varici, Tajer; arXiv 2405.07795): Fig. 1(b) and Fig. 1(c)."""

from causalbandits.papers.robust_lcb.figures import fig1b, fig1c

EXPERIMENTS = {"robust-lcb-fig1b": fig1b, "robust-lcb-fig1c": fig1c}
