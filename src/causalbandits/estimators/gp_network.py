"""A network of node GPs and the differentiable sampler that propagates base samples through
it (EXCBO spec §3.3, §3.5 steps 1 and 6-7; MCBO's hallucinated GP network, §4.3).

Node ``i`` is modelled by a GP on ``w_i = [a[active_i], minmax(z_i)]`` (spec §3.5 step 1: the
node's action coordinates and its parents' values min-max normalised over the training
data, or a constant 0 feature when the node has no input), optionally extended by a
recovered exogenous value ``u_i`` (EXCBO's decoder ``g_i(w, u)``). For a batch of decisions
and ``S`` fixed base samples the sampler walks the DAG in topological order and sets

``x_i = mu_i(w_i[, u_i]) + beta * eta_i * sigma_i(w_i[, u_i]) + noise_i``

with ``eta_i in [-1, 1]`` (hallucination, option B / MCBO), ``eta = 0`` (the posterior mean,
option A) or ``eta_i`` a fixed standard normal (a posterior draw, option C), and ``noise_i`` a
fixed draw of the known additive noise (MCBO only). Every node value is a differentiable
function of the decision: gradients flow through the GP posteriors (spec §3.6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.models import SingleTaskGP

from causalbandits.estimators.gp import DTYPE


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
    node has neither actions nor parents (spec §3.5 step 1)."""
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


def marginal(model: SingleTaskGP, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Posterior mean and standard deviation of ``model`` at every row of ``inputs`` (..., d),
    each of shape ``(...)`` (marginals only: one point per batch)."""
    shape = inputs.shape[:-1]
    posterior = model.posterior(inputs.reshape(-1, 1, inputs.shape[-1]))
    mean = posterior.mean.reshape(shape)
    std = posterior.variance.clamp_min(1e-18).sqrt().reshape(shape)
    return mean, std


@dataclass(frozen=True)
class GPNetwork:
    """Fitted node GPs over a DAG: ``models[i]`` maps ``w_i`` (plus ``u_i`` when
    ``with_exogenous``) to ``x_i``; ``order`` is a topological order of the nodes."""

    specs: tuple[NodeSpec, ...]
    models: tuple[SingleTaskGP, ...]
    scalers: tuple[MinMaxScaler | None, ...]
    order: tuple[int, ...]
    with_exogenous: bool = False

    def propagate(
        self,
        actions: torch.Tensor,
        *,
        eta: torch.Tensor | None = None,
        beta: float = 0.0,
        draws: torch.Tensor | None = None,
        exogenous: torch.Tensor | None = None,
        noise: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Node values ``(b, S, nodes)`` for decisions ``actions`` (b, |A|).

        ``eta`` (b, nodes) in ``[-1, 1]``: hallucination, ``x_i = mu_i + beta * eta_i *
        sigma_i`` (option B, MCBO); ``draws`` (S, nodes) fixed standard normals: a posterior
        draw per base sample, ``x_i = mu_i + sigma_i * draw`` (option C); neither: the
        posterior mean (option A). ``exogenous`` (S, nodes): recovered-noise samples fed to
        the decoder (EXCBO); ``noise`` (S, nodes): additive noise draws (MCBO). ``S`` is the
        number of rows of the base samples given (1 if none).
        """
        given = [x.shape[0] for x in (draws, exogenous, noise) if x is not None]
        samples = given[0] if given else 1
        batch = actions.shape[0]
        expanded = actions.unsqueeze(1).expand(batch, samples, actions.shape[-1])
        values: list[torch.Tensor] = [expanded[..., 0]] * len(self.specs)
        for i in self.order:
            spec = self.specs[i]
            parents = (
                torch.stack([values[p] for p in spec.parents], dim=-1) if spec.parents else None
            )
            w = node_inputs(spec, expanded, parents, self.scalers[i])
            if self.with_exogenous:
                u = exogenous[:, i] if exogenous is not None else w.new_zeros(samples)
                w = torch.cat([w, u.expand(batch, samples).unsqueeze(-1)], dim=-1)
            mean, std = marginal(self.models[i], w)
            value = mean
            if eta is not None:
                value = value + beta * eta[:, i].unsqueeze(-1) * std
            if draws is not None:
                value = value + draws[:, i] * std
            if noise is not None:
                value = value + noise[:, i]
            values[i] = value
        return torch.stack(values, dim=-1)


def as_tensor(values: object) -> torch.Tensor:
    """A float64 tensor of ``values`` (numpy array or tensor)."""
    return torch.as_tensor(values, dtype=DTYPE)


class NetworkAcquisition(AcquisitionFunction):
    """The Monte Carlo mean of ``objective`` over the network's base samples, as a function of
    the decision (EXCBO eq. 10 with hallucination, spec §3.3 option B; MCBO §4.3).

    The decision is ``[a, v]`` with ``a`` the action and, when ``hallucinate``, ``v`` in
    ``[0, 1]^nodes`` mapped to ``eta = 2 v - 1``; otherwise ``eta`` is the fixed
    ``fixed_eta`` (``None``: the posterior mean). Base samples are fixed at construction
    (common random numbers: a deterministic, smooth acquisition).
    """

    def __init__(
        self,
        network: GPNetwork,
        objective: Callable[[torch.Tensor], torch.Tensor],
        n_actions: int,
        beta: float,
        *,
        hallucinate: bool = True,
        fixed_eta: torch.Tensor | None = None,
        draws: torch.Tensor | None = None,
        exogenous: torch.Tensor | None = None,
        noise: torch.Tensor | None = None,
    ) -> None:
        super().__init__(model=network.models[0])
        self.network, self.objective = network, objective
        self.n_actions, self.beta, self.hallucinate = int(n_actions), float(beta), hallucinate
        self.fixed_eta, self.draws, self.exogenous, self.noise = fixed_eta, draws, exogenous, noise

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """``X`` (b, 1, D) -> acquisition values (b,)."""
        decision = X[..., 0, :]
        actions = decision[:, : self.n_actions]
        if self.hallucinate:
            eta = 2.0 * decision[:, self.n_actions :] - 1.0
        elif self.fixed_eta is not None:
            eta = self.fixed_eta.expand(decision.shape[0], -1)
        else:
            eta = None
        values = self.network.propagate(
            actions,
            eta=eta,
            beta=self.beta,
            draws=self.draws,
            exogenous=self.exogenous,
            noise=self.noise,
        )
        return self.objective(values).mean(dim=-1)
