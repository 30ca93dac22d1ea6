"""causalbandits: causal bandits and causal Bayesian optimisation, fast and reproducible."""

from causalbandits.assumptions import AssumptionWarning

__version__ = "0.1.0"

__all__ = ["AssumptionWarning", "__version__"]
