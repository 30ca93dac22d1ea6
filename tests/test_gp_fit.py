"""The node GPs' fitting loss: GPyTorch's exact marginal likelihood with the hyper-priors,
evaluated densely (:class:`~causalbandits.estimators.gp.NegativeLogMarginal`), equals
GPyTorch's own in value and gradient, falls back to it when the factor fails, and a fit
reaches the hyper-parameters of BoTorch's default fit."""

from __future__ import annotations

import warnings

import pytest
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.optim.utils import get_parameters
from gpytorch.mlls import ExactMarginalLogLikelihood

from causalbandits.estimators.gp import NegativeLogMarginal, node_gp


def data(dimension: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.rand(30, dimension, generator=generator, dtype=torch.float64)
    noise = 0.1 * torch.randn(30, generator=generator, dtype=torch.float64)
    return x, 2.0 + torch.sin(6 * x).sum(-1) + noise


def marginal(dimension: int, noise_variance: float | None, seed: int = 0):
    """An unfitted node GP's marginal likelihood in training mode, hyper-parameters moved
    off their initial values, and its free parameters."""
    model = node_gp(*data(dimension, seed), noise_variance=noise_variance, fit=False)
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    mll.train()
    parameters = list(get_parameters(mll, requires_grad=True).values())
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for parameter in parameters:
            parameter.add_(torch.randn(parameter.shape, generator=generator, dtype=torch.float64))
    return mll, parameters


def gpytorch_loss(mll: ExactMarginalLogLikelihood) -> torch.Tensor:
    model = mll.model
    return -mll(model(*model.train_inputs), model.train_targets)


@pytest.mark.parametrize(("dimension", "noise_variance"), [(1, None), (3, None), (2, 0.01)])
def test_the_dense_loss_equals_gpytorchs_in_value_and_gradient(dimension, noise_variance) -> None:
    mll, parameters = marginal(dimension, noise_variance)
    ours = NegativeLogMarginal(mll)()
    theirs = gpytorch_loss(mll)
    torch.testing.assert_close(ours, theirs.reshape(ours.shape), rtol=1e-12, atol=1e-12)
    for mine, reference in zip(
        torch.autograd.grad(ours, parameters),
        torch.autograd.grad(theirs.sum(), parameters),
        strict=True,
    ):
        torch.testing.assert_close(mine, reference, rtol=1e-10, atol=1e-12)


def test_a_failed_factor_falls_back_to_gpytorchs_loss() -> None:
    """Duplicated inputs, a near-zero noise and a huge output scale: the covariance is not
    numerically positive definite; GPyTorch's loss (which adds jitter) is returned."""
    model = node_gp(*data(1, 2), noise_variance=1e-6, fit=False)
    model.train_inputs = (torch.cat([model.train_inputs[0]] * 2),)
    model.train_targets = torch.cat([model.train_targets] * 2)
    model.likelihood.noise = torch.full((60,), 1e-12, dtype=torch.float64)
    model.covar_module.outputscale = 1e12
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    mll.train()
    covariance = model(*model.train_inputs).covariance_matrix + 1e-12 * torch.eye(60)
    assert torch.linalg.cholesky_ex(covariance.detach()).info > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GPyTorch's jitter warning
        ours = NegativeLogMarginal(mll)()
        theirs = gpytorch_loss(mll)
    assert torch.isfinite(ours)
    torch.testing.assert_close(ours, theirs.reshape(ours.shape))


@pytest.mark.parametrize("noise_variance", [None, 0.01])
def test_a_fit_reaches_botorchs_default_fit(noise_variance) -> None:
    x, y = data(2, 3)
    ours = node_gp(x, y, noise_variance=noise_variance)
    reference = node_gp(x, y, noise_variance=noise_variance, fit=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_gpytorch_mll(ExactMarginalLogLikelihood(reference.likelihood, reference))
    for (name, mine), (_, theirs) in zip(
        ours.named_parameters(), reference.named_parameters(), strict=True
    ):
        torch.testing.assert_close(mine, theirs, rtol=1e-6, atol=1e-6, msg=name)
