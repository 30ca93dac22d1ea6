"""Node GPs of causal Bayesian optimisation (EXCBO spec §3.2, §3.7, §7.2), on BoTorch.

Every node model of the causal-BO policies is one exact GP regression ``w -> x`` in float64:
a Matérn-5/2 kernel with one lengthscale per input (ARD) under a ``ScaleKernel``, with the
MCBO-era priors of the spec's table (lengthscale ``Gamma(3, 6)``, outputscale
``Gamma(2, 0.15)``, noise ``Gamma(1.1, 0.05)``), a ``Standardize`` outcome transform, and
either a learned homoscedastic noise with a floor (EXCBO's encoder and decoder) or a known,
fixed noise variance (MCBO's nodes, GP-UCB's and EICF's near-noiseless ``1e-6``).
Hyper-parameters are fitted by maximising the marginal likelihood (``fit_gpytorch_mll``).
"""

from __future__ import annotations

import warnings

import torch
from botorch.exceptions.warnings import OptimizationWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms.outcome import Standardize
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import GammaPrior

#: Lower bound on a learned noise variance (standardised units; spec §7.4 "ill-conditioning").
NOISE_FLOOR = 1e-6
DTYPE = torch.float64


def matern_kernel(dimension: int) -> ScaleKernel:
    """Matérn-5/2 ARD under a ScaleKernel with the priors of the spec's table (§3.7)."""
    base = MaternKernel(nu=2.5, ard_num_dims=dimension, lengthscale_prior=GammaPrior(3.0, 6.0)).to(
        DTYPE
    )
    return ScaleKernel(base, outputscale_prior=GammaPrior(2.0, 0.15)).to(DTYPE)


def node_gp(
    inputs: torch.Tensor,
    targets: torch.Tensor,
    noise_variance: float | None = None,
    fit: bool = True,
) -> SingleTaskGP:
    """An exact GP ``inputs (n, d) -> targets (n,)`` with the priors above.

    ``noise_variance``: ``None`` learns the noise (floor :data:`NOISE_FLOOR`); a number
    fixes it (in the targets' units). ``fit=False`` keeps the prior's initial
    hyper-parameters (tests, explicit refits with shared hyper-parameters).
    """
    if inputs.ndim != 2 or targets.ndim != 1 or inputs.shape[0] != targets.shape[0]:
        raise ValueError(
            "need inputs (n, d) and targets (n,), got "
            f"{tuple(inputs.shape)} and {tuple(targets.shape)}"
        )
    if not (torch.isfinite(inputs).all() and torch.isfinite(targets).all()):
        raise ValueError("GP training data must be finite")
    x = inputs.to(DTYPE)
    y = targets.to(DTYPE).unsqueeze(-1)
    options: dict = {"covar_module": matern_kernel(x.shape[-1])}
    if noise_variance is None:
        options["likelihood"] = GaussianLikelihood(
            noise_prior=GammaPrior(1.1, 0.05), noise_constraint=GreaterThan(NOISE_FLOOR)
        ).to(DTYPE)
    else:
        if not noise_variance > 0:
            raise ValueError(f"noise_variance must be positive, got {noise_variance}")
        options["train_Yvar"] = torch.full_like(y, float(noise_variance))
    model = SingleTaskGP(x, y, outcome_transform=Standardize(m=1), **options)
    if fit:
        fit_marginal_likelihood(model)
    model.eval()
    return model


def fit_marginal_likelihood(model: SingleTaskGP) -> None:
    """ML-II/MAP fit of ``model``'s hyper-parameters (L-BFGS; BoTorch's retries on failure)."""
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizationWarning)
        fit_gpytorch_mll(mll)
