"""Node GPs of causal Bayesian optimisation (EXCBO Sec. 5.1; decisions: excbo 14), on BoTorch.

Every node model of the causal-BO policies is one exact GP regression ``w -> x`` in float64:
a Matérn-5/2 kernel with one lengthscale per input (ARD) under a ``ScaleKernel``, with the
MCBO-era BoTorch priors (lengthscale ``Gamma(3, 6)``, outputscale
``Gamma(2, 0.15)``, noise ``Gamma(1.1, 0.05)``), a ``Standardize`` outcome transform, and
either a learned homoscedastic noise with a floor (EXCBO's encoder and decoder) or a known,
fixed noise variance (MCBO's nodes, GP-UCB's and EICF's near-noiseless ``1e-6``).
Hyper-parameters are fitted by maximising the marginal likelihood (``fit_gpytorch_mll``,
its loss evaluated densely by :class:`NegativeLogMarginal`).
:func:`training_prior` exposes the fitted prior of the standardised training targets,
``N(m, K + ρ²I)`` (EXCBO's leave-one-out residuals, :mod:`~causalbandits.estimators.exogenous`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch
from botorch.exceptions.warnings import OptimizationWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms.outcome import Standardize
from botorch.optim.closures import ForwardBackwardClosure
from botorch.optim.utils import get_parameters
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import GammaPrior, Prior
from gpytorch.utils.warnings import NumericalWarning

#: Lower bound on a learned noise variance (standardised units; decisions: excbo 14).
NOISE_FLOOR = 1e-6
DTYPE = torch.float64


def matern_kernel(dimension: int) -> ScaleKernel:
    """Matérn-5/2 ARD under a ScaleKernel with MCBO-era priors (decisions: excbo 14)."""
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
    with warnings.catch_warnings():  # a fixed 1e-6 is rounded to GPyTorch's floor 1e-6
        warnings.simplefilter("ignore", NumericalWarning)
        model = SingleTaskGP(x, y, outcome_transform=Standardize(m=1), **options)
    if fit:
        fit_marginal_likelihood(model)
    model.eval()
    return model


def fit_marginal_likelihood(model: SingleTaskGP) -> None:
    """ML-II/MAP fit of ``model``'s hyper-parameters (L-BFGS; BoTorch's retries on failure),
    the loss and its gradient from :class:`NegativeLogMarginal`."""
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    closure = ForwardBackwardClosure(
        NegativeLogMarginal(mll), get_parameters(mll, requires_grad=True)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizationWarning)
        fit_gpytorch_mll(mll, closure=closure)


LOG_2PI = math.log(2 * math.pi)


def log_prior(prior: Prior, value: torch.Tensor) -> torch.Tensor:
    """``sum log p(value)``; a Gamma prior (every node GP's) in closed form,
    ``a log b - log Gamma(a) + (a - 1) log x - b x``, without ``torch.distributions``'
    per-call checks."""
    if type(prior) is GammaPrior:
        a, b = prior.concentration, prior.rate
        return (a * b.log() - torch.lgamma(a) + (a - 1.0) * value.log() - b * value).sum()
    return prior.log_prob(value).sum()


class NegativeLogMarginal:
    """``-(log N(y; m, s K_l + diag(rho^2)) + sum log p(theta)) / n``: GPyTorch's
    ``ExactMarginalLogLikelihood`` of a node GP (Rasmussen & Williams eq. 2.30 with the
    hyper-priors) on its standardised training targets, as the loss of a fit. The inputs'
    squared differences are formed once per fit; then one dense Cholesky factor per
    evaluation instead of GPyTorch's lazy-tensor machinery, which dominates at node-GP
    sizes (equal to GPyTorch's to 1e-12, its gradient to 1e-10, tested); if the factor
    fails, GPyTorch's own loss (which adds jitter) is used."""

    def __init__(self, mll: ExactMarginalLogLikelihood) -> None:
        self.mll = mll
        self.priors = tuple(
            (module, prior, closure) for _, module, prior, closure, _ in mll.model.named_priors()
        )
        inputs = mll.model.train_inputs[0]
        #: ``(x_i - x_j)^2`` per input dimension ``(n, n, d)``, fixed during a fit.
        self.squared_differences = (inputs.unsqueeze(-2) - inputs.unsqueeze(-3)).square()

    def __call__(self) -> torch.Tensor:
        model = self.mll.model
        targets = model.train_targets
        count = targets.shape[-1]
        kernel = model.covar_module
        lengthscale = kernel.base_kernel.lengthscale.reshape(-1)
        squared = (self.squared_differences / lengthscale.square()).sum(dim=-1)
        distance = squared.clamp_min(1e-30).sqrt()  # GPyTorch's clamp: zero gradient at d = 0
        root5 = math.sqrt(5.0) * distance
        correlation = (1.0 + root5 + (5.0 / 3.0) * distance.square()) * torch.exp(-root5)
        covariance = kernel.outputscale * correlation + torch.diag_embed(
            model.likelihood.noise.expand(count)
        )
        cholesky, failed = torch.linalg.cholesky_ex(covariance)
        if failed:
            return -self.mll(model(*model.train_inputs), targets)
        residual = (targets - model.mean_module.constant).unsqueeze(-1)
        whitened = torch.linalg.solve_triangular(cholesky, residual, upper=False)
        log_likelihood = -0.5 * (
            whitened.square().sum() + 2.0 * cholesky.diagonal().log().sum() + count * LOG_2PI
        )
        priors = sum(log_prior(prior, closure(module)) for module, prior, closure in self.priors)
        return -(log_likelihood + priors) / count


@dataclass(frozen=True, eq=False)
class TrainingPrior:
    """The prior of a GP's training targets in its standardised output space:
    ``targets ~ N(mean, kernel + diag(noise))``, i.e. ``y ~ N(m, K + ρ²I)`` with ``K̂ = K + ρ²I``.

    ``offset`` and ``scale`` are the ``Standardize`` transform's mean and std: a target in
    the model's units is ``offset + scale * y``.
    """

    targets: torch.Tensor
    mean: torch.Tensor
    kernel: torch.Tensor
    noise: torch.Tensor
    offset: float
    scale: float

    @property
    def covariance(self) -> torch.Tensor:
        """``K̂ = K + diag(noise)``, the covariance of the standardised training targets."""
        return self.kernel + torch.diag(self.noise)


def training_prior(model: SingleTaskGP) -> TrainingPrior:
    """The fitted hyper-parameters of ``model`` evaluated at its training inputs: prior mean,
    kernel matrix and noise variances in the standardised space, and the standardisation."""
    inputs = model.train_inputs[0]
    with torch.no_grad():
        prior = model.forward(inputs)
        marginal = model.likelihood(prior, [inputs])
        kernel = prior.covariance_matrix
        noise = marginal.covariance_matrix.diagonal() - kernel.diagonal()
        transform = getattr(model, "outcome_transform", None)
        offset, scale = (
            (0.0, 1.0)
            if transform is None
            else (float(transform.means.squeeze()), float(transform.stdvs.squeeze()))
        )
        return TrainingPrior(
            targets=model.train_targets.detach().clone(),
            mean=prior.mean.detach().clone(),
            kernel=kernel.detach().clone(),
            noise=noise.detach().clone(),
            offset=offset,
            scale=scale,
        )
