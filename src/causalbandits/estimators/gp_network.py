"""A network of node GPs and the differentiable sampler that propagates base samples through
it (EXCBO eq. 10; decisions: excbo 6, 7; MCBO's hallucinated GP network, Sussex et al. 2022).

Node ``i`` is modelled by a GP on ``w_i = [a[active_i], minmax(z_i)]`` (the node's action
coordinates and its parents' values min-max normalised over the training data, or a constant
0 feature when the node has no input; decisions: excbo 6), optionally extended by a
recovered exogenous value ``u_i`` (EXCBO's decoder ``g_i(w, u)``, Sec. 4.2). For a batch of
decisions and ``S`` fixed base samples the sampler walks the DAG in topological order and sets

``x_i = mu_i(w_i[, u_i]) + beta * eta_i * sigma_i(w_i[, u_i]) + noise_i``

with ``eta_i in [-1, 1]`` (hallucination, option B of decisions: excbo 7, as MCBO),
``eta = 0`` (the posterior mean, option A) or ``eta_i`` a fixed standard normal (a posterior
draw, option C), and ``noise_i`` a fixed draw of the known additive noise (MCBO only).
Every node value is a differentiable function of the decision: gradients flow through the GP
posteriors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.models import SingleTaskGP

from causalbandits.estimators.gp import training_prior


@dataclass(frozen=True)
class MinMaxScaler:
    """``(z - low) / (high - low)`` per parent, from the training values (constant parents
    map to 0)."""

    low: torch.Tensor
    span: torch.Tensor

    @classmethod
    def fit(cls, values: torch.Tensor) -> MinMaxScaler:
        """From training parent values ``(n, |pa|)``."""
        low = values.min(dim=0).values
        span = values.max(dim=0).values - low
        return cls(low, torch.where(span > 0, span, torch.ones_like(span)))

    def __call__(self, values: torch.Tensor) -> torch.Tensor:
        return (values - self.low) / self.span


@dataclass(frozen=True)
class NodeSpec:
    """Where node ``i``'s GP inputs come from: its action coordinates and parents."""

    active: tuple[int, ...]
    parents: tuple[int, ...]


def node_inputs(
    spec: NodeSpec,
    actions: torch.Tensor,
    parent_values: torch.Tensor | None,
    scaler: MinMaxScaler | None,
) -> torch.Tensor:
    """``w_i = [a[active_i], minmax(z_i)]`` with a leading batch shape, or a 0 column when the
    node has neither actions nor parents (decisions: excbo 6)."""
    parts = [actions[..., list(spec.active)]] if spec.active else []
    if spec.parents and parent_values is not None:
        parts.append(scaler(parent_values) if scaler is not None else parent_values)
    if not parts:
        return actions.new_zeros((*actions.shape[:-1], 1))
    return torch.cat(parts, dim=-1)


def training_inputs(
    specs: Sequence[NodeSpec], actions: torch.Tensor, values: torch.Tensor
) -> tuple[list[torch.Tensor], list[MinMaxScaler | None]]:
    """Every node's training inputs ``w_i`` (n, d_i) and parent scaler, from the observed
    ``actions`` (n, |A|) and node ``values`` (n, nodes)."""
    inputs, scalers = [], []
    for spec in specs:
        scaler = MinMaxScaler.fit(values[:, list(spec.parents)]) if spec.parents else None
        inputs.append(node_inputs(spec, actions, values[:, list(spec.parents)], scaler))
        scalers.append(scaler)
    return inputs, scalers


#: A node's posterior marginals: inputs ``(..., d)`` -> mean and standard deviation ``(...)``.
Marginals = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


#: A hallucination that depends on the node's input: ``eta(i, w_i)`` for inputs
#: ``(b, S, d_i)`` (``S`` may be 1, see :meth:`GPNetwork.propagate`), shape ``(b, S)``, in
#: ``[-1, 1]`` (NMCBO's networks).
NodeHallucination = Callable[[int, torch.Tensor], torch.Tensor]


ROOT5 = 5.0**0.5


class Matern52(torch.autograd.Function):
    """The Matérn-5/2 correlation ``(1 + sqrt5 d + 5 d^2 / 3) exp(-sqrt5 d)`` between the rows
    of ``x`` (N, d) and fixed ``y`` (n, d), both already divided by the lengthscales, with a
    hand-written gradient in ``x``: ``dk/d(d^2) = -(5/6)(1 + sqrt5 d) exp(-sqrt5 d)``, so
    ``dk/dx = 2 dk/d(d^2) (x - y)``. Autograd's own graph of the same formula keeps eight
    ``(N, n)`` temporaries; this keeps one (``benchmarks/bench_causal_bo.py``)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        squared = torch.addmm(x.square().sum(-1, keepdim=True), x, y.T, alpha=-2.0)
        squared.add_(y.square().sum(-1)).clamp_min_(0)
        root5 = squared.sqrt().mul_(ROOT5)
        decay = root5.neg().exp_()
        if ctx.needs_input_grad[0]:
            slope = (1.0 + root5).mul_(decay).mul_(-5.0 / 6.0)  # dk/d(d^2)
            ctx.save_for_backward(x, y, slope)
        return root5.add_(1.0).add_(squared, alpha=5.0 / 3.0).mul_(decay)

    @staticmethod
    def backward(ctx: Any, upstream: torch.Tensor) -> tuple[torch.Tensor, None]:
        x, y, slope = ctx.saved_tensors
        weighted = upstream * slope
        return 2.0 * (x * weighted.sum(-1, keepdim=True) - weighted @ y), None


def matern52(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The Matérn-5/2 correlation between the rows of ``x`` (N, d) and the fixed rows of
    ``y`` (n, d), already divided by the lengthscales (:class:`Matern52`)."""
    return Matern52.apply(x, y)


@dataclass(frozen=True, eq=False)
class CachedPosterior:
    """Posterior marginals of a fitted exact GP from its Cholesky factor, computed once:
    ``mu(x) = m(x) + k(x, X) alpha`` and ``sigma^2(x) = k(x, x) - |L^-1 k(X, x)|^2``
    with ``L L^T = K + rho^2 I`` and ``alpha = (K + rho^2 I)^-1 (y - m)`` in the standardised
    space, mapped back to the targets' units, for the node GPs of
    :func:`~causalbandits.estimators.gp.node_gp` (constant mean, scaled Matérn-5/2). Equal to
    BoTorch's ``posterior`` (tested) without its per-call bookkeeping, which dominates at
    thousands of points per call. ``L^-1`` is formed once and the output scale ``s`` and the
    standardisation (``offset + scale * .``) folded in, so that a call is one kernel and the
    products ``k(x, X) mean_weights`` and ``k(x, X) whitener`` (``scale s alpha`` and
    ``scale s L^-T``), ``sigma^2(x) = prior_variance - |k(x, X) whitener|^2`` with
    ``prior_variance = scale^2 s``. ``noise_variance``: the model's observation noise
    variance in the targets' units (learned or fixed)."""

    model: SingleTaskGP
    lengthscale: torch.Tensor
    scaled_inputs: torch.Tensor
    mean_offset: float
    mean_weights: torch.Tensor
    whitener: torch.Tensor
    prior_variance: float
    noise_variance: float

    @classmethod
    def from_model(cls, model: SingleTaskGP) -> CachedPosterior:
        """Cache ``model``'s factor; its hyper-parameters are frozen (no gradients)."""
        model.requires_grad_(False)
        prior = training_prior(model)
        cholesky = torch.linalg.cholesky(prior.covariance)
        residual = (prior.targets - prior.mean).unsqueeze(-1)
        alpha = torch.cholesky_solve(residual, cholesky)
        identity = torch.eye(len(cholesky), dtype=cholesky.dtype)
        whitener = torch.linalg.solve_triangular(cholesky, identity, upper=False)
        kernel = model.covar_module
        lengthscale = kernel.base_kernel.lengthscale.detach().reshape(-1)
        outputscale = float(kernel.outputscale)
        return cls(
            model,
            lengthscale,
            model.train_inputs[0].detach() / lengthscale,
            prior.offset + prior.scale * float(model.mean_module.constant),
            prior.scale * outputscale * alpha,
            prior.scale * outputscale * whitener.T,
            prior.scale**2 * outputscale,
            float(prior.noise.mean()) * prior.scale**2,
        )

    def __call__(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shape = inputs.shape[:-1]
        flat = inputs.reshape(-1, inputs.shape[-1])
        cross = matern52(flat / self.lengthscale, self.scaled_inputs)
        mean = self.mean_offset + (cross @ self.mean_weights).squeeze(-1)
        whitened = cross @ self.whitener
        variance = (self.prior_variance - (whitened * whitened).sum(dim=-1)).clamp_min(
            self.prior_variance * 1e-18
        )
        return mean.reshape(shape), variance.sqrt().reshape(shape)


@dataclass(frozen=True)
class BaseSamples:
    """Fixed base samples ``(S, nodes)`` of a network's Monte Carlo propagation (common random
    numbers; decisions: excbo 7), each optional."""

    #: Standard normals: a posterior draw per sample, ``x_i = mu_i + sigma_i draw`` (option C).
    draws: torch.Tensor | None = None
    #: Recovered exogenous values fed to the decoders ``g_i(w, u)`` (EXCBO, Sec. 4.2).
    exogenous: torch.Tensor | None = None
    #: Additive noise draws ``u_i ~ N(0, rho_i^2)`` (MCBO).
    noise: torch.Tensor | None = None

    @property
    def count(self) -> int:
        """``S``: the rows of the samples given (1 if none)."""
        given = [x.shape[0] for x in (self.draws, self.exogenous, self.noise) if x is not None]
        return given[0] if given else 1


#: No base samples: the posterior mean, one sample.
NO_SAMPLES = BaseSamples()


@dataclass(frozen=True)
class Optimism:
    """How ``beta sigma`` enters a network acquisition (EXCBO eq. 10; decisions: excbo 7):
    ``x_i = mu_i + beta eta_i sigma_i`` with ``eta`` part of the decision (``hallucinate``,
    option B, MCBO), fixed (``fixed_eta`` ``(1, nodes)``: e.g. ``+1`` at the target node
    only, option A) or absent (the posterior mean)."""

    beta: float
    hallucinate: bool = True
    fixed_eta: torch.Tensor | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", float(self.beta))


@dataclass(frozen=True)
class GPNetwork:
    """Fitted node models over a DAG: ``marginals[i]`` maps ``w_i`` (plus ``u_i`` when
    ``with_exogenous``) to the posterior mean and std of ``x_i`` (:class:`CachedPosterior`
    of a node GP); ``order`` is a topological order of the nodes."""

    specs: tuple[NodeSpec, ...]
    marginals: tuple[Marginals, ...]
    scalers: tuple[MinMaxScaler | None, ...]
    order: tuple[int, ...]
    with_exogenous: bool = False

    def propagate(
        self,
        actions: torch.Tensor,
        *,
        eta: torch.Tensor | NodeHallucination | None = None,
        beta: float = 0.0,
        samples: BaseSamples = NO_SAMPLES,
    ) -> torch.Tensor:
        """Node values ``(b, S, nodes)`` for decisions ``actions`` (b, |A|).

        ``eta`` (b, nodes) in ``[-1, 1]``: hallucination, ``x_i = mu_i + beta * eta_i *
        sigma_i`` (option B, MCBO); or a function ``eta(i, w_i)`` of the node and its inputs
        (NMCBO's networks, :data:`NodeHallucination`); with ``samples.draws``: a posterior
        draw per base sample, ``x_i = mu_i + sigma_i * draw`` (option C); neither: the
        posterior mean (option A).
        ``samples.exogenous`` are fed to the decoder (EXCBO), ``samples.noise`` added (MCBO);
        ``S`` is :attr:`BaseSamples.count`. A node whose inputs are the same for every sample
        (a root without exogenous input, or a node whose parents got no draw and no noise)
        has its posterior evaluated once per decision, not ``S`` times.
        """
        draws, exogenous, noise = samples.draws, samples.exogenous, samples.noise
        count = samples.count
        batch = actions.shape[0]
        per_decision = actions.unsqueeze(1)
        values: list[torch.Tensor] = [per_decision[..., 0]] * len(self.specs)
        for i in self.order:
            spec = self.specs[i]
            parents = (
                torch.stack(torch.broadcast_tensors(*(values[p] for p in spec.parents)), dim=-1)
                if spec.parents
                else None
            )
            rows = 1 if parents is None else parents.shape[1]
            w = node_inputs(spec, per_decision.expand(batch, rows, -1), parents, self.scalers[i])
            if self.with_exogenous:
                u = exogenous[:, i] if exogenous is not None else w.new_zeros(count)
                w = torch.cat(
                    [w.expand(batch, count, -1), u.expand(batch, count).unsqueeze(-1)], dim=-1
                )
            mean, std = self.marginals[i](w)
            value = mean
            if callable(eta):
                value = value + beta * eta(i, w) * std
            elif eta is not None:
                value = value + beta * eta[:, i].unsqueeze(-1) * std
            if draws is not None:
                value = value + draws[:, i] * std
            if noise is not None:
                value = value + noise[:, i]
            values[i] = value
        return torch.stack([value.expand(batch, count) for value in values], dim=-1)


class NetworkAcquisition(AcquisitionFunction):
    """The Monte Carlo mean of ``objective`` over the network's base samples, as a function of
    the decision (EXCBO eq. 10 with hallucination, option B of decisions: excbo 7; MCBO).

    The decision is ``[a, v]`` with ``a`` the action and, when ``optimism.hallucinate``, ``v``
    in ``[0, 1]^nodes`` mapped to ``eta = 2 v - 1``; otherwise ``eta`` is the fixed
    ``optimism.fixed_eta`` (``None``: the posterior mean). The base ``samples`` are fixed at
    construction (common random numbers: a deterministic, smooth acquisition).
    """

    def __init__(
        self,
        network: GPNetwork,
        objective: Callable[[torch.Tensor], torch.Tensor],
        n_actions: int,
        optimism: Optimism,
        samples: BaseSamples = NO_SAMPLES,
    ) -> None:
        super().__init__(model=None)  # type: ignore[arg-type]  # the network is the model
        self.network, self.objective = network, objective
        self.n_actions, self.optimism, self.samples = int(n_actions), optimism, samples

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """``X`` (b, 1, D) -> acquisition values (b,)."""
        decision = X[..., 0, :]
        actions = decision[:, : self.n_actions]
        if self.optimism.hallucinate:
            eta = 2.0 * decision[:, self.n_actions :] - 1.0
        elif self.optimism.fixed_eta is not None:
            eta = self.optimism.fixed_eta.expand(decision.shape[0], -1)
        else:
            eta = None
        values = self.network.propagate(
            actions, eta=eta, beta=self.optimism.beta, samples=self.samples
        )
        return self.objective(values).mean(dim=-1)
