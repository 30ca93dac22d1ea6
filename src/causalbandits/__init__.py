"""causalbandits: causal bandits and causal Bayesian optimisation, fast and reproducible."""

__version__ = "0.1.0"
